"""Read a JSON object out of a model's reply (code fences, chatter around it), with json only;
keep a role's growing chat within a token budget (:class:`RoleChat`).

>>> extract_json('Sure! ```json\\n{"a": 1}\\n```')
{'a': 1}
>>> extract_json('no object here')
Traceback (most recent call last):
...
ValueError: no JSON object found in the reply

A reply may hold lone UTF-16 surrogates, raw (an HTTP client decodes a ``"\\ud800"`` escape
of the server's JSON into one) or as escapes in the object it spells; neither can be
encoded as UTF-8, so neither may reach what a role returns, saves or sends again.
:func:`clean_text` replaces them in a reply's text, and :func:`extract_json` in every string
(and key) of the object it returns, by U+FFFD:

>>> extract_json('{"utterance": "hi \\\\ud800"}')
{'utterance': 'hi \ufffd'}
>>> clean_text("hi \\ud800")
'hi \ufffd'
"""

from __future__ import annotations

import json
import re
from typing import Any

from situ_gym.jsonl import decode_at

__all__ = ["extract_json", "clean_text", "RoleChat"]

_MAX_STARTS = 64  # '{' positions tried: bounds the work on a reply of braces
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def clean_text(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD (the module docstring): what a
    role keeps of a reply, quotes in a re-ask and commits to its chat."""
    return _LONE_SURROGATE.sub("\ufffd", text)


def _clean_value(value: Any) -> Any:
    """``value`` (decoded JSON, at most 64 levels deep) with its strings and keys cleaned."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, dict):
        return {clean_text(k): _clean_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean_value(v) for v in value]
    return value


def extract_json(text: str) -> dict[str, Any]:
    """The first JSON object in ``text`` that parses, its strings cleaned (the module
    docstring); ValueError (with the reason) otherwise."""
    if not isinstance(text, str):
        raise ValueError(f"reply must be text, got {type(text).__name__}")
    start = text.find("{")
    last_error = "no JSON object found in the reply"
    for _ in range(_MAX_STARTS):
        if start == -1:
            break
        try:
            value, _end = decode_at(text, start)
        except json.JSONDecodeError as exc:
            last_error = f"invalid JSON: {exc.msg} at character {exc.pos}"
        except ValueError as exc:  # not a JSONDecodeError: an integer past the digit limit
            last_error = f"invalid JSON: {str(exc).split(':')[0]} at character {start}"
        else:
            if isinstance(value, dict):
                return _clean_value(value)
        start = text.find("{", start + 1)
    raise ValueError(last_error)


class RoleChat:
    """One role's chat in one episode: a fixed system message, then its turns appended.

    Each turn is the role's user message and the reply it went on with, so successive
    requests share their whole prefix (what prefix caches reuse). When a request would go
    over ``budget_tokens`` (estimated as characters / ``chars_per_token``, an image part as
    ``image_tokens``), whole oldest turns are dropped until the chat is under half the
    budget: a rare cut rather than one on every turn.

    >>> chat = RoleChat("sys", budget_tokens=20, chars_per_token=1)
    >>> for k in "1234":
    ...     chat.commit(f"q{k}", f"a{k}")
    >>> [m["content"] for m in chat.messages("q5")]
    ['sys', 'q4', 'a4', 'q5']
    >>> chat.dropped
    3
    """

    def __init__(self, system: str, *, budget_tokens: int = 6000, chars_per_token: float = 3.0,
                 image_tokens: int = 600):
        if budget_tokens < 1:
            raise ValueError(f"budget_tokens must be positive, got {budget_tokens!r}")
        if not chars_per_token > 0:
            raise ValueError(f"chars_per_token must be positive, got {chars_per_token!r}")
        self.system = system
        self.budget_tokens = int(budget_tokens)
        self.chars_per_token = float(chars_per_token)
        self.image_tokens = int(image_tokens)
        self.turns: list[tuple[str, str]] = []  # (user text, reply text)
        self.dropped = 0  # turns dropped to stay within the budget

    def estimate(self, texts: list[str], images: int = 0) -> int:
        return int(sum(len(t) for t in texts) / self.chars_per_token) + images * self.image_tokens

    def messages(self, text: str, images: list[Any] | None = None) -> list[dict[str, Any]]:
        """The request for a new turn ``text`` (with ``images`` as image parts before it)."""
        images = list(images or [])

        def size(turns: list[tuple[str, str]]) -> int:
            return self.estimate([self.system, text, *(t for pair in turns for t in pair)], len(images))

        if size(self.turns) > self.budget_tokens:
            while self.turns and size(self.turns) > self.budget_tokens // 2:
                self.turns.pop(0)
                self.dropped += 1
        out: list[dict[str, Any]] = [{"role": "system", "content": self.system}]
        for user, reply in self.turns:
            out += [{"role": "user", "content": user}, {"role": "assistant", "content": reply}]
        content: Any = text
        if images:
            content = [{"type": "image", "image": im} for im in images] + [{"type": "text", "text": text}]
        out.append({"role": "user", "content": content})
        return out

    def commit(self, text: str, reply: str) -> None:
        """Keep the turn: its user text (images are not kept) and the reply the role used."""
        self.turns.append((text, reply))
