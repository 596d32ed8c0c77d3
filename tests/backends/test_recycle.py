"""ArrayPool reuses only the memory nobody holds; frames kept by a caller never change."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.frames import bench_poses
from situ_gym.backends.embedded import EmbeddedBackend
from situ_gym.backends.recycle import ArrayPool
from situ_gym.scene.loader import load_scene


def test_a_dropped_array_is_handed_out_again_a_held_one_or_its_view_never():
    pool = ArrayPool(slots=2)
    a = pool.empty((4, 5), np.float32)
    a.flags.writeable = False  # as a renderer hands it out
    address = a.ctypes.data
    del a
    b = pool.empty((4, 5), np.float32)
    assert b.ctypes.data == address and b.flags.writeable  # the same memory, writeable again
    c = pool.empty((4, 5), np.float32)  # b is held: a second array
    assert not np.shares_memory(b, c)
    view = c[1:, ::2]
    del c
    d = pool.empty((4, 5), np.float32)  # c lives on through its view: a third array
    assert not np.shares_memory(d, view) and not np.shares_memory(d, b)
    assert pool.empty((4, 5), np.uint8).dtype == np.uint8  # kinds are kept apart
    with pytest.raises(ValueError, match="slots must be >= 1"):
        ArrayPool(slots=0)


def test_frames_a_caller_keeps_stay_as_captured_and_dropped_ones_are_reused():
    scene = load_scene("supermarket")
    backend = EmbeddedBackend(scene, width=160, height=120)
    poses = bench_poses(scene, 6, seed=4)
    backend.reset(poses[0])
    kept = backend.capture()
    snapshot = {name: getattr(kept, name).copy() for name in ("rgb", "depth", "seg", "entity_index")}
    addresses = set()
    for pose in poses[1:]:
        backend.reset(pose)
        frame = backend.capture()
        addresses.add(frame.rgb.ctypes.data)
        assert not np.shares_memory(frame.rgb, kept.rgb) and not np.shares_memory(frame.depth, kept.depth)
        del frame
    for name, before in snapshot.items():
        assert np.array_equal(getattr(kept, name), before, equal_nan=True), name
        assert not getattr(kept, name).flags.writeable
    assert len(addresses) < len(poses) - 1  # dropped frames' memory came back
    backend.close()
