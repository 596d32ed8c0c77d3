"""Layout minimap: size, pose dot and heading, role handles, cached background."""

from __future__ import annotations

import numpy as np
import pytest

from situ_gym.backends.base import Pose
from situ_gym.som import map_transform, render_minimap

RED = np.array((220, 30, 30))


def _reddish(image: np.ndarray) -> np.ndarray:
    diff = np.abs(image.astype(int) - RED).sum(axis=2)
    return diff < 60


def test_shape_and_aspect(market):
    image = render_minimap(market.scene, market, Pose(1.0, 1.0, 0.0), "assistant")
    assert image.shape == (240, 320, 3) and image.dtype == np.uint8
    tall = render_minimap(market.scene, market, Pose(1.0, 1.0, 0.0), "user", (300, None))
    # hall 12 m x 8 m -> 288 x 192 drawable pixels plus the margins
    assert tall.shape == (204, 300, 3)


def test_pose_dot_and_heading(market):
    tf = map_transform(market.scene)
    pose = Pose(6.0, 4.0, 0.0)
    u, v = tf.to_px(pose.x, pose.y)
    east = render_minimap(market.scene, market, pose, "assistant")
    assert _reddish(east)[v, u]
    red = _reddish(east)
    assert red[v - 1 : v + 2, u + 10 : u + 16].any() and not red[v - 1 : v + 2, u - 16 : u - 10].any()
    north = _reddish(render_minimap(market.scene, market, Pose(6.0, 4.0, 90.0), "assistant"))
    assert (
        north[v - 16 : v - 10, u - 1 : u + 2].any()
        and not north[v + 10 : v + 16, u - 1 : u + 2].any()
    )
    # a clear arrow: its shaft is at least 4 px wide half-way to the tip
    assert red[v - 6 : v + 7, u + 12].sum() >= 4


def test_only_the_pose_changes_between_calls(market):
    a = render_minimap(market.scene, market, Pose(2.0, 2.0, 0.0), "user")
    b = render_minimap(market.scene, market, Pose(9.0, 6.0, 180.0), "user")
    tf = map_transform(market.scene)
    changed = np.argwhere(np.any(a != b, axis=2))
    centers = np.array([tf.to_px(2.0, 2.0), tf.to_px(9.0, 6.0)])[:, ::-1]  # (row, col)
    near = np.min(np.abs(changed[:, None, :] - centers[None]).max(axis=2), axis=1)
    reach = max(18, int(1.6 * tf.scale), tf.width // 16) + 6  # arrow length (1.6 m) + its halo
    assert len(changed) > 0 and near.max() <= reach
    again = render_minimap(market.scene, market, Pose(2.0, 2.0, 0.0), "user")
    assert np.array_equal(a, again)
    again[:] = 0  # the caller may scribble on its copy
    assert np.array_equal(a, render_minimap(market.scene, market, Pose(2.0, 2.0, 0.0), "user"))


def test_roles_write_different_handles(market, home):
    for index in (market, home):
        user = render_minimap(index.scene, index, Pose(1.0, 1.0, 0.0), "user")
        assistant = render_minimap(index.scene, index, Pose(1.0, 1.0, 0.0), "assistant")
        assert not np.array_equal(user, assistant)


def test_pose_outside_the_map_is_clamped(market):
    image = render_minimap(market.scene, market, Pose(-50.0, 99.0, 0.0), "user")
    assert _reddish(image)[0, 0]


def test_bad_arguments(market, home):
    pose = Pose(1.0, 1.0, 0.0)
    with pytest.raises(ValueError, match="'driver'"):
        render_minimap(market.scene, market, pose, "driver")
    with pytest.raises(ValueError, match="tiny-home"):
        render_minimap(home.scene, market, pose, "user")
    with pytest.raises(ValueError, match="8"):
        render_minimap(market.scene, market, pose, "user", (8, 8))
