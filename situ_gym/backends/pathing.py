"""Path finding for targeted moves: A* on a floor occupancy grid inflated by the body radius.

Cells are free when their centre keeps at least the body radius from every obstacle
(exact point-to-rectangle distances) and from the hall edge. Paths are shortened by
line-of-sight string pulling, so their length is what a person walking them covers.
"""

from __future__ import annotations

import heapq
import math

import cv2
import numpy as np

from situ_gym.backends.motion import Obstacles

__all__ = ["FloorGrid"]

_SQ2 = math.sqrt(2.0)
_MOVES = [(1, 0, 1.0), (-1, 0, 1.0), (0, 1, 1.0), (0, -1, 1.0), (1, 1, _SQ2), (1, -1, _SQ2), (-1, 1, _SQ2), (-1, -1, _SQ2)]


_MAX_CACHED_PATHS = 4096


class FloorGrid:
    """Walkable cells of the hall for a body of ``radius`` metres, ``cell`` metres per cell."""

    def __init__(self, obs: Obstacles, radius: float, cell: float = 0.2):
        self.obs = obs
        self.radius = float(radius)
        self.cell = float(cell)
        bx0, by0, bx1, by1 = obs.bounds
        self.origin = (bx0, by0)
        self.nx = max(1, int(math.ceil((bx1 - bx0) / cell)))
        self.ny = max(1, int(math.ceil((by1 - by0) / cell)))
        xs = bx0 + (np.arange(self.nx) + 0.5) * cell
        ys = by0 + (np.arange(self.ny) + 0.5) * cell
        self.xs, self.ys = xs, ys
        free = np.ones((self.ny, self.nx), bool)
        free &= (xs[None, :] - bx0 >= radius) & (bx1 - xs[None, :] >= radius)
        free &= (ys[:, None] - by0 >= radius) & (by1 - ys[:, None] >= radius)
        for x0, y0, x1, y1 in obs.rects:
            i0 = max(0, int(math.floor((x0 - radius - bx0) / cell)))
            i1 = min(self.nx, int(math.ceil((x1 + radius - bx0) / cell)) + 1)
            j0 = max(0, int(math.floor((y0 - radius - by0) / cell)))
            j1 = min(self.ny, int(math.ceil((y1 + radius - by0) / cell)) + 1)
            if i0 >= i1 or j0 >= j1:
                continue
            dx = np.maximum(np.maximum(x0 - xs[i0:i1], 0.0), xs[i0:i1] - x1)
            dy = np.maximum(np.maximum(y0 - ys[j0:j1], 0.0), ys[j0:j1] - y1)
            free[j0:j1, i0:i1] &= np.hypot(dx[None, :], dy[:, None]) >= radius
        self.free = free
        _, self.component = cv2.connectedComponents(free.astype(np.uint8), connectivity=8)
        self._free_flat = free.reshape(-1).tolist()
        # A* cell paths between two cells (the grid never changes): episodes of a task walk
        # the same routes again and again. Bounded; cleared when full.
        self._paths: dict[tuple[tuple[int, int], tuple[int, int]], list[tuple[int, int]] | None] = {}

    # -- coordinates -----------------------------------------------------------
    def cell_of(self, x: float, y: float) -> tuple[int, int]:
        i = int(math.floor((x - self.origin[0]) / self.cell))
        j = int(math.floor((y - self.origin[1]) / self.cell))
        return min(max(i, 0), self.nx - 1), min(max(j, 0), self.ny - 1)

    def centre(self, i: int, j: int) -> tuple[float, float]:
        return float(self.xs[i]), float(self.ys[j])

    def is_free(self, x: float, y: float) -> bool:
        i, j = self.cell_of(x, y)
        return bool(self.free[j, i])

    def nearest_free(self, x: float, y: float, max_dist: float = 0.6) -> tuple[int, int] | None:
        """The free cell closest to a point, within ``max_dist`` metres."""
        i, j = self.cell_of(x, y)
        if self.free[j, i]:
            return i, j
        k = int(math.ceil(max_dist / self.cell))
        i0, i1, j0, j1 = max(0, i - k), min(self.nx, i + k + 1), max(0, j - k), min(self.ny, j + k + 1)
        sub = self.free[j0:j1, i0:i1]
        if not sub.any():
            return None
        jj, ii = np.nonzero(sub)
        d = (self.xs[i0 + ii] - x) ** 2 + (self.ys[j0 + jj] - y) ** 2
        m = int(np.argmin(d))
        if d[m] > max_dist**2:
            return None
        return int(i0 + ii[m]), int(j0 + jj[m])

    # -- search ----------------------------------------------------------------
    def astar(self, start: tuple[int, int], goals: set[tuple[int, int]], heuristic) -> list[tuple[int, int]] | None:
        """Shortest 8-connected path of free cells from ``start`` to any goal cell."""
        nx, ny = self.nx, self.ny
        free = self._free_flat
        s = start[1] * nx + start[0]
        goal_ids = {j * nx + i for i, j in goals}
        n = nx * ny
        g = [math.inf] * n
        parent = [-1] * n
        closed = bytearray(n)
        g[s] = 0.0
        heap = [(heuristic(*start), 0.0, s)]
        push, pop = heapq.heappush, heapq.heappop
        while heap:
            _, gc, u = pop(heap)
            if closed[u]:
                continue
            if u in goal_ids:
                path = []
                while u != -1:
                    path.append((u % nx, u // nx))
                    u = parent[u]
                return path[::-1]
            closed[u] = 1
            ui, uj = u % nx, u // nx
            for di, dj, w in _MOVES:
                vi, vj = ui + di, uj + dj
                if vi < 0 or vj < 0 or vi >= nx or vj >= ny:
                    continue
                v = vj * nx + vi
                if closed[v] or not free[v]:
                    continue
                if di and dj and not (free[uj * nx + vi] and free[vj * nx + ui]):
                    continue  # no corner cutting
                ng = gc + w
                if ng < g[v]:
                    g[v] = ng
                    parent[v] = u
                    push(heap, (ng + heuristic(vi, vj), ng, v))
        return None

    def line_free(self, a: tuple[float, float], b: tuple[float, float]) -> bool:
        """True if a body of ``radius`` can slide from a to b (exact, against inflated rects).

        Rectangles are inflated by the radius on every side (square corners: slightly
        conservative); the hall edge shrinks by the radius.
        """
        ax, ay = a
        bx, by = b
        x0, y0, x1, y1 = self.obs.bounds
        r = self.radius - 1e-6
        for px, py in (a, b):
            if px < x0 + r - 1e-6 or px > x1 - r + 1e-6 or py < y0 + r - 1e-6 or py > y1 - r + 1e-6:
                return False
        rects = self.obs.rects
        if len(rects) == 0:
            return True
        dx, dy = bx - ax, by - ay
        lo_x, hi_x = rects[:, 0] - r, rects[:, 2] + r
        lo_y, hi_y = rects[:, 1] - r, rects[:, 3] + r
        with np.errstate(divide="ignore", invalid="ignore"):
            tx0, tx1 = (lo_x - ax) / dx, (hi_x - ax) / dx
            ty0, ty1 = (lo_y - ay) / dy, (hi_y - ay) / dy
        if dx == 0.0:
            inside = (ax > lo_x) & (ax < hi_x)
            tx0 = np.where(inside, -np.inf, np.inf)
            tx1 = np.where(inside, np.inf, -np.inf)
        if dy == 0.0:
            inside = (ay > lo_y) & (ay < hi_y)
            ty0 = np.where(inside, -np.inf, np.inf)
            ty1 = np.where(inside, np.inf, -np.inf)
        t_in = np.maximum(np.minimum(tx0, tx1), np.minimum(ty0, ty1))
        t_out = np.minimum(np.maximum(tx0, tx1), np.maximum(ty0, ty1))
        hit = (t_in < t_out) & (t_out > 1e-9) & (t_in < 1.0 - 1e-9)
        return not bool(hit.any())

    def plan(
        self, start: tuple[float, float], goal: tuple[float, float] | None = None, goal_cells: set | None = None,
        heuristic=None,
    ) -> list[tuple[float, float]] | None:
        """Plan from a point to a point (or to a set of cells); None when unreachable.

        Returns the shortened polyline in metres, starting at ``start`` and ending at
        ``goal`` (or at the centre of the goal cell reached).
        """
        s = self.nearest_free(*start)
        if s is None:
            return None
        if goal is not None:
            gcell = self.nearest_free(*goal, max_dist=0.15)
            if gcell is None:
                return None
            goal_cells = {gcell}
            gx, gy = gcell
            heuristic = lambda i, j: math.hypot(i - gx, j - gy)  # noqa: E731 - tiny closure
        if not goal_cells:
            return None
        comp = self.component[s[1], s[0]]
        goal_cells = {c for c in goal_cells if self.component[c[1], c[0]] == comp}
        if not goal_cells:
            return None
        if goal is not None:  # one goal cell, straight-line heuristic: the path depends on the two cells only
            key = (s, gcell)
            if key not in self._paths:
                if len(self._paths) >= _MAX_CACHED_PATHS:
                    self._paths.clear()
                self._paths[key] = self.astar(s, goal_cells, heuristic)
            cells = self._paths[key]
        else:
            cells = self.astar(s, goal_cells, heuristic or (lambda i, j: 0.0))
        if cells is None:
            return None
        end = goal if goal is not None else self.centre(*cells[-1])
        pts = [tuple(start)] + [self.centre(i, j) for i, j in cells[1:-1]] + [tuple(end)]
        return self._shorten(pts)

    def _shorten(self, pts: list[tuple[float, float]]) -> list[tuple[float, float]]:
        if len(pts) <= 2:
            return pts
        out = [pts[0]]
        k = 0
        while k < len(pts) - 1:
            m = k + 1
            while m + 1 < len(pts) and self.line_free(pts[k], pts[m + 1]):
                m += 1
            out.append(pts[m])
            k = m
        return out

    @staticmethod
    def length(path: list[tuple[float, float]]) -> float:
        return float(sum(math.hypot(b[0] - a[0], b[1] - a[1]) for a, b in zip(path, path[1:], strict=False)))
