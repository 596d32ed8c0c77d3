"""Aggregation (App. C.1): subset means with the sample SD of the four subset means, cohort
means, event-pooled statistics, and the full summary that becomes ``metrics.json``."""

from __future__ import annotations

import logging
import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from eval import metrics as M
from recrm.dimensions import GATES, dimension
from situ_gym.records import EpisodeRecord
from situ_gym.scene.index import SceneIndex

__all__ = [
    "TABLE3",
    "TABLE8",
    "TERMINATIONS",
    "by_environment",
    "termination_reasons",
    "mean_sd",
    "subset_stat",
    "load_indexes",
    "load_tasks",
    "reward_summary",
    "summarize",
    "summarize_groups",
]

logger = logging.getLogger(__name__)

TABLE3 = ("SR", "Turn", "AFR", "LNSR", "R@5", "NDCG@10")
TABLE8 = ("RPR", "RPR|Cart", "R-MRR@10", "Catalog %", "Rec", "Tools")
# Episode endings (App. B.3) in the order the report and Fig. 11 show them: the success
# first, then the ways an episode stops without one.
TERMINATIONS = ("success_cart_added", "turn_limit", "recommendation_exhausted", "moderator_end", "motion_stall",
                "error")

# metric -> per-episode value (table units) or None when the episode is not eligible.
_EPISODE_VALUE: dict[str, Callable[[dict[str, Any]], float | None]] = {
    "SR": lambda m: 100.0 * m["success"],
    "Turn": lambda m: float(m["turns"]),
    "AFR": lambda m: None if m["afr"] is None else 100.0 * m["afr"],
    "LNSR": lambda m: None if m["lnsr"] is None else 100.0 * m["lnsr"],
    "R@5": lambda m: 100.0 * m["r5"],
    "NDCG@10": lambda m: 100.0 * m["ndcg10"],
    "RPR": lambda m: 100.0 * m["rpr"],
    "RPR|Cart": lambda m: None if m["rpr_cart"] is None else 100.0 * m["rpr_cart"],
    "R-MRR@10": lambda m: None if m["rmrr10"] is None else 100.0 * m["rmrr10"],
    "Rec": lambda m: float(m.get("attempts", 0)),
    "Tools": lambda m: float(m.get("tool_calls", 0)),
}


def mean_sd(subset_means: Sequence[float]) -> tuple[float | None, float | None]:
    """Mean of the subset means and their sample SD (ddof = 1; None with fewer than two)."""
    vals = [float(v) for v in subset_means]
    if not vals:
        return None, None
    mu = sum(vals) / len(vals)
    if len(vals) < 2:
        return mu, None
    return mu, math.sqrt(sum((v - mu) ** 2 for v in vals) / (len(vals) - 1))


def subset_stat(pairs: Iterable[tuple[int, float | None]]) -> dict[str, Any]:
    """From (subset, value-or-None) pairs: per-subset means over eligible episodes, their
    mean and sample SD, the cohort mean over all eligible episodes, and counts. Subsets
    without an eligible episode are left out of the mean +- SD."""
    by_subset: dict[int, list[float]] = {}
    for g, v in pairs:
        if v is not None:
            by_subset.setdefault(int(g), []).append(float(v))
    subsets = {g: sum(v) / len(v) for g, v in sorted(by_subset.items())}
    mu, sd = mean_sd(list(subsets.values()))
    pooled = [v for vs in by_subset.values() for v in vs]
    return {
        "mean": mu,
        "sd": sd,
        "cohort": sum(pooled) / len(pooled) if pooled else None,
        "n": len(pooled),
        "subsets": {str(g): m for g, m in subsets.items()},
    }


def _catalog_stat(per_episode: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Catalog %: entries pooled within each subset (and over the cohort)."""
    num: dict[int, int] = {}
    den: dict[int, int] = {}
    for m in per_episode:
        if m["catalog_total"] is None:
            continue
        num[m["subset"]] = num.get(m["subset"], 0) + m["catalog_in"]
        den[m["subset"]] = den.get(m["subset"], 0) + m["catalog_total"]
    subsets = {g: 100.0 * num[g] / den[g] for g in sorted(den) if den[g] > 0}
    mu, sd = mean_sd(list(subsets.values()))
    total = sum(den.values())
    return {
        "mean": mu,
        "sd": sd,
        "cohort": 100.0 * sum(num.values()) / total if total else None,
        "n": total,
        "subsets": {str(g): v for g, v in subsets.items()},
    }


def load_indexes(stores: Iterable[str]) -> dict[str, SceneIndex]:
    """SceneIndex per store from the packaged assets; stores that fail to load are skipped
    with a warning (Catalog % and the Home CGV product rule then stay off for them)."""
    out: dict[str, SceneIndex] = {}
    for store in sorted(set(stores)):
        try:
            from situ_gym.scene.loader import load_scene

            out[store] = SceneIndex(load_scene(store))
        except Exception as exc:  # noqa: BLE001 - scoring must go on without the scene
            logger.warning("scene for %r not loaded (%s); scene-dependent metrics are off", store, exc)
    return out


def load_tasks(stores: Iterable[str]) -> dict[str, Any]:
    """Task records by id from the packaged task banks (empty where unavailable)."""
    out: dict[str, Any] = {}
    for store in sorted(set(stores)):
        try:
            from situ_gym.scene.loader import load_task_bank

            out.update({t.id: t for t in load_task_bank(store).tasks})
        except Exception as exc:  # noqa: BLE001
            logger.warning("task bank for %r not loaded (%s)", store, exc)
    return out


# the gates' names and their symbols' (recrm.dimensions: instruction / c_inst, consistency / c_consist)
_GATES = (*GATES, *(dimension(g).symbol.lower() for g in GATES))


def reward_summary(episodes: Iterable[EpisodeRecord]) -> dict[str, Any]:
    """Means of whatever reward components the turns carry (None values skipped), and for
    the gates C_inst / C_consist (keys ending in "instruction", "consistency", "c_inst" or
    "c_consist") the pass rate in percent = the mean gate value (the share of turns that
    pass, for 0/1 gates; as ``recrm.score`` reports it). Empty when no turn has a reward."""
    values: dict[str, list[float]] = {}
    for ep in episodes:
        for t in ep.turns:
            for k, v in t.reward.items():
                if v is not None:
                    values.setdefault(k, []).append(float(v))
    if not values:
        return {}
    out: dict[str, Any] = {"mean": {}, "turns": {}, "gate_pass_rate": {}}
    for k in sorted(values):
        vs = values[k]
        out["mean"][k] = sum(vs) / len(vs)
        out["turns"][k] = len(vs)
        if k.rsplit("/", 1)[-1] in _GATES:
            out["gate_pass_rate"][k] = 100.0 * sum(vs) / len(vs)
    return out


def judge_label(ratings: Sequence[dict[str, Any]]) -> str | None:
    """Who gave the ratings: one judge's name, or each judge with its share when some ratings
    came from another (an LLM judge's rule-based fallbacks are not the model's ratings).

    >>> judge_label([{"judge": "llm:m"}, {"judge": "rule (fallback: no JSON)"}, {"judge": "llm:m"}])
    'llm:m (2 of 3), rule fallback (1 of 3)'
    """
    if not ratings:
        return None
    def who(rating: dict[str, Any]) -> str:
        name = str(rating.get("judge", "unknown"))
        return name.split(" (fallback", 1)[0] + " fallback" if "(fallback" in name else name

    names = Counter(who(r) for r in ratings)
    if len(names) == 1:
        return next(iter(names))
    return ", ".join(f"{name} ({n} of {len(ratings)})" for name, n in names.most_common())


def summarize(
    episodes: Sequence[EpisodeRecord],
    indexes: Mapping[str, SceneIndex] | None = None,
    ratings: Sequence[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Every figure of one cohort (one env and agent): Table 3 and Table 8 metrics as subset
    mean +- SD with cohort means, SR(t), CGV, action shares, the actions suggested within
    Navigate responses (Fig. 10), terminations, pass^k, rewards,
    and (when ``ratings`` holds one judge dict per episode) dialogue ratings."""
    indexes = indexes or {}
    per_ep = [M.episode_metrics(ep, indexes.get(ep.store)) for ep in episodes]
    out: dict[str, Any] = {
        "episodes": len(episodes),
        "env_ids": sorted({ep.env_id for ep in episodes}),
        "agents": sorted({ep.agent for ep in episodes}),
        "users": sorted({ep.user for ep in episodes}),
        "subsets": sorted({ep.subset for ep in episodes}),
        "protocols": sorted({ep.protocol for ep in episodes}),
        "errors": sum(1 for ep in episodes if ep.termination == "error"),
        "error_causes": dict(sorted(Counter(ep.error_cause or "crash" for ep in episodes
                                            if ep.termination == "error").items())),
    }
    table: dict[str, Any] = {}
    for name, fn in _EPISODE_VALUE.items():
        table[name] = subset_stat((m["subset"], fn(m)) for m in per_ep)
    table["Catalog %"] = _catalog_stat(per_ep)
    out["metrics"] = table
    out["sr_by_turn"] = M.sr_by_turn(episodes)
    out["cgv"] = M.cgv_curve([j for m in per_ep for j in m["cgv_first_seen"]])
    out["action_shares"] = M.action_shares(episodes)
    out["navigate_actions"] = M.navigate_suggestions(episodes)
    out["termination"] = M.termination_counts(episodes)
    out["pass_hat_k"] = {str(k): v for k, v in M.pass_hat_k(episodes).items()}
    out["repeats"] = max(Counter(e.task_id for e in episodes).values(), default=0)
    out["reward"] = reward_summary(episodes)
    if ratings is not None:
        if len(ratings) != len(episodes):
            raise ValueError(f"need one rating per episode, got {len(ratings)} for {len(episodes)}")
        dims = [k for k in ratings[0] if isinstance(ratings[0][k], (int, float))] if ratings else []
        out["dialogue"] = {
            "judge": judge_label(ratings),
            "ratings": {
                d: subset_stat((ep.subset, r.get(d)) for ep, r in zip(episodes, ratings, strict=True)) for d in dims
            },
        }
    out["per_episode"] = [
        {k: v for k, v in m.items() if k != "cgv_first_seen"} | {"cgv_events": len(m["cgv_first_seen"])}
        for m in per_ep
    ]
    return out


def summarize_groups(
    episodes: Sequence[EpisodeRecord],
    indexes: Mapping[str, SceneIndex] | None = None,
    ratings: Sequence[dict[str, Any]] | None = None,
) -> dict[str, dict[str, Any]]:
    """``summarize`` per (env id, agent, protocol) cohort, keyed ``"<env_id> / <agent>"``, with
    `` [paper]`` appended for episodes played under the paper's protocol."""
    groups: dict[str, list[int]] = {}
    for i, ep in enumerate(episodes):
        suffix = "" if ep.protocol == "default" else f" [{ep.protocol}]"
        groups.setdefault(f"{ep.env_id} / {ep.agent}{suffix}", []).append(i)
    return {
        key: summarize(
            [episodes[i] for i in idx],
            indexes,
            None if ratings is None else [ratings[i] for i in idx],
        )
        for key, idx in sorted(groups.items())
    }


def by_environment(groups: Mapping[str, Any]) -> dict[str, list[tuple[str, Any]]]:
    """Cohorts keyed ``"<env_id> / <agent>"`` split into one list per environment (the
    paper's panels), each of (agent, cohort) in the groups' order.

    >>> by_environment({"E1 / a": 1, "E2 / b": 2, "E1 / c": 3})
    {'E1': [('a', 1), ('c', 3)], 'E2': [('b', 2)]}
    """
    out: dict[str, list[tuple[str, Any]]] = {}
    for key, s in groups.items():
        env, agent = key.split(" / ", 1) if " / " in key else (key, "")
        out.setdefault(env, []).append((agent, s))
    return out


def termination_reasons(groups: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The reasons that occur in any cohort: those of TERMINATIONS in its order, then any other."""
    seen = {r for s in groups.values() for r in s["termination"]}
    return [r for r in TERMINATIONS if r in seen] + sorted(seen - set(TERMINATIONS))
