"""R_relev: rule-based query-item relevance on RecRM's 0/1/2 scale, judged on what the user revealed."""

from __future__ import annotations

from recrm.components.base import ComponentScore
from recrm.context import TurnContext

__all__ = ["BUDGET_TOLERANCE", "QueryItemRelevance"]

BUDGET_TOLERANCE = 0.10  # a price up to 10% over the stated budget still meets it


class QueryItemRelevance:
    """R_relev in {0, 0.5, 1} (RecRM's 0 irrelevant / 1 weakly / 2 fully relevant, halved).

    The judged item is the product the response's words propose, else the one they
    explain, compare or mention (``recrm.context.judged_item``, read by the language layer);
    a turn naming no product gives ``None`` (a dialogue turn: the composite's credit applies),
    whatever its ranking holds. The judge sees only what the user
    has *revealed* in earlier turns (``ctx.revealed_items``), never the hidden goal:

    * Category (the paper's first dimension). The item's category is compared with the
      task's; the target and the reference set always count as the right category.
      Another category of the same group ("similar category") caps the score at 1
      (weak); another group scores 0.
    * Nothing revealed yet (the first turn): nothing can be unmet, so a right-category item
      is fully relevant (2), as the paper's judge would rate it. The default reward caps
      such a blind guess at weakly relevant (1) so that it never opens the behaviour terms:
      ``details["first_turn_cap"]`` then holds the capped value, which the composite uses
      for every variant but ``"paper"`` (``recrm.composite``). The cap lives in the
      composite so that one judge serves both protocols.
    * Revealed core elements: a ``need`` / ``use`` detail whose value is a tag the item
      lacks, an ``avoid`` tag the item carries, or a price over the revealed budget by
      more than ``budget_tolerance`` (10%) — each makes the item weakly relevant (1).
      Details whose value is free text cannot be checked and are ignored.
    * Everything revealed is met: fully relevant (2).
    * A product the shopper turned down in an earlier turn (``ctx.declined``, read by the
      env's rule ``situ_gym.language.turned_down``) is irrelevant (0) whatever its labels:
      pressing it again ("Add it to your cart!") answers nothing the shopper asked for.

    A turn putting k > 1 new products forward at once (``ctx.attempt.new``) spends k of the
    shopper's attempts: it scores the mean over them (``details["items"]``: each one's 0/1/2)
    divided by k (``details["attempts"]``). The shopper acts on one; the others are attempts
    spent before it could answer, so padding a good pick never pays, and three good products
    at once are worth a third of one alone (best-of-N played "You could try A, B or C" at
    R 1.0 and lost 14 of the 16 Supermarket tasks it lost from N = 4 to 8 to the exhausted limit).

    ``details`` holds ``item``, ``score_0_2``, ``unmet`` (the failed checks), ``revealed`` and,
    on a turn before any disclosure, ``first_turn_cap``.
    """

    name = "relevance"

    def __init__(self, budget_tolerance: float = BUDGET_TOLERANCE):
        if budget_tolerance < 0:
            raise ValueError(f"budget_tolerance must be >= 0, got {budget_tolerance!r}")
        self.budget_tolerance = budget_tolerance

    def score(self, ctx: TurnContext) -> ComponentScore:
        pid = ctx.judged_item
        if pid is None:
            return ComponentScore(
                None, {"item": None, "reason": "the response proposes or discusses no product"}
            )
        offered = [p for p in ctx.attempt.new if p in ctx.index.products]
        if pid in offered and len(offered) > 1:
            # several products put forward at once are several attempts, each judged: the
            # turn is worth their mean, so adding weaker ones to a good pick never pays
            scores = [self._score_item(ctx, p) for p in offered]
            details = dict(scores[0].details, items={p: s.details["score_0_2"] for p, s in zip(offered, scores, strict=True)})
            levels = [s.details["score_0_2"] for s in scores]
        else:
            one = self._score_item(ctx, pid)
            details, levels = one.details, [one.details["score_0_2"]]
        k = len(levels)
        if k > 1:
            details["attempts"] = k
        if not ctx.revealed_items:
            # the default's cap on a guess made before the shopper said anything: each item at
            # most weakly relevant (1 of 2); the composite applies it, the paper's variant does not
            details["first_turn_cap"] = sum(min(level, 1) for level in levels) / (2.0 * k * k)
        return ComponentScore(sum(levels) / (2.0 * k * k), details)

    def _score_item(self, ctx: TurnContext, pid: str) -> ComponentScore:
        task, product = ctx.task, ctx.index.products[pid]
        revealed = ctx.revealed_items
        details: dict = {"item": pid, "revealed": [r.kind for r in revealed], "unmet": []}
        if pid in ctx.declined:
            # the shopper said no to it: urging it again ("Add it to your cart!") fits nothing
            # it asked for, whatever the product's labels
            details["unmet"].append("the shopper turned it down")
            return self._done(0, details)
        same_category = (
            product.category == task.category
            or pid == task.target_product_id
            or pid in task.reference_set
        )
        if not same_category:
            target = ctx.index.products.get(task.target_product_id)
            similar = target is not None and product.group == target.group
            details["unmet"].append(
                f"category {product.category!r} differs from {task.category!r}"
                + (" (same group)" if similar else "")
            )
            return self._done(1 if similar else 0, details)
        tags = set(product.tags)
        for item in revealed:
            value = item.value
            if item.kind in ("need", "use") and isinstance(value, str) and ":" in value:
                if value not in tags:
                    details["unmet"].append(f"revealed need {value!r} missing")
            elif item.kind == "avoid" and isinstance(value, str) and ":" in value:
                if value in tags:
                    details["unmet"].append(f"revealed avoided {value!r} present")
            elif item.kind == "budget":
                budget = float(value) if isinstance(value, (int, float)) else task.budget
                if product.price > budget * (1.0 + self.budget_tolerance) + 1e-9:
                    details["unmet"].append(
                        f"price ${product.price:.2f} over the ${budget:g} budget by more than "
                        f"{self.budget_tolerance:.0%}"
                    )
            elif item.kind == "category" and isinstance(value, str) and ":" not in value:
                if (
                    value != product.category
                    and pid not in task.reference_set
                    and pid != task.target_product_id
                ):
                    details["unmet"].append(
                        f"category {product.category!r} is not the stated {value!r}"
                    )
        return self._done(1 if details["unmet"] else 2, details)

    @staticmethod
    def _done(score: int, details: dict) -> ComponentScore:
        details["score_0_2"] = score
        return ComponentScore(score / 2.0, details)
