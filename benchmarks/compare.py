"""Frames per CPU-second of two checkouts, measured alternately so that load drift hits both alike.

    python -m benchmarks.compare OTHER_CHECKOUT [--rounds 5] [--store supermarket]
                                 [--size 640x480] [--repeats 3] [--poses 40]

Each round runs :func:`benchmarks.frames.run_bench` (this checkout's benchmark code) once
against ``OTHER_CHECKOUT``'s ``situ_gym`` and once against this checkout's, each in a
fresh process, and prints both figures; the end gives the medians over the rounds of
capture frames per CPU-second and capture + both roles' SoM frames per CPU-second, and
the ratio of this checkout's median to the other's. A shared, busy machine moves single
runs by ten percent or more: compare medians of several rounds, not single lines.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from situ_gym import cli

__all__ = ["measure", "main"]

HERE = Path(__file__).resolve().parents[1]  # this checkout
KEYS = ("capture_fps_cpu", "capture_som_fps_cpu")


def _frames_module():
    """This checkout's benchmarks/frames.py, whichever ``situ_gym`` the path gives it."""
    spec = importlib.util.spec_from_file_location("_compare_frames", HERE / "benchmarks" / "frames.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _child(args: argparse.Namespace) -> None:
    """In a fresh process whose path starts with the checkout under test: one run, as JSON."""
    frames = _frames_module()
    frames.cv2.setNumThreads(1)
    from situ_gym.scene.loader import load_scene

    w, h = args.size
    scene = load_scene(args.store)
    result = frames.run_bench(scene, w, h, frames.bench_poses(scene, args.poses), args.repeats)
    import situ_gym

    print(json.dumps({"situ_gym": str(Path(situ_gym.__file__).resolve().parents[1]), **{k: result[k] for k in KEYS}}))


def measure(checkout: Path, store: str, size: tuple[int, int], repeats: int, poses: int) -> dict[str, float]:
    """One benchmark run of ``checkout``'s ``situ_gym`` in a fresh, single-threaded process."""
    env = dict(os.environ, PYTHONPATH=str(checkout))
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS"):
        env[var] = "1"
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", str(checkout), "--store", store,
           "--size", f"{size[0]}x{size[1]}", "--repeats", str(repeats), "--poses", str(poses)]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"benchmark run in {checkout} failed: {done.stderr.strip().splitlines()[-1:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    if Path(result.pop("situ_gym")) != checkout.resolve():  # e.g. an installed situ_gym shadowing it
        raise RuntimeError(f"the run for {checkout} imported another situ_gym")
    return result


def _size(text: str) -> tuple[int, int]:
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"wants WxH like 640x480, got {text!r}") from None
    if w < 16 or h < 16:
        raise argparse.ArgumentTypeError(f"width and height must be >= 16, got {text!r}")
    return w, h


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.compare", description=__doc__.splitlines()[0])
    parser.add_argument("other", nargs="?", help="the checkout to compare with (its root: situ_gym/ inside)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--store", default="supermarket", choices=("supermarket", "home_furnishings"))
    parser.add_argument("--size", type=_size, default=(640, 480))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--poses", type=int, default=40)
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if min(args.rounds, args.repeats, args.poses) < 1:
        cli.fail(parser, "--rounds, --repeats and --poses must be >= 1")
    if args.child is not None:
        _child(args)
        return
    if args.other is None:
        cli.fail(parser, "give the checkout to compare with")
    other = Path(args.other).resolve()
    if not (other / "situ_gym" / "__init__.py").is_file():
        cli.fail(parser, f"{other} holds no situ_gym package")
    runs: dict[str, list[dict[str, float]]] = {"other": [], "this": []}
    print(f"{args.store} {args.size[0]}x{args.size[1]}, {args.poses} poses x {args.repeats} repeats per run, "
          f"{args.rounds} rounds; frames per CPU-second (capture | capture + both roles' SoM)")
    for k in range(args.rounds):
        for name, tree in (("other", other), ("this", HERE)):
            try:
                r = measure(tree, args.store, args.size, args.repeats, args.poses)
            except RuntimeError as exc:
                parser.exit(1, f"{parser.prog}: {exc}\n")
            runs[name].append(r)
            print(f"round {k + 1} {name:5s} {r['capture_fps_cpu']:8.1f} | {r['capture_som_fps_cpu']:8.1f}")
    med = {name: {key: statistics.median(r[key] for r in rs) for key in KEYS} for name, rs in runs.items()}
    for name in ("other", "this"):
        print(f"median {name:5s} {med[name]['capture_fps_cpu']:8.1f} | {med[name]['capture_som_fps_cpu']:8.1f}")
    print("ratio this/other " + " | ".join(f"{med['this'][key] / med['other'][key]:.3f}" for key in KEYS))


if __name__ == "__main__":
    main()
