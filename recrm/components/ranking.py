"""R_rank: NDCG@10 of the turn's ranking against the task's reference items."""

from __future__ import annotations

import math

from recrm.components.base import ComponentScore, RankingComponent
from recrm.context import TurnContext

__all__ = ["ItemRanking", "ndcg_at_k"]


def ndcg_at_k(ranking: list[str] | tuple[str, ...], relevant: set[str], k: int = 10) -> float:
    """Binary-relevance NDCG@k; repeated ids earn credit only at their first position.

    >>> round(ndcg_at_k(["x", "a"], {"a", "b"}), 4)  # (1/log2 3) / (1 + 1/log2 3)
    0.3869
    """
    if not relevant:
        return 0.0
    seen: set[str] = set()
    dcg = 0.0
    for r, pid in enumerate(ranking[:k], start=1):
        if pid in relevant and pid not in seen:
            dcg += 1.0 / math.log2(r + 1)
        seen.add(pid)
    ideal = sum(1.0 / math.log2(r + 1) for r in range(1, min(k, len(relevant)) + 1))
    return dcg / ideal


class ItemRanking(RankingComponent):
    """R_rank in [0, 1]: NDCG@10 with binary relevance.

    ``rel_r = 1`` when the r-th ranked id is in A_e (the task's reference set plus the
    target) at its first occurrence; ``DCG = sum_r rel_r / log2(r + 1)`` over the top 10;
    the ideal DCG puts min(10, |A_e|) reference items first (paper App. C.1's NDCG@10,
    with A_e in place of the final cart, which a per-turn reward cannot know yet).
    ``None`` when the turn gives no ranking.
    """

    name = "ranking"

    def score_ranking(self, ctx: TurnContext, top: list[str]) -> ComponentScore:
        relevant = set(ctx.task.reference_set) | {ctx.task.target_product_id}
        value = ndcg_at_k(ctx.ranking, relevant, self.k)
        hits = [r for r, pid in enumerate(top, start=1) if pid in relevant]
        return ComponentScore(
            min(1.0, value), {"ndcg": value, "hit_ranks": hits, "n_reference": len(relevant)}
        )
