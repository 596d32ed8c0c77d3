"""R_beh: does the turn's top-10 list hold the item this user would actually buy?"""

from __future__ import annotations

from recrm.components.base import ComponentScore
from recrm.context import TurnContext

__all__ = ["BehaviorPrediction"]


class BehaviorPrediction:
    """R_beh in {0, 1}: RecRM's list-level behaviour prediction, with the simulator as oracle.

    1 when the top ``k`` of the ranking contain the item this shopper would choose: the
    task's target, or any reference item when the acceptance policy allows substitutes
    (``Task.acceptance.accept_substitutes``); else 0. ``None`` without a ranking.
    """

    name = "behavior"

    def __init__(self, k: int = 10):
        if k < 1:
            raise ValueError(f"k must be >= 1, got {k!r}")
        self.k = k

    def score(self, ctx: TurnContext) -> ComponentScore:
        if not ctx.ranking:
            return ComponentScore(None, {"reason": "no ranking"})
        task = ctx.task
        chosen = {task.target_product_id}
        if task.acceptance.accept_substitutes:
            chosen |= set(task.reference_set)
        hit = [pid for pid in ctx.ranking[: self.k] if pid in chosen]
        return ComponentScore(
            1.0 if hit else 0.0,
            {"hit": hit[:1], "accept_substitutes": task.acceptance.accept_substitutes},
        )
