"""Cost and latency per turn per role of LLM-backed roles: a short uncached rollout, then its usage table.

    python -m eval.llm_bench [--model hf:gguf:smollm2] [--base-url URL] [--agent heuristic|chat]
                             [--tasks 0-1] [--max-turns 3] [--batch-size 2] [--out runs/llm_bench]

Plays the given tasks with the LLM shopper, the LLM moderator and the LLM judge on
``--model`` (no response cache), with the heuristic assistant or (``--agent chat``) the
chat assistant on the same model. The assistant's prompt holds the whole catalog (about
19,500 SmolLM2 tokens in the Supermarket), beyond SmolLM2's 8,192-token context, so
``--agent chat`` is for larger models. Then prints per role: calls (shopper
and moderator: one per turn, plus re-asks; judge: one per episode), prompt and completion
tokens, seconds per call (the batch's wall time shared over its requests) and completion
tokens per second, and re-asks and fallbacks.
"""

from __future__ import annotations

import argparse
import json
import shutil
import time
from pathlib import Path

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m eval.llm_bench", description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="hf:gguf:smollm2", help="chat model SPEC for every role")
    parser.add_argument("--base-url", default=None, help="OpenAI-compatible URL (for openai:NAME specs)")
    parser.add_argument("--agent", default="heuristic", choices=["heuristic", "chat"])
    parser.add_argument("--env", default="SituRec-Supermarket-v0")
    parser.add_argument("--tasks", default="0-1")
    parser.add_argument("--max-turns", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=2)
    parser.add_argument("--out", default="runs/llm_bench")
    args = parser.parse_args(argv)

    from eval.rollout import RolloutConfig, run
    from situ_gym.llm import format_usage

    out = Path(args.out)
    if out.exists():
        shutil.rmtree(out)
    config = RolloutConfig(
        env=args.env, agent=args.agent, model=args.model if args.agent == "chat" else None,
        base_url=args.base_url, user="llm", user_model=args.model,
        user_base_url=args.base_url, moderator="llm", judge="llm", judge_model=args.model,
        judge_base_url=args.base_url, tasks=args.tasks, max_turns=args.max_turns, batch_size=args.batch_size,
        llm_cache="none", out=str(out),
    )
    t0 = time.perf_counter()
    run(config)
    wall = time.perf_counter() - t0
    usage = json.loads((out / "metrics.json").read_text(encoding="utf-8"))["llm"]
    turns = sum(len(json.loads(line)["turns"]) for line in (out / "trajectories.jsonl").read_text().splitlines())
    print(f"\n{args.model} on {args.env}: tasks {args.tasks}, batch {args.batch_size}, {turns} turns, "
          f"wall {wall:.0f} s (incl. model load)\n")
    print(format_usage(usage))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
