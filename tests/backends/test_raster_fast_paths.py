"""The renderer's shortcuts give what their straightforward versions give, value for value.

The frustum test of all five planes in two matrix products keeps the same boxes as the
per-plane loop; sign text (corners projected in one expression) lands on the sign's pixels.
"""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.frames import bench_poses
from situ_gym.backends.embedded import EmbeddedBackend
from situ_gym.backends.raster import camera_basis
from situ_gym.scene.loader import load_scene


def _in_frustum_per_plane(lo, hi, normals, offsets):
    keep = np.ones(len(lo), bool)
    for nrm, d in zip(normals, offsets, strict=True):
        corner = np.where(nrm >= 0, hi, lo)  # the box corner furthest along the normal
        keep &= corner @ nrm + d >= 0
    return keep


@pytest.mark.parametrize("store", ["supermarket", "home_furnishings"])
def test_frustum_keeps_the_boxes_the_per_plane_test_keeps(store):
    scene = load_scene(store)
    backend = EmbeddedBackend(scene, width=320, height=240)
    r = backend.renderer
    kept = []
    for pose in bench_poses(scene, 24, seed=3):
        eye = np.array([pose.x, pose.y, scene.layout.eye_height])
        planes = r._frustum_planes(eye, camera_basis(pose.yaw, pose.pitch))
        pos, neg, offsets = planes
        normals = (pos + neg).T
        for lo, hi in ((r.geo.lo, r.geo.hi), (r.quad_lo, r.quad_hi)):
            fast = r._in_frustum(lo, hi, planes)
            assert np.array_equal(fast, _in_frustum_per_plane(lo, hi, normals, offsets))
            kept.append(fast.mean())
    backend.close()
    assert 0.0 < min(kept) and max(kept) < 1.0  # the poses see some boxes and miss others


def test_sign_text_is_painted_only_on_the_signs_own_pixels():
    """Real frames exercise the blend: text shows, and only where a sign's face won the pixel."""
    scene = load_scene("supermarket")
    backend = EmbeddedBackend(scene, width=640, height=480)
    r = backend.renderer
    changed = 0
    for pose in bench_poses(scene, 12):
        eye = np.array([pose.x, pose.y, scene.layout.eye_height])
        rgb, _, _, ids = r.render(eye, pose.yaw, pose.pitch)
        ids = ids.copy()
        sign_vals = np.flatnonzero(np.isin(r._drawn, r.sign_faces + 1))  # ID-buffer values of sign faces
        faces, r.sign_faces = r.sign_faces, r.sign_faces[:0]  # the same frame without sign text
        plain, _, _, _ = r.render(eye, pose.yaw, pose.pitch)
        r.sign_faces = faces
        diff = np.any(rgb != plain, axis=-1)
        assert np.isin(ids[diff], sign_vals).all()
        changed += int(diff.sum())
    backend.close()
    assert changed > 100
