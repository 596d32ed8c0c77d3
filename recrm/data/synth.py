"""Synthesis of the five RecRM databases from SituRec trajectories (deterministic under a seed).

* instruction: turns that pass the rule gate are positives; for each one a negative breaks
  exactly one rubric dimension (cycled, so the six are balanced), as the paper synthesises.
* consistency: consistent turns (some with a true price/location fact added) and the same
  turns with one injected item hallucination (unknown product, wrong price, label or
  location) or content hallucination (cart, hand, budget claims, ungrounded claims).
* relevance: (what the shopper had said, item, 0/1/2) labelled from the task's
  constraints: another group 0, same group or an unmet revealed need 1, all met 2.
* ranking: ten candidates with the item the shopper bought (else the target) as the one positive.
* behavior: the episode's last top-10 list and a list with / without the purchased item.

Split by shopper profile: held-out profiles give the ``test`` records.
"""

from __future__ import annotations

import logging
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from recrm.components import FactualConsistency, InstructionFollowing
from recrm.components.instruction import DIMENSIONS
from recrm.context import TurnContext
from recrm.data.perturb import (
    CONTENT_HALLUCINATIONS,
    INSTRUCTION_PERTURBATIONS,
    ITEM_HALLUCINATIONS,
    true_fact,
)
from recrm.data.schema import (
    BehaviorRecord,
    ConsistencyRecord,
    InstructionRecord,
    RankingRecord,
    RelevanceRecord,
    Source,
)
from recrm.data.text import context_text, facts_text, item_text, profile_text, query_text
from situ_gym.records import EpisodeRecord, TurnRecord
from situ_gym.scene.index import SceneIndex
from situ_gym.scene.model import Profile, Task

__all__ = ["World", "SynthConfig", "split_profiles", "relevance_label", "synthesize", "class_counts", "slim_turn"]

logger = logging.getLogger(__name__)

_SLIM = {"turn", "assistant_raw", "assistant_valid", "response", "action_type", "recommended_id", "ranking",
         "user_utterance", "held_item", "cart", "revealed"}


@dataclass
class World:
    """One store's ground truth: tasks by id, the scene index and profiles by id."""

    tasks: Mapping[str, Task]
    index: SceneIndex
    profiles: Mapping[str, Profile] = field(default_factory=dict)

    @classmethod
    def load(cls, store: str) -> World:
        from situ_gym.scene.loader import load_scene, load_task_bank

        bank = load_task_bank(store)
        return cls({t.id: t for t in bank.tasks}, SceneIndex(load_scene(store)), {p.id: p for p in bank.profiles})


@dataclass(frozen=True)
class SynthConfig:
    """How much to draw from each episode; every count is per episode."""

    seed: int = 0
    turns_per_episode: int = 4  # seed turns for instruction / consistency
    relevance_per_episode: int = 6
    candidates: int = 10
    eval_fraction: float = 0.2  # share of shopper profiles held out as ``test``

    def __post_init__(self) -> None:
        if self.turns_per_episode < 1 or self.relevance_per_episode < 1:
            raise ValueError(
                f"per-episode counts must be >= 1, got turns={self.turns_per_episode}, "
                f"relevance={self.relevance_per_episode}"
            )
        if self.candidates < 2:
            raise ValueError(f"candidates must be >= 2, got {self.candidates}")
        if not 0.0 < self.eval_fraction < 1.0:
            raise ValueError(f"eval_fraction must be in (0, 1), got {self.eval_fraction}")


def split_profiles(profile_ids: Sequence[str], eval_fraction: float, seed: int) -> set[str]:
    """The held-out profiles: a seeded permutation of the sorted ids, at least one, never all."""
    ids = sorted(set(profile_ids))
    if len(ids) < 2:
        return set()
    n = min(len(ids) - 1, max(1, round(eval_fraction * len(ids))))
    order = np.random.default_rng(seed).permutation(len(ids))
    return {ids[i] for i in order[:n]}


def slim_turn(t: TurnRecord) -> dict:
    """The fields of an earlier turn that a TurnContext reads (keeps records small)."""
    return t.model_dump(mode="json", include=_SLIM)


def relevance_label(task: Task, index: SceneIndex, pid: str, revealed) -> tuple[int, str]:
    """RecRM's 0/1/2 from the task's truth, judged on the revealed details only, with a reason."""
    p = index.products[pid]
    target = index.products.get(task.target_product_id)
    same = p.category == task.category or pid in task.reference_set or pid == task.target_product_id
    if not same:
        if target is not None and p.group == target.group:
            return 1, f"similar category: {p.category} is in {p.group} but the shopper wants {task.category}"
        return 0, f"category mismatch: {p.category} ({p.group}) is not {task.category}"
    unmet = []
    for d in revealed:
        v = d.value
        if d.kind in ("need", "use") and isinstance(v, str) and ":" in v and v not in p.tags:
            unmet.append(f"lacks {v.split(':', 1)[1]}")
        elif d.kind == "avoid" and isinstance(v, str) and ":" in v and v in p.tags:
            unmet.append(f"has {v.split(':', 1)[1]}, which the shopper avoids")
        elif d.kind == "budget":
            budget = float(v) if isinstance(v, (int, float)) else task.budget
            if p.price > budget * 1.1 + 1e-9:
                unmet.append(f"${p.price:.2f} is over the ${budget:g} budget")
    if unmet:
        return 1, f"category matches ({p.category}) but it " + "; ".join(unmet)
    return 2, f"category matches ({p.category}) and every stated need is met"


def _revealed_items(task: Task, counts: Mapping[str, int]):
    left = dict(counts)
    out = []
    for d in task.disclosure:
        if left.get(d.kind, 0) > 0:
            out.append(d)
            left[d.kind] -= 1
    return out


def _source(ep: EpisodeRecord, turn: int = 0) -> Source:
    return Source(store=ep.store, task_id=ep.task_id, episode_id=ep.episode_id, turn=turn, agent=ep.agent,
                  seed=ep.seed)


def _budget(ctx: TurnContext) -> float | None:
    vals = [d.value for d in ctx.revealed_items if d.kind == "budget" and isinstance(d.value, (int, float))]
    return float(vals[0]) if vals else None


def _apply_any(funcs, names, rec, ctx, rng):
    """First perturbation that applies, starting at a seeded position in ``names``."""
    start = int(rng.integers(len(names)))
    for k in range(len(names)):
        name = names[(start + k) % len(names)]
        out = funcs[name](rec, ctx, rng)
        if out is not None:
            return name, out
    return None, None


def synthesize(
    episodes: Sequence[EpisodeRecord], worlds: Mapping[str, World], config: SynthConfig = SynthConfig()
) -> dict[str, list]:
    """All five record kinds from ``episodes``; ``worlds`` maps each store to its World."""
    rng = np.random.default_rng(config.seed)
    inst_rule, cons_rule = InstructionFollowing(), FactualConsistency()
    out: dict[str, list] = defaultdict(list)
    profiles = [ep.profile_id for ep in episodes]
    held = split_profiles(profiles, config.eval_fraction, config.seed)
    dim_cycle = 0
    hall_cycle = 0
    tags: set[str] = set()
    for ep in sorted(episodes, key=lambda e: (e.store, e.agent, e.seed, e.episode_id)):
        if ep.store not in worlds:
            raise ValueError(f"episode {ep.episode_id!r} is for store {ep.store!r}; no world given for it")
        world = worlds[ep.store]
        task = world.tasks.get(ep.task_id)
        if task is None:
            raise ValueError(f"episode {ep.episode_id!r}: unknown task {ep.task_id!r} in store {ep.store!r}")
        if not ep.turns:
            continue
        index = world.index
        split = "test" if ep.profile_id in held else "train"
        tag = f"{ep.agent}-s{ep.seed}-{ep.episode_id}"  # one task may be played at several seeds
        if tag in tags:  # its records would repeat the first one's ids
            raise ValueError(f"episode {ep.episode_id!r} of agent {ep.agent!r} at seed {ep.seed} is given twice")
        tags.add(tag)
        ctxs = [TurnContext.from_record(t, ep, task, index, ep.turns[:k]) for k, t in enumerate(ep.turns)]

        # ---- instruction + consistency, from a seeded sample of the episode's turns
        order = rng.permutation(len(ep.turns))[: config.turns_per_episode]
        for k in sorted(int(i) for i in order):
            rec, ctx = ep.turns[k], ctxs[k]
            history = [slim_turn(t) for t in ep.turns[:k]]
            context = context_text(ctx.dialogue, rec.visible_before, index)
            if inst_rule.score(ctx).value == 1.0:
                _add_instruction(out, tag, split, ep, rec, ctx, context, history, None, "", "pos")
                dim = DIMENSIONS[dim_cycle % len(DIMENSIONS)]
                dim_cycle += 1
                bad = INSTRUCTION_PERTURBATIONS[dim](rec, ctx, rng)
                if bad is not None:
                    _add_instruction(out, tag, split, ep, bad[0], ctx, context, history, dim, bad[1], "neg")
            if cons_rule.score(ctx).value == 1.0 and ctx.judged_item is not None:
                facts_ids = [ctx.judged_item, *[p for p in rec.ranking if p in index.products][:2]]
                facts = facts_text(index, facts_ids, ctx.cart, ctx.held_item, _budget(ctx))
                plus = true_fact(rec, ctx, rng) if rng.random() < 0.5 else None
                pos = plus[0] if plus else rec
                _add_consistency(out, tag, split, ep, pos, facts, history, "none", "", "consistent with the record", "pos")
                table = ITEM_HALLUCINATIONS if hall_cycle % 2 == 0 else CONTENT_HALLUCINATIONS
                hall_cycle += 1
                check, bad = _apply_any(table, sorted(table), rec, ctx, rng)
                if bad is not None:
                    kind = "item" if table is ITEM_HALLUCINATIONS else "content"
                    _add_consistency(out, tag, split, ep, bad[0], facts, history, kind, check, bad[1], "neg")

        # ---- relevance: the revealed state at sampled turns, a mix of item kinds
        _relevance(out, rng, config, ep, task, index, ctxs, split, tag)
        # ---- ranking + behaviour, once per episode
        _ranking_behavior(out, rng, config, ep, task, world, split, tag)
    for kind in out:
        logger.info("synthesised %d %s records", len(out[kind]), kind)
    return dict(out)


def _of_turn(split, ep, rec, history) -> dict:
    """The fields of a record built on one saved turn: its split, source, the turn and the turns before."""
    return {"split": split, "source": _source(ep, rec.turn), "turn": rec.model_dump(mode="json"), "history": history}


def _add_instruction(out, tag, split, ep, rec, ctx, context, history, dim, reason, suffix):
    dims = {d: 5 for d in DIMENSIONS}
    if dim is not None:
        dims[dim] = 1
    out["instruction"].append(
        InstructionRecord(
            id=f"inst-{tag}-t{rec.turn}-{suffix}",
            **_of_turn(split, ep, rec, history),
            context=context,
            response=rec.assistant_raw,
            label=int(dim is None),
            violation=dim,
            dimensions=dims,
            reason=reason or "every rubric dimension is met",
        )
    )


def _add_consistency(out, tag, split, ep, rec, facts, history, kind, check, reason, suffix):
    out["consistency"].append(
        ConsistencyRecord(
            id=f"cons-{tag}-t{rec.turn}-{suffix}",
            **_of_turn(split, ep, rec, history),
            facts=facts,
            response=rec.response,
            label=int(kind == "none"),
            hallucination=kind,
            check=check,
            reason=reason,
        )
    )


def _relevance(out, rng, config, ep, task, index, ctxs, split, tag):
    target = index.products[task.target_product_id]
    same_cat = sorted(p.id for p in index.products.values() if p.category == task.category)
    same_group = sorted(p.id for p in index.products.values() if p.group == target.group and p.category != task.category)
    other = sorted(p.id for p in index.products.values() if p.group != target.group)
    states = sorted({tuple(sorted(c.revealed.items())) for c in ctxs if c.revealed})
    states = states or [(("category", 1),)]
    for j in range(config.relevance_per_episode):
        state = dict(states[int(rng.integers(len(states)))])
        revealed = _revealed_items(task, state)
        pool = [same_cat, same_cat, same_group or other, other][j % 4]
        pid = pool[int(rng.integers(len(pool)))]
        score, reason = relevance_label(task, index, pid, revealed)
        out["relevance"].append(
            RelevanceRecord(
                id=f"rel-{tag}-{j}",
                split=split,
                source=_source(ep),
                query=query_text(task, revealed),
                item=item_text(index, pid),
                product_id=pid,
                score=score,
                reason=reason,
                revealed=state,
            )
        )


def _ranking_behavior(out, rng, config, ep, task, world, split, tag):
    index = world.index
    revealed_counts = Counter(kind for t in ep.turns for kind in t.revealed)
    query = query_text(task, _revealed_items(task, revealed_counts))
    profile = profile_text(world.profiles.get(ep.profile_id))
    bought = next((c for c in ep.cart if c in index.products), task.target_product_id)
    a_e = set(task.reference_set) | {task.target_product_id, bought}
    target = index.products[task.target_product_id]
    hard = [p.id for p in index.products.values() if p.category == task.category and p.id not in a_e]
    near = [p.id for p in index.products.values() if p.group == target.group and p.id not in a_e and p.id not in hard]
    rest = [p.id for p in index.products.values() if p.id not in a_e and p.id not in hard and p.id not in near]
    negs: list[str] = []
    for pool, n in ((sorted(hard), 4), (sorted(near), 3), (sorted(rest), config.candidates)):
        take = [pool[int(i)] for i in rng.permutation(len(pool))]
        negs += take[: min(n, config.candidates - 1 - len(negs))]
    cands = [bought, *negs]
    perm = [int(i) for i in rng.permutation(len(cands))]
    cands = [cands[i] for i in perm]
    # The episode's shopper and need, the same on its ranking and behaviour records.
    shopper = {"split": split, "source": _source(ep), "profile": profile, "query": query}
    out["ranking"].append(
        RankingRecord(
            id=f"rank-{tag}",
            **shopper,
            candidate_ids=cands,
            candidates=[item_text(index, c) for c in cands],
            labels=[int(c == bought) for c in cands],
            positive=cands.index(bought),
        )
    )
    last = next((t.ranking for t in reversed(ep.turns) if t.ranking), [])
    lists = {"agent": [p for p in dict.fromkeys(last) if p in index.products][:10]}
    with_it = [bought, *negs[:4]]
    lists["pos"] = [with_it[int(i)] for i in rng.permutation(len(with_it))]
    lists["neg"] = negs[4:9] or negs[:5]
    for name, items in lists.items():
        if not items:
            continue
        out["behavior"].append(
            BehaviorRecord(
                id=f"beh-{tag}-{name}",
                **shopper,
                item_ids=items,
                items=[item_text(index, p) for p in items],
                label=int(bought in items),
                purchased_id=bought,
            )
        )


def class_counts(records: Mapping[str, Sequence]) -> dict[str, dict[str, int]]:
    """Per kind and split, the count of each class (the balance the paper reports)."""
    out: dict[str, dict[str, int]] = {}
    for kind, recs in records.items():
        c: Counter[str] = Counter()
        for r in recs:
            if kind == "instruction":
                cls = r.violation or "compliant"
            elif kind == "consistency":
                cls = r.hallucination
            elif kind == "relevance":
                cls = f"score_{r.score}"
            elif kind == "ranking":
                cls = "lists"
            else:
                cls = f"label_{r.label}"
            c[f"{r.split}/{cls}"] += 1
        out[kind] = dict(sorted(c.items()))
    return out
