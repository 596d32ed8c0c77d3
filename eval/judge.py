"""Dialogue-quality judges by name: ``make_judge("rule")`` or ``make_judge("llm", model=...)``.

Both rate a trajectory on the seven 1-5 dimensions of App. C.1 behind one interface
(``DialogueJudge.rate(episode, task, index)``): the rule-based judge lives in
``eval.rule_judge``, the LLM judge in ``eval.llm_judge`` (imported only when asked for).
"""

from __future__ import annotations

from typing import Any

from eval.rule_judge import DIMENSIONS, DialogueJudge, RuleBasedJudge

__all__ = ["DIMENSIONS", "DialogueJudge", "RuleBasedJudge", "make_judge"]


def make_judge(name: str = "rule", **kwargs: Any) -> DialogueJudge:
    """A judge by name: "rule" (``RuleBasedJudge``) or "llm" (``eval.llm_judge.LLMJudge``,
    with ``model="hf:..." | "openai:..."``, ``base_url``, ``cache``)."""
    if name in ("rule", "rule-based"):
        return RuleBasedJudge()
    if name == "llm":
        from eval.llm_judge import LLMJudge

        return LLMJudge(**kwargs)
    raise ValueError(f"unknown judge {name!r}; choose one of ['rule', 'llm']")
