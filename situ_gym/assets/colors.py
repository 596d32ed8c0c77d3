"""Seeded allocation of segmentation colours that the seg image can tell apart.

Channel values are 0 or 16, 28, ..., 244 (never 1..15: UnrealCV's gamma quirk), so any two
colours differ by at least 12 in some channel and none equals a reserved colour.
"""

from __future__ import annotations

import random

from situ_gym.scene.model import BACKGROUND_COLOR, FLOOR_COLOR, WALL_COLOR

__all__ = ["CHANNEL_VALUES", "ColorPool"]

CHANNEL_VALUES = (0, *range(16, 256, 12))


class ColorPool:
    """Hands out distinct colours in a seeded order."""

    def __init__(self, rng: random.Random):
        reserved = {BACKGROUND_COLOR, FLOOR_COLOR, WALL_COLOR}
        # Skip very dark colours so entities stay distinct from the background in previews.
        pool = [
            (r, g, b)
            for r in CHANNEL_VALUES
            for g in CHANNEL_VALUES
            for b in CHANNEL_VALUES
            if (r, g, b) not in reserved and r + g + b >= 96
        ]
        rng.shuffle(pool)
        self._pool = pool

    def take(self) -> tuple[int, int, int]:
        if not self._pool:
            raise ValueError("colour pool exhausted")
        return self._pool.pop()
