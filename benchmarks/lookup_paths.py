"""Capture + both roles' Set-of-Mark per CPU-second with the renderer's two lookup paths, interleaved.

    python benchmarks/lookup_paths.py [--stores supermarket,home_furnishings] [--poses 40] [--repeats 7]

Frames with at most ``LUT_MAX_FACES`` drawn faces read the renderer's per-face tables
with cv2.LUT on an 8-bit ID buffer; the others (and, here, the reference) with np.take.
Both paths give the same bytes. For every seeded pose the script times capture +
``annotate_roles`` at 640x480 on one thread with each path in turn (``time.process_time``,
so other processes on a shared machine distort it less; alternating the paths per pose
keeps load drift out of the difference) and prints the mean over the poses of the
per-pose medians: ms per frame and frames per CPU-second for each path.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import cv2  # noqa: E402
import numpy as np  # noqa: E402

import situ_gym.backends.raster as raster  # noqa: E402
from benchmarks.frames import bench_poses  # noqa: E402
from situ_gym.backends.embedded import EmbeddedBackend  # noqa: E402
from situ_gym.scene.index import SceneIndex  # noqa: E402
from situ_gym.scene.loader import load_scene  # noqa: E402
from situ_gym.som.marks import annotate_roles  # noqa: E402

PATHS = {"lut": raster.LUT_MAX_FACES, "take": -1}


def measure(store: str, poses: int, repeats: int) -> dict[str, float]:
    """Mean over poses of the per-pose median CPU seconds of capture + SoM, per path."""
    scene = load_scene(store)
    index = SceneIndex(scene)
    backend = EmbeddedBackend(scene, width=640, height=480)
    per_path: dict[str, list[float]] = {name: [] for name in PATHS}
    try:
        for pose in bench_poses(scene, poses):
            runs: dict[str, list[float]] = {name: [] for name in PATHS}
            for _ in range(repeats):
                for name, limit in PATHS.items():
                    raster.LUT_MAX_FACES = limit
                    backend._last_frame = None  # render again: an unchanged pose would reuse the frame
                    backend.reset(pose)
                    t0 = time.process_time()
                    annotate_roles(backend.capture(), index)
                    runs[name].append(time.process_time() - t0)
            for name in PATHS:
                per_path[name].append(statistics.median(runs[name]))
    finally:
        raster.LUT_MAX_FACES = PATHS["lut"]
        backend.close()
    return {name: float(np.mean(v)) for name, v in per_path.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--stores", default="supermarket,home_furnishings")
    parser.add_argument("--poses", type=int, default=40)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    cv2.setNumThreads(1)
    print(f"640x480, one thread, {args.poses} seeded poses x {args.repeats} alternating repeats; "
          f"load average {os.getloadavg()[0]:.1f}")
    for store in args.stores.split(","):
        t = measure(store.strip(), args.poses, args.repeats)
        print(f"{store:18s} LUT path {1e3 * t['lut']:.2f} ms ({1 / t['lut']:.1f} frames/CPU-s)   "
              f"np.take only {1e3 * t['take']:.2f} ms ({1 / t['take']:.1f} frames/CPU-s)")


if __name__ == "__main__":
    main()
