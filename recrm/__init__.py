"""RecRM: the gated multi-dimensional reward (RecRM-Bench) for SituRec Gym.

``R_total = C_inst * C_consist * (alpha R_relev + beta 1[R_relev > tau] (R_rank + R_beh))``,
every component in [0, 1]; defaults alpha=1, beta=0.5, tau=0.5, divided by
``alpha + 2 beta`` so that ``R_total`` is in [0, 1] (``normalize=False`` gives [0, 2]).

* ``InstructionFollowing`` (C_inst, gate): output schema, one action with its fields,
  legal visible expected action, no marker labels / jargon / ids, length, no parroting;
  the six rubric dimensions (role, process, format, content quality, constraint, style)
  are scored 1-5 in the details.
* ``FactualConsistency`` (C_consist, gate): item hallucination (unknown products, wrong
  prices, attributes, locations, visibility, ids) and content hallucination (cart, hand
  and budget claims the record contradicts).
* ``QueryItemRelevance`` (R_relev in {0, 0.5, 1} = the paper's 0/1/2) on the Recommend
  item, else the ranking head, judged only on what the user has revealed.
* ``ItemRanking`` (R_rank = NDCG@10 against the reference set) and
  ``BehaviorPrediction`` (R_beh = the item this user would buy is in the top 10).
* Turns that judge no item earn a dialogue credit for what they do (``recrm.dialogue``: a
  question about an open slot, followable guidance, at most 0.2), far below an honest
  recommendation; naming a product makes a turn a recommendation attempt, judged as one.
* The ablation ladder R1..R5: "outcome", "+instruction", "+relevance", "+behavior", "full";
  and "paper", the formula of RecRM-Bench 4.5 as written (not normalised, no dialogue
  credit, no first-turn cap), which ``RecRMReward`` picks for an env made with
  ``protocol="paper"``.

``RecRMReward`` wraps an env (``step_envs`` steps many, scoring their turns in one batch per
component; ``RecRMVectorReward`` does the same for a ``SyncVectorEnv``); ``python -m recrm.score FILE``
re-scores trajectories;
``python -m benchmarks.recrm_scoring`` times the scorers.
"""

# The five components and their interface are recrm's public names too.
from recrm.components import *  # noqa: F403
from recrm.components import __all__ as _components_all
from recrm.composite import VARIANTS, RecRMComposite, RecRMResult, Variant, resolve_variant
from recrm.context import TurnContext

__all__ = [
    "TurnContext",
    *_components_all,
    "RecRMComposite",
    "RecRMResult",
    "Variant",
    "VARIANTS",
    "resolve_variant",
    "RecRMReward",  # noqa: F405 - these three are loaded lazily by __getattr__
    "RecRMVectorReward",  # noqa: F405
    "step_envs",  # noqa: F405
]


def __getattr__(name: str):
    # The wrapper imports gymnasium; load it on first use only.
    if name in ("RecRMReward", "RecRMVectorReward", "step_envs"):
        from recrm import wrapper

        return getattr(wrapper, name)
    raise AttributeError(f"module 'recrm' has no attribute {name!r}")
