"""Which goal detail the rule shopper tells this turn (paper App. A.3 disclosure policy).

The opening states the category or the intended use. Later turns add at most one new key
detail: the one the assistant asked about when there is one left (a detail asked about again
is restated, not counted as new); otherwise, after a generic question, the next detail with
probability ``Persona.answer_p``, and unasked with ``Persona.volunteer_p``.
"""

from __future__ import annotations

import numpy as np

from situ_gym.language import SLOT_KINDS  # slot asked -> goal-detail kinds that answer it
from situ_gym.scene.model import DisclosureItem
from situ_gym.user.rule.persona import Persona

__all__ = ["SLOT_KINDS", "choose_disclosure"]



def choose_disclosure(
    items: list[DisclosureItem],
    disclosed: set[int],
    asked: tuple[str, ...],
    generic_question: bool,
    persona: Persona,
    rng: np.random.Generator,
) -> tuple[int | None, int | None]:
    """(index to disclose now, index to restate); at most one of them is not None."""
    if not items:
        return None, None
    pending = [i for i in range(len(items)) if i not in disclosed]
    if not disclosed:
        opening = [i for i in range(len(items)) if items[i].kind in ("category", "use")]
        return (opening[0] if opening else 0), None
    for slot in asked:
        kinds = SLOT_KINDS.get(slot)
        if not kinds:
            continue
        for kind in kinds:
            fresh = [i for i in pending if items[i].kind == kind]
            if fresh:
                return fresh[0], None
        old = [i for i in sorted(disclosed) if items[i].kind in kinds]
        if old:
            return None, old[0]
    if not pending:
        return None, None
    p = persona.answer_p if generic_question else persona.volunteer_p
    if rng.random() < p:
        return pending[0], None
    return None, None
