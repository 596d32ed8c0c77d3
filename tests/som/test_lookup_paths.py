"""The renderer's two lookup paths (8-bit ID buffer + cv2.LUT, int32 buffer + np.take) agree byte for byte.

Frames with at most ``LUT_MAX_FACES`` drawn faces take the LUT path; forcing every frame
through np.take must give the same RGB, depth, segmentation, entity index and both roles'
Set-of-Mark views (marks, handles, visible lists), at poses that use each path.
"""

from __future__ import annotations

import numpy as np
import pytest

import situ_gym.backends.raster as raster
from benchmarks.frames import bench_poses
from situ_gym.backends.embedded import EmbeddedBackend
from situ_gym.scene.index import SceneIndex
from situ_gym.scene.loader import load_scene
from situ_gym.som.marks import annotate_roles


def _views(store, poses):
    scene = load_scene(store)
    index = SceneIndex(scene)
    backend = EmbeddedBackend(scene, width=320, height=240)
    out = []
    try:
        for pose in poses:
            backend.reset(pose)
            frame = backend.capture()
            faces = backend.renderer.stats["faces"]
            views = annotate_roles(frame, index)
            out.append((faces, frame, views))
    finally:
        backend.close()
    return out


@pytest.mark.parametrize("store", ["supermarket", "home_furnishings"])
def test_lut_and_take_paths_give_identical_frames_and_marks(store, monkeypatch):
    poses = bench_poses(load_scene(store), 16, seed=1)
    fast = _views(store, poses)
    monkeypatch.setattr(raster, "LUT_MAX_FACES", -1)  # every frame through np.take
    slow = _views(store, poses)
    paths = {faces <= 255 for faces, _, _ in fast}
    assert paths == {True, False}, "the poses must exercise both paths"
    for (_, a, va), (_, b, vb) in zip(fast, slow, strict=True):
        for name in ("rgb", "depth", "seg", "entity_index"):
            x, y = getattr(a, name), getattr(b, name)
            assert x.dtype == y.dtype and np.array_equal(x, y, equal_nan=name == "depth"), name
        for role in ("user", "assistant"):
            assert np.array_equal(va[role].image, vb[role].image)
            assert va[role].handles == vb[role].handles and va[role].visible == vb[role].visible


def test_gather_reads_any_table_type_on_both_paths(monkeypatch):
    scene = load_scene("supermarket")
    backend = EmbeddedBackend(scene, width=160, height=120)
    pose = bench_poses(scene, 1, seed=0)[0]
    backend.reset(pose)
    backend.capture()
    r = backend.renderer
    values = np.random.default_rng(0).integers(0, 60000, len(r.rgb_table))  # one per face id + 1
    tables = [values.astype(t) for t in (np.uint16, np.uint32, np.int64, np.float32, np.bool_)]
    assert r.stats["faces"] <= raster.LUT_MAX_FACES  # a small frame: the LUT path
    small = [r.gather(t) for t in tables]
    monkeypatch.setattr(raster, "LUT_MAX_FACES", -1)
    backend._last_frame = None
    backend.capture()
    for t, s in zip(tables, small, strict=True):
        g = r.gather(t)
        assert g.dtype == t.dtype and np.array_equal(g, s)
    backend.close()
