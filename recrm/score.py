"""Re-score saved trajectories with RecRM: ``python -m recrm.score runs/NAME/trajectories.jsonl``.

Prints, per agent and overall, the mean per-turn ``R_total``, the mean episode return,
the gate pass rates (C_inst, C_consist), each component's mean over the turns where it
applies, and the most frequent failed checks::

    python -m recrm.score runs/heuristic/trajectories.jsonl --variant full
    python -m recrm.score runs/heuristic/trajectories.jsonl --json > recrm.json
    python -m recrm.score runs/heuristic/trajectories.jsonl --scorer relevance=llm:hf:gguf:smollm2

``--scorer DIMENSION=SPEC`` (repeatable) replaces a dimension's rule scorer by a learned
(``model:PATH``) or zero-shot chat-model (``llm:SPEC``) one, as ``RecRMReward(scorers=...)``.

``score_episodes(episodes)`` is the library entry point (eval.rollout calls it).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, NoReturn

from recrm.composite import COMPONENT_NAMES, VARIANTS, RecRMComposite
from recrm.context import TurnContext
from recrm.dimensions import GATES, SCORES, dimension
from situ_gym import cli
from situ_gym.records import EpisodeRecord, read_episodes
from situ_gym.scene.index import SceneIndex
from situ_gym.scene.model import Task

__all__ = ["score_episodes", "load_world", "main"]

logger = logging.getLogger(__name__)


def load_world(store: str) -> tuple[dict[str, Task], SceneIndex]:
    """The task bank (by id) and SceneIndex of a store, from the packaged assets."""
    from situ_gym.scene.loader import load_scene, load_task_bank

    bank = load_task_bank(store)
    return {t.id: t for t in bank.tasks}, SceneIndex(load_scene(store))


class _Summary:
    def __init__(self) -> None:
        self.episodes = 0
        self.turns = 0
        self.returns: list[float] = []
        self.total = 0.0
        self.gates: Counter[str] = Counter()
        self.sums: dict[str, float] = defaultdict(float)
        self.counts: Counter[str] = Counter()
        self.indicator = 0
        self.failures: Counter[str] = Counter()

    def add_turn(self, result, reward: float) -> None:
        self.turns += 1
        self.total += reward
        for gate, value in result.gates.items():
            # the judge's verdict, also under variants that leave the gate out of the total
            verdict = result.components.get(gate)
            self.gates[gate] += value if verdict is None else verdict
        if result.indicator:
            self.indicator += 1
        for name, value in result.components.items():
            if value is not None:
                self.sums[name] += value
                self.counts[name] += 1
        for f in result.details.get("instruction", {}).get("findings", []):
            if f["hard"]:
                self.failures[f"instruction/{f['dimension']}"] += 1
        for f in result.details.get("consistency", {}).get("findings", []):
            self.failures[f"consistency/{f['check']}"] += 1

    def as_dict(self) -> dict[str, Any]:
        n = max(self.turns, 1)
        return {
            "episodes": self.episodes,
            "turns": self.turns,
            "mean_total": self.total / n,
            "mean_return": sum(self.returns) / max(len(self.returns), 1),
            "gate_pass": {g: self.gates[g] / n for g in GATES},
            "indicator_rate": self.indicator / n,
            "components": {
                name: {
                    "mean": (self.sums[name] / self.counts[name]) if self.counts[name] else None,
                    "applicable": self.counts[name] / n,
                }
                for name in COMPONENT_NAMES
            },
            "failures": dict(self.failures.most_common(8)),
        }


def score_episodes(
    episodes: Iterable[EpisodeRecord | Mapping[str, Any]],
    *,
    variant: str = "full",
    composite: RecRMComposite | None = None,
    tasks: Mapping[str, Task] | None = None,
    indexes: Mapping[str, SceneIndex] | None = None,
    outcome_bonus: float = 0.0,
) -> dict[str, Any]:
    """Re-score saved episodes turn by turn; summaries overall and per agent.

    ``tasks`` (task id -> Task) and ``indexes`` (store -> SceneIndex) default to the
    packaged assets. An episode whose target, reference set or budget differ from the
    bank's task (assets regenerated since the run) is scored with its own saved values
    and listed in ``stale``. The per-turn reward is the composite's ``total`` plus
    ``outcome_bonus`` on the turn whose user action grew the cart; with variant
    ``"outcome"`` it is that outcome alone. Episodes whose task is unknown are skipped
    and listed in ``skipped``.
    """
    composite = composite or RecRMComposite(variant=variant)
    tasks = dict(tasks) if tasks is not None else {}
    indexes = dict(indexes) if indexes is not None else {}
    loaded: set[str] = set()
    overall, per_agent = _Summary(), defaultdict(_Summary)
    skipped: list[str] = []
    stale: list[str] = []
    for ep in episodes:
        ep = ep if isinstance(ep, EpisodeRecord) else EpisodeRecord.model_validate(ep)
        if ep.store not in loaded and (ep.store not in indexes or ep.task_id not in tasks):
            loaded.add(ep.store)
            try:
                bank, index = load_world(ep.store)
            except (ImportError, OSError, ValueError) as exc:
                logger.warning("cannot load the %s assets: %s", ep.store, exc)
            else:
                tasks = {**bank, **tasks}
                indexes.setdefault(ep.store, index)
        task, index = tasks.get(ep.task_id), indexes.get(ep.store)
        if task is None or index is None:
            logger.warning(
                "episode %s: unknown task %r in store %r; skipped",
                ep.episode_id,
                ep.task_id,
                ep.store,
            )
            skipped.append(ep.episode_id)
            continue
        if (
            task.target_product_id != ep.target_id
            or list(task.reference_set) != list(ep.reference_set)
            or abs(task.budget - ep.budget) > 1e-6
        ):
            # the assets were regenerated since the run: keep the episode's own ground truth
            logger.debug(
                "episode %s: task %s differs from the saved episode (target %s vs %s); "
                "scoring with the episode's target, reference set and budget",
                ep.episode_id,
                ep.task_id,
                task.target_product_id,
                ep.target_id,
            )
            stale.append(ep.episode_id)
            task = task.model_copy(
                update={
                    "target_product_id": ep.target_id,
                    "reference_set": list(ep.reference_set),
                    "budget": ep.budget,
                }
            )
        ret = 0.0
        prev_cart = 0
        # one batch per episode: a model or chat-model scorer sees all its turns in one call
        results = composite.score_batch([TurnContext.from_record(rec, ep, task, index, ep.turns[:i])
                                         for i, rec in enumerate(ep.turns)])
        for rec, result in zip(ep.turns, results, strict=True):
            outcome = 1.0 if len(rec.cart) > prev_cart else 0.0
            prev_cart = len(rec.cart)
            if composite.variant.name == "outcome":
                reward = outcome
            else:
                reward = result.total + outcome_bonus * outcome
            ret += reward
            for s in (overall, per_agent[ep.agent]):
                s.add_turn(result, reward)
        for s in (overall, per_agent[ep.agent]):
            s.episodes += 1
            s.returns.append(ret)
    if stale:
        logger.warning(
            "%d episodes were run on other assets (target/reference set/budget differ)", len(stale)
        )
    return {
        "variant": composite.variant.name,
        "params": {
            "alpha": composite.alpha,
            "beta": composite.beta,
            "tau": composite.tau,
            "normalize": composite.normalize,
            "outcome_bonus": outcome_bonus,
        },
        "overall": overall.as_dict(),
        "agents": {name: s.as_dict() for name, s in sorted(per_agent.items())},
        "skipped": skipped,
        "stale": stale,
    }


def _fmt(x: float | None) -> str:
    return "   -  " if x is None else f"{x:6.3f}"


def _print_table(result: dict[str, Any]) -> None:
    p = result["params"]
    print(f"RecRM variant {result['variant']}  alpha={p['alpha']} beta={p['beta']} tau={p['tau']}")
    head = f"{'agent':<22}{'eps':>5}{'turns':>7}{'R_total':>9}{'return':>8}"
    head += "".join(f"{dimension(g).symbol[:6]:>8}" for g in GATES)  # C_inst, C_cons
    head += "".join(f"{n[:7]:>8}" for n in SCORES)
    print(head)
    rows = list(result["agents"].items()) + [("(all)", result["overall"])]
    for name, s in rows:
        comps = s["components"]
        print(
            f"{name[:21]:<22}{s['episodes']:>5}{s['turns']:>7}{s['mean_total']:>9.3f}{s['mean_return']:>8.3f}"
            + "".join(f"{s['gate_pass'][g]:>8.3f}" for g in GATES)
            + "".join(f"{_fmt(comps[n]['mean']):>8}" for n in SCORES)
        )
    if result["overall"]["failures"]:
        print(
            "most frequent failed checks: "
            + ", ".join(f"{k} x{v}" for k, v in result["overall"]["failures"].items())
        )
    if result["skipped"]:
        print(f"skipped {len(result['skipped'])} episodes with unknown tasks")
    if result["stale"]:
        print(
            f"{len(result['stale'])} episodes were run on other assets; scored with their saved "
            "target, reference set and budget (disclosures and catalog are today's)"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m recrm.score", description=__doc__.splitlines()[0]
    )
    parser.add_argument("file", nargs="?", help="trajectories.jsonl written by eval.rollout")
    parser.add_argument(
        "--variant", default=None,
        help=f"reward variant: {', '.join(VARIANTS)} or R1..R5 (paper: RecRM-Bench 4.5 as written); default: the "
             "episodes' protocol's (paper under protocol paper, else full)",
    )
    parser.add_argument("--alpha", type=float, default=1.0)
    parser.add_argument("--beta", type=float, default=0.5)
    parser.add_argument("--tau", type=float, default=0.5)
    parser.add_argument("--outcome-bonus", type=float, default=0.0)
    parser.add_argument("--json", action="store_true", help="print the full result as JSON")
    parser.add_argument("--scorer", action="append", default=[], metavar="DIMENSION=SPEC",
                        help="rule | model:PATH | llm:SPEC for one reward dimension (repeatable)")
    cli.add_verbose(parser)
    args = parser.parse_args(argv)
    cli.setup_logging(args.verbose)

    def fail(message: str) -> NoReturn:  # one line, exit 2 (usage is for --help)
        cli.fail(parser, message)
    if not args.file:
        fail("a trajectory file is required (python -m benchmarks.recrm_scoring times the scorers)")
    if not Path(args.file).is_file():
        fail(f"no such trajectory file: {args.file!r}")
    try:
        episodes = read_episodes(args.file)
    except (ValueError, OSError) as exc:  # garbage, binary or unreadable file
        fail(str(exc).splitlines()[0])
    if not episodes:  # as eval.metrics: a table of zeros would read as a score
        fail(f"no episodes in {args.file!r}")
    variant = args.variant
    if variant is None:  # the reward the episodes were played under (as RecRMReward picks it)
        protocols = sorted({ep.protocol for ep in episodes})
        if len(protocols) > 1:
            fail(f"the file mixes protocols {protocols}: choose the reward with --variant")
        variant = "paper" if protocols == ["paper"] else "full"
    scorers = {}
    for value in args.scorer:
        name, sep, spec = value.partition("=")
        if not sep or not spec:
            fail(f"--scorer {value!r}: use DIMENSION=SPEC (SPEC: rule, model:PATH or llm:SPEC)")
        scorers[name] = spec
    from situ_gym.llm import BackendUnavailable

    try:
        composite = RecRMComposite(
            alpha=args.alpha, beta=args.beta, tau=args.tau, variant=variant, scorers=scorers or None
        )
    except (ValueError, BackendUnavailable) as exc:
        fail(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
    result = score_episodes(episodes, composite=composite, outcome_bonus=args.outcome_bonus)
    if args.json:
        json.dump(result, sys.stdout, indent=2)
        print()
    else:
        _print_table(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
