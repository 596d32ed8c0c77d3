"""Per-episode and per-event metrics of SituRecBench App. C.1, computed from EpisodeRecords.

Everything here reads trajectory records only (``situ_gym.records``); a run can be
re-scored at any time with ``python -m eval.metrics runs/NAME/trajectories.jsonl``.
Subset means +- SD and the report tables are built in ``eval.aggregate``.

Choices the appendix leaves open (documented once, here):

* Saved recommendation list (R@5, NDCG@10, R-MRR@10, Catalog %): a turn saves a list when
  its ranking is non-empty or its assistant JSON carried a ``"ranking"`` key (an empty list
  there is a saved list scoring zero, App. C.1 "An empty recommendation list scores zero").
  Rankings are scored on their first 10 (NDCG, R-MRR) / 5 (R@5) entries as stored.
* Navigation events (AFR, LNSR): every turn whose assistant output carried an expected user
  action; the actual action is the user's (single) tool call of that turn.
* CGV window: for a navigation-goal event at turn t, horizon h covers the observation the
  assistant acted on (``visible_before`` of turn t, h = 0) and the observations after the
  user's actions of turns t .. t+h-1 (``visible_after``); End covers every later one. An
  event is checkable when the goal id is known (and, given a scene index, a navigation
  target of that scene); in Home Furnishings a visible product whose store/area is the
  goal also counts (this needs the scene index).
"""

from __future__ import annotations

import json
import logging
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from situ_gym import jsonl
from situ_gym.actions.assistant import ACTION_TYPES
from situ_gym.actions.tools import DIRECTIONAL_TOOLS, LEGAL_TOOLS
from situ_gym.records import EpisodeRecord, ToolCall
from situ_gym.scene.index import SceneIndex
from situ_gym.stores import spec_table, store_spec

__all__ = [
    "MAX_TURNS",
    "CGV_HORIZONS",
    "LNSR_TOOLS",
    "success",
    "turn_count",
    "saved_rankings",
    "recall_at_5",
    "ndcg_at_10",
    "ranking_scores",
    "afr_scores",
    "lnsr_scores",
    "episode_afr",
    "episode_lnsr",
    "cgv_events",
    "cgv_curve",
    "sr_by_turn",
    "reciprocal_rank",
    "episode_rmrr",
    "catalog_counts",
    "reference_purchase",
    "pass_hat_k",
    "action_shares",
    "navigate_suggestions",
    "termination_counts",
    "episode_metrics",
]

logger = logging.getLogger(__name__)

MAX_TURNS = 20
CGV_HORIZONS = (0, 1, 2, 3, 4, 5)

# LNSR's comparable tools per store (App. C.1 "Local Navigation Alignment").
LNSR_TOOLS: Mapping[str, tuple[str, ...]] = spec_table(lambda spec: spec.lnsr_tools)
_DIRECTIONS = {"look_up_down": ("up", "down")}  # the other directional tools: left/right


# ---------------------------------------------------------------- outcome


def success(ep: EpisodeRecord) -> int:
    """C_e: 1 iff the final cart is nonempty."""
    return int(len(ep.cart) > 0)


def turn_count(ep: EpisodeRecord) -> int:
    """T_e: the number of distinct recorded turns."""
    return len({t.turn for t in ep.turns})


def sr_by_turn(episodes: Sequence[EpisodeRecord], max_turns: int = MAX_TURNS) -> list[float]:
    """SR(t) = 100/N * sum_e 1[C_e = 1 and T_e <= t] for t = 1..max_turns (index 0 is t=1)."""
    n = len(episodes)
    if n == 0:
        return [0.0] * max_turns
    return [
        100.0 * sum(1 for e in episodes if success(e) and turn_count(e) <= t) / n
        for t in range(1, max_turns + 1)
    ]


# ---------------------------------------------------------------- rankings


def _raw_has_ranking(raw: str) -> bool:
    """Did the assistant's JSON text carry a "ranking" key? (json only, never eval)."""
    start, end = raw.find("{"), raw.rfind("}")
    if start < 0 or end <= start:
        return False
    try:
        obj = jsonl.loads(raw[start : end + 1])
    except (json.JSONDecodeError, ValueError):
        return False
    return isinstance(obj, dict) and "ranking" in obj


def saved_rankings(ep: EpisodeRecord) -> list[list[str]]:
    """The episode's saved recommendation lists R_et, one per turn that saved one."""
    return [list(t.ranking) for t in ep.turns if t.ranking or _raw_has_ranking(t.assistant_raw)]


def _first_occurrences(ranking: Sequence[str], k: int) -> list[tuple[int, str]]:
    """(1-based rank, id) of the first occurrence of each id within the top k; repeats keep
    their positions (they just earn nothing)."""
    seen: set[str] = set()
    out = []
    for r, pid in enumerate(ranking[:k], start=1):
        if pid not in seen:
            seen.add(pid)
            out.append((r, pid))
    return out


def recall_at_5(ranking: Sequence[str], purchased: Iterable[str]) -> float:
    """q = |unique(R[1:5]) & P| / |P| (0 for an empty P)."""
    p = set(purchased)
    if not p:
        return 0.0
    return len({pid for _, pid in _first_occurrences(ranking, 5)} & p) / len(p)


def ndcg_at_10(ranking: Sequence[str], purchased: Iterable[str]) -> float:
    """z = sum_{r<=10} rel_r / log2(r+1) / sum_{r<=min(10,|P|)} 1/log2(r+1); rel only at a
    product's first occurrence (0 for an empty P)."""
    p = set(purchased)
    if not p:
        return 0.0
    dcg = sum(1.0 / math.log2(r + 1) for r, pid in _first_occurrences(ranking, 10) if pid in p)
    ideal = sum(1.0 / math.log2(r + 1) for r in range(1, min(10, len(p)) + 1))
    return dcg / ideal


def ranking_scores(ep: EpisodeRecord) -> tuple[float, float]:
    """(s_e(q), s_e(z)): R@5 and NDCG@10 averaged over the saved lists, as fractions; 0 when
    the final cart is empty or no list was saved."""
    purchased = set(ep.cart)
    lists = saved_rankings(ep)
    if not purchased or not lists:
        return 0.0, 0.0
    q = sum(recall_at_5(r, purchased) for r in lists) / len(lists)
    z = sum(ndcg_at_10(r, purchased) for r in lists) / len(lists)
    return q, z


def reciprocal_rank(ranking: Sequence[str], reference: Iterable[str]) -> float:
    """1/rank of the first reference item within the top ten, else 0."""
    ref = set(reference)
    for r, pid in enumerate(ranking[:10], start=1):
        if pid in ref:
            return 1.0 / r
    return 0.0


def episode_rmrr(ep: EpisodeRecord) -> float | None:
    """Mean reciprocal rank over the saved lists; None when the episode saved none."""
    lists = saved_rankings(ep)
    if not lists:
        return None
    return sum(reciprocal_rank(r, ep.reference_set) for r in lists) / len(lists)


def catalog_counts(ep: EpisodeRecord, catalog: set[str]) -> tuple[int, int]:
    """(ranked entries that are catalog product ids, all ranked entries) over saved lists."""
    entries = [pid for r in saved_rankings(ep) for pid in r]
    return sum(1 for pid in entries if pid in catalog), len(entries)


def reference_purchase(ep: EpisodeRecord) -> int:
    """1 iff a purchased (cart) item belongs to the reference set A_e."""
    ref = set(ep.reference_set)
    return int(any(pid in ref for pid in ep.cart))


# ---------------------------------------------------------------- navigation


def _legal(store: str) -> tuple[str, ...]:
    if store not in LEGAL_TOOLS:
        raise ValueError(f"unknown store {store!r}; expected one of {sorted(LEGAL_TOOLS)}")
    return LEGAL_TOOLS[store]


def afr_scores(ep: EpisodeRecord) -> list[int]:
    """One 0/1 per event of V_e (expected tool name in the legal set): 1 iff the user's
    tool name equals it. Absent actual actions score 0."""
    return [int(act is not None and act.name == exp.name) for exp, act in _legal_events(ep)]


def _legal_events(ep: EpisodeRecord) -> list[tuple[ToolCall, ToolCall | None]]:
    """(expected, actual) user actions of the turns whose expected tool is legal in the store (V_e)."""
    legal = _legal(ep.store)
    return [(t.expected_user_action, t.user_action) for t in ep.turns
            if t.expected_user_action is not None and t.expected_user_action.name in legal]


def _arg(call: ToolCall, key: str) -> str | None:
    v = call.arguments.get(key)
    return v.strip().lower() if isinstance(v, str) and v.strip() else None


def _lnsr_event(store: str, exp: ToolCall, act: ToolCall | None) -> int | None:
    """b * 1[same tool] for one event, or None when the expected action is not comparable."""
    if exp.name not in LNSR_TOOLS[store]:
        return None
    if exp.name in DIRECTIONAL_TOOLS:
        d = _arg(exp, "direction")
        if d not in _DIRECTIONS.get(exp.name, ("left", "right")):
            return None  # unavailable (or meaningless) expected direction
        return int(act is not None and act.name == exp.name and _arg(act, "direction") == d)
    # Targeted: move_to_fixture / move_to_store / move_to_area compare entity identity.
    if exp.target_id is None:
        return None  # unavailable expected target
    if act is None or act.name != exp.name or act.target_id != exp.target_id:
        return 0
    if exp.name == "move_to_store":
        approach = _arg(exp, "approach")
        if approach is not None and _arg(act, "approach") != approach:
            return 0
    return 1


def lnsr_scores(ep: EpisodeRecord) -> list[int]:
    """One 0/1 per event of D_e (comparable expected action within V_e)."""
    scores = (_lnsr_event(ep.store, exp, act) for exp, act in _legal_events(ep))
    return [s for s in scores if s is not None]


def episode_afr(ep: EpisodeRecord) -> float | None:
    s = afr_scores(ep)
    return sum(s) / len(s) if s else None


def episode_lnsr(ep: EpisodeRecord) -> float | None:
    s = lnsr_scores(ep)
    return sum(s) / len(s) if s else None


def _goal_seen(goal: str, visible: Iterable[str], index: SceneIndex | None, store: str) -> bool:
    for eid in visible:
        if eid == goal:
            return True
        if index is not None and eid in index.products and store_spec(store).layout == "stores":
            p = index.products[eid]
            if goal in (p.store_id, p.area_id):
                return True
    return False


def cgv_events(ep: EpisodeRecord, index: SceneIndex | None = None) -> list[int | None]:
    """One entry per checkable navigation-goal event: the smallest j such that the goal is
    visible in observation j of its window (0 = current view of turn t, j >= 1 = the view
    after the user's action of turn t+j-1), or None if it never becomes visible by the end."""
    turns = sorted(ep.turns, key=lambda t: t.turn)
    nav = set(index.nav_targets) if index is not None else None
    out: list[int | None] = []
    for i, t in enumerate(turns):
        goal = t.navigation_goal_id
        if not goal or (nav is not None and goal not in nav):
            continue
        first: int | None = 0 if _goal_seen(goal, t.visible_before, index, ep.store) else None
        if first is None:
            for j, later in enumerate(turns[i:], start=1):
                if _goal_seen(goal, later.visible_after, index, ep.store):
                    first = j
                    break
        out.append(first)
    return out


def cgv_curve(first_seen: Sequence[int | None]) -> dict[str, float | None]:
    """CGV_h (percent) for h = 0..5 and End over pooled events, plus ΔCGV_h = CGV_h - CGV_0.
    Keys: "0".."5", "End", "delta_1".."delta_5", "delta_End", "events"."""
    n = len(first_seen)
    out: dict[str, float | None] = {"events": float(n)}
    if n == 0:
        for h in CGV_HORIZONS:
            out[str(h)] = None
        out["End"] = None
        for h in (*CGV_HORIZONS[1:], "End"):
            out[f"delta_{h}"] = None
        return out
    for h in CGV_HORIZONS:
        out[str(h)] = 100.0 * sum(1 for j in first_seen if j is not None and j <= h) / n
    out["End"] = 100.0 * sum(1 for j in first_seen if j is not None) / n
    for h in (*CGV_HORIZONS[1:], "End"):
        out[f"delta_{h}"] = out[str(h)] - out["0"]
    return out


# ---------------------------------------------------------------- behaviour


def action_shares(episodes: Iterable[EpisodeRecord]) -> dict[str, Any]:
    """Shares (percent) of the ten dialogue actions pooled over turns with a recognised
    primary action; ``unrecognised`` counts turns without one."""
    counts: Counter[str] = Counter()
    unrecognised = 0
    for ep in episodes:
        for t in ep.turns:
            if t.action_type in ACTION_TYPES:
                counts[t.action_type] += 1
            else:
                unrecognised += 1
    total = sum(counts.values())
    shares = {a: (100.0 * counts[a] / total if total else 0.0) for a in ACTION_TYPES}
    return {"shares": shares, "counts": {a: counts[a] for a in ACTION_TYPES},
            "turns": total, "unrecognised": unrecognised}


def navigate_suggestions(episodes: Iterable[EpisodeRecord]) -> dict[str, Any]:
    """Suggested user actions within Navigate responses (SituRecBench Fig. 10), events
    pooled over episodes.

    An event is a turn whose primary dialogue action is Navigate and whose expected user
    action names a tool legal in the episode's store. ``shares`` (percent of events) say how
    often each legal tool was suggested; ``same_rate`` (percent of that tool's events, None
    when it was never suggested) how often the shopper's executed tool call had the same
    name. ``actions`` lists the legal tools in the paper's order (the union over stores when
    episodes of several stores are pooled); ``without_suggestion`` counts Navigate turns whose
    expected action is missing or illegal (they are no event)."""
    actions: list[str] = []
    suggested: Counter[str] = Counter()
    same: Counter[str] = Counter()
    navigate = without = 0
    for ep in episodes:
        legal = _legal(ep.store)
        actions += [a for a in legal if a not in actions]
        for t in ep.turns:
            if t.action_type != "Navigate":
                continue
            navigate += 1
            exp = t.expected_user_action
            if exp is None or exp.name not in legal:
                without += 1
                continue
            suggested[exp.name] += 1
            same[exp.name] += int(t.user_action is not None and t.user_action.name == exp.name)
    events = sum(suggested.values())
    return {
        "actions": actions,
        "counts": {a: suggested[a] for a in actions},
        "same": {a: same[a] for a in actions},
        "shares": {a: (100.0 * suggested[a] / events if events else 0.0) for a in actions},
        "same_rate": {a: (100.0 * same[a] / suggested[a] if suggested[a] else None) for a in actions},
        "events": events,
        "navigate_turns": navigate,
        "without_suggestion": without,
    }


def termination_counts(episodes: Iterable[EpisodeRecord]) -> dict[str, int]:
    return dict(sorted(Counter(ep.termination for ep in episodes).items()))


def pass_hat_k(episodes: Iterable[EpisodeRecord]) -> dict[int, float]:
    """tau-bench pass^k: mean over tasks of C(c, k) / C(n, k) for k = 1..min_n, where a task
    ran n times with c successes; for k = n this is 1[all n succeed]. Percent."""
    per_task: dict[str, list[int]] = {}
    for ep in episodes:
        per_task.setdefault(ep.task_id, []).append(success(ep))
    if not per_task:
        return {}
    k_max = min(len(v) for v in per_task.values())
    return {
        k: 100.0 * sum(math.comb(sum(v), k) / math.comb(len(v), k) for v in per_task.values())
        / len(per_task)
        for k in range(1, k_max + 1)
    }


# ---------------------------------------------------------------- one episode


def episode_metrics(
    ep: EpisodeRecord,
    index: SceneIndex | None = None,
) -> dict[str, Any]:
    """Every per-episode figure (fractions, not percent); None marks "not eligible"."""
    q, z = ranking_scores(ep)
    afr, lnsr = afr_scores(ep), lnsr_scores(ep)
    cat_in, cat_total = (
        catalog_counts(ep, set(index.products)) if index is not None else (None, None)
    )
    return {
        "episode_id": ep.episode_id,
        "task_id": ep.task_id,
        "subset": ep.subset,
        "success": success(ep),
        "turns": turn_count(ep),
        "r5": q,
        "ndcg10": z,
        "afr": sum(afr) / len(afr) if afr else None,
        "afr_events": len(afr),
        "lnsr": sum(lnsr) / len(lnsr) if lnsr else None,
        "lnsr_events": len(lnsr),
        "rpr": reference_purchase(ep),
        "rpr_cart": reference_purchase(ep) if ep.cart else None,
        "rmrr10": episode_rmrr(ep),
        "catalog_in": cat_in,
        "catalog_total": cat_total,
        "cgv_first_seen": cgv_events(ep, index),
        # recommendation attempts by the env's rule (situ_gym.language.attempts)
        "attempts": sum(t.recommendation_attempts for t in ep.turns),
        # catalog/map tool calls the assistant made within its turns (catalog_view="tools")
        "tool_calls": ep.tool_calls,
        "termination": ep.termination,
    }
