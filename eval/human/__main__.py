"""Serve the human evaluation: ``python -m eval.human serve --assistants heuristic,random --port 8000``.

    python -m eval.human serve --assistants heuristic,random,hf:PATH,openai:MODEL \\
        --out runs/human [--env SituRec-Supermarket-v0] [--seed 42] [--tasks-per-participant 2] \\
        [--host 127.0.0.1] [--port 8000] [--max-turns 20] \\
        [--assistant-options '{"openai:MODEL": {"base_url": "http://127.0.0.1:8001/v1"}}']
    python -m eval.human report --out runs/human         # run reports + questionnaire vs judge
    python -m eval.human report --out runs/human --judge llm --judge-model SPEC [--judge-base-url URL]
    python -m eval.human screenshots --out docs/img     # one PNG per page, through Chromium

Participants open http://HOST:PORT/ in a browser. Every assistant is built and reset on one
task first; one that cannot play stops the command (``error: ...``, exit 2). The researcher
page (progress per participant and assistant) is ``/admin?token=TOKEN``, with the token
printed at start (a new one each start). Results go to ``OUT/runs/<assistant>/``
(trajectories.jsonl, ratings.jsonl, config.json), ready for ``python -m eval.metrics`` and
``python -m eval.agreement``. Restart the command with the same arguments to resume.
"""

from __future__ import annotations

import argparse
import logging
import secrets
import sys

from eval.human.protocol import PAPER_TASKS_PER_PARTICIPANT
from situ_gym import jsonl

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m eval.human", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="run the web app")
    serve.add_argument("--assistants", required=True,
                       help="comma list: heuristic, random, hf:PATH, KIND:MODEL or pkg.module:Class")
    serve.add_argument("--out", default="runs/human", help="study directory (default: runs/human)")
    serve.add_argument("--env", default="SituRec-Supermarket-v0", help="registered env id")
    serve.add_argument("--seed", type=int, default=42, help="task sampling and episode seed (paper: 42)")
    serve.add_argument("--tasks", type=int, default=5, help="tasks sampled from the bank (paper: 5)")
    serve.add_argument("--tasks-per-participant", type=int, default=PAPER_TASKS_PER_PARTICIPANT,
                       help="consecutive sampled tasks per participant, cyclically (default 2: the paper's "
                            "adjacent pairs, each task done by two participants)")
    serve.add_argument("--max-turns", type=int, default=20, help="turn limit")
    serve.add_argument("--max-participants", type=int, default=None, help="refuse joining beyond this many")
    serve.add_argument("--assistant-options", type=_json_object, default={},
                       help='JSON: constructor arguments per assistant, e.g. \'{"openai:NAME": {"base_url": "URL"}}\'')
    serve.add_argument("--host", default="127.0.0.1", help="interface to listen on")
    serve.add_argument("--port", type=int, default=8000, help="port to listen on")
    rep = sub.add_parser("report", help="each run's report, and the questionnaire beside the judge")
    rep.add_argument("--out", default="runs/human", help="study directory (default: runs/human)")
    rep.add_argument("--judge", default="rule", help="dialogue judge for the comparison: rule | llm (default: rule)")
    rep.add_argument("--judge-model", default=None, help="chat model SPEC for --judge llm (hf:... | openai:NAME)")
    rep.add_argument("--judge-base-url", default=None, help="OpenAI-compatible URL for the judge model")
    rep.add_argument("--protocol", default=None, choices=("default", "paper"),
                     help="the judge's protocol (default: the one the conversations were played under)")
    shots = sub.add_parser("screenshots", help="save a PNG of each page (needs Chromium)")
    shots.add_argument("--out", default="docs/img", help="folder for the PNGs")
    shots.add_argument("--chromium", default="/usr/bin/chromium", help="Chromium executable")
    return parser


def _json_object(text: str) -> dict:
    try:
        value = jsonl.loads(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not valid JSON ({exc})") from exc
    if not isinstance(value, dict) or not all(isinstance(v, dict) for v in value.values()):
        raise argparse.ArgumentTypeError('expected {"assistant name": {"argument": value}}')
    return value


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    try:
        if args.command == "serve":
            return _serve(args)
        if args.command == "report":
            from eval.human.report import report
            from situ_gym.llm import LLMError

            try:
                print(report(args.out, judge=args.judge, judge_model=args.judge_model,
                             judge_base_url=args.judge_base_url, protocol=args.protocol))
            except LLMError as exc:  # the judge's endpoint died after the check (retries spent)
                raise ValueError(f"judge model {args.judge_model}: {(str(exc).splitlines() or [''])[0]}") from exc
            return 0
        from eval.human.browser import save_screenshots

        for path in save_screenshots(args.out, chromium_path=args.chromium):
            print(path)
        return 0
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


def _serve(args: argparse.Namespace) -> int:
    try:
        import uvicorn

        from eval.human.app import create_app
    except ImportError as exc:
        raise ValueError(f"{exc.name} is missing: pip install \"situ-gym[human]\"") from exc
    from eval.human.assistants import parse_assistant_list
    from eval.human.study import Study, StudyConfig

    config = StudyConfig(
        assistants=tuple(parse_assistant_list(args.assistants)),
        out=args.out,
        env=args.env,
        seed=args.seed,
        task_count=args.tasks,
        tasks_per_participant=args.tasks_per_participant,
        max_turns=args.max_turns,
        assistant_options=args.assistant_options,
        max_participants=args.max_participants,
    )
    study = Study(config, check=True)  # every assistant built and reset once, before anyone can join
    admin_token = secrets.token_urlsafe(18)
    print(f"tasks: {', '.join(study.task_ids)}")
    print(f"open http://{args.host}:{args.port}/ (results in {args.out}/runs/)")
    print(f"researcher page: http://{args.host}:{args.port}/admin?token={admin_token}", flush=True)
    uvicorn.run(create_app(study, admin_token=admin_token), host=args.host, port=args.port, log_level="warning")
    study.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
