"""The default backend: pure numpy/OpenCV rendering, 2D collision and A* path finding.

No server, no GPU, no download. ``capture`` renders the user's egocentric view
(RGB, depth, segmentation in the scene's colours) with an exact-visibility box
rasteriser; ``execute`` runs the user's tool actions with a body disc that collides
with walls, fixtures, storefront walls (doorways stay open) and furniture.

Conventions: ``execute`` takes primitives validated by ``situ_gym.actions.validate``
(distances in metres, angles in degrees, legal tools only) and does not check them
again; "left" turns counter-clockwise; pitch is clamped to +-45 degrees. Straight moves stop at the first
contact of the body disc and report the distance actually walked.

Targeted moves (``move_to_fixture``, ``move_to_store``, ``move_to_area``) plan on a
0.2 m occupancy grid inflated by the body radius (A*), shorten the route by exact
line-of-sight tests, and report the length of that route as the displacement. Front,
back, doorway and area moves end exactly on the approach pose with its yaw. Doorway
and area moves level the view; fixture moves tilt it down to frame the fixture's
goods (``view_pitch``: the middle of the goods' elevation range, e.g. about -19 deg in
front of a gondola, -39 deg at a chest freezer), since from an approach point 0.9 m
away a level 90-degree view misses the lower boards. ``move_to_fixture(...,
approach="nearest")`` ends at the closest reachable point within ``body_radius + 0.5``
m of the fixture footprint, turned toward the footprint's nearest point (no other
facing adjustment; the same tilt). Unreachable goals leave the user where they were
(``ok=False``).
"""

from __future__ import annotations

import logging
import math
import threading
import weakref
from typing import Any

import numpy as np

from situ_gym.backends.base import ActionResult, BackendError, Frame, Pose, Primitive
from situ_gym.backends.geometry import build_geometry, face_entity_table
from situ_gym.backends.motion import obstacles_from_scene, sweep
from situ_gym.backends.pathing import FloorGrid
from situ_gym.backends.raster import Camera, OrderTree, Renderer
from situ_gym.scene.index import SceneIndex
from situ_gym.scene.model import Pose2, Scene

__all__ = ["EmbeddedBackend", "PITCH_LIMIT"]

logger = logging.getLogger(__name__)

PITCH_LIMIT = 45.0


_CACHE: dict[int, tuple[weakref.ref, tuple]] = {}
_CACHE_LOCK = threading.Lock()


def _prepared(scene: Scene) -> tuple:
    """Geometry, visibility tree, obstacles and floor grid of a scene, built once per Scene object."""
    key = id(scene)
    with _CACHE_LOCK:
        hit = _CACHE.get(key)
        if hit is not None and hit[0]() is scene:
            return hit[1]
    geometry = build_geometry(scene)
    tree = OrderTree(geometry.lo, geometry.hi)
    obstacles = obstacles_from_scene(scene)
    grid = FloorGrid(obstacles, scene.layout.body_radius)
    payload = (geometry, tree, obstacles, grid)
    with _CACHE_LOCK:
        _CACHE[key] = (weakref.ref(scene, lambda _ref, k=key: _CACHE.pop(k, None)), payload)
    return payload


def _short(name: str) -> str:
    """A fixture's title without its category list: "Shelf 3: cereal, ..." -> "Shelf 3"."""
    return name.split(":")[0].strip()


def _fmt(m: float) -> str:
    return f"{m:.1f} m" if m >= 1.0 else f"{m:.2f} m"


class EmbeddedBackend:
    """Renders and moves the user through a Scene; implements ``situ_gym.backends.base.Backend``.

    Args:
        scene: the store to simulate.
        width, height: image size in pixels (default 640 x 480).
        hfov: horizontal field of view in degrees (default 90).
        seed: kept for API symmetry; the backend itself is deterministic.
        cull_distance: products farther than this (metres) are not drawn.
        rgb: False leaves the colour image out of every capture (``Frame.rgb`` is one black,
            read-only frame): depth, seg and the entity index, all that the Set-of-Mark
            analysis reads, are the same as with it (``SituRecEnv(text_only=True)``).
    """

    def __init__(
        self,
        scene: Scene,
        width: int = 640,
        height: int = 480,
        hfov: float = 90.0,
        seed: int | None = None,
        *,
        cull_distance: float = 20.0,
        rgb: bool = True,
    ):
        if not isinstance(scene, Scene):
            raise ValueError(f"scene must be a situ_gym.scene.model.Scene, got {type(scene).__name__!r}")
        if not isinstance(width, int) or isinstance(width, bool) or width < 16:
            raise ValueError(f"width must be an int >= 16, got {width!r}")
        if not isinstance(height, int) or isinstance(height, bool) or height < 16:
            raise ValueError(f"height must be an int >= 16, got {height!r}")
        if not (isinstance(hfov, int | float) and 10.0 <= float(hfov) <= 170.0):
            raise ValueError(f"hfov must be a number of degrees in [10, 170], got {hfov!r}")
        if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
            raise ValueError(f"seed must be an int or None, got {seed!r}")
        if not (isinstance(cull_distance, int | float) and cull_distance > 0):
            raise ValueError(f"cull_distance must be positive, got {cull_distance!r}")
        if not isinstance(rgb, bool):
            raise ValueError(f"rgb must be True or False, got {rgb!r}")
        self.rgb = rgb
        self._black: np.ndarray | None = None  # the frame every capture shares when rgb is False
        self.scene = scene
        self.seed = seed
        self.width, self.height, self.hfov = width, height, float(hfov)
        try:
            self.geometry, tree, self.obstacles, self.grid = _prepared(scene)
            self.camera = Camera.from_hfov(width, height, float(hfov))
            self.renderer = Renderer(self.geometry, self.camera, cull_distance=float(cull_distance), tree=tree)
        except (ValueError, IndexError) as exc:  # broken geometry
            raise BackendError(f"cannot build scene {scene.name!r}: {exc}") from exc
        self._fixtures = {f.id: f for f in scene.fixtures}
        self._stores = {s.id: s for s in scene.stores}
        self._areas = {a.id: a for a in scene.areas}
        self._products = {p.id: p for p in scene.products}
        self._goods_corners = {}
        for f in scene.fixtures:
            boxes = [(i.position, i.size) for p in scene.products if p.fixture_id == f.id for i in p.instances]
            if boxes:
                lo = np.min([(px - sx / 2, py - sy / 2, pz) for (px, py, pz), (sx, sy, sz) in boxes], axis=0)
                hi = np.max([(px + sx / 2, py + sy / 2, pz + sz) for (px, py, pz), (sx, sy, sz) in boxes], axis=0)
            else:
                x0, y0, x1, y1 = f.footprint
                lo, hi = np.array([x0, y0, 0.0]), np.array([x1, y1, f.height])
            self._goods_corners[f.id] = np.array(
                [[(lo, hi)[i][0], (lo, hi)[j][1], (lo, hi)[k][2]] for i in (0, 1) for j in (0, 1) for k in (0, 1)]
            )
        self._closed = False
        self._last_frame: tuple | None = None  # (pose, rgb, depth, seg, entity index) of the last capture
        start = scene.layout.start
        self.reset(Pose(start.x, start.y, start.yaw, 0.0))

    # -- state -----------------------------------------------------------------
    def reset(self, pose: Pose) -> None:
        """Put the user at ``pose`` with empty hands, an empty cart, nothing inspected."""
        vals = (pose.x, pose.y, pose.yaw, pose.pitch)
        if not all(isinstance(v, int | float) and math.isfinite(v) for v in vals):
            raise ValueError(f"pose must have finite numbers, got {pose!r}")
        self._pose = Pose(float(pose.x), float(pose.y), float(pose.yaw) % 360.0,
                          float(np.clip(pose.pitch, -PITCH_LIMIT, PITCH_LIMIT)))
        self._held: str | None = None
        self._cart: list[str] = []
        self.inspected: set[str] = set()

    def snapshot(self) -> dict:
        """The user's state (pose, held item, cart, inspected products) for ``restore``."""
        return {"pose": self._pose, "held": self._held, "cart": list(self._cart), "inspected": set(self.inspected)}

    def restore(self, state: dict) -> None:
        """Put the user back into a ``snapshot`` (through ``reset``, so an engine moves too)."""
        self.reset(state["pose"])
        self._held, self._cart, self.inspected = state["held"], list(state["cart"]), set(state["inspected"])

    def pose(self) -> Pose:
        return self._pose

    @property
    def held_item(self) -> str | None:
        return self._held

    @property
    def cart(self) -> list[str]:
        return list(self._cart)

    def camera_intrinsics(self) -> np.ndarray:
        """3x3 pinhole matrix K (pixels)."""
        return self.camera.matrix()

    def close(self) -> None:
        self._closed = True

    # -- rendering -------------------------------------------------------------
    def capture(self) -> Frame:
        """The user's view. Its arrays are read-only snapshots (copy one to edit it); a
        capture at an unchanged pose returns the previous frame's arrays again."""
        if self._closed:
            raise BackendError("capture() on a closed EmbeddedBackend")
        p = self._pose
        # A turn that leaves the pose as it was (talking, checking, picking up) sees the same
        # static scene: the last frame's (read-only) arrays are returned again.
        last = self._last_frame
        if last is not None and last[0] == p:
            return Frame(rgb=last[1], depth=last[2], seg=last[3], pose=p, entity_index=last[4])
        # Let go of the last frame's arrays first: when the caller has dropped them too, the
        # new frame reuses their memory instead of growing the heap (whose trimmed pages would
        # fault back in at every frame: about 250 page faults per frame otherwise).
        self._last_frame = last = None
        eye = np.array([p.x, p.y, self.scene.layout.eye_height])
        rgb, depth, seg, _ = self.renderer.render(eye, p.yaw, p.pitch, rgb=self.rgb)
        if rgb is None:
            if self._black is None:
                self._black = np.zeros((self.height, self.width, 3), np.uint8)
            rgb = self._black
        face_entity = getattr(self, "_face_entity", None)
        if face_entity is None:  # entity slots in SceneIndex order, as Frame.entity_index wants
            colors = [e.color for e in SceneIndex(self.scene).entities.values()]
            face_entity = self._face_entity = face_entity_table(self.geometry, colors)
        entity_index = self.renderer.gather(face_entity)
        for image in (rgb, depth, seg, entity_index):
            image.flags.writeable = False  # a snapshot: copy it to edit
        self._last_frame = (p, rgb, depth, seg, entity_index)
        return Frame(rgb=rgb, depth=depth, seg=seg, pose=p, entity_index=entity_index)

    # -- actions ---------------------------------------------------------------
    def execute(self, primitive: Primitive) -> ActionResult:
        if self._closed:
            raise BackendError("execute() on a closed EmbeddedBackend")
        handler = getattr(self, f"_do_{primitive.name}", None)
        if handler is None:  # validate_user_call never builds one: a caller bypassed it
            raise BackendError(f"no such primitive {primitive.name!r}; build primitives with "
                               "situ_gym.actions.validate_user_call")
        try:
            return handler(dict(primitive.args or {}))
        except _Infeasible as exc:
            return ActionResult(False, str(exc), translational=primitive.translational)

    # argument helpers (the arguments are validated: metres, degrees, allowed words)
    @staticmethod
    def _distance(args: dict[str, Any]) -> float:
        return float(args["distance"])

    @staticmethod
    def _angle(args: dict[str, Any]) -> float:
        return float(args["angle"])

    def _entity(self, args: dict[str, Any], key: str, table: dict, what: str):
        eid = args.get(key)
        if eid not in table:
            raise _Infeasible(f"unknown {what} {eid!r}")
        return table[eid]

    # motion primitives
    def _walk(self, heading: float, distance: float, verb: str) -> tuple[float, str]:
        p = self._pose
        walked, blocker = sweep(self.obstacles, (p.x, p.y), heading, distance, self.scene.layout.body_radius)
        rad = math.radians(heading)
        self._pose = Pose(p.x + walked * math.cos(rad), p.y + walked * math.sin(rad), p.yaw, p.pitch)
        if blocker is None:
            return walked, f"walked {_fmt(walked)} {verb}"
        what = "the wall" if blocker < 0 else self.obstacles.names[blocker]
        return walked, f"blocked by {what} after {_fmt(walked)}"

    def _turn(self, direction: str, angle: float) -> None:
        p = self._pose
        delta = angle if direction == "left" else -angle
        self._pose = Pose(p.x, p.y, (p.yaw + delta) % 360.0, p.pitch)

    def _do_move_forward(self, args):
        d = self._distance(args)
        walked, msg = self._walk(self._pose.yaw, d, "forward")
        return ActionResult(True, msg, displacement=walked, translational=True)

    def _do_move_backward(self, args):
        d = self._distance(args)
        walked, msg = self._walk(self._pose.yaw + 180.0, d, "backward")
        return ActionResult(True, msg, displacement=walked, translational=True)

    def _do_side_step(self, args):
        direction = args["direction"]
        d = self._distance(args)
        heading = self._pose.yaw + (90.0 if direction == "left" else -90.0)
        walked, msg = self._walk(heading, d, f"to the {direction}")
        return ActionResult(True, msg, displacement=walked, translational=True)

    def _do_turn_and_move(self, args):
        direction = args["direction"]
        angle, d = self._angle(args), self._distance(args)
        self._turn(direction, angle)
        walked, msg = self._walk(self._pose.yaw, d, "forward")
        return ActionResult(True, f"turned {angle:g} deg {direction}, {msg}", displacement=walked, translational=True)

    def _do_move_and_turn(self, args):
        direction = args["direction"]
        angle, d = self._angle(args), self._distance(args)
        walked, msg = self._walk(self._pose.yaw, d, "forward")
        self._turn(direction, angle)
        return ActionResult(True, f"{msg}, turned {angle:g} deg {direction}", displacement=walked, translational=True)

    def _do_turn(self, args):
        direction = args["direction"]
        angle = self._angle(args)
        self._turn(direction, angle)
        return ActionResult(True, f"turned {angle:g} deg {direction}")

    def _do_look_up_down(self, args):
        direction = args["direction"]
        angle = self._angle(args)
        p = self._pose
        target = p.pitch + (angle if direction == "up" else -angle)
        new = float(np.clip(target, -PITCH_LIMIT, PITCH_LIMIT))
        if abs(new - p.pitch) < 1e-9:
            raise _Infeasible(f"cannot look further {direction} (limit {PITCH_LIMIT:g} deg)")
        self._pose = Pose(p.x, p.y, p.yaw, new)
        note = "" if new == target else " (limit)"
        return ActionResult(True, f"looked {direction} {abs(new - p.pitch):g} deg{note}")

    def _do_idle(self, args):
        return ActionResult(True, "stayed put")

    # targeted moves
    def view_pitch(self, fixture, x: float, y: float, yaw: float) -> float:
        """Pitch that frames a fixture's goods from (x, y) facing ``yaw`` (0 when level is best).

        The goods' bounding box corners in front of the body give elevation angles; the
        view tilts to the middle of their range (never up, at most ``PITCH_LIMIT`` down).
        """
        corners = self._goods_corners.get(fixture.id)
        eye = self.scene.layout.eye_height
        dx, dy = corners[:, 0] - x, corners[:, 1] - y
        ahead = dx * math.cos(math.radians(yaw)) + dy * math.sin(math.radians(yaw)) > 0.05
        if not ahead.any():
            return 0.0
        elev = np.degrees(np.arctan2(corners[ahead, 2] - eye, np.hypot(dx[ahead], dy[ahead])))
        pitch = 0.5 * (float(elev.max()) + float(elev.min()))
        return round(min(max(pitch, -PITCH_LIMIT), 0.0), 1)

    def _go_to(self, goal: Pose2, what: str, look_at=None) -> ActionResult:
        p = self._pose
        path = self.grid.plan((p.x, p.y), (goal.x, goal.y))
        if path is None:
            raise _Infeasible(f"cannot reach {what}")
        length = FloorGrid.length(path)
        pitch = 0.0 if look_at is None else self.view_pitch(look_at, goal.x, goal.y, goal.yaw)
        self._pose = Pose(goal.x, goal.y, goal.yaw % 360.0, pitch)
        return ActionResult(True, f"walked {_fmt(length)} to {what}", displacement=length, translational=True)

    def _do_move_to_fixture(self, args):
        fx = self._entity(args, "fixture", self._fixtures, "fixture")
        approach = args.get("approach", "nearest")
        if approach in ("front", "back"):
            if approach not in fx.approach:
                raise _Infeasible(f"{_short(fx.name)} has no {approach} side")
            return self._go_to(fx.approach[approach], f"the {approach} of {_short(fx.name)}", look_at=fx)
        if approach != "nearest":
            raise _Infeasible(f"approach must be nearest, front or back, got {approach!r}")
        return self._go_nearest(fx)

    def _go_nearest(self, fx) -> ActionResult:
        grid, p = self.grid, self._pose
        x0, y0, x1, y1 = fx.footprint
        name = _short(fx.name)
        start = grid.nearest_free(p.x, p.y)
        if start is None:
            raise _Infeasible(f"cannot reach {name}")
        comp = grid.component[start[1], start[0]]
        reach = grid.radius + 0.5  # farther than this from the footprint is not "at" it
        i0, j0 = grid.cell_of(x0 - reach, y0 - reach)
        i1, j1 = grid.cell_of(x1 + reach, y1 + reach)
        xs, ys = grid.xs[i0 : i1 + 1], grid.ys[j0 : j1 + 1]
        dx = np.maximum(np.maximum(x0 - xs, 0.0), xs - x1)[None, :]
        dy = np.maximum(np.maximum(y0 - ys, 0.0), ys - y1)[:, None]
        dist = np.hypot(dx, dy)
        ok = grid.free[j0 : j1 + 1, i0 : i1 + 1] & (grid.component[j0 : j1 + 1, i0 : i1 + 1] == comp)
        if not ok.any():
            raise _Infeasible(f"cannot reach {name}")
        dmin = float(dist[ok].min())
        jj, ii = np.nonzero(ok & (dist <= dmin + 0.5 * grid.cell))
        goals = {(int(i0 + i), int(j0 + j)) for i, j in zip(ii, jj, strict=True)}
        cell = grid.cell

        def h(i, j):
            cx, cy = grid.xs[i], grid.ys[j]
            d = math.hypot(max(x0 - cx, 0.0, cx - x1), max(y0 - cy, 0.0, cy - y1))
            return max(0.0, (d - dmin) / cell - 1.0)

        # Already there?
        here = math.hypot(max(x0 - p.x, 0.0, p.x - x1), max(y0 - p.y, 0.0, p.y - y1))
        if here <= dmin + 0.5 * cell:
            path = [(p.x, p.y)]
        else:
            path = grid.plan((p.x, p.y), goal_cells=goals, heuristic=h)
        if path is None:
            raise _Infeasible(f"cannot reach {name}")
        ex, ey = path[-1]
        tx, ty = min(max(ex, x0), x1), min(max(ey, y0), y1)
        yaw = math.degrees(math.atan2(ty - ey, tx - ex)) % 360.0 if (tx, ty) != (ex, ey) else self._pose.yaw
        # Step in from the grid cell toward the footprint until the body touches something.
        gap = math.hypot(tx - ex, ty - ey) - grid.radius
        if gap > 1e-3:
            walked, _ = sweep(self.obstacles, (ex, ey), yaw, gap, grid.radius)
            ex += walked * math.cos(math.radians(yaw))
            ey += walked * math.sin(math.radians(yaw))
            path = [*path, (ex, ey)]
        length = FloorGrid.length(path)
        self._pose = Pose(ex, ey, yaw, self.view_pitch(fx, ex, ey, yaw))
        return ActionResult(True, f"walked {_fmt(length)} to {name}", displacement=length, translational=True)

    def _do_move_to_store(self, args):
        st = self._entity(args, "store", self._stores, "store")
        approach = args.get("approach")
        if approach not in st.approach:
            raise _Infeasible(f"approach must be one of {sorted(st.approach)}, got {approach!r}")
        where = "just outside" if approach == "outside_doorway" else "just inside"
        return self._go_to(st.approach[approach], f"{where} the doorway of {st.name}")

    def _do_move_to_area(self, args):
        area = self._entity(args, "area", self._areas, "area")
        return self._go_to(area.approach, area.name)

    # item actions
    def _do_pick_up_item(self, args):
        prod = self._entity(args, "item", self._products, "product")
        previous = self._held
        self._held = prod.id
        self.inspected.add(prod.id)
        msg = f"picked up {prod.name}"
        if previous is not None and previous != prod.id:
            msg = f"put back {self._products[previous].name}, {msg}"
        return ActionResult(True, msg, revealed_product=prod.id)

    def _do_drop_item(self, args):
        if self._held is None:
            raise _Infeasible("not holding anything")
        name = self._products[self._held].name
        self._held = None
        return ActionResult(True, f"put back {name}")

    def _do_check_item(self, args):
        prod = self._entity(args, "item", self._products, "product")
        self.inspected.add(prod.id)
        return ActionResult(True, f"checked {prod.name}", revealed_product=prod.id)

    def _do_do_not_add_to_cart(self, args):
        prod = self._entity(args, "item", self._products, "product")
        return ActionResult(True, f"decided against {prod.name}")

    def _do_add_to_cart(self, args):
        prod = self._entity(args, "item", self._products, "product")
        self._cart.append(prod.id)
        if self._held == prod.id:
            self._held = None
        return ActionResult(True, f"added {prod.name} to the cart", cart_added=prod.id)


class _Infeasible(Exception):
    """An action whose physical precondition fails: reported as ok=False, never raised."""
