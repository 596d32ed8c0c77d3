"""R_beh: does the turn's top-10 list hold the item this user would actually buy?"""

from __future__ import annotations

from recrm.components.base import ComponentScore, RankingComponent
from recrm.context import TurnContext

__all__ = ["BehaviorPrediction"]


class BehaviorPrediction(RankingComponent):
    """R_beh in {0, 1}: RecRM's list-level behaviour prediction, with the simulator as oracle.

    1 when the top ``k`` of the ranking contain the item this shopper would choose: the
    task's target, or any reference item when the acceptance policy allows substitutes
    (``Task.acceptance.accept_substitutes``); else 0. ``None`` without a ranking.
    """

    name = "behavior"

    def score_ranking(self, ctx: TurnContext, top: list[str]) -> ComponentScore:
        task = ctx.task
        chosen = {task.target_product_id}
        if task.acceptance.accept_substitutes:
            chosen |= set(task.reference_set)
        hit = [pid for pid in top if pid in chosen]
        return ComponentScore(
            1.0 if hit else 0.0,
            {"hit": hit[:1], "accept_substitutes": task.acceptance.accept_substitutes},
        )
