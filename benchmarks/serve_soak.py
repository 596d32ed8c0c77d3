"""Soak a SituRec OpenEnv server with heuristic episodes and print its memory and speed:
``python -m benchmarks.serve_soak --episodes 1000``.

Starts ``python -m situ_gym.serve`` as its own process, then ``--workers`` threads play
heuristic episodes through ``RemoteEnv`` (alternating the stores; each worker opens a new
session every ``--reconnect-every`` episodes, and snapshots and releases once per episode, so
that session set-up and teardown and the snapshot store are soaked too). It prints the server's
resident memory after 100 episodes and at the end (and their ratio: a leak grows it with the
episode count), episodes/s and steps/s through the server, and steps/s of the same episodes
in-process (one thread) beside them. Figures only: nothing is asserted. The language layer's
bounded text caches (LRU, up to 65,536 entries) fill during the first ~1,000 episodes, so a
cold server grows by their size; ``--warmup N`` plays N episodes first and counts the
checkpoints from there, which separates the caches filling from a leak (a leak keeps growing).

    python -m benchmarks.serve_soak --episodes 1000 --workers 4
    python -m benchmarks.serve_soak --episodes 1000 --workers 4 --warmup 1500
    python -m benchmarks.serve_soak --episodes 300 --size 64x48 --max-turns 6
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import gymnasium as gym

import situ_gym
from agents.base import agent_info
from agents.registry import make_agent
from situ_gym import cli

ROOT = Path(__file__).resolve().parents[1]
CHECKPOINT = 100  # episodes: the memory figure a leak is compared against
CHECKPOINTS = (10, CHECKPOINT, 250, 500, 1000, 2000, 5000)  # episodes after which the server's memory is read


def rss_mb(pid: int) -> float:
    """Resident memory of process ``pid`` in MB (Linux /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


def play(env, seed: int, branch: bool, step_seconds: list[float] | None = None) -> int:
    """One heuristic episode; returns its steps."""
    obs, info = env.reset(seed=seed)
    agent = make_agent("heuristic")
    agent.reset(obs, agent_info(info), seed=seed)
    steps, done, handle = 0, False, None
    while not done:
        action = agent.act(obs)
        t0 = time.perf_counter()
        obs, _, terminated, truncated, _ = env.step(action)
        if step_seconds is not None:
            step_seconds.append(time.perf_counter() - t0)
        steps, done = steps + 1, terminated or truncated
        if branch and steps == 1:
            handle = env.snapshot()
    if handle is not None:
        env.release(handle)
    return steps


def in_process_rate(env_ids: list[str], episodes: int, env_kwargs: dict) -> float:
    """Steps per second of the same episodes in this process, RecRM included (one thread)."""
    from recrm import RecRMReward

    envs = [RecRMReward(gym.make(e, disable_env_checker=True, **env_kwargs)) for e in env_ids]
    play(envs[0], 0, branch=False)  # warm-up: caches, allocator
    steps, started = 0, time.perf_counter()
    for i in range(episodes):
        steps += play(envs[i % len(envs)], i, branch=False)
    rate = steps / (time.perf_counter() - started)
    for env in envs:
        env.close()
    return rate


def start_server(workers: int) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, "-m", "situ_gym.serve", "--port", "0", "--max-sessions", str(workers * 2),
                             "--session-timeout", "600"], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    port = re.search(r":(\d+)/ws", line)
    if port is None:
        proc.kill()
        raise RuntimeError(f"the server did not start: {line!r}")
    return proc, f"http://127.0.0.1:{port.group(1)}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.serve_soak", description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=1000, help="episodes through the server, all workers together")
    parser.add_argument("--workers", type=int, default=4, help="client threads, each with its own session")
    parser.add_argument("--reconnect-every", type=int, default=10, help="episodes per session before a worker opens a new one")
    parser.add_argument("--env", action="append", choices=situ_gym.ENV_IDS, help="default: both stores, alternating")
    parser.add_argument("--size", default="160x120", help="egocentric image size WxH")
    parser.add_argument("--max-turns", type=int, default=8, help="turn limit of each episode")
    parser.add_argument("--in-process-episodes", type=int, default=40, help="episodes of the in-process figure")
    parser.add_argument("--no-branch", action="store_true", help="no snapshot/release per episode")
    parser.add_argument("--warmup", type=int, default=0,
                        help="episodes played before the counted ones (fills the bounded caches; not in the figures "
                             "but the RSS at its end)")
    args = parser.parse_args(argv)
    if args.episodes < CHECKPOINT or args.workers < 1 or args.reconnect_every < 1 or args.warmup < 0:
        cli.fail(parser, f"--episodes must be >= {CHECKPOINT}, --workers and --reconnect-every >= 1 and --warmup >= 0, "
                         f"got {args.episodes}, {args.workers}, {args.reconnect_every}, {args.warmup}")
    try:
        width, height = (int(v) for v in args.size.lower().split("x"))
    except ValueError:
        cli.fail(parser, f"--size must look like 160x120, got {args.size!r}")
    from situ_gym.serve import RemoteEnv

    env_ids = args.env or list(situ_gym.ENV_IDS)
    env_kwargs = {"image_size": (width, height), "max_turns": args.max_turns}
    local_rate = in_process_rate(env_ids, args.in_process_episodes, env_kwargs)

    proc, url = start_server(args.workers)
    lock = threading.Lock()
    done = {"episodes": 0, "steps": 0, "errors": 0, "sessions": 0}
    warmed = {"episodes": 0, "wall": None}  # the warm-up's episodes and when it ended
    memory: dict[int, float] = {}
    step_seconds: list[float] = []
    next_episode = iter(range(args.warmup + args.episodes))  # seeds: the warm-up's, then the counted ones'

    def worker(w: int) -> None:
        env, played = None, 0
        while True:
            with lock:
                i = next(next_episode, None)
            if i is None:
                break
            try:
                if env is None or played == args.reconnect_every:
                    if env is not None:
                        env.close()
                    env, played = RemoteEnv(url, env_ids[w % len(env_ids)], **env_kwargs), 0
                    with lock:
                        done["sessions"] += 1
                counted = i >= args.warmup
                steps = play(env, i, not args.no_branch, step_seconds if counted else None)
                played += 1
                with lock:
                    if not counted:
                        warmed["episodes"] += 1
                        if warmed["episodes"] == args.warmup:
                            memory[0], warmed["wall"] = rss_mb(proc.pid), time.perf_counter()
                        continue
                    done["episodes"] += 1
                    done["steps"] += steps
                    if done["episodes"] in CHECKPOINTS or done["episodes"] == args.episodes:
                        memory[done["episodes"]] = rss_mb(proc.pid)
            except Exception as exc:  # counted and shown, the soak goes on with a new session
                with lock:
                    done["errors"] += 1
                print(f"  episode {i}: {type(exc).__name__}: {exc}", flush=True)
                if env is not None:
                    env.close()
                env = None
        if env is not None:
            env.close()

    try:
        started = time.perf_counter()
        threads = [threading.Thread(target=worker, args=(w,)) for w in range(args.workers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.perf_counter() - (warmed["wall"] or started)  # the counted episodes' time (roughly)
        memory.setdefault(args.episodes, rss_mb(proc.pid))
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    ms = sorted(1000 * s for s in step_seconds)
    first, last = memory.get(CHECKPOINT, float("nan")), memory[args.episodes]
    print(f"server soak: {done['episodes']} episodes ({done['steps']} steps) after a warm-up of {args.warmup}, "
          f"{done['sessions']} sessions, {args.workers} workers, {width}x{height}, max {args.max_turns} turns, "
          f"{', '.join(env_ids)}")
    print(f"{'figure':<44} {'value':>12}")
    rows = [
        ("errors", f"{done['errors']}"),
        *((f"server RSS after {n} episodes (MB)" if n else f"server RSS after the {args.warmup}-episode warm-up (MB)",
           f"{memory[n]:.1f}") for n in sorted(memory)),
        (f"RSS ratio {args.episodes} / {CHECKPOINT}", f"{last / first:.3f}"),
        ("episodes/s through the server", f"{done['episodes'] / wall:.2f}"),
        (f"steps/s through the server ({args.workers} sessions)", f"{done['steps'] / wall:.1f}"),
        ("step round trip p50 / p95 (ms)", f"{statistics.median(ms):.1f} / {ms[int(0.95 * (len(ms) - 1))]:.1f}"),
        ("steps/s in-process (1 thread)", f"{local_rate:.1f}"),
    ]
    for name, value in rows:
        print(f"{name:<44} {value:>12}")


if __name__ == "__main__":
    main()
