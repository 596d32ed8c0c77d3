"""RecRM data CLI: synthesise databases from runs, validate JSONL files, print class counts.

    python -m recrm.data synthesize --runs runs/heuristic runs/random --out data/recrm
    python -m recrm.data validate data/recrm
    python -m recrm.data stats data/recrm
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

__all__ = ["main"]


def _synthesize(args) -> int:
    from recrm.data.io import DataError, render_records, to_dataset, write_records
    from recrm.data.synth import SynthConfig, World, class_counts, synthesize
    from situ_gym.records import read_episodes

    episodes = []
    worlds: dict[str, World] = {}
    seen: dict[tuple, Path] = {}
    for run in args.runs:
        path = Path(run)
        path = path / "trajectories.jsonl" if path.is_dir() else path
        if not path.is_file():
            raise DataError(f"{run}: no trajectories.jsonl (expected a run directory or a trajectory file)")
        for e in read_episodes(path):
            if e.error is not None:
                continue
            world = worlds.get(e.store) or worlds.setdefault(e.store, World.load(e.store))
            if e.task_id not in world.tasks:  # say which file, before anything is synthesised
                raise DataError(f"{path}: episode {e.episode_id[:80]!r}: unknown task {e.task_id[:80]!r} "
                                f"in store {e.store!r}")
            key = (e.agent, e.seed, e.episode_id)
            if key in seen:  # the records synthesised from the two would share ids
                raise DataError(f"{path}: episode {e.episode_id[:80]!r} of agent {e.agent[:40]!r} at seed {e.seed} "
                                f"is already in {seen[key]}")
            seen[key] = path
            episodes.append(e)
    if not episodes:
        raise DataError(f"no finished episodes in {args.runs}")
    config = SynthConfig(seed=args.seed, turns_per_episode=args.turns_per_episode,
                         relevance_per_episode=args.relevance_per_episode, eval_fraction=args.eval_fraction)
    records = synthesize(episodes, worlds, config)
    out = Path(args.out)
    for kind, recs in sorted(records.items()):  # every record writable, before any file is replaced
        render_records(out / f"{kind}.jsonl", recs)
    for kind, recs in sorted(records.items()):
        write_records(out / f"{kind}.jsonl", recs)
        if not args.no_hf:
            from datasets import DatasetDict, disable_progress_bars

            disable_progress_bars()

            DatasetDict({s: to_dataset([r for r in recs if r.split == s]) for s in ("train", "test")}).save_to_disk(
                str(out / "hf" / kind)
            )
    counts = class_counts(records)
    (out / "counts.json").write_text(json.dumps(counts, indent=2) + "\n", encoding="utf-8")
    print(f"{len(episodes)} episodes -> {out}")
    _print_counts(counts)
    return 0


def _print_counts(counts) -> None:
    for kind, c in counts.items():
        print(f"  {kind:<12} " + "  ".join(f"{k}={v}" for k, v in c.items()))


def _load_all(root: str):
    from recrm.data.io import read_records
    from recrm.data.schema import KINDS

    files = [Path(root) / f"{k}.jsonl" for k in KINDS if (Path(root) / f"{k}.jsonl").is_file()]
    if not files:
        from recrm.data.io import DataError

        raise DataError(f"{root}: no <kind>.jsonl files ({', '.join(KINDS)})")
    return {f.stem: read_records(f) for f in files}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m recrm.data", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    syn = sub.add_parser("synthesize", help="build the five databases from rollout runs")
    syn.add_argument("--runs", nargs="+", required=True, help="run directories (or trajectories.jsonl files)")
    syn.add_argument("--out", required=True)
    syn.add_argument("--seed", type=int, default=0)
    syn.add_argument("--turns-per-episode", type=int, default=4)
    syn.add_argument("--relevance-per-episode", type=int, default=6)
    syn.add_argument("--eval-fraction", type=float, default=0.2, help="share of shopper profiles held out")
    syn.add_argument("--no-hf", action="store_true", help="write only the JSONL files")
    for name in ("validate", "stats"):
        p = sub.add_parser(name, help=f"{name} a data directory")
        p.add_argument("dir")
    args = parser.parse_args(argv)
    from recrm.data.io import DataError

    try:
        if args.command == "synthesize":
            return _synthesize(args)
        records = _load_all(args.dir)
        if args.command == "validate":
            print(f"{args.dir}: " + ", ".join(f"{k} {len(v)} ok" for k, v in records.items()))
        else:
            from recrm.data.synth import class_counts

            _print_counts(class_counts(records))
        return 0
    except (DataError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
