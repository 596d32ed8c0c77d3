"""The five RecRM reward components (rule-based defaults) and their common interface."""

from recrm.components.base import ComponentScore, RewardComponent
from recrm.components.behavior import BehaviorPrediction
from recrm.components.consistency import FactualConsistency
from recrm.components.instruction import InstructionFollowing
from recrm.components.ranking import ItemRanking, ndcg_at_k
from recrm.components.relevance import QueryItemRelevance

__all__ = [
    "ComponentScore",
    "RewardComponent",
    "InstructionFollowing",
    "FactualConsistency",
    "QueryItemRelevance",
    "ItemRanking",
    "BehaviorPrediction",
    "ndcg_at_k",
    "default_components",
]


def default_components() -> list[RewardComponent]:
    """Fresh rule-based scorers for the dimensions (``recrm.dimensions``), in gate-then-reward order."""
    from recrm.dimensions import dimensions

    return [d.make_rule() for d in dimensions()]
