"""RecRM: the gated multi-dimensional reward (RecRM-Bench) for SituRec Gym.

``R_total = C_inst * C_consist * (alpha R_relev + beta 1[R_relev > tau] (R_rank + R_beh))``
with rule-based scorers for the five components, the R1..R5 ablation ladder, a
Gymnasium reward wrapper and a trajectory re-scorer (``python -m recrm.score FILE``).
"""

from recrm.components import (
    BehaviorPrediction,
    ComponentScore,
    FactualConsistency,
    InstructionFollowing,
    ItemRanking,
    QueryItemRelevance,
    RewardComponent,
    default_components,
)
from recrm.composite import VARIANTS, RecRMComposite, RecRMResult, Variant, resolve_variant
from recrm.context import TurnContext

__all__ = [
    "TurnContext",
    "ComponentScore",
    "RewardComponent",
    "InstructionFollowing",
    "FactualConsistency",
    "QueryItemRelevance",
    "ItemRanking",
    "BehaviorPrediction",
    "default_components",
    "RecRMComposite",
    "RecRMResult",
    "Variant",
    "VARIANTS",
    "resolve_variant",
    "RecRMReward",
]


def __getattr__(name: str):
    # The wrapper imports gymnasium; load it on first use only.
    if name == "RecRMReward":
        from recrm.wrapper import RecRMReward

        return RecRMReward
    raise AttributeError(f"module 'recrm' has no attribute {name!r}")
