"""Cost of the RecRM scorers: ``python -m benchmarks.recrm_scoring`` prints time per turn, alone and batched.

Uses the packaged Supermarket assets when they load, else a synthetic catalog of
``--products`` items; scores a fixed mix of turns (questions, honest recommendations,
hallucinated prices and products, catalog dumps) ``--repeat`` times. Times are process CPU
time (``time.process_time``), so a busy machine inflates them less than wall time. Each
scorer is timed one turn per call ("alone") and over all the turns in one call ("batched",
as ``recrm.step_envs`` scores one step of many envs); ``--scorer DIM=model:PATH`` adds a
learned scorer (wall-clock ms per turn, alone and in batches of ``--batch``).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from recrm.components import default_components
from recrm.composite import RecRMComposite
from recrm.context import TurnContext
from recrm.scorers import score_batch
from situ_gym.language.claims import _words, lexicon, tokenize
from situ_gym.records import ToolCall, TurnRecord
from situ_gym.scene.index import SceneIndex
from situ_gym.scene.model import (
    AcceptancePolicy,
    DisclosureItem,
    Fixture,
    Layout,
    Pose2,
    Product,
    Scene,
    Task,
    Waypoint,
)

__all__ = ["main", "synthetic_world", "sample_turns"]

_BRANDS = [
    "Harbor Catch",
    "Sunny Fields",
    "Morning Mill",
    "Green Valley",
    "Polar Bay",
    "Oak & Ember",
    "Blue Hen",
    "Prairie Gold",
]
_KINDS = [
    ("frozen fish", "frozen foods", "Fillets"),
    ("breakfast cereal", "pantry", "Cereal"),
    ("granola", "pantry", "Granola"),
    ("fresh fruit", "produce", "Apples"),
    ("yogurt", "dairy", "Yogurt"),
    ("pasta", "pantry", "Penne"),
]
_ADJ = [
    "Plain",
    "Honey",
    "Organic",
    "Crunchy",
    "Classic",
    "Wild",
    "Greek",
    "Whole Wheat",
    "Gluten-Free",
    "Lightly Salted",
]
_TAGS = [
    "diet:gluten-free",
    "diet:vegan",
    "diet:organic",
    "allergen:contains-nuts",
    "flavor:honey",
    "diet:high-protein",
]


def synthetic_world(n_products: int = 150) -> tuple[SceneIndex, Task]:
    """A seeded-by-construction catalog of ``n_products`` over 12 fixtures, and one task."""
    fixtures = []
    for f in range(12):
        fixtures.append(
            Fixture(
                id=f"sm_f{f:02d}",
                name=f"Shelf {f + 1}",
                kind="shelf",
                footprint=(f * 2.0, 0.0, f * 2.0 + 1.5, 1.0),
                height=2.0,
                levels=[0.5],
                color=(200, f, 1),
                front_yaw=90.0,
                approach={"front": Pose2(x=f * 2.0 + 0.7, y=2.0)},
                product_ids=[],
            )
        )
    products = []
    for i in range(n_products):
        cat, group, noun = _KINDS[i % len(_KINDS)]
        brand, adj = _BRANDS[i % len(_BRANDS)], _ADJ[(i // len(_KINDS)) % len(_ADJ)]
        products.append(
            Product(
                id=f"sm_p{i:03d}",
                name=f"{brand} {adj} {noun}, {12 + i % 5} oz",
                brand=brand,
                category=cat,
                group=group,
                price=round(1.99 + (i * 37 % 1500) / 100, 2),
                attributes={"size": f"{12 + i % 5} oz"},
                tags=[_TAGS[i % len(_TAGS)], _TAGS[(i * 7) % len(_TAGS)]],
                color=(i % 256, i // 256, 50),
                fixture_id=f"sm_f{i % 12:02d}",
                instances=[],
            )
        )
    scene = Scene(
        store="supermarket",
        name="synthetic",
        products=products,
        fixtures=fixtures,
        layout=Layout(bounds=(0.0, 0.0, 30.0, 10.0), walls=[], start=Pose2(x=1.0, y=5.0)),
        waypoints=[Waypoint(id="w0", x=1.0, y=5.0, neighbors=[])],
    )
    index = SceneIndex(scene)
    target = products[1]
    refs = [p.id for p in products if p.category == target.category][:6]
    task = Task(
        id="sm_t000",
        store="supermarket",
        profile_id="pr",
        theme="breakfast",
        request="cereal",
        category=target.category,
        required_tags=[target.tags[0]],
        avoided_tags=[],
        target_product_id=target.id,
        disclosure=[
            DisclosureItem(kind="category", text="cereal", value=target.category),
            DisclosureItem(kind="budget", text="under 20", value=20.0),
            DisclosureItem(kind="need", text="needs it", value=target.tags[0]),
        ],
        acceptance=AcceptancePolicy(
            inspect_before_buying=False,
            explanations_needed=0,
            accept_substitutes=True,
            rejection_style="reason",
        ),
        budget_tier="flexible",
        budget=20.0,
        reference_set=refs,
        subset=0,
    )
    return index, task


def sample_turns(index: SceneIndex, task: Task) -> list[tuple[TurnRecord, list[TurnRecord]]]:
    """A fixed mix of (turn, history) pairs covering every scorer path."""
    target = index.products[task.target_product_id]
    others = [p for p in index.products.values() if p.id != target.id][:12]
    ranking = [task.target_product_id] + [p.id for p in others[:9]]
    eua = ToolCall(name="idle", arguments={})
    raw = '{"response": "x", "assistant_actions": [{"type": "Recommend"}], "expected_user_action": {"name": "idle"}}'

    def rec(n, response, atype="AskPreference", rid=None, rank=(), user="", revealed=()):
        action = {"type": atype}
        if atype == "Recommend":
            action.update(
                display_name=index.products[rid].name,
                visible_now=False,
                reason="fits what you described so far",
            )
        return TurnRecord(
            turn=n,
            assistant_raw=raw,
            assistant_valid=True,
            response=response,
            action_type=atype,
            action=action,
            recommended_id=rid,
            expected_user_action=eua,
            ranking=list(rank),
            user_utterance=user,
            visible_before=[target.id, target.fixture_id or ""],
            revealed=list(revealed),
        )

    history = [
        rec(
            1,
            "Hi! What are you shopping for today?",
            "Greet",
            user=f"I need some {task.category}.",
            revealed=["category"],
        ),
        rec(
            2,
            "Do you have a price range in mind?",
            user="I would like to stay under twenty dollars.",
            revealed=["budget"],
        ),
    ]
    honest = (
        f"I'd recommend the {target.name}. It costs ${target.price:.2f}, within your $20 budget, and it is on "
        f"{index.name(target.fixture_id)}."
    )
    turns = [
        rec(3, "Anything you need to avoid, like allergens?", rank=ranking),
        rec(3, honest, "Recommend", target.id, ranking),
        rec(3, honest.replace(f"${target.price:.2f}", "$0.49"), "Recommend", target.id, ranking),
        rec(3, f"Try the {target.brand} chocolate puffs instead.", "Recommend", target.id, ranking),
        rec(
            3,
            "Options: " + "; ".join(p.name for p in others[:8]) + ".",
            "Recommend",
            target.id,
            ranking,
        ),
        rec(3, "I would like to stay under twenty dollars.", "Recommend", target.id, ranking),
    ]
    return [(t, history) for t in turns] + [(history[1], history[:1])]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.recrm_scoring", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--repeat", type=int, default=300)
    parser.add_argument(
        "--products",
        type=int,
        default=150,
        help="synthetic catalog size when the assets do not load",
    )
    parser.add_argument(
        "--scorer",
        action="append",
        default=[],
        metavar="DIM=model:PATH",
        help="also time a learned scorer, per turn alone and in batches of --batch turns",
    )
    parser.add_argument("--batch", type=int, default=16, help="turns per batched call of a learned scorer")
    args = parser.parse_args(argv)
    try:
        from recrm.score import load_world

        tasks, index = load_world("supermarket")
        task = next(iter(tasks.values()))
        world = f"packaged supermarket assets ({len(index.products)} products)"
    except (ImportError, OSError, ValueError, StopIteration):
        index, task = synthetic_world(args.products)
        world = f"synthetic catalog ({len(index.products)} products)"
    pairs = sample_turns(index, task)
    contexts = [TurnContext.from_record(t, None, task, index, h) for t, h in pairs]
    composite = RecRMComposite()
    composite.score(contexts[0])  # build the catalog lexicon once (cached per SceneIndex)
    print(
        f"RecRM rule-based scorers on {world}; {len(contexts)} turn kinds x {args.repeat} repeats"
    )

    def per_turn_us(fn) -> float:
        samples = []
        for _ in range(5):
            t0 = time.process_time()
            for _ in range(max(1, args.repeat // 5)):
                for c in contexts:
                    fn(c)
            samples.append((time.process_time() - t0) / (max(1, args.repeat // 5) * len(contexts)))
        return statistics.median(samples) * 1e6

    def batched_us(score_many) -> float:  # one call over all the turns, as for a vector step
        samples = []
        for _ in range(5):
            t0 = time.process_time()
            for _ in range(max(1, args.repeat // 5)):
                score_many(contexts)
            samples.append((time.process_time() - t0) / (max(1, args.repeat // 5) * len(contexts)))
        return statistics.median(samples) * 1e6

    for comp in default_components():
        alone = per_turn_us(comp.score)
        batched = batched_us(lambda ctxs, comp=comp: score_batch(comp, ctxs))
        print(f"  {comp.name:<12} {alone:8.1f} us/turn alone, {batched:8.1f} us/turn in batches of {len(contexts)}")
    print(
        f"  {'composite':<12} {per_turn_us(composite.score):8.1f} us/turn alone, "
        f"{batched_us(composite.score_batch):8.1f} us/turn batched, warm (all five + gating)"
    )
    lex = lexicon(index)

    def cold(c: TurnContext) -> None:  # a new text every turn: no tokenizer/mention cache hits
        _words.cache_clear()
        tokenize.cache_clear()
        lex._mention_cache.clear()
        composite.score(c)

    print(
        f"  {'composite':<12} {per_turn_us(cold):8.1f} us/turn cold (caches cleared before each turn)"
    )
    t0 = time.process_time()
    for t, h in pairs * 50:
        _words.cache_clear()
        tokenize.cache_clear()
        lex._mention_cache.clear()
        composite.score(TurnContext.from_record(t, None, task, index, h))
    us = (time.process_time() - t0) / (len(pairs) * 50) * 1e6
    print(
        f"  {'from_record':<12} {us:8.1f} us/turn cold, context built from a TurnRecord + composite"
    )
    for spec in args.scorer:
        _time_learned(spec, contexts, args.batch)
    return 0


def _time_learned(spec: str, contexts: list[TurnContext], batch: int) -> None:
    """Wall-clock ms per turn of a learned scorer: one turn per call, then batched calls."""
    from recrm.scorers import resolve_scorer

    name, _, model = spec.partition("=")
    scorer = resolve_scorer(name, model)
    turns = (contexts * (batch // len(contexts) + 1))[:batch]
    scorer.score_batch(turns[:2])  # warm-up: first-call allocations
    t0 = time.perf_counter()
    for c in turns:
        scorer.score(c)
    single = (time.perf_counter() - t0) / len(turns) * 1e3
    t0 = time.perf_counter()
    scorer.score_batch(turns)
    batched = (time.perf_counter() - t0) / len(turns) * 1e3
    print(
        f"  {name:<12} {single:8.1f} ms/turn one at a time, {batched:8.1f} ms/turn in batches of "
        f"{len(turns)} ({model}, {getattr(scorer, 'device', 'cpu')})"
    )


if __name__ == "__main__":
    sys.exit(main())
