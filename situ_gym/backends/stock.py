"""Products as geometry: stocked shelf rows with package art, furniture and other floor pieces.

A run of evenly spaced facings of one product on one board becomes one box reaching back
to the fixture's panel and widened by whole facings into half of the free board space
beside it, its front textured with the product's package art repeated once per facing
(:mod:`situ_gym.backends.appearance`). Furniture and other floor-standing products take
their colour from their colour label and a pattern from their material label.
"""

from __future__ import annotations

import numpy as np

from situ_gym.backends.appearance import (
    TOP_DEPTH,
    material_pattern,
    package_texture,
    package_top_texture,
    pattern_texture,
    product_color,
)
from situ_gym.backends.mesh import KIND_PRODUCT, MeshBuilder, hash01, mix, yaw_axis
from situ_gym.scene.model import Fixture, Instance, Product

__all__ = ["add_floor_product", "add_furniture", "add_shelf_row", "facing_rows", "fill_boards",
           "instance_box", "product_extent"]


def instance_box(inst: Instance) -> tuple[np.ndarray, np.ndarray]:
    x, y, z = inst.position
    sx, sy, sz = inst.size
    return np.array([x - sx / 2, y - sy / 2, z]), np.array([x + sx / 2, y + sy / 2, z + sz])


def _front_face(yaw: float) -> int:
    axis, sign = yaw_axis(yaw)
    return axis * 2 + (1 if sign > 0 else 0)


def facing_rows(instances: list[Instance]) -> list[tuple[np.ndarray, np.ndarray, float, float, float]]:
    """Runs of evenly spaced equal facings side by side: (lo, hi, facing yaw, pitch, width) per run."""
    groups: dict[tuple, list[Instance]] = {}
    for inst in instances:
        axis, _ = yaw_axis(inst.facing)
        key = (round(inst.facing % 360.0, 3), round(inst.position[2], 4), tuple(round(v, 4) for v in inst.size),
               round(inst.position[axis], 4))
        groups.setdefault(key, []).append(inst)
    rows = []
    for _, insts in sorted(groups.items()):
        along = 1 - yaw_axis(insts[0].facing)[0]
        insts = sorted(insts, key=lambda i: i.position[along])
        width = insts[0].size[along]
        runs: list[list[Instance]] = [[insts[0]]]
        for inst in insts[1:]:
            run = runs[-1]
            step = inst.position[along] - run[-1].position[along]
            pitch = run[1].position[along] - run[0].position[along] if len(run) > 1 else step
            if width - 1e-6 <= step <= width + 0.05 and abs(step - pitch) < 1e-3:
                run.append(inst)
            else:
                runs.append([inst])
        for run in runs:
            lo, _ = instance_box(run[0])
            _, hi = instance_box(run[-1])
            pitch = (run[-1].position[along] - run[0].position[along]) / (len(run) - 1) if len(run) > 1 else width
            rows.append((lo, hi, run[0].facing, pitch, width))
    return rows


def fill_boards(fx: Fixture, rows: list, panel) -> list:
    """Widen each row by whole facings into the free board space beside it (half of each gap).

    Rows reach back to the panel first; a row's neighbours are the rows on the same board
    (same height and facing) whose depth range overlaps its own.
    """
    deep = [(p, _stock_depth(lo, hi, facing, panel), row) for p, row in rows for lo, hi, facing, *_ in [row]]
    out = []
    x0, y0, x1, y1 = fx.footprint
    for p, (lo, hi), row in deep:
        _, _, facing, pitch, width = row
        axis = yaw_axis(facing)[0]
        along = 1 - axis
        left = (x0, y0)[along] + 0.06
        right = (x1, y1)[along] - 0.06
        for _, (lo2, hi2), row2 in deep:
            if row2 is row or abs(lo2[2] - lo[2]) > 0.01 or yaw_axis(row2[2]) != yaw_axis(facing):
                continue
            if hi2[axis] <= lo[axis] + 1e-6 or lo2[axis] >= hi[axis] - 1e-6:
                continue  # another depth band
            if hi2[along] <= lo[along] + 1e-6:
                left = max(left, 0.5 * (hi2[along] + lo[along]))
            elif lo2[along] >= hi[along] - 1e-6:
                right = min(right, 0.5 * (lo2[along] + hi[along]))
        lo_o, hi_o = row[0].copy(), row[1].copy()
        lo_o[along] -= max(0, int((lo[along] - left) // pitch)) * pitch
        hi_o[along] += max(0, int((right - hi[along]) // pitch)) * pitch
        out.append((p, (lo_o, hi_o, facing, pitch, width)))
    return out


def _stock_depth(lo: np.ndarray, hi: np.ndarray, facing: float, panel) -> tuple[np.ndarray, np.ndarray]:
    """Extend a row of facings back to its fixture's panel, so the board reads as full."""
    if panel is None:
        return lo, hi
    p_axis, p_lo, p_hi = panel
    f_axis, f_sign = yaw_axis(facing)
    lo, hi = lo.copy(), hi.copy()
    if f_axis == p_axis and f_sign > 0 and lo[p_axis] >= p_hi - 1e-6:
        lo[p_axis] = min(lo[p_axis], p_hi + 0.002)
    elif f_axis == p_axis and f_sign < 0 and hi[p_axis] <= p_lo + 1e-6:
        hi[p_axis] = max(hi[p_axis], p_lo - 0.002)
    return lo, hi


def _hide_plane(lo: np.ndarray, hi: np.ndarray, facing: float, panel):
    """Products behind their fixture's back panel / spine are never seen: the plane the eye must pass."""
    if panel is None:
        return None
    p_axis, p_lo, p_hi = panel
    f_axis, f_sign = yaw_axis(facing)
    if f_axis == p_axis and f_sign > 0 and lo[p_axis] >= p_hi - 1e-6:
        return (p_axis, p_hi, 1.0)
    if f_axis == p_axis and f_sign < 0 and hi[p_axis] <= p_lo + 1e-6:
        return (p_axis, p_lo, -1.0)
    return None


def _tinted(tile: np.ndarray, tint: np.ndarray | None, cache: dict) -> np.ndarray:
    if tint is None:
        return tile
    out = cache.get(id(tile))
    if out is None:
        out = cache[id(tile)] = np.round(tile * 0.72 + tint * 0.28).astype(np.uint8)
    return out


def add_shelf_row(b: MeshBuilder, product: Product, row, tint, panel, tint_cache: dict) -> None:
    """A stocked row: one box from the front facings back to the panel, package art once per facing."""
    lo, hi, facing, pitch, width = row
    depth = hi[yaw_axis(facing)[0]] - lo[yaw_axis(facing)[0]]  # one package deep, before stocking
    lo, hi = _stock_depth(lo, hi, facing, panel)
    hide = _hide_plane(lo, hi, facing, panel)
    d = _front_face(facing)
    tile = _tinted(package_texture(product, width, hi[2] - lo[2], pitch), tint, tint_cache)
    mean = tuple(int(c) for c in np.round(tile.reshape(-1, 3).mean(axis=0)))
    b.box(lo, hi, mean, product.color, kind=KIND_PRODUCT, label=product.id, top_rgb=mix(mean, (30, 30, 34), 0.3),
          hide=hide)
    axis = d // 2
    u_axis = 1 - axis
    sign = (1.0 if d % 2 else -1.0) * (1.0 if axis == 0 else -1.0)
    gap = 0.5 * (pitch - width)  # the art centres each package in its pitch
    start = lo[u_axis] - gap if sign > 0 else hi[u_axis] + gap
    b.texture(d, tile, pitch, hi[2] - lo[2], u_start=start)
    top = _tinted(package_top_texture(product, width, depth, pitch), tint, tint_cache)
    b.texture_top(top, d, start, pitch, depth * TOP_DEPTH)


_PATTERN_SIZE = 0.5  # metres of surface one pattern tile covers


def _textured_sides(b: MeshBuilder, tile: np.ndarray) -> None:
    for d in range(4):
        b.texture(d, tile, _PATTERN_SIZE, _PATTERN_SIZE)


def add_floor_product(b: MeshBuilder, product: Product, inst: Instance) -> None:
    """A floor-standing product without a furniture model: a box in its colour and material."""
    lo, hi = instance_box(inst)
    rgb = product_color(product)
    b.box(lo, hi, rgb, product.color, kind=KIND_PRODUCT, label=product.id, top_rgb=mix(rgb, (255, 255, 255), 0.12))
    _textured_sides(b, pattern_texture(rgb, material_pattern(product), _seed(product.id)))


def _seed(text: str) -> int:
    return int(hash01(text, "pattern") * 2**31)


_SEATS = ("sofa", "loveseat", "armchair", "accent chair")
_CHAIRS = ("office chair", "gaming chair")
_TABLES = ("table", "desk")
_LAMPS = ("floor lamp", "table lamp", "desk lamp")
_SHELVES = ("bookcase", "shelving unit", "curio cabinet")


def _furniture_parts(category: str) -> list[tuple[tuple[float, ...], str]]:
    """Parts of a furniture model as ((u0, u1, d0, d1, z0, z1), tone) fractions of its box.

    ``u`` runs across the front, ``d`` from the back (0) to the front (1), ``z`` up.
    Parts never overlap. An empty list means "draw the plain box".
    """
    c = category.lower()
    if c == "bed frame":
        return [((0, 1, 0, 0.07, 0, 1), "dark"), ((0, 1, 0.07, 1, 0, 0.36), "base"),
                ((0, 1, 0.07, 1, 0.36, 0.55), "soft")]
    if any(k in c for k in _SEATS):
        return [((0, 1, 0, 1, 0, 0.5), "base"), ((0, 1, 0, 0.25, 0.5, 1), "base"),
                ((0, 0.12, 0.25, 1, 0.5, 0.75), "base"), ((0.88, 1, 0.25, 1, 0.5, 0.75), "base")]
    if any(k in c for k in _CHAIRS):
        return [((0.1, 0.9, 0.1, 0.9, 0, 0.05), "dark"), ((0.44, 0.56, 0.44, 0.56, 0.05, 0.4), "dark"),
                ((0, 1, 0.12, 1, 0.4, 0.5), "base"), ((0.06, 0.94, 0, 0.12, 0.4, 1), "base")]
    if c == "dining chair":
        legs = [((u, u + 0.1, d, d + 0.1, 0, 0.52), "dark") for u in (0, 0.9) for d in (0.1, 0.9)]
        return legs + [((0, 1, 0.1, 1, 0.52, 0.58), "base"), ((0, 1, 0, 0.1, 0, 1), "base")]
    if any(k in c for k in _TABLES):
        legs = [((u, u + 0.06, d, d + 0.06, 0, 0.92), "dark") for u in (0, 0.94) for d in (0, 0.94)]
        return legs + [((0, 1, 0, 1, 0.92, 1), "base")]
    if c in _LAMPS:
        return [((0.25, 0.75, 0.25, 0.75, 0, 0.04), "dark"), ((0.45, 0.55, 0.45, 0.55, 0.04, 0.66), "dark"),
                ((0, 1, 0, 1, 0.66, 1), "shade")]
    if c == "planter":
        return [((0.12, 0.88, 0.12, 0.88, 0, 0.85), "base"), ((0, 1, 0, 1, 0.85, 1), "base")]
    if c in ("vase", "candle holder"):
        return [((0.25, 0.75, 0.25, 0.75, 0, 0.1), "base"), ((0.1, 0.9, 0.1, 0.9, 0.1, 0.7), "base"),
                ((0.3, 0.7, 0.3, 0.7, 0.7, 1), "base")]
    if c == "plant stand":
        legs = [((u, u + 0.1, d, d + 0.1, 0, 0.92), "base") for u in (0, 0.9) for d in (0, 0.9)]
        return legs + [((0, 1, 0, 1, 0.92, 1), "base"), ((0.1, 0.9, 0.1, 0.9, 0.3, 0.36), "base")]
    if c in ("footstool", "ottoman"):
        legs = [((u, u + 0.1, d, d + 0.1, 0, 0.2), "dark") for u in (0.02, 0.88) for d in (0.02, 0.88)]
        return legs + [((0, 1, 0, 1, 0.2, 1), "base")]
    if c in ("nightstand", "tv stand", "filing cabinet"):
        return [((0.04, 0.96, 0.04, 0.96, 0, 0.08), "dark"), ((0, 1, 0, 1, 0.08, 1), "base")]
    if c == "pendant light":
        return [((0.45, 0.55, 0.45, 0.55, 0.55, 1), "dark"), ((0, 1, 0, 1, 0, 0.55), "shade")]
    if c == "potted plant":
        return [((0.2, 0.8, 0.2, 0.8, 0, 0.3), "pot"), ((0, 1, 0, 1, 0.3, 1), "leaf")]
    if c in _SHELVES:
        parts = [((0, 1, 0, 0.1, 0, 1), "dark"), ((0, 0.06, 0.1, 1, 0, 1), "base"),
                 ((0.94, 1, 0.1, 1, 0, 1), "base")]
        parts += [((0.06, 0.94, 0.1, 1, z, z + 0.03), "base") for z in (0.0, 0.25, 0.5, 0.75)]
        return parts + [((0.06, 0.94, 0.1, 1, 0.97, 1), "base")]
    return []


_TONES = {
    "base": lambda rgb: rgb,
    "dark": lambda rgb: mix(rgb, (25, 22, 20), 0.45),
    "soft": lambda rgb: mix(rgb, (245, 242, 236), 0.7),
    "shade": lambda rgb: mix(rgb, (255, 244, 214), 0.65),
    "pot": lambda rgb: mix(rgb, (168, 92, 56), 0.75),
    "leaf": lambda rgb: mix(rgb, (52, 128, 60), 0.7),
}


def add_furniture(b: MeshBuilder, product: Product, inst: Instance) -> bool:
    """Draw a furniture instance as a simple model; False if it has none."""
    parts = _furniture_parts(product.category)
    if not parts:
        return False
    lo, hi = instance_box(inst)
    axis, sign = yaw_axis(inst.facing)
    across = 1 - axis
    rgb = product_color(product)
    pattern = material_pattern(product)
    size = hi - lo
    for (u0, u1, d0, d1, z0, z1), tone in parts:
        plo, phi = lo.copy(), hi.copy()
        plo[across], phi[across] = lo[across] + u0 * size[across], lo[across] + u1 * size[across]
        if sign > 0:  # front at the high end of the axis
            plo[axis], phi[axis] = lo[axis] + d0 * size[axis], lo[axis] + d1 * size[axis]
        else:
            plo[axis], phi[axis] = hi[axis] - d1 * size[axis], hi[axis] - d0 * size[axis]
        plo[2], phi[2] = lo[2] + z0 * size[2], lo[2] + z1 * size[2]
        col = _TONES[tone](rgb)
        b.box(plo, phi, col, product.color, kind=KIND_PRODUCT, label=product.id,
              top_rgb=mix(col, (255, 255, 255), 0.15))
        _textured_sides(b, pattern_texture(col, _TONE_PATTERN.get(tone, pattern), _seed(product.id)))
    return True


_TONE_PATTERN = {"pot": "ceramic", "leaf": "speckle", "shade": "fabric", "soft": "fabric"}


def product_extent(instances: list[Instance]) -> tuple[np.ndarray, np.ndarray] | None:
    if not instances:
        return None
    los, his = zip(*(instance_box(i) for i in instances), strict=True)
    return np.min(los, axis=0), np.max(his, axis=0)
