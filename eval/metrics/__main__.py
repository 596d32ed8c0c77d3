"""Score a SituRec trajectory file (App. C.1): ``python -m eval.metrics FILE [--json] [--judge rule|llm|none]``.

    python -m eval.metrics RUN --judge llm --judge-model SPEC [--judge-base-url URL] [--protocol default|paper]

rates any saved run with a chat model (all episodes in one batch, then one batch of
re-asks; unusable replies fall back to the rule judge, and a line on stderr says how many).
The judge rates under ``--protocol``, by default the protocol the episodes were played
under (``EpisodeRecord.protocol``). The command lives apart from the metric functions
(``eval.metrics``) because it needs the aggregation and the report, which are built on
those functions.
"""

from __future__ import annotations

import json
import sys
from typing import NoReturn

from situ_gym import cli

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    import argparse
    from pathlib import Path

    from eval.aggregate import judge_label, load_indexes, load_tasks, summarize_groups
    from eval.io import read_episodes, register_run_store, task_order
    from eval.judge import judge_from_cli, recorded_protocol
    from eval.report import format_console
    from situ_gym.llm import METER, LLMError
    from situ_gym.protocol import PROTOCOLS

    parser = argparse.ArgumentParser(
        prog="python -m eval.metrics", description="Score a SituRec trajectory file (App. C.1)."
    )
    parser.add_argument("file", help="trajectories.jsonl (or the run directory holding it)")
    parser.add_argument("--json", action="store_true", help="print every figure as JSON")
    parser.add_argument("--judge", default="rule", help="dialogue judge: rule | llm | none (default: rule)")
    parser.add_argument("--judge-model", default=None, help="chat model SPEC for --judge llm (hf:... | openai:NAME)")
    parser.add_argument("--judge-base-url", default=None, help="OpenAI-compatible URL for the judge model")
    parser.add_argument("--protocol", default=None, choices=PROTOCOLS,
                        help="the judge's protocol (default: the one the episodes were played under)")
    parser.add_argument("--no-scene", action="store_true",
                        help="do not load the scene (Catalog %% and the Home CGV product rule off)")
    cli.add_verbose(parser)
    args = parser.parse_args(argv)

    def fail(message: str) -> NoReturn:  # one line, exit 2 (usage is for --help)
        cli.fail(parser, message)

    cli.setup_logging(args.verbose)
    path = Path(args.file)
    try:
        trajectories = path / "trajectories.jsonl" if path.is_dir() else path
        register_run_store(trajectories)
        episodes = task_order(read_episodes(trajectories))
        protocol = args.protocol or recorded_protocol(episodes)
        # Checked before anything is rated: a missing model, a dead endpoint, an unknown judge.
        judge = judge_from_cli(args.judge, model=args.judge_model, base_url=args.judge_base_url, protocol=protocol)
    except (ValueError, OSError) as exc:  # missing, unreadable or garbage file; a bad judge
        fail(str(exc).splitlines()[0])
    if not episodes:
        fail(f"no episodes in {str(path)!r}")
    stores = {ep.store for ep in episodes}
    indexes = {} if args.no_scene else load_indexes(stores)
    ratings = None
    if judge is not None:
        tasks = {} if args.no_scene else load_tasks(stores)
        before = dict(METER.totals.get("judge", {}))
        try:
            ratings = judge.rate_batch([(ep, tasks.get(ep.task_id), indexes.get(ep.store)) for ep in episodes])
        except LLMError as exc:  # the endpoint died after the check (retries spent)
            fail(f"judge model {args.judge_model}: {(str(exc).splitlines() or [type(exc).__name__])[0]}")
        if args.judge == "llm":
            after = METER.totals.get("judge", {})
            fell = int(after.get("fallbacks", 0) - before.get("fallbacks", 0))
            reasks = int(after.get("reasks", 0) - before.get("reasks", 0))
            print(f"judge {judge_label(ratings)} ({protocol} protocol): {len(ratings)} episodes, {reasks} re-asked, "
                  f"{fell} fell back to the rule judge ({fell / len(ratings):.0%})", file=sys.stderr)
    groups = summarize_groups(episodes, indexes=indexes, ratings=ratings)
    if args.json:
        print(json.dumps(groups, indent=2, sort_keys=True))
    else:
        print(format_console(groups))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
