"""Env steps per CPU-second of this process, both stores: a figure a busy machine distorts less.

    python benchmarks/env_cpu.py [--steps 150] [--repeats 3]

Plays the heuristic assistant against the rule-based shopper at 640x480 on one thread
and divides the steps by the CPU time ``env.step`` used (``time.process_time``), median
of the repeats after a warm-up. To compare two versions side by side, run it
alternately in checkouts of both (each with this repository's environment).
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

from agents.base import agent_info  # noqa: E402


def steps_per_cpu_second(env_id: str, steps: int, seed: int = 0) -> float:
    import gymnasium as gym

    from agents.heuristic import HeuristicAssistant

    env = gym.make(env_id, disable_env_checker=True, image_size=(640, 480))
    agent = HeuristicAssistant()
    cpu, done_steps, episode = 0.0, 0, 0
    while done_steps < steps:
        obs, info = env.reset(seed=seed + episode)
        episode += 1
        agent.reset(obs, agent_info(info), seed=seed)
        done = False
        while not done and done_steps < steps:
            action = agent.act(obs)
            c0 = time.process_time()
            obs, _, terminated, truncated, _ = env.step(action)
            cpu += time.process_time() - c0
            done_steps += 1
            done = terminated or truncated
    env.close()
    return done_steps / max(cpu, 1e-9)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=150)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    if args.steps < 1 or args.repeats < 1:
        parser.error(f"--steps and --repeats must be >= 1, got {args.steps} and {args.repeats}")
    import cv2

    import situ_gym

    cv2.setNumThreads(1)
    for env_id in situ_gym.ENV_IDS:
        steps_per_cpu_second(env_id, 20)  # warm-up: scene caches, texture atlas
        rate = statistics.median(steps_per_cpu_second(env_id, args.steps) for _ in range(args.repeats))
        print(f"{env_id:<30} {rate:8.1f} env steps per CPU-second")


if __name__ == "__main__":
    main()
