"""Cost and latency per turn per role of LLM-backed roles: a short uncached rollout, or one request per role.

    python -m eval.llm_bench [--model hf:gguf:smollm2] [--base-url URL] [--agent heuristic|chat]
                             [--tasks 0-1] [--max-turns 3] [--batch-size 2] [--out runs/llm_bench]
    python -m eval.llm_bench --per-role [--model SPEC] [--task 0] [--repeats 1]
                             [--roles user,moderator,judge,assistant]
    python -m eval.llm_bench --validity [--model SPEC] [--tasks 0-2] [--min-calls 30] [--max-turns 10]

Plays the given tasks with the LLM shopper, the LLM moderator and the LLM judge on
``--model`` (no response cache), with the heuristic assistant or (``--agent chat``) the
chat assistant on the same model. The assistant's prompt holds the whole catalog (about
19,500 SmolLM2 tokens in the Supermarket), beyond SmolLM2's 8,192-token context, so
``--agent chat`` is for larger models. Then prints per role: calls (shopper
and moderator: one per turn, plus re-asks; judge: one per episode), prompt and completion
tokens, seconds per call (the batch's wall time shared over its requests) and completion
tokens per second, and re-asks and fallbacks.

``--per-role`` times the four roles one request at a time instead: the requests are the
ones the roles build in a real episode (the env plays the first turn of task ``--task``
with the LLM shopper and moderator and the chat assistant on a recording backend that
gives canned valid replies; the LLM judge rates a short heuristic episode of that task).
Each is sent to ``--model`` uncached with the role's own sampling settings and token
limit; printed per role: prompt and completion tokens, seconds per call (wall clock,
and this process's CPU seconds, all threads, which a busy machine distorts less),
completion tokens per second (medians over ``--repeats``). A prompt longer than the model's context
(the assistant's whole catalog on SmolLM2) is still sent, and flagged.

``--validity`` measures how often each model role's replies are usable: the LLM shopper on
``--model`` plays ``--tasks`` with the heuristic assistant and the rule moderator (whole
episodes, up to ``--max-turns``), then with the LLM moderator on ``--model`` (uncached, more
repeats until each role has made ``--min-calls`` calls), and the LLM judge rates
``--min-calls`` rule-shopper episodes of the same tasks. Per role it prints calls, the share
of replies that were schema-valid and legal (a re-ask or a fallback marks an unusable
reply), decisions used and fallen back, seconds per call, prompt and completion tokens per
call, and the share of each prompt repeating the previous one of its conversation. It
exits 1 when a role made fewer than ``--min-calls`` calls or fell below ``--min-valid``.
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

__all__ = ["record_role_requests", "time_requests", "format_rows", "validity_rows", "format_validity", "main"]

_REPLIES = {
    "user": json.dumps({"utterance": "Hi, I am looking for yogurt.", "tool_call": {"name": "idle", "arguments": {}},
                        "revealed": None, "give_up": False}),
    "moderator": json.dumps({"end": False, "reason": "still shopping"}),
    "assistant": json.dumps({"response": "Hello! What are you shopping for today?",
                             "assistant_actions": [{"type": "Greet"}],
                             "expected_user_action": {"name": "idle", "arguments": {}}, "ranking": []}),
    "judge": json.dumps({d: 3 for d in ("Informativeness", "Naturalness", "Groundedness", "Preference Alignment",
                                        "Proactiveness", "Non-repetition", "Overall")}),
}


def record_role_requests(env_id: str = "SituRec-Supermarket-v0", task: int = 0) -> dict[str, Any]:
    """``role -> ChatRequest``: the first request each role makes in a real episode of task ``task``."""
    import gymnasium as gym

    import situ_gym  # noqa: F401 - registers the envs
    from agents.base import agent_info
    from agents.chat_agent import ChatAssistant
    from eval.aggregate import load_indexes, load_tasks
    from eval.io import read_episodes
    from eval.llm_judge import LLMJudge
    from eval.rollout import RolloutConfig, run
    from situ_gym.llm import ChatBackend, ChatResult
    from situ_gym.user import LLMModerator, LLMUser

    class Recorder(ChatBackend):
        model = "recorder"

        def __init__(self):
            self.first: dict[str, Any] = {}

        def chat_batch(self, requests):
            for r in requests:  # a copy: the assistant appends to its message list afterwards
                self.first.setdefault(r.role, copy.deepcopy(r))
            return [ChatResult(text=_REPLIES[r.role], model=self.model) for r in requests]

    rec = Recorder()
    env = gym.make(env_id, user=LLMUser(rec), moderator=LLMModerator(rec))
    obs, info = env.reset(seed=0, options={"task_id": env.unwrapped.task_ids[task]})
    agent = ChatAssistant(rec)
    agent.reset(obs, agent_info(info), seed=0)
    env.step(agent.act(obs))
    env.close()
    with tempfile.TemporaryDirectory() as tmp:
        run(RolloutConfig(env=env_id, agent="heuristic", tasks=str(task), max_turns=6, out=tmp,
                          no_report=True, judge="none"))
        (episode,) = read_episodes(Path(tmp) / "trajectories.jsonl")
    stores = {episode.store}
    LLMJudge(rec).rate(episode, load_tasks(stores).get(episode.task_id), load_indexes(stores).get(episode.store))
    return dict(rec.first)


def time_requests(backend: Any, requests: dict[str, Any], repeats: int = 1,
                  on_row: Any = None) -> list[dict[str, Any]]:
    """Send each role's request ``repeats`` times; median figures per role (``on_row(row)`` after each)."""
    rows = []
    for role, request in requests.items():
        results, cpu = [], []
        for _ in range(repeats):
            c0 = time.process_time()  # this process's CPU time, all threads: a busy machine distorts it less
            results.append(backend.chat_batch([request])[0])
            cpu.append(time.process_time() - c0)
        seconds = statistics.median(r.seconds for r in results)
        completion = statistics.median(r.completion_tokens for r in results)
        rows.append({
            "role": role,
            "prompt_tokens": results[0].prompt_tokens,
            "completion_tokens": completion,
            "max_tokens": request.max_tokens,
            "seconds": seconds,
            "cpu_seconds": statistics.median(cpu),
            "tokens_per_s": completion / seconds if seconds > 0 else None,
            "reply": results[0].text[:80],
        })
        if on_row is not None:
            on_row(rows[-1])
    return rows


def _context(backend: Any) -> int | None:
    net = getattr(getattr(backend, "inner", backend), "net", None)
    return getattr(getattr(net, "config", None), "max_position_embeddings", None)


def format_rows(rows: list[dict[str, Any]], context: int | None = None) -> str:
    """A markdown table, one line per role."""
    names = {"user": "shopper", "moderator": "moderator", "judge": "judge", "assistant": "assistant"}
    lines = ["| Role | Prompt tok | Completion tok (limit) | s / call | CPU s / call | tok/s |", "|---|---|---|---|---|---|"]
    for r in rows:
        note = f" (beyond the {context}-token context)" if context and r["prompt_tokens"] > context else ""
        tps = "-" if r["tokens_per_s"] is None else f"{r['tokens_per_s']:.1f}"
        lines.append(f"| {names.get(r['role'], r['role'])} | {r['prompt_tokens']:,}{note} | "
                     f"{r['completion_tokens']:g} ({r['max_tokens']}) | {r['seconds']:.1f} | {r['cpu_seconds']:.1f} | {tps} |")
    return "\n".join(lines)


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
    parser.add_argument("--per-role", action="store_true", help="time one real request per role instead")
    parser.add_argument("--task", type=int, default=0, help="--per-role: task position in the bank")
    parser.add_argument("--repeats", type=int, default=1, help="--per-role: calls per role (medians)")
    parser.add_argument("--roles", default="user,moderator,judge,assistant", help="--per-role: roles to time")
    parser.add_argument("--validity", action="store_true", help="share of usable replies per model role instead")
    parser.add_argument("--min-calls", type=int, default=30, help="--validity: calls per role at least")
    parser.add_argument("--min-valid", type=float, default=0.95, help="--validity: share of usable replies wanted")
    args = parser.parse_args(argv)
    if args.per_role:
        return _per_role(args, parser)
    if args.validity:
        return _validity(args, parser)

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


def _per_role(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from situ_gym.llm import make_backend

    wanted = [r.strip() for r in args.roles.split(",") if r.strip()]
    unknown = sorted(set(wanted) - set(_REPLIES))
    if unknown or args.repeats < 1:
        parser.error(f"unknown roles {unknown}; choose from {sorted(_REPLIES)}" if unknown else "--repeats must be >= 1")
    requests = record_role_requests(args.env, args.task)
    t0 = time.perf_counter()
    backend = make_backend(args.model, base_url=args.base_url)
    load = time.perf_counter() - t0
    print(f"{args.model} on {args.env}, task {args.task}: model load {load:.0f} s, repeats {args.repeats}", flush=True)
    rows = time_requests(backend, {r: requests[r] for r in wanted}, args.repeats,
                         on_row=lambda row: print(format_rows([row], _context(backend)).splitlines()[-1], flush=True))
    print()
    print(format_rows(rows, _context(backend)))
    for r in rows:
        print(f"  {r['role']} replied: {r['reply']!r}")
    return 0


_VALIDITY_ROLES = ("user", "moderator", "judge")


def validity_rows(summary: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Per model role of a usage summary: calls, the share of usable replies (neither
    re-asked nor fallen back on), decisions, cost per call."""
    rows = []
    for role in _VALIDITY_ROLES:
        s = summary.get(role)
        if not s or not s["calls"]:
            continue
        calls = int(s["calls"])
        bad = int(s["reasks"]) + int(s["fallbacks"])  # each re-ask and each fallback follows an unusable reply
        rows.append({
            "role": role, "calls": calls, "valid": (calls - bad) / calls, "decisions": int(s["decisions"]),
            "used": int(s["used"]), "fallbacks": int(s["fallbacks"]), "reasks": int(s["reasks"]),
            "seconds_per_call": s["seconds"] / calls, "prompt_per_call": s["prompt_tokens"] / calls,
            "completion_per_call": s["completion_tokens"] / calls, "prefix_share": s.get("prefix_share"),
        })
    return rows


_NAMES = {"user": "shopper", "moderator": "moderator", "judge": "judge", "assistant": "assistant"}


def format_validity(rows: list[dict[str, Any]]) -> str:
    """A markdown table of :func:`validity_rows`."""
    names = _NAMES
    lines = ["| Role | Calls | Valid & legal | Decisions: used / fallback | Re-asks | s / call | "
             "Prompt tok / call | Completion tok / call | Prompt prefix reused |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        share = "-" if r["prefix_share"] is None else f"{r['prefix_share']:.0%}"
        lines.append(f"| {names[r['role']]} | {r['calls']} | {r['valid']:.1%} | {r['decisions']}: {r['used']} / "
                     f"{r['fallbacks']} | {r['reasks']} | {r['seconds_per_call']:.2f} | {r['prompt_per_call']:,.0f} | "
                     f"{r['completion_per_call']:.1f} | {share} |")
    return "\n".join(lines)


def _validity(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from eval.rollout import RolloutConfig, run
    from situ_gym.llm import read_usage, summarize_usage

    if args.min_calls < 1 or not 0 < args.min_valid <= 1:
        parser.error("--min-calls must be >= 1 and --min-valid in (0, 1]")
    out = Path(args.out)
    if out.exists():
        shutil.rmtree(out)
    common = dict(env=args.env, agent="heuristic", tasks=args.tasks, max_turns=args.max_turns,
                  batch_size=args.batch_size, llm_cache="none", no_report=True, max_fallback_rate=1.0)
    t0 = time.perf_counter()
    usage: list[dict[str, Any]] = []
    episodes = 0

    def play(name: str, **kwargs: Any) -> int:
        nonlocal episodes
        run(RolloutConfig(**common, user="llm", user_model=args.model, user_base_url=args.base_url, judge="none",
                          out=str(out / name), **kwargs))
        usage.extend(read_usage(out / name / "llm_usage.jsonl"))
        played = len((out / name / "trajectories.jsonl").read_text(encoding="utf-8").splitlines())
        episodes += played
        return played

    def calls(role: str) -> int:
        return int(summarize_usage(usage).get(role, {}).get("calls", 0))

    # Whole episodes with the rule moderator (a small model's moderator may end them at turn 1),
    # then with the LLM moderator, more repeats until both roles made enough calls.
    tasks = play("shopper", moderator="rule")
    for round_ in range(8):
        if calls("moderator") >= args.min_calls and calls("user") >= args.min_calls:
            break
        before = calls("moderator")
        per_episode = max(before / max(episodes - tasks, 1), 1.0) if round_ else 1.0
        repeats = max(1, math.ceil((args.min_calls - before) / per_episode / tasks))
        play(f"moderator{round_}", moderator="llm", seed=1000 * (round_ + 1), repeats=repeats)
    judge_dir = out / "judge"  # the judge rates one episode per call: rule-shopper episodes, cheap to play
    run(RolloutConfig(**{**common, "no_report": False}, judge="llm", judge_model=args.model,
                      judge_base_url=args.base_url, repeats=-(-args.min_calls // max(tasks, 1)), out=str(judge_dir)))
    usage += read_usage(judge_dir / "llm_usage.jsonl")
    rows = validity_rows(summarize_usage(usage))
    print(f"\n{args.model} on {args.env}: tasks {args.tasks} ({episodes} LLM-shopper episodes, max {args.max_turns} "
          f"turns, batch {args.batch_size}), judge on rule-shopper episodes; wall {time.perf_counter() - t0:.0f} s "
          "(incl. model load)\n")
    print(format_validity(rows))
    short = [r["role"] for r in rows if r["calls"] < args.min_calls or r["valid"] < args.min_valid]
    missing = [r for r in _VALIDITY_ROLES if r not in {row["role"] for row in rows}]
    if short or missing:
        print(f"\nbelow {args.min_calls} calls or {args.min_valid:.0%} valid: {', '.join(_NAMES[r] for r in short + missing)}")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
