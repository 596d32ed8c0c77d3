"""Speed of the SoM layer at 640x480 (a benchmark that prints figures, not a test).

    python -m benchmarks.som [--real]

Synthetic frame: 4 fixtures with 40 product regions (2 instances each) in front; with
--real, 640x480 frames rendered by the embedded backend in the committed Supermarket
(the start pose, and in front of every fourth fixture at 0 and 1.5 m behind its front
approach point).
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from situ_gym.backends.base import Pose
from situ_gym.scene.index import SceneIndex
from situ_gym.som import analyse, annotate, annotate_roles, caption, draw, render_minimap
from tests.som.conftest import Canvas, make_supermarket


def _synthetic():
    scene = make_supermarket(n_fixtures=4)
    extra = [
        p.model_copy(update={"id": f"q{i}", "color": (100, i, 50), "name": f"Item {i}"})
        for i, p in enumerate([scene.products[0]] * 40)
    ]
    scene = scene.model_copy(update={"products": scene.products + extra})
    index = SceneIndex(scene)
    canvas = Canvas(index, 480, 640)
    for f in range(4):
        canvas.paint(f"f{f}", 160 * f, 60, 160 * f + 150, 420, depth=3.0 + f)
    rng = np.random.default_rng(0)
    for i in range(40):
        x, y = int(rng.integers(0, 600)), int(rng.integers(60, 400))
        canvas.paint(f"q{i}", x, y, x + 18, y + 24, depth=2.5 + f % 4)
        canvas.paint(f"q{i}", x + 18, y, x + 36, y + 24, depth=2.5 + f % 4)
    return index, [canvas.frame()]


def _real():
    from situ_gym.backends.embedded import EmbeddedBackend
    from situ_gym.scene.loader import load_scene

    scene = load_scene("supermarket")
    index = SceneIndex(scene)
    backend = EmbeddedBackend(scene, width=640, height=480)
    frames = []
    start = scene.layout.start
    poses = [Pose(start.x, start.y, start.yaw)]
    for fixture in scene.fixtures[::4]:  # standing at fixture fronts, stepped back 1.5 m
        a = fixture.approach["front"]
        back = math.radians(a.yaw + 180.0)
        poses.append(Pose(a.x + 1.5 * math.cos(back), a.y + 1.5 * math.sin(back), a.yaw))
        poses.append(Pose(a.x, a.y, a.yaw))
    for pose in poses:
        backend.reset(pose)
        frames.append(backend.capture())
    return index, frames


def _time(fn, n: int) -> str:
    """Mean wall and CPU milliseconds per call (CPU time is steadier on a shared machine)."""
    fn()
    w0, c0 = time.perf_counter(), time.process_time()
    for _ in range(n):
        fn()
    wall = (time.perf_counter() - w0) / n * 1000
    cpu = (time.process_time() - c0) / n * 1000
    return f"{wall:7.3f} ms wall {cpu:7.3f} ms cpu"


def _mean(results: list[str]) -> str:
    walls = [float(r.split()[0]) for r in results]
    cpus = [float(r.split()[3]) for r in results]
    return f"{np.mean(walls):7.3f} ms wall {np.mean(cpus):7.3f} ms cpu"


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.som", description=__doc__.splitlines()[0])
    parser.add_argument("--real", action="store_true")
    parser.add_argument("-n", type=int, default=50)
    args = parser.parse_args()
    index, frames = _real() if args.real else _synthetic()
    n = args.n
    a = [analyse(f, index) for f in frames]
    counts = [sum(r.kind == "product" for r in x.regions) for x in a]
    print(f"frames: {len(frames)}  marked products per frame: {counts}")
    view = draw(a[0], index, "assistant")
    pose = Pose(1.0, 1.0, 30.0)
    rows = [
        ("analyse", [_time(lambda f=f: analyse(f, index), n) for f in frames]),
        ("draw (one role)", [_time(lambda x=x: draw(x, index, "assistant"), n) for x in a]),
        ("annotate (one role)", [_time(lambda f=f: annotate(f, index, "user"), n) for f in frames]),
        ("annotate_roles (both)", [_time(lambda f=f: annotate_roles(f, index), n) for f in frames]),
        ("caption", [_time(lambda: caption(view, index, held_item=None, cart=[]), n)]),
        (
            "minimap (cached)",
            [_time(lambda: render_minimap(index.scene, index, pose, "assistant"), n)],
        ),
    ]
    for name, results in rows:
        print(f"{name + ':':24s}{_mean(results)}")


if __name__ == "__main__":
    main()
