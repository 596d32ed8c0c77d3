"""Env steps per second on one core: ``python -m situ_gym.bench_env [--steps N]``.

Plays the heuristic assistant against the rule-based shopper (a realistic mix of
dialogue, navigation and inspection turns) and times ``env.step`` alone, for both
stores, with full rendering and with the ``no_ego_view`` ablation (the shopper still
sees, so the frame is still rendered; only the assistant's image is blanked). Threads
are pinned to one so the figure is per core; after a warm-up, the median of
``--repeats`` runs is printed.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import cv2  # noqa: E402
import gymnasium as gym  # noqa: E402

import situ_gym  # noqa: E402, F401  (registers the envs)
from agents.base import agent_info  # noqa: E402
from agents.heuristic import HeuristicAssistant  # noqa: E402


def measure(env_id: str, steps: int, seed: int, **kwargs) -> tuple[float, float]:
    """Return (steps per second of env.step, seconds per reset) over ``steps`` steps."""
    env = gym.make(env_id, disable_env_checker=True, **kwargs)
    agent = HeuristicAssistant()
    step_time = reset_time = 0.0
    done_steps = resets = 0
    episode = 0
    while done_steps < steps:
        t0 = time.perf_counter()
        obs, info = env.reset(seed=seed + episode)
        reset_time += time.perf_counter() - t0
        resets += 1
        episode += 1
        agent.reset(obs, agent_info(info), seed=seed)
        done = False
        while not done and done_steps < steps:
            action = agent.act(obs)
            t0 = time.perf_counter()
            obs, _, terminated, truncated, _ = env.step(action)
            step_time += time.perf_counter() - t0
            done_steps += 1
            done = terminated or truncated
    env.close()
    return done_steps / step_time, reset_time / resets


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200, help="env steps per measurement")
    parser.add_argument("--repeats", type=int, default=3, help="runs per setting; the median is printed")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--size", default="640x480", help="egocentric image size WxH")
    args = parser.parse_args(argv)
    cv2.setNumThreads(1)
    width, height = (int(v) for v in args.size.lower().split("x"))
    print(f"env steps/s on one core, {width}x{height}, median of {args.repeats} x {args.steps} steps")
    print(f"{'env':<30} {'setting':<14} {'steps/s':>8} {'ms/step':>8} {'reset ms':>9}")
    for env_id in situ_gym.ENV_IDS:
        for ablation in (None, "no_ego_view"):
            kwargs = {"image_size": (width, height), "ablation": ablation}
            measure(env_id, 20, args.seed, **kwargs)  # warm-up: scene caches, colour tables, allocator
            runs = [measure(env_id, args.steps, args.seed, **kwargs) for _ in range(args.repeats)]
            rate = statistics.median(r[0] for r in runs)
            reset_ms = 1000 * statistics.median(r[1] for r in runs)
            print(f"{env_id:<30} {ablation or 'full':<14} {rate:8.1f} {1000 / rate:8.2f} {reset_ms:9.1f}")


if __name__ == "__main__":
    main()
