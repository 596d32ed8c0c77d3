"""Fixtures and storefronts as geometry: uprights, boards, back panels, freezer walls and
door mullions; store sign bands and lintels."""

from __future__ import annotations

import numpy as np

from situ_gym.backends.mesh import (
    BOARD_RGB,
    FREEZER_RGB,
    INTERIOR_RGB,
    METAL_RGB,
    MULLION_RGB,
    RAIL_RGB,
    WALL_RGB,
    WOOD_DARK_RGB,
    WOOD_RGB,
    MeshBuilder,
    mix,
    yaw_axis,
)
from situ_gym.backends.stock import product_extent
from situ_gym.scene.model import Fixture, Instance, Store

__all__ = ["fixture_parts", "store_parts"]


def fixture_parts(b: MeshBuilder, fx: Fixture, instances: list[Instance]) -> tuple[int, float, float] | None:
    """Add a fixture's parts; return its back panel as (axis, lo, hi) when it hides products."""
    x0, y0, x1, y1 = fx.footprint
    lo_fp = np.array([x0, y0, 0.0])
    hi_fp = np.array([x1, y1, fx.height])
    depth_axis, sign = yaw_axis(fx.front_yaw)
    long_axis = 1 - depth_axis
    seg = fx.color
    ext = product_extent(instances)
    levels = sorted(fx.levels) or [0.0]
    front_d = depth_axis * 2 + (1 if sign > 0 else 0)

    def part(lo, hi, rgb, label, **kw):
        b.box(lo, hi, rgb, seg, label=f"{fx.id}:{label}", **kw)

    def span(axis_lo, axis_hi, axis, lo=None, hi=None):
        lo = lo_fp.copy() if lo is None else lo.copy()
        hi = hi_fp.copy() if hi is None else hi.copy()
        lo[axis], hi[axis] = axis_lo, axis_hi
        return lo, hi

    # Free margins between the footprint edges and the products (parts must not overlap them).
    p_lo = ext[0] if ext is not None else (lo_fp + hi_fp) / 2
    p_hi = ext[1] if ext is not None else (lo_fp + hi_fp) / 2
    end_lo = min(lo_fp[long_axis] + 0.05, p_lo[long_axis])
    end_hi = max(hi_fp[long_axis] - 0.05, p_hi[long_axis])
    back_lo = min(lo_fp[depth_axis] + 0.05, p_lo[depth_axis])
    back_hi = max(hi_fp[depth_axis] - 0.05, p_hi[depth_axis])
    bottom = levels[0]
    top_free = max(fx.height - 0.04, p_hi[2]) if ext is not None else fx.height - 0.04

    # A hanging sign above the fixture, named on both sides.
    length = hi_fp[long_axis] - lo_fp[long_axis]
    centre = 0.5 * (lo_fp + hi_fp)
    lo, hi = centre.copy(), centre.copy()
    half = min(1.1, 0.45 * length)  # large enough to read across the hall
    lo[long_axis], hi[long_axis] = centre[long_axis] - half, centre[long_axis] + half
    lo[depth_axis], hi[depth_axis] = centre[depth_axis] - 0.02, centre[depth_axis] + 0.02
    sign_z = max(max(fx.height, p_hi[2]) + 0.45, 2.45)  # above head height even over low fixtures
    lo[2], hi[2] = sign_z, sign_z + 0.42
    title, _, rest = fx.name.partition(":")
    text = title.strip() + ("\n" + rest.strip() if rest.strip() else "")
    part(lo, hi, mix(seg, (28, 30, 36), 0.55), "sign")
    b.sign(depth_axis * 2, text)
    b.sign(depth_axis * 2 + 1, text)

    if fx.kind in ("shelf", "open_cooler", "upright_freezer"):
        double = "back" in fx.approach and fx.kind == "shelf"
        body = {"shelf": METAL_RGB, "open_cooler": FREEZER_RGB, "upright_freezer": FREEZER_RGB}[fx.kind]
        board = {"shelf": BOARD_RGB, "open_cooler": INTERIOR_RGB, "upright_freezer": (200, 214, 226)}[fx.kind]
        inner = INTERIOR_RGB if fx.kind != "shelf" else body
        # Back panel (centre spine for double-sided gondolas), between the products.
        mid = (lo_fp[depth_axis] + hi_fp[depth_axis]) / 2
        if double:
            facing_front = [i for i in instances if yaw_axis(i.facing) == (depth_axis, sign)]
            facing_back = [i for i in instances if yaw_axis(i.facing) != (depth_axis, sign)]
            fe, be = product_extent(facing_front), product_extent(facing_back)
            lo_side = be if sign > 0 else fe  # products on the low side of the spine
            hi_side = fe if sign > 0 else be
            gap_lo = lo_side[1][depth_axis] if lo_side is not None else mid - 0.03
            gap_hi = hi_side[0][depth_axis] if hi_side is not None else mid + 0.03
            panel = (max(gap_lo, mid - 0.03), min(gap_hi, mid + 0.03))
        else:
            panel = (lo_fp[depth_axis], back_lo) if sign > 0 else (back_hi, hi_fp[depth_axis])
        z_top = top_free
        has_panel = panel[1] - panel[0] > 1e-4
        if has_panel:
            lo, hi = span(*panel, depth_axis)
            lo[long_axis], hi[long_axis] = end_lo, end_hi
            hi[2] = z_top
            part(lo, hi, inner, "panel")
        # End uprights / side walls over the full depth.
        for a, c in ((lo_fp[long_axis], end_lo), (end_hi, hi_fp[long_axis])):
            if c - a > 1e-4:
                lo, hi = span(a, c, long_axis)
                hi[2] = z_top
                part(lo, hi, body, "side")
        # Top cap / canopy (freezers and coolers have a lit header).
        lo, hi = lo_fp.copy(), hi_fp.copy()
        lo[2] = z_top
        if hi[2] - lo[2] > 1e-4:
            part(lo, hi, body, "cap", front=(front_d, (250, 250, 250) if fx.kind != "shelf" else body))
        # Boards (split around the spine), the lowest one a plinth from the floor.
        segments = [(lo_fp[depth_axis], panel[0]), (panel[1], hi_fp[depth_axis])] if double else [
            (back_lo, hi_fp[depth_axis]) if sign > 0 else (lo_fp[depth_axis], back_hi)
        ]
        for k, lvl in enumerate(levels):
            z_lo = 0.0 if k == 0 else max(lvl - 0.03, 0.0)
            if lvl - z_lo < 1e-4:
                continue
            for s_lo, s_hi in segments:
                if s_hi - s_lo < 1e-4:
                    continue
                lo, hi = span(s_lo, s_hi, depth_axis)
                lo[long_axis], hi[long_axis] = end_lo, end_hi
                lo[2], hi[2] = z_lo, lvl
                rail = RAIL_RGB if fx.kind == "shelf" else board
                fronts = (depth_axis * 2 + 1, depth_axis * 2) if double else (front_d,)
                colors = board if k else (body if fx.kind == "shelf" else INTERIOR_RGB)
                part(lo, hi, colors, f"board{k}", front=(fronts[0], rail))
        if fx.kind == "upright_freezer":
            # Glass doors: dark mullions standing just in front of the footprint.
            length = hi_fp[long_axis] - lo_fp[long_axis]
            n_doors = max(1, int(round(length / 0.7)))
            plane = hi_fp[depth_axis] if sign > 0 else lo_fp[depth_axis]
            # mullion k spans [a_k, b_k], clipped to the footprint so neighbours only touch
            spans = []
            for k in range(n_doors + 1):
                c = lo_fp[long_axis] + length * k / n_doors
                spans.append((max(c - 0.025, lo_fp[long_axis]), min(c + 0.025, hi_fp[long_axis])))
            slab = (plane, plane + 0.03) if sign > 0 else (plane - 0.03, plane)
            for k, (a, c) in enumerate(spans):
                lo, hi = lo_fp.copy(), hi_fp.copy()
                lo[long_axis], hi[long_axis] = a, c
                lo[depth_axis], hi[depth_axis] = slab
                lo[2], hi[2] = bottom, z_top
                part(lo, hi, MULLION_RGB, f"mullion{k}")
            for z_lo, z_hi in ((max(bottom - 0.04, 0.0), bottom), (z_top - 0.04, z_top)):
                for k in range(n_doors):
                    lo, hi = lo_fp.copy(), hi_fp.copy()
                    lo[long_axis], hi[long_axis] = spans[k][1], spans[k + 1][0]
                    lo[depth_axis], hi[depth_axis] = slab
                    lo[2], hi[2] = z_lo, z_hi
                    part(lo, hi, MULLION_RGB, "rail")
        return (depth_axis, float(panel[0]), float(panel[1])) if has_panel else None

    if fx.kind == "chest_freezer":
        # An island freezer: base up to the goods, a low solid rim, glass sides (not drawn:
        # the goods stay visible through them), corner posts and the lid edge on top.
        lo, hi = lo_fp.copy(), hi_fp.copy()
        hi[2] = bottom
        if bottom > 1e-4:
            part(lo, hi, FREEZER_RGB, "base")
        wall = 0.06
        in_lo = np.minimum(lo_fp + wall, p_lo)
        in_hi = np.maximum(hi_fp - wall, p_hi)
        rim = min(bottom + 0.06, fx.height - 0.05)
        lid = fx.height - 0.03
        for z0, z1, name, rgb, top in ((bottom, rim, "rim", FREEZER_RGB, (60, 96, 140)),
                                       (lid, fx.height, "lid", (70, 98, 132), (60, 96, 140))):
            for axis in (0, 1):
                for a, c in ((lo_fp[axis], in_lo[axis]), (in_hi[axis], hi_fp[axis])):
                    if c - a < 1e-4:
                        continue
                    lo, hi = lo_fp.copy(), hi_fp.copy()
                    lo[axis], hi[axis] = a, c
                    if axis == 1:  # the y walls fit between the x walls
                        lo[0], hi[0] = in_lo[0], in_hi[0]
                    lo[2], hi[2] = z0, z1
                    part(lo, hi, rgb, name, top_rgb=top)
        for xa, xc in ((lo_fp[0], in_lo[0]), (in_hi[0], hi_fp[0])):
            for ya, yc in ((lo_fp[1], in_lo[1]), (in_hi[1], hi_fp[1])):
                if xc - xa > 1e-4 and yc - ya > 1e-4 and lid - rim > 1e-4:
                    part((xa, ya, rim), (xc, yc, lid), (70, 98, 132), "post")
        return None

    # produce_stand: a wooden stand with a stepped block under each level's products.
    lo, hi = lo_fp.copy(), hi_fp.copy()
    hi[2] = bottom
    if bottom > 1e-4:
        part(lo, hi, WOOD_RGB, "base", top_rgb=WOOD_DARK_RGB)
    for k, lvl in enumerate(levels[1:], start=1):
        on = [i for i in instances if abs(i.position[2] - lvl) < 0.02]
        e = product_extent(on)
        if e is None or lvl - bottom < 1e-4:
            continue
        lo, hi = lo_fp.copy(), hi_fp.copy()  # a step across the stand under this level's band
        lo[depth_axis], hi[depth_axis] = e[0][depth_axis], e[1][depth_axis]
        lo[long_axis], hi[long_axis] = end_lo, end_hi
        lo[2], hi[2] = bottom, lvl
        part(lo, hi, WOOD_RGB, f"tier{k}", top_rgb=WOOD_DARK_RGB)
    return None


def store_parts(b: MeshBuilder, store: Store, walls: list) -> None:
    """Lintel over the doorway and a sign band along the outside of the front wall."""
    x0, y0, x1, y1 = store.footprint
    dx0, dy0, dx1, dy1 = store.doorway
    cx, cy = (dx0 + dx1) / 2, (dy0 + dy1) / 2
    dists = {"w": abs(cx - x0), "e": abs(cx - x1), "s": abs(cy - y0), "n": abs(cy - y1)}
    side = min(dists, key=dists.get)
    door_top = min(2.3, store.wall_height - 0.05)
    if store.wall_height - door_top > 1e-3:
        b.box((dx0, dy0, door_top), (dx1, dy1, store.wall_height), mix(store.color, WALL_RGB, 0.55),
              store.color, label=f"{store.id}:lintel")
    own = [w for w in walls if w.owner == store.id]
    if not own:
        return
    fps = np.array([w.footprint for w in own], float)
    z0, z1 = max(door_top + 0.05, store.wall_height - 0.75), store.wall_height - 0.12
    if z1 - z0 < 0.1:
        return
    if side in ("s", "n"):
        out = fps[:, 1].min() - 0.05 if side == "s" else fps[:, 3].max()
        lo, hi = (x0, out, z0), (x1, out + 0.05, z1)
    else:
        out = fps[:, 0].min() - 0.05 if side == "w" else fps[:, 2].max()
        lo, hi = (out, y0, z0), (out + 0.05, y1, z1)
    sign_rgb = mix(store.color, (30, 30, 36), 0.35)
    b.box(lo, hi, sign_rgb, store.color, label=f"{store.id}:sign")
    b.sign({"s": 2, "n": 3, "w": 0, "e": 1}[side], store.name, ink=mix(store.color, (255, 255, 255), 0.85))
