"""Fast capture / Set-of-Mark paths give byte-identical frames, regions and role views.

The reference digests below were first computed with the implementation before the
speed-up (renderer lookups and ``analyse`` on decoded segmentation colours) and re-pinned
on purpose when the stores got their new look (issue 16: package art, stocked rows,
material patterns, label placement, outlines), over every approach point of the
committed scenes and 40 seeded waypoint poses per store at 640x480. They pin
the exact bytes of RGB, depth and segmentation, of every region (pixels, distance, box,
label point, contours) and of both roles' views (handles in order, visible list, overlay
image). Byte-exact rendering depends on the numpy / OpenCV builds, so the digest test is
skipped under other major.minor versions; the path-against-path test below always runs.
"""

from __future__ import annotations

import dataclasses
import hashlib

import cv2
import numpy as np
import pytest

from benchmarks.frames import bench_poses
from situ_gym.backends.base import Pose
from situ_gym.backends.embedded import EmbeddedBackend
from situ_gym.scene.index import SceneIndex
from situ_gym.scene.loader import load_scene
from situ_gym.som.marks import analyse, draw

_VERSIONS = ("2.4", "5.0")  # numpy, OpenCV (major.minor) the digests were recorded with
_REFERENCE = {
    "supermarket": {
        "rgb": "6606a5b70ac65305422247329b9990ee",
        "depth": "ab7b9b0337b97e66411faa17f2183496",
        "seg": "0fe262c0d85064e9451720856a6a0ac8",
        "regions": "a698a0bd4bf86158b0dfee8c482f5e0a",
        "regions_25": "904863b1372983e7f03c0aadc8911117",
        "views": "48466c2e7464cddaa54e3f97f29cee7b",
    },
    "home_furnishings": {
        "rgb": "3236e652d5e9818c94af6e6b720d33d7",
        "depth": "e7f6bc74f2d3a3466d4c9e97038baecc",
        "seg": "3488a0e66a3b1c9dbc8de4c65fad4746",
        "regions": "391e9b46d3c6698faef176a4b4519e63",
        "regions_25": "ec28fd05ad2a03e17c6f1dba1250b101",
        "views": "1f01051e11297a5bb74cdc2a4793d41d",
    },
}


def _poses(scene) -> list[Pose]:
    """Every approach point (looking slightly down) then 40 seeded waypoint-graph poses."""
    points = [a for f in scene.fixtures for _, a in sorted(f.approach.items())]
    points += [a for s in scene.stores for _, a in sorted(s.approach.items())]
    points += [a.approach for a in scene.areas]
    return [Pose(a.x, a.y, a.yaw, -8.0) for a in points] + bench_poses(scene, 40, seed=0)


def _region_bytes(analysis) -> bytes:
    parts = []
    for r in analysis.regions:
        parts.append(repr((r.entity_id, r.kind, r.name, r.pixels, r.distance, r.bbox, r.anchor)).encode())
        for c in r.contours:
            parts.append(str(c.shape).encode() + c.astype(np.int32).tobytes())
    return b"|".join(parts)


def _view_bytes(view) -> bytes:
    meta = repr((view.role, list(view.handles.items()), [repr(v) for v in view.visible]))
    return meta.encode() + view.image.tobytes() + str(view.image.shape).encode()


def _digests(store: str) -> dict[str, str]:
    scene = load_scene(store)
    index = SceneIndex(scene)
    backend = EmbeddedBackend(scene, width=640, height=480)
    hashes = {k: hashlib.sha256() for k in _REFERENCE[store]}
    try:
        for pose in _poses(scene):
            backend.reset(pose)
            frame = backend.capture()
            hashes["rgb"].update(frame.rgb.tobytes())
            hashes["depth"].update(frame.depth.tobytes())
            hashes["seg"].update(frame.seg.tobytes())
            hashes["regions"].update(_region_bytes(analyse(frame, index)) + b"#")
            wide = analyse(frame, index, building_max_depth=25.0)
            hashes["regions_25"].update(_region_bytes(wide) + b"#")
            for role in ("user", "assistant"):
                hashes["views"].update(_view_bytes(draw(wide, index, role)) + b"#")
    finally:
        backend.close()
    return {k: h.hexdigest()[:32] for k, h in hashes.items()}


def _version(mod) -> str:
    return ".".join(mod.__version__.split(".")[:2])


@pytest.mark.parametrize("store", ["supermarket", "home_furnishings"])
def test_capture_and_som_match_reference_digests(store):
    if (_version(np), _version(cv2)) != _VERSIONS:
        pytest.skip(f"digests recorded with numpy/OpenCV {_VERSIONS}, running {_version(np)}/{_version(cv2)}")
    assert _digests(store) == _REFERENCE[store]


@pytest.mark.parametrize("store", ["supermarket", "home_furnishings"])
def test_entity_index_path_matches_colour_path(store):
    """``analyse`` on the renderer's entity index equals ``analyse`` on decoded seg colours."""
    scene = load_scene(store)
    index = SceneIndex(scene)
    backend = EmbeddedBackend(scene, width=320, height=240)
    try:
        for pose in _poses(scene)[::3]:
            backend.reset(pose)
            frame = backend.capture()
            assert frame.entity_index is not None and frame.entity_index.shape == frame.depth.shape
            colour_only = dataclasses.replace(frame, entity_index=None)
            for kwargs in ({}, {"building_max_depth": 25.0}, {"max_depth": 3.0, "min_pixels": 5}):
                fast, slow = analyse(frame, index, **kwargs), analyse(colour_only, index, **kwargs)
                assert _region_bytes(fast) == _region_bytes(slow), (pose, kwargs)
            for role in ("user", "assistant"):
                a, b = draw(fast, index, role), draw(slow, index, role)
                assert _view_bytes(a) == _view_bytes(b)
    finally:
        backend.close()


def test_entity_index_follows_seg_colours_and_edits_fall_back_to_colours():
    """The index names the entity whose colour seg shows; a seg edited after capture wins."""
    scene = load_scene("supermarket")
    index = SceneIndex(scene)
    backend = EmbeddedBackend(scene, width=320, height=240)
    try:
        fixture = scene.fixtures[0]
        a = fixture.approach["front"]
        backend.reset(Pose(a.x, a.y, a.yaw, -15.0))
        frame = backend.capture()
    finally:
        backend.close()
    ids = ("", *index.entities)
    slots = np.unique(frame.entity_index)
    assert len(slots) > 3
    for k in slots[slots > 0]:
        ys, xs = np.nonzero(frame.entity_index == k)
        assert (frame.seg[ys, xs] == index.entities[ids[k]].color).all()
    assert (frame.entity_index[(frame.seg == 0).all(axis=2)] == 0).all()
    # Paint the largest region the floor colour: the colour path no longer sees it.
    first = analyse(frame, index, building_max_depth=25.0)
    biggest = max(first.regions, key=lambda r: r.pixels)
    edited = dataclasses.replace(frame, seg=frame.seg.copy())
    edited.seg[frame.entity_index == ids.index(biggest.entity_id)] = (8, 8, 8)
    after = analyse(edited, index, building_max_depth=25.0)
    expected = analyse(dataclasses.replace(edited, entity_index=None), index, building_max_depth=25.0)
    assert biggest.entity_id not in {r.entity_id for r in after.regions}
    assert _region_bytes(after) == _region_bytes(expected)


def test_entity_index_out_of_range_is_an_error():
    scene = load_scene("supermarket")
    index = SceneIndex(scene)
    backend = EmbeddedBackend(scene, width=64, height=48)
    try:
        frame = backend.capture()
    finally:
        backend.close()
    bad = frame.entity_index.astype(np.int32)
    bad[0, :] = len(index.entities) + 1
    bad_frame = dataclasses.replace(frame, entity_index=bad, depth=np.zeros_like(frame.depth))
    with pytest.raises(ValueError, match="entity_index"):
        analyse(bad_frame, index)
    bad[0, :] = -3
    with pytest.raises(ValueError, match="entity_index holds -3"):
        analyse(bad_frame, index)
    with pytest.raises(ValueError, match="entity_index"):
        analyse(dataclasses.replace(frame, entity_index=bad[:, :10]), index)
