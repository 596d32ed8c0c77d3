"""What can go wrong with a chat model, by kind: each kind has one behaviour everywhere.

=============  =====================================================  ==========================
kind           examples                                               what the toolkit does
=============  =====================================================  ==========================
transient      connection refused or reset, timeout, 5xx, 429, a 200  retried with backoff and
               whose body is not JSON or has no ``choices``           jitter (``LLMSettings``)
episode        the prompt exceeds the context, content filtered       that episode ends as
                                                                      ``error`` with its cause;
                                                                      the others go on
persistent     the retry budget spent on ``persistent_after``         the run stops (one line
               consecutive requests to one endpoint                   naming the endpoint);
                                                                      finished episodes saved
setup          unreachable endpoint, unknown model, a first prompt    ``error:`` line, exit 2,
               longer than the model's context                        before any episode
=============  =====================================================  ==========================

Backends raise ``TransientError`` only inside their retry loop; what leaves a backend is
an ``EpisodeError`` attached to one request's result (``ChatResult.error``: the rest of the
batch is answered) or a ``BackendUnavailable`` for the whole call (persistent or setup).
"""

from __future__ import annotations

__all__ = ["EPISODE_CAUSES", "LLMError", "TransientError", "EpisodeError", "BackendUnavailable", "SetupError"]

# The causes an episode can end with when a model role cannot go on (EpisodeRecord.error_cause).
EPISODE_CAUSES = ("context_length", "content_filter", "invalid_request")


class LLMError(RuntimeError):
    """Base class of the chat-model faults."""

    kind = "llm"


class TransientError(LLMError):
    """Worth asking again after a pause. ``retry_after`` (seconds) when the server said so."""

    kind = "transient"

    def __init__(self, message: str, *, status: int | None = None, retry_after: float | None = None):
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after


class EpisodeError(LLMError):
    """This request can never succeed as it is (``cause`` in EPISODE_CAUSES): the episode that
    made it ends as an error with that cause; every other episode goes on."""

    kind = "episode"

    def __init__(self, cause: str, message: str):
        if cause not in EPISODE_CAUSES:
            raise ValueError(f"cause must be one of {EPISODE_CAUSES}, got {cause!r}")
        super().__init__(f"{cause}: {message}")
        self.cause = cause

    def __reduce__(self):  # picklable across worker processes with its cause
        return (type(self), (self.cause, str(self).split(": ", 1)[-1]))


class BackendUnavailable(LLMError):
    """The endpoint or model cannot answer (unreachable, refused, dead after retries).

    A configuration or infrastructure fault, not an episode outcome: runners stop on it
    instead of recording the episode as the assistant's failure.
    """

    kind = "persistent"


class SetupError(BackendUnavailable):
    """Found before any episode: unreachable endpoint, unknown model, a prompt beyond the context."""

    kind = "setup"
