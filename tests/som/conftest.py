"""Synthetic frames for the SoM tests, painted over the marks world of tests/world.py."""

from __future__ import annotations

import numpy as np
import pytest

from situ_gym.backends.base import Frame, Pose
from situ_gym.scene.index import SceneIndex
from tests.world import marks_home, marks_market

# The SoM benchmark (bench_som.py, moving to benchmarks/som.py) imports the scene by this name.
make_supermarket = marks_market

H, W = 120, 160

# Handle formats per role and entity kind (paper App. B.2).
FORMATS = {
    "user": {"product": r"\d+", "fixture": r"[A-Z]+", "store": r"[A-Z]+", "area": r"[A-Z]+\d+"},
    "assistant": {"product": r"[a-z]+", "fixture": r"\d+", "store": r"\d+", "area": r"\d+[a-z]+"},
}


class Canvas:
    """A synthetic frame the test paints entity rectangles into."""

    def __init__(self, index: SceneIndex, h: int = H, w: int = W):
        self.index = index
        self.rgb = np.full((h, w, 3), 90, dtype=np.uint8)
        self.seg = np.full((h, w, 3), 8, dtype=np.uint8)  # floor colour
        self.depth = np.full((h, w), np.inf, dtype=np.float32)

    def paint(
        self, entity_id: str, x0: int, y0: int, x1: int, y1: int, depth: float = 2.0
    ) -> Canvas:
        color = self.index.entities[entity_id].color
        self.seg[y0:y1, x0:x1] = color
        self.depth[y0:y1, x0:x1] = depth
        self.rgb[y0:y1, x0:x1] = (np.array(color) // 2 + 60).astype(np.uint8)
        return self

    def frame(self) -> Frame:
        return Frame(
            rgb=self.rgb.copy(),
            depth=self.depth.copy(),
            seg=self.seg.copy(),
            pose=Pose(1.0, 1.0, 90.0),
        )


@pytest.fixture
def market() -> SceneIndex:
    return SceneIndex(marks_market())


@pytest.fixture
def home() -> SceneIndex:
    return SceneIndex(marks_home())
