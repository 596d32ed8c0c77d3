"""Env steps/s of SituRec (both stores) against Farama Miniworld's PickupObjects, side by side.

Miniworld is not a dependency of this project: install it in a throwaway virtual
environment outside the repository, with Debian's Mesa for headless EGL rendering:

    apt-get install -y libegl1 libgl1 libegl-mesa0 libgl1-mesa-dri libglu1-mesa
    python3 -m venv /tmp/mw && /tmp/mw/bin/pip install miniworld

then, from the repository's own environment:

    python -m benchmarks.miniworld_compare --miniworld-python /tmp/mw/bin/python [--repeats 5]

Each repeat runs the three measurements back to back (SituRec on one thread, with the
heuristic assistant and the rule-based shopper, as ``python -m benchmarks.env_steps``
does; Miniworld with random actions, 20 objects, Mesa llvmpipe on ``--mesa-threads``
threads), so a busy machine slows all of them alike; the medians are printed with
their ratio. Both render 640x480 egocentric frames unless ``--size`` says otherwise.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402

from situ_gym import cli  # noqa: E402

_MINIWORLD = r"""
import sys, time
import gymnasium as gym
import miniworld  # noqa: F401  (registers the envs)
steps, width, height = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
env = gym.make("MiniWorld-PickupObjects-v0", obs_width=width, obs_height=height)
env.reset(seed=0)
env.action_space.seed(0)
for _ in range(20):  # warm-up
    env.step(env.action_space.sample())
env.reset(seed=1)
elapsed = 0.0
for _ in range(steps):
    action = env.action_space.sample()
    t0 = time.perf_counter()
    _, _, terminated, truncated, _ = env.step(action)
    elapsed += time.perf_counter() - t0
    if terminated or truncated:
        env.reset()
print(steps / elapsed)
"""


def miniworld_rate(python: str, steps: int, width: int, height: int, mesa_threads: int) -> float:
    env = dict(os.environ, PYGLET_HEADLESS="True", LP_NUM_THREADS=str(mesa_threads))
    out = subprocess.run([python, "-c", _MINIWORLD, str(steps), str(width), str(height)], env=env,
                         capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"Miniworld run failed ({python}): {out.stderr.strip().splitlines()[-1:]}")
    return float(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--miniworld-python", required=True, help="python of the throwaway Miniworld venv")
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--size", default="640x480")
    parser.add_argument("--mesa-threads", type=int, default=2, help="llvmpipe threads for Miniworld")
    args = parser.parse_args(argv)
    if not os.path.exists(args.miniworld_python):
        cli.fail(parser, f"--miniworld-python does not exist: {args.miniworld_python!r}")
    width, height = (int(v) for v in args.size.lower().split("x"))

    import cv2

    import situ_gym
    from benchmarks.env_steps import measure

    cv2.setNumThreads(1)
    kwargs = {"image_size": (width, height)}
    rates: dict[str, list[float]] = {env_id: [] for env_id in situ_gym.ENV_IDS}
    rates["MiniWorld-PickupObjects-v0"] = []
    for env_id in situ_gym.ENV_IDS:
        measure(env_id, 20, 0, **kwargs)  # warm-up: scene caches, texture atlas
    for r in range(args.repeats):
        for env_id in situ_gym.ENV_IDS:
            rates[env_id].append(measure(env_id, args.steps, 0, **kwargs)[0])
        rates["MiniWorld-PickupObjects-v0"].append(
            miniworld_rate(args.miniworld_python, args.steps, width, height, args.mesa_threads))
        print(f"repeat {r + 1}/{args.repeats}: " + ", ".join(f"{k} {v[-1]:.1f}" for k, v in rates.items()),
              file=sys.stderr)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    mw = statistics.median(rates["MiniWorld-PickupObjects-v0"])
    print(f"env steps/s at {width}x{height}, median of {args.repeats} x {args.steps} steps, "
          f"machine load average {load:.1f}")
    print(f"{'env':<30} {'steps/s':>8} {'x Miniworld':>12}")
    for env_id, values in rates.items():
        med = statistics.median(values)
        print(f"{env_id:<30} {med:8.1f} {med / mw:12.2f}")


if __name__ == "__main__":
    main()
