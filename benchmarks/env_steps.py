"""Env steps per second on one core, both stores: ``python -m benchmarks.env_steps [--steps N]``.

Plays the heuristic assistant against the rule-based shopper (a realistic mix of
dialogue, navigation and inspection turns) through ``eval.runner.play_batch`` and times
``env.step`` alone, by wall clock and by this process's CPU time (``time.process_time``,
which a busy machine distorts less), for both stores, with full rendering and with the
``no_ego_view`` ablation (the shopper still sees, so the frame is still rendered; only
the assistant's image is blanked) and ``text_only`` (no colour image, no Set-of-Mark
drawing, no minimap: the step a policy that reads no pixels needs). Threads are pinned to one so the figures are per
core; after a warm-up, the median of ``--repeats`` runs is printed. Episodes are played
whole, so a run takes at least ``--steps`` steps. To compare two versions, run it
alternately in checkouts of both.
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

import situ_gym  # noqa: E402
from agents.heuristic import HeuristicAssistant  # noqa: E402
from eval.runner import EpisodeSpec, play_batch  # noqa: E402
from situ_gym import cli  # noqa: E402


class StepClock(gym.Wrapper):
    """Counts steps and adds up the wall and CPU seconds spent in ``step`` and ``reset``."""

    def __init__(self, env: gym.Env):
        super().__init__(env)
        self.steps = self.resets = 0
        self.step_wall = self.step_cpu = self.reset_wall = 0.0

    def reset(self, **kwargs):
        t0 = time.perf_counter()
        result = self.env.reset(**kwargs)
        self.reset_wall += time.perf_counter() - t0
        self.resets += 1
        return result

    def step(self, action):
        t0, c0 = time.perf_counter(), time.process_time()
        result = self.env.step(action)
        self.step_cpu += time.process_time() - c0
        self.step_wall += time.perf_counter() - t0
        self.steps += 1
        return result


def measure(env_id: str, steps: int, seed: int = 0, **kwargs) -> tuple[float, float, float]:
    """(env steps per second, env steps per CPU-second, seconds per reset) over whole
    episodes of at least ``steps`` steps in total."""
    env = StepClock(gym.make(env_id, disable_env_checker=True, **kwargs))
    agent = HeuristicAssistant()
    episode = 0
    while env.steps < steps:
        (result,) = play_batch([env], agent, [EpisodeSpec(None, seed + episode)])
        if result.error is not None:
            raise RuntimeError(f"{env_id} episode {episode} crashed: {result.error.strip().splitlines()[-1]}")
        episode += 1
    env.close()
    return env.steps / env.step_wall, env.steps / max(env.step_cpu, 1e-9), env.reset_wall / env.resets


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.env_steps", description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200, help="env steps per measurement")
    parser.add_argument("--repeats", type=int, default=3, help="runs per setting; the median is printed")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--size", default="640x480", help="egocentric image size WxH")
    args = parser.parse_args(argv)
    if args.steps < 1 or args.repeats < 1:
        cli.fail(parser, f"--steps and --repeats must be >= 1, got {args.steps} and {args.repeats}")
    try:
        width, height = (int(v) for v in args.size.lower().split("x"))
    except ValueError:
        cli.fail(parser, f"--size must look like 640x480, got {args.size!r}")
    cv2.setNumThreads(1)
    print(f"env steps on one core, {width}x{height}, median of {args.repeats} runs of >= {args.steps} steps")
    print(f"{'env':<30} {'setting':<14} {'steps/s':>8} {'ms/step':>8} {'per CPU-s':>10} {'reset ms':>9}")
    for env_id in situ_gym.ENV_IDS:
        for setting in ("full", "no_ego_view", "text_only"):
            kwargs = {"image_size": (width, height), "ablation": setting if setting == "no_ego_view" else None,
                      "text_only": setting == "text_only"}
            measure(env_id, 20, args.seed, **kwargs)  # warm-up: scene caches, colour tables, allocator
            runs = [measure(env_id, args.steps, args.seed, **kwargs) for _ in range(args.repeats)]
            rate = statistics.median(r[0] for r in runs)
            cpu_rate = statistics.median(r[1] for r in runs)
            reset_ms = 1000 * statistics.median(r[2] for r in runs)
            print(f"{env_id:<30} {setting:<14} {rate:8.1f} {1000 / rate:8.2f} {cpu_rate:10.1f} "
                  f"{reset_ms:9.1f}")


if __name__ == "__main__":
    main()
