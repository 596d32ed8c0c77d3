"""Judge, ranker and classifier inputs built from records or live turns, and the judges' verdict format.

Training and scoring render through the same functions, so a learned scorer in the
reward reads exactly the text it was trained on. Judges answer ``Reason: ...`` then
``Score: N`` (the paper's reason-then-score output, flattened to two lines).
"""

from __future__ import annotations

import re
from typing import Any

from recrm import dimensions as dims

__all__ = [
    "JUDGE_KINDS",
    "SYSTEM_PROMPTS",
    "SCORE_RANGE",
    "judge_messages",
    "judge_target",
    "parse_score",
    "pair_text",
    "list_text",
    "judge_fields",
]

JUDGE_KINDS = dims.JUDGES  # the dimensions a generative judge scores (recrm.dimensions)
SCORE_RANGE = {"instruction": (0, 1), "consistency": (0, 1), "relevance": (0, 2)}

SYSTEM_PROMPTS = {
    "instruction": (
        "You assess whether a shopping assistant's output follows its instructions. Rubric: role "
        "(no system internals, ids or JSON talk), process (one of ten actions with its required "
        "fields), format (one valid JSON object, one action, at most 10 ranked ids), content quality "
        "(at most three products named), constraint (no marker labels like [b]), style (concise, no "
        "parroting). Answer 'Reason: ...' then 'Score: 1' if compliant or 'Score: 0' if any dimension is violated."
    ),
    "consistency": (
        "You check a shopping assistant's response against the record for hallucinations: item "
        "hallucination (unknown products, wrong price, label or location) and content hallucination "
        "(claims about the cart, the hand or the budget the record contradicts, ungrounded claims). "
        "Answer 'Reason: ...' then 'Score: 1' if consistent or 'Score: 0' if anything is hallucinated."
    ),
    "relevance": (
        "You rate how relevant a product is to what the shopper said. 2 = fully relevant: right "
        "category and every stated need met (budget allows 10%). 1 = weakly relevant: a similar "
        "category, or the right category with a stated need unmet. 0 = irrelevant: another kind of "
        "product. Answer 'Reason: ...' then 'Score: 0', 'Score: 1' or 'Score: 2'."
    ),
}

_SCORE = re.compile(r"score\s*[:=]\s*(\d)", re.IGNORECASE)


def judge_fields(kind: str, record: Any) -> dict[str, str]:
    """The text fields a judge reads, from a record of that kind."""
    if kind == "instruction":
        return {"context": record.context, "response": record.response}
    if kind == "consistency":
        return {"facts": record.facts, "response": record.response}
    if kind == "relevance":
        return {"query": record.query, "item": record.item}
    raise ValueError(f"no judge for kind {kind!r}; choose one of {list(JUDGE_KINDS)}")


def judge_messages(kind: str, fields: dict[str, str]) -> list[dict[str, str]]:
    """Chat messages (system + user) asking the ``kind`` judge about ``fields``."""
    if kind == "instruction":
        user = f"Conversation:\n{fields['context']}\n\nAssistant output:\n{fields['response']}"
    elif kind == "consistency":
        user = f"Record:\n{fields['facts']}\n\nResponse:\n{fields['response']}"
    elif kind == "relevance":
        user = f"Shopper said: {fields['query']}\nProduct: {fields['item']}"
    else:
        raise ValueError(f"no judge for kind {kind!r}; choose one of {list(JUDGE_KINDS)}")
    return [{"role": "system", "content": SYSTEM_PROMPTS[kind]}, {"role": "user", "content": user}]


def judge_target(reason: str, score: int) -> str:
    """The answer a judge is trained to write.

    >>> judge_target("category matches", 2)
    'Reason: category matches\\nScore: 2'
    """
    return f"Reason: {reason}\nScore: {score}"


def parse_score(kind: str, text: str) -> int | None:
    """The last in-range ``Score: N`` of a judge's answer, None when there is none.

    >>> parse_score("relevance", "Reason: fine\\nScore: 2")
    2
    >>> parse_score("instruction", "Score: 7") is None
    True
    """
    lo, hi = SCORE_RANGE[kind]
    found = [int(m.group(1)) for m in _SCORE.finditer(text)]
    found = [s for s in found if lo <= s <= hi]
    return found[-1] if found else None


def pair_text(profile: str, query: str) -> str:
    """The first segment of a ranker pair: who the shopper is and what they said."""
    return f"Shopper: {profile}\nWants: {query}"


def list_text(profile: str, query: str, items: list[str]) -> str:
    """The behaviour classifier's input: shopper, need and the recommended list."""
    lines = "\n".join(f"{i + 1}. {t}" for i, t in enumerate(items))
    return f"Shopper: {profile}\nWants: {query}\nRecommended:\n{lines}"
