"""How a profile's Big Five traits and interaction settings become the shopper's numbers.

The policy (every number below is derived here, once per episode, and nowhere else):

* Patience: ``Interaction.patience`` unproductive turns, one more for an agreeable shopper
  (agreeableness >= 0.6), one fewer for an anxious one (neuroticism >= 0.6), at least 1.
* Disclosure: at most one new goal detail per turn (paper App. A.3). A question about a
  specific detail is always answered. A generic question ("anything else?") is answered with
  probability ``answer_p`` = mean of the talkativeness level (low .5, medium .75, high 1) and
  ``0.4 + 0.6 * extraversion``; unasked, a detail is volunteered with ``volunteer_p`` = the
  talkativeness level (low .1, medium .2, high .35) plus ``0.15 * extraversion``.
* Explanations before buying: the task's ``explanations_needed``, +1 for high and -1 for low
  explanation seeking (0 stays 0).
* Substitutes (fitting products other than the target): only with ``accept_substitutes``, then
  accepted with ``substitute_p`` = willingness (low .35, medium .65, high .9) + 0.2 *
  (openness - 0.5), drawn once per product.
* Trade-offs: category and avoided labels are hard constraints. A product that misses exactly
  one *soft* point may still be bought when the assistant has explained that trade-off for it
  (an explanation of that product citing the missed label's kind, or price/budget for a price
  miss) and a draw (once per product) falls under ``tradeoff_p`` = 0.3 + 0.4 * agreeableness.
  Soft points: the needs after the first one (for openness >= 0.5 only), and a price over the
  budget by at most ``budget_slack`` (price sensitivity low 10%, medium 5%, high 0).
  Under ``protocol="paper"`` there are no soft points (no soft needs, ``budget_slack`` 0):
  purchases follow the needs within the budget limit (paper App. A.3).
* Price sensitivity high: a fit is turned down when another inspected fit is 15% cheaper.
* Conscientiousness: how carefully the shopper checks and how consistently it follows
  guidance. A conscientious shopper (conscientiousness >= 0.6, ``checks_details``) inspects a
  product itself before buying even when the task does not require it (it does not buy on
  the assistant's word alone); understood guidance is followed with probability
  ``navigation_following`` = the profile's navigation following + 0.2 * (conscientiousness
  - 0.5), clipped to [0, 1] (at most 0.1 either way: the profile's setting stays the main
  term).
"""

from __future__ import annotations

from dataclasses import dataclass

from situ_gym.protocol import check_protocol
from situ_gym.scene.model import Profile, Task

__all__ = ["Persona", "CAREFUL"]

_LEVEL_TALK = {"low": 0.5, "medium": 0.75, "high": 1.0}
_LEVEL_VOLUNTEER = {"low": 0.1, "medium": 0.2, "high": 0.35}
_SUBSTITUTE = {"low": 0.35, "medium": 0.65, "high": 0.9}
_EXPLAIN_SHIFT = {"low": -1, "medium": 0, "high": 1}
_BUDGET_SLACK = {"low": 0.10, "medium": 0.05, "high": 0.0}
CAREFUL = 0.6  # conscientiousness from which the shopper checks a product itself before buying
_FOLLOW_SHIFT = 0.2  # navigation following per unit of conscientiousness away from 0.5


@dataclass(frozen=True)
class Persona:
    patience: int
    answer_p: float
    volunteer_p: float
    explanations_needed: int
    substitute_p: float
    tradeoff_p: float
    budget_slack: float
    soft_needs: frozenset[str]
    price_sensitive: bool
    talkativeness: str
    behavior_style: str
    checks_details: bool
    navigation_following: float

    @classmethod
    def of(cls, profile: Profile, task: Task, protocol: str = "default") -> Persona:
        paper = check_protocol(protocol) == "paper"
        it, b5 = profile.interaction, profile.big_five
        agree, neuro = b5.get("agreeableness", 0.5), b5.get("neuroticism", 0.5)
        extra, openness = b5.get("extraversion", 0.5), b5.get("openness", 0.5)
        conscientious = b5.get("conscientiousness", 0.5)
        patience = it.patience + (agree >= 0.6) - (neuro >= 0.6)
        needed = task.acceptance.explanations_needed
        if needed:
            needed = max(0, needed + _EXPLAIN_SHIFT[it.explanation_seeking])
        needs = [d.value for d in task.disclosure if d.kind == "need" and isinstance(d.value, str)]
        needs += [t for t in task.required_tags if t not in needs]
        # The paper's shopper buys within the needs and the budget: nothing is soft (A.3).
        soft = frozenset(needs[1:]) if openness >= 0.5 and not paper else frozenset()
        following = it.navigation_following + _FOLLOW_SHIFT * (conscientious - 0.5)
        return cls(
            patience=max(1, min(patience, it.patience + 1)),
            answer_p=round((_LEVEL_TALK[it.talkativeness] + 0.4 + 0.6 * extra) / 2, 4),
            volunteer_p=round(_LEVEL_VOLUNTEER[it.talkativeness] + 0.15 * extra, 4),
            explanations_needed=needed,
            substitute_p=min(1.0, max(0.0, _SUBSTITUTE[it.substitute_willingness] + 0.2 * (openness - 0.5))),
            tradeoff_p=round(0.3 + 0.4 * agree, 4),
            budget_slack=0.0 if paper else _BUDGET_SLACK[it.price_sensitivity],
            soft_needs=soft,
            price_sensitive=it.price_sensitivity == "high",
            talkativeness=it.talkativeness,
            behavior_style=it.behavior_style,
            checks_details=conscientious >= CAREFUL,
            navigation_following=round(min(1.0, max(0.0, following)), 4),
        )
