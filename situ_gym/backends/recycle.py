"""Per-frame output arrays that reuse the memory of earlier ones nobody holds any more.

A renderer hands out several new full-frame arrays per frame (RGB, depth, segmentation,
entity index, the marked views) and its caller drops them a frame later. Freed and
allocated again at every frame, their memory goes back to the operating system when the
allocator trims its heap and comes back page by page: several hundred page faults per
640x480 frame, about a millisecond on a virtual machine. :class:`ArrayPool` keeps the
last few arrays of each shape and hands one out again once only the pool refers to it:
an array the caller still holds (or a view of it) is never reused.
"""

from __future__ import annotations

import sys

import numpy as np

__all__ = ["ArrayPool"]


def _unheld_count() -> int:
    """sys.getrefcount of an array only a list refers to, as this interpreter counts it."""
    probe = [np.empty(0)]
    return sys.getrefcount(probe[0])


_UNHELD = _unheld_count()


class ArrayPool:
    """Arrays by (shape, dtype), at most ``slots`` kept per kind. Not for sharing between threads."""

    def __init__(self, slots: int = 4):
        if slots < 1:
            raise ValueError(f"slots must be >= 1, got {slots!r}")
        self.slots = slots
        self._kept: dict[tuple, list[np.ndarray]] = {}

    def empty(self, shape: tuple[int, ...], dtype) -> np.ndarray:
        """A writeable, uninitialised array: a kept one nobody else holds, else a new one."""
        kept = self._kept.setdefault((tuple(shape), np.dtype(dtype).str), [])
        for i in range(len(kept)):
            # a holder of the array, or of any view of it (a view refers to its base),
            # raises its count above that of an array only a list refers to
            if sys.getrefcount(kept[i]) == _UNHELD:
                array = kept[i]
                array.flags.writeable = True  # handed out read-only last time
                return array
        array = np.empty(shape, dtype)
        if len(kept) < self.slots:
            kept.append(array)
        return array
