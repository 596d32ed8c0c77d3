"""Which goal details the rule shopper tells this turn (paper App. A.3 disclosure policy).

The opening states the category or the intended use. Later turns add at most one new key
detail (the paper's rule), and answer every part of the assistant's question as far as that
rule allows: the first part with a detail left gets it; a part asked again is restated (not
counted as new); a part the shopper has nothing for is answered so ("no, nothing to avoid");
a part whose detail must wait for a later turn is put off in words, so the assistant knows to
ask again. Without a question about a slot, the next detail is told with probability
``Persona.answer_p`` after a generic question, and unasked with ``Persona.volunteer_p``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from situ_gym.language import SLOT_KINDS  # slot asked -> goal-detail kinds that answer it
from situ_gym.scene.model import DisclosureItem
from situ_gym.user.rule.persona import Persona

__all__ = ["SLOT_KINDS", "Answer", "choose_disclosure"]


@dataclass(frozen=True)
class Answer:
    """One part of the shopper's answer, in the order the assistant asked.

    ``how`` is ``"new"`` (tell ``item`` for the first time), ``"again"`` (restate ``item``),
    ``"none"`` (the shopper has nothing for ``slot``) or ``"later"`` (``item`` answers
    ``slot`` but must wait: one new detail per turn)."""

    how: str
    slot: str | None = None
    item: int | None = None


def choose_disclosure(
    items: list[DisclosureItem],
    disclosed: set[int],
    asked: tuple[str, ...],
    generic_question: bool,
    persona: Persona,
    rng: np.random.Generator,
    may_tell_new: bool = True,
) -> list[Answer]:
    """The parts of this turn's answer; at most one of them tells a new detail.

    ``may_tell_new`` is False when the turn already revealed a detail another way (a reason
    for turning a product down)."""
    if not items:
        return []
    if not disclosed:
        opening = [i for i in range(len(items)) if items[i].kind in ("category", "use")]
        return [Answer("new", item=opening[0] if opening else 0)] if may_tell_new else []
    parts: list[Answer] = []
    told_new, answered = not may_tell_new, set()
    for slot in dict.fromkeys(asked):
        kinds = SLOT_KINDS.get(slot)
        if not kinds:
            continue  # "where are you?" is answered by the view, not a goal detail
        fresh = [i for kind in kinds for i in range(len(items))
                 if items[i].kind == kind and i not in disclosed and i not in answered]
        old = [i for i in sorted(disclosed) if items[i].kind in kinds and i not in answered]
        if fresh and not told_new:
            parts.append(Answer("new", slot, fresh[0]))
            told_new = True
            answered.add(fresh[0])
        elif fresh:
            parts.append(Answer("later", slot, fresh[0]))
            answered.add(fresh[0])  # "size and style?" both wait for the same detail: put off once
        elif old:
            parts.append(Answer("again", slot, old[0]))
            answered.add(old[0])
        elif not any(item.kind in kinds for item in items):
            parts.append(Answer("none", slot))
    if parts or told_new:
        return parts
    pending = [i for i in range(len(items)) if i not in disclosed]
    if not pending:
        return []
    p = persona.answer_p if generic_question else persona.volunteer_p
    if rng.random() < p:
        return [Answer("new", item=pending[0])]
    return []
