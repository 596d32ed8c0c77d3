"""RecRM data CLI: synthesise databases from runs, validate JSONL files, print class counts.

    python -m recrm.data synthesize --runs runs/heuristic runs/random --out data/recrm
    python -m recrm.data validate data/recrm
    python -m recrm.data stats data/recrm
    python -m recrm.data label --teacher hf:gguf:smollm2 data/recrm --out data/recrm-teacher [--limit 20]
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


def _label(args) -> int:
    from recrm.data.io import DataError, write_records
    from recrm.data.label import label_records
    from recrm.data.schema import KINDS
    from recrm.judges.llm import LLMScorer

    kinds = args.kinds or list(KINDS)
    bad = sorted(set(kinds) - set(KINDS))
    if bad:
        raise DataError(f"unknown record kinds {bad}; choose from {list(KINDS)}")
    records = _load_all(args.data)
    spec = args.teacher if args.teacher.startswith("llm:") else f"llm:{args.teacher}"
    out = Path(args.out)
    if out.resolve() == Path(args.data).resolve():
        raise DataError(f"--out {args.out} is the data directory: write the labelled copy elsewhere")
    judges: dict[str, LLMScorer] = {}
    summary: dict[str, dict] = {}
    labelled: dict[str, list] = {}
    for kind, recs in records.items():
        if kind not in kinds:
            labelled[kind] = recs
            continue
        todo = [i for i, r in enumerate(recs) if args.split == "all" or r.split == args.split][: args.limit or None]
        judge = judges.get(kind) or judges.setdefault(kind, LLMScorer(kind, spec))
        done, counts = label_records(kind, [recs[i] for i in todo], judge, batch=args.batch)
        new = list(recs)
        for i, rec in zip(todo, done, strict=True):
            new[i] = rec
        labelled[kind] = new
        summary[kind] = {"labelled": counts["labelled"], "failed": counts["failed"],
                         "failures": dict(judge.failures)}
    for kind, recs in labelled.items():  # every kind written, the unlabelled ones as they were
        write_records(out / f"{kind}.jsonl", recs)
    (out / "teacher.json").write_text(json.dumps({"teacher": spec, "split": args.split, "kinds": summary},
                                                 indent=2) + "\n", encoding="utf-8")
    print(f"teacher {spec} -> {out}")
    for kind, s in summary.items():
        print(f"  {kind:<12} labelled={s['labelled']}  failed={s['failed']}")
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
    lab = sub.add_parser("label", help="label a data directory's records with a model teacher (beside the rule labels)")
    lab.add_argument("data", help="data directory (python -m recrm.data synthesize)")
    lab.add_argument("--teacher", required=True, help="chat-backend spec: hf:gguf:smollm2, openai:MODEL[@URL], ...")
    lab.add_argument("--out", required=True, help="directory of the labelled copy")
    lab.add_argument("--kinds", nargs="+", default=None, help="record kinds to label (default: all)")
    lab.add_argument("--split", default="test", choices=("train", "test", "all"), help="records to label")
    lab.add_argument("--limit", type=int, default=0, help="at most this many records per kind (0: all)")
    lab.add_argument("--batch", type=int, default=16, help="judge inputs per backend batch")
    for name in ("validate", "stats"):
        p = sub.add_parser(name, help=f"{name} a data directory")
        p.add_argument("dir")
    args = parser.parse_args(argv)
    from recrm.data.io import DataError
    from situ_gym.llm import BackendUnavailable

    try:
        if args.command == "synthesize":
            return _synthesize(args)
        if args.command == "label":
            return _label(args)
        records = _load_all(args.dir)
        if args.command == "validate":
            print(f"{args.dir}: " + ", ".join(f"{k} {len(v)} ok" for k, v in records.items()))
        else:
            from recrm.data.synth import class_counts

            _print_counts(class_counts(records))
        return 0
    except (DataError, ValueError, BackendUnavailable) as exc:
        print(f"error: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
