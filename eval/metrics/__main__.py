"""Score a SituRec trajectory file (App. C.1): ``python -m eval.metrics FILE [--json] [--judge rule|none]``.

The command lives apart from the metric functions (``eval.metrics``) because it needs the
aggregation and the report, which are built on those functions.
"""

from __future__ import annotations

import json
import logging

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    import argparse
    from pathlib import Path

    from eval.aggregate import load_indexes, load_tasks, summarize_groups
    from eval.io import read_episodes, task_order
    from eval.judge import make_judge
    from eval.report import format_console

    parser = argparse.ArgumentParser(
        prog="python -m eval.metrics", description="Score a SituRec trajectory file (App. C.1)."
    )
    parser.add_argument("file", help="trajectories.jsonl (or the run directory holding it)")
    parser.add_argument("--json", action="store_true", help="print every figure as JSON")
    parser.add_argument("--judge", default="rule", help="dialogue judge ('rule'; 'none' to skip)")
    parser.add_argument("--no-scene", action="store_true",
                        help="do not load the scene (Catalog %% and the Home CGV product rule off)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    path = Path(args.file)
    try:
        episodes = task_order(read_episodes(path / "trajectories.jsonl" if path.is_dir() else path))
        judge = None if args.judge == "none" else make_judge(args.judge)
    except (ValueError, OSError) as exc:  # missing, unreadable or garbage file; unknown judge
        parser.error(str(exc).splitlines()[0])
    if not episodes:
        parser.error(f"no episodes in {str(path)!r}")
    stores = {ep.store for ep in episodes}
    indexes = {} if args.no_scene else load_indexes(stores)
    ratings = None
    if judge is not None:
        tasks = {} if args.no_scene else load_tasks(stores)
        ratings = [judge.rate(ep, tasks.get(ep.task_id), indexes.get(ep.store)) for ep in episodes]
    groups = summarize_groups(episodes, indexes=indexes, ratings=ratings)
    if args.json:
        print(json.dumps(groups, indent=2, sort_keys=True))
    else:
        print(format_console(groups))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
