"""Frames per second of the embedded backend, alone and with both roles' Set-of-Mark views.

    python -m benchmarks.frames [--store supermarket|home_furnishings|all] [--repeats 5]
                             [--poses 40] [--sizes 640x480,320x240] [--save-images docs/img]

``--save-images DIR`` also writes ``DIR/contact_sheet.png``: each store's example views
(rows) as the user and as the assistant see them (columns), plus the minimaps.

Runs on one thread (OpenCV and the BLAS/OpenMP pools pinned to 1) over a fixed,
seeded set of poses along the scene's waypoint graph, and prints the median over the
repeats of: capture frames/s, capture + SoM (both roles, one shared analysis) frames/s
(by wall clock, and by this process's CPU time, which is steadier on a busy machine),
where the capture time goes (culling/ordering/projection, polygon fill, per-pixel
colour, depth and entity-index lookups), where the SoM time goes (the shared
``analyse``, then ``draw`` for both roles) and the page faults per capture + SoM frame
(memory the allocator gave back and takes again; several hundred cost about a millisecond).
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import math  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import cv2  # noqa: E402
import numpy as np  # noqa: E402

from situ_gym import cli  # noqa: E402
from situ_gym.backends.base import Pose  # noqa: E402
from situ_gym.backends.embedded import EmbeddedBackend  # noqa: E402
from situ_gym.scene.index import SceneIndex  # noqa: E402
from situ_gym.scene.model import STORE_KINDS, Scene  # noqa: E402
from situ_gym.som.marks import analyse, annotate_roles, draw  # noqa: E402
from situ_gym.som.types import ROLES  # noqa: E402

__all__ = ["bench_poses", "run_bench", "save_examples", "contact_sheet", "main"]


def bench_poses(scene: Scene, n: int, seed: int = 0) -> list[Pose]:
    """``n`` poses on random waypoint-graph edges, random yaw, pitch in [-20, 5] degrees."""
    rng = np.random.default_rng(seed)
    wps = {w.id: w for w in scene.waypoints}
    edges = sorted({tuple(sorted((w.id, nb))) for w in scene.waypoints for nb in w.neighbors if nb in wps})
    poses = []
    for _ in range(n):
        if edges:
            a, b = edges[int(rng.integers(len(edges)))]
            t = float(rng.random())
            x = wps[a].x + t * (wps[b].x - wps[a].x)
            y = wps[a].y + t * (wps[b].y - wps[a].y)
        else:
            x, y = scene.layout.start.x, scene.layout.start.y
        poses.append(Pose(x, y, float(rng.uniform(0, 360)), float(rng.uniform(-20, 5))))
    return poses


def _page_faults() -> float:
    """This process's minor page faults so far (nan where the platform does not count them)."""
    try:
        import resource
    except ImportError:  # not on Windows
        return float("nan")
    return float(resource.getrusage(resource.RUSAGE_SELF).ru_minflt)


def run_bench(scene: Scene, width: int, height: int, poses: list[Pose], repeats: int) -> dict[str, float]:
    """Median figures over ``repeats`` passes through ``poses``."""
    backend = EmbeddedBackend(scene, width=width, height=height)
    index = SceneIndex(scene)
    cap_fps, som_fps, cap_cpu, som_cpu, som_faults = [], [], [], [], []
    parts = {"t_cull_order": [], "t_fill": [], "t_lookup": []}
    som_parts = {"t_analyse": [], "t_draw": []}
    faces = []
    backend.reset(poses[0])
    backend.capture()  # warm-up
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        for p in poses:
            backend.reset(p)
            backend.capture()
            stats = backend.renderer.stats
            for k in parts:
                parts[k].append(stats[k])
            parts["t_lookup"][-1] += stats.get("t_gather", 0.0)  # the entity index
            faces.append(backend.renderer.stats["faces"])
        cap_fps.append(len(poses) / (time.perf_counter() - t0))
        cap_cpu.append(len(poses) / max(time.process_time() - c0, 1e-9))
        t0, c0, f0 = time.perf_counter(), time.process_time(), _page_faults()
        for p in poses:
            backend.reset(p)
            annotate_roles(backend.capture(), index)
        som_fps.append(len(poses) / (time.perf_counter() - t0))
        som_cpu.append(len(poses) / max(time.process_time() - c0, 1e-9))
        som_faults.append((_page_faults() - f0) / len(poses))
        for p in poses:  # the same work as annotate_roles, timed by part
            backend.reset(p)
            frame = backend.capture()
            t0 = time.perf_counter()
            analysis = analyse(frame, index)
            t1 = time.perf_counter()
            for role in ROLES:
                draw(analysis, index, role)
            som_parts["t_analyse"].append(t1 - t0)
            som_parts["t_draw"].append(time.perf_counter() - t1)
    out = {
        "capture_fps": statistics.median(cap_fps),
        "capture_fps_cpu": statistics.median(cap_cpu),
        "capture_som_fps": statistics.median(som_fps),
        "capture_som_fps_cpu": statistics.median(som_cpu),
        "capture_som_page_faults": statistics.median(som_faults),  # per frame; nan where unknown
        "faces": statistics.median(faces),
    }
    for k, v in {**parts, **som_parts}.items():
        out[k + "_ms"] = 1e3 * statistics.median(v)
    backend.close()
    return out


def save_examples(scene: Scene, out_dir: Path, width: int = 640, height: int = 480) -> list[Path]:
    """One PNG per example pose: RGB | segmentation side by side; plus the assistant's SoM view."""
    out_dir.mkdir(parents=True, exist_ok=True)
    backend = EmbeddedBackend(scene, width=width, height=height)
    index = SceneIndex(scene)
    written = []
    for k, pose in enumerate(_example_poses(scene)):
        backend.reset(pose)
        frame = backend.capture()
        images = {f"{k}_rgb_seg": np.concatenate([frame.rgb, frame.seg], axis=1)}
        if k == 1:
            images[f"{k}_som_assistant"] = annotate_roles(frame, index)["assistant"].image
        for name, img in images.items():
            path = out_dir / f"{scene.store}_{name}.png"
            cv2.imwrite(str(path), cv2.cvtColor(img, cv2.COLOR_RGB2BGR), [cv2.IMWRITE_PNG_COMPRESSION, 9])
            written.append(path)
    backend.close()
    return written


def contact_sheet(scenes: list[Scene], out: Path, width: int = 640, height: int = 480) -> Path:
    """One PNG: per store and example pose a row of the user's and the assistant's SoM views and the minimap."""
    from situ_gym.som.minimap import render_minimap

    rows = []
    for scene in scenes:
        backend = EmbeddedBackend(scene, width=width, height=height)
        index = SceneIndex(scene)
        for pose in _example_poses(scene):
            backend.reset(pose)
            views = annotate_roles(backend.capture(), index)
            minimap = render_minimap(scene, index, pose, "assistant", (width, height))
            tiles = [views["user"].image, views["assistant"].image, minimap]
            row = np.concatenate([cv2.resize(t, (width // 2, height // 2), interpolation=cv2.INTER_AREA)
                                  for t in tiles], axis=1)
            cv2.putText(row, f"{scene.store}  user | assistant | map", (6, 16), cv2.FONT_HERSHEY_SIMPLEX, 0.45,
                        (255, 255, 255), 3, cv2.LINE_AA)
            cv2.putText(row, f"{scene.store}  user | assistant | map", (6, 16), cv2.FONT_HERSHEY_SIMPLEX, 0.45,
                        (20, 20, 20), 1, cv2.LINE_AA)
            rows.append(row)
        backend.close()
    out.parent.mkdir(parents=True, exist_ok=True)
    sheet = np.concatenate(rows, axis=0)
    cv2.imwrite(str(out), cv2.cvtColor(sheet, cv2.COLOR_RGB2BGR), [cv2.IMWRITE_PNG_COMPRESSION, 9])
    return out


def _example_poses(scene: Scene) -> list[Pose]:
    """A view into the store from the start, then views at a target's front / doorway / area."""
    s = scene.layout.start
    poses = [Pose(s.x, s.y, s.yaw, -5.0)]
    if scene.fixtures:
        shelf = next((f for f in scene.fixtures if f.kind == "shelf"), scene.fixtures[0])
        a = shelf.approach["front"]
        back = math.radians(a.yaw + 180.0)  # a step back from the front viewpoint
        poses.append(Pose(a.x + 0.6 * math.cos(back), a.y + 0.6 * math.sin(back), a.yaw, -8.0))
        freezer = next((f for f in scene.fixtures if f.kind == "upright_freezer"), None)
        if freezer is not None:
            a = freezer.approach["front"]
            poses.append(Pose(a.x - 2.0, a.y - 2.5, (a.yaw - 35.0) % 360.0, -5.0))
    if scene.stores:
        a = scene.stores[0].approach["outside_doorway"]
        poses.append(Pose(a.x, a.y, a.yaw, -5.0))
        area = scene.areas[0].approach
        poses.append(Pose(area.x, area.y, area.yaw, -12.0))
    return poses


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.frames", description=__doc__.splitlines()[0])
    parser.add_argument("--store", default="all", choices=[*STORE_KINDS, "all"])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--poses", type=int, default=40)
    parser.add_argument("--sizes", default="640x480,320x240")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--save-images", default=None, help="directory for example PNGs (e.g. docs/img)")
    args = parser.parse_args(argv)
    if args.repeats < 1 or args.poses < 1:
        cli.fail(parser, f"--repeats and --poses must be >= 1, got {args.repeats} and {args.poses}")
    sizes = []
    for item in args.sizes.split(","):
        try:
            w, h = (int(v) for v in item.lower().split("x"))
        except ValueError:
            cli.fail(parser, f"--sizes wants WxH pairs like 640x480, got {item!r}")
        sizes.append((w, h))
    cv2.setNumThreads(1)
    from situ_gym.scene.loader import load_scene

    stores = STORE_KINDS if args.store == "all" else (args.store,)
    header = (f"{'store':<17} {'size':>8} {'capture fps':>12} {'(cpu)':>7} {'+SoM fps':>9} {'(cpu)':>7} "
              f"{'faces':>6} {'cull+order ms':>14} {'fill ms':>8} {'lookup ms':>10} {'analyse ms':>11} {'draw ms':>8} "
              f"{'faults':>7}")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"one thread, {args.poses} seeded poses (seed {args.seed}), median of {args.repeats} repeats; "
          f"fps by wall clock and (cpu) by this process's CPU time; machine load average {load:.1f}")
    print(header)
    scenes = []
    for store in stores:
        scene = load_scene(store)
        scenes.append(scene)
        poses = bench_poses(scene, args.poses, args.seed)
        for w, h in sizes:
            r = run_bench(scene, w, h, poses, args.repeats)
            print(f"{store:<17} {f'{w}x{h}':>8} {r['capture_fps']:>12.1f} {r['capture_fps_cpu']:>7.1f} "
                  f"{r['capture_som_fps']:>9.1f} {r['capture_som_fps_cpu']:>7.1f} {r['faces']:>6.0f} {r['t_cull_order_ms']:>14.2f} {r['t_fill_ms']:>8.2f} {r['t_lookup_ms']:>10.2f} "
                  f"{r['t_analyse_ms']:>11.2f} {r['t_draw_ms']:>8.2f} {r['capture_som_page_faults']:>7.0f}")
        if args.save_images:
            for path in save_examples(scene, Path(args.save_images)):
                print(f"wrote {path}")
    if args.save_images:
        print(f"wrote {contact_sheet(scenes, Path(args.save_images) / 'contact_sheet.png')}")


if __name__ == "__main__":
    main()
