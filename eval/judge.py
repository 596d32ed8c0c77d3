"""Dialogue-quality judges by name: ``make_judge("rule")`` or ``make_judge("llm", model=...)``.

Both rate a trajectory on the seven 1-5 dimensions of App. C.1 behind one interface
(``DialogueJudge.rate(episode, task, index)``): the rule-based judge lives in
``eval.rule_judge``, the LLM judge in ``eval.llm_judge`` (imported only when asked for).
``protocol`` reaches either: under "paper" the rule judge reads the trajectory only and the
LLM judge's prompt holds C.1's definitions word for word (``situ_gym.protocol``, rows
"judge" and "judge_definitions").
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from eval.rule_judge import DIMENSIONS, DialogueJudge, RuleBasedJudge
from situ_gym.protocol import check_protocol
from situ_gym.records import EpisodeRecord

__all__ = ["DIMENSIONS", "DialogueJudge", "RuleBasedJudge", "make_judge", "judge_from_cli", "recorded_protocol"]


def make_judge(name: str = "rule", protocol: str = "default", **kwargs: Any) -> DialogueJudge:
    """A judge by name: "rule" (``RuleBasedJudge``) or "llm" (``eval.llm_judge.LLMJudge``,
    with ``model="hf:..." | "openai:..."``, ``base_url``, ``cache``); ``protocol`` goes to either."""
    check_protocol(protocol)
    if name in ("rule", "rule-based"):
        if kwargs:  # a model or URL given to the rule judge is a mistake worth saying
            raise ValueError(f"the rule judge takes no {', '.join(sorted(kwargs))}; did you mean --judge llm?")
        return RuleBasedJudge(protocol=protocol)
    if name == "llm":
        from eval.llm_judge import LLMJudge

        return LLMJudge(protocol=protocol, **kwargs)
    raise ValueError(f"unknown judge {name!r}; choose one of ['rule', 'llm']")


def recorded_protocol(episodes: Iterable[EpisodeRecord]) -> str:
    """The one protocol the episodes were played under (``EpisodeRecord.protocol``), so that a
    saved run is judged as it was played; "default" for none; a ValueError when they differ."""
    found = sorted({ep.protocol for ep in episodes})
    if len(found) > 1:
        raise ValueError(f"the episodes were played under protocols {found}; choose one with --protocol")
    return found[0] if found else "default"


def judge_from_cli(name: str, *, model: str | None = None, base_url: str | None = None,
                   protocol: str = "default", cache: Any = None) -> DialogueJudge | None:
    """The judge a command line asked for (``--judge``, ``--judge-model``, ``--judge-base-url``),
    None for "none". Every mistake is one ValueError line, raised before anything is rated:
    a missing model, a model for the rule judge, an unreachable endpoint or missing model file."""
    if name == "none":
        return None
    if name == "llm" and not model:
        raise ValueError("--judge llm needs --judge-model SPEC (hf:PATH_OR_ID | hf:gguf:FILE | openai:NAME)")
    if name != "llm" and (model or base_url):
        raise ValueError(f"--judge-model and --judge-base-url need --judge llm, got --judge {name}")
    if name != "llm":
        return make_judge(name, protocol=protocol)
    from situ_gym.llm import BackendUnavailable, check_backend

    try:
        check_backend(model, base_url=base_url)  # else a dead endpoint shows only after the first batch
    except BackendUnavailable as exc:
        raise ValueError(f"judge model {model}: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from exc
    return make_judge("llm", protocol=protocol, model=model, base_url=base_url, cache=cache)
