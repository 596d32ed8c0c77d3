"""The Unreal Engine backend: the same Backend protocol, pixels and motion from UE through UnrealCV.

``UnrealCVBackend`` drives a running UE level that has the UnrealCV plugin through the
PyPI ``unrealcv`` client (``pip install "situ-gym[unreal]" && pip install --no-deps
unrealcv==1.3.2``). The engine renders the lit view, the object mask and depth, and sweeps the camera through its collision
(``vset /camera/N/moveto``). Everything that is not physics or pixels is kept in
Python exactly as in ``EmbeddedBackend`` (this class subclasses it): held item, cart, inspected products, the floor-plan route of targeted moves, the
messages. Only the pose lives in the engine, and every translational result reports
the displacement read back from the engine, not the one asked for.

Robustness, around the client 1.3.2's quirks: ``connect()`` runs in a thread with a
deadline (the client waits forever for a greeting); after any request timeout the
client is dropped and a fresh one connects on the next call (a late reply would
otherwise answer the next request); the client's 55-second "reconnect" on a dead
socket is disabled, and a closed socket or an exited engine process is noticed before
each request, so a dead server raises ``BackendError`` at once.

Coordinates, image decoding and segmentation colours (the engine's wire format) are in
:mod:`situ_gym.backends.unrealcv_wire`; the scene's colours are assigned to the level's
objects on connect (``vset /object/NAME/color R G B``; product instance ids,
fixture/store/area ids, or an ``object_names`` mapping).
"""

from __future__ import annotations

import logging
import math
import socket
import threading
import time
from collections.abc import Mapping
from typing import Any

import numpy as np

from situ_gym.backends.base import ActionResult, BackendError, Frame, Pose, Primitive
from situ_gym.backends.embedded import (  # shared: formatter, ok=False signal
    EmbeddedBackend,
    _fmt,
    _Infeasible,
)
from situ_gym.backends.motion import sweep
from situ_gym.backends.unrealcv_wire import (
    ColorSnapper,
    decode_depth,
    decode_image,
    from_ue,
    reply_bytes,
    snap_colors,
    to_ue,
)
from situ_gym.scene.model import BACKGROUND_COLOR, FLOOR_COLOR, WALL_COLOR, Pose2, Scene

__all__ = [
    "UnrealCVBackend",
    "to_ue",
    "from_ue",
    "snap_colors",
    "ColorSnapper",
    "decode_image",
    "decode_depth",
    "FLOOR_KEY",
    "WALL_KEY",
]

logger = logging.getLogger(__name__)

FLOOR_KEY = "__floor__"  # object_names keys for the reserved floor / wall colours
WALL_KEY = "__walls__"
_ARRIVE_TOLERANCE = 0.05  # metres: a leg that ends farther than this from its target was blocked
_FULL_WALK = 0.01  # metres short of the asked distance that still counts as a free walk
_CHUNK = 64  # pipelined requests per round of colour assignment
_CONNECT_ATTEMPTS = 5  # refused connects retried this often, _CONNECT_RETRY_DELAY s apart
_CONNECT_RETRY_DELAY = 0.1


# -- the client --------------------------------------------------------------------
def _client_class():
    """The PyPI client with its dead-socket retry loop disabled (imported lazily)."""
    try:
        import unrealcv
    except ImportError as exc:
        raise ImportError(
            'UnrealCVBackend needs the UnrealCV client: pip install "situ-gym[unreal]" && pip install --no-deps unrealcv==1.3.2'
        ) from exc

    class _FailFastClient(unrealcv.Client):
        RECONNECT_ATTEMPTS = 0  # the stock client retries a closed socket for ~55 s

        def receive_loop_queue(self):
            try:
                super().receive_loop_queue()
            except (ConnectionError, OSError, AssertionError) as exc:  # reported to the waiting request
                self.recv_data_q.put(ConnectionError(f"UnrealCV receive loop stopped: {exc}"))

    return _FailFastClient


class UnrealCVBackend(EmbeddedBackend):
    """A UE5 level with the UnrealCV plugin behind ``situ_gym.backends.base.Backend``.

    Args:
        scene: the store; the level must contain it (same coordinates, see ``to_ue``).
        width, height, hfov: camera image size (pixels) and horizontal field of view (deg).
        host, port: the UnrealCV server (TCP); ``unix_socket``: a socket path instead
            (Linux servers also listen on ``/tmp/unrealcv_<port>.socket``).
        timeout: seconds for each request and for connecting (greeting included).
        camera_id: the UnrealCV camera that is the user's eyes.
        user_object: optional level actor (the user's body) kept under the camera.
        connect: connect now; False defers it to the first call that needs the engine.
        object_names: entity id -> level object name(s); default: product instance ids
            and fixture/store/area ids. Keys ``FLOOR_KEY``/``WALL_KEY`` name floor/wall objects.
        image_format: "png" or "bmp" (32-bit BGRA, faster to encode in the engine).
        depth_scale, depth_kind: engine depth unit in metres (0.01: cm) and "plane" or "point".
        seg_tolerance: per-channel tolerance when snapping mask colours to the scene's.
        flip_y: the level is built with ``Y = -y`` (default); see the module docstring.
        process: optional ``subprocess.Popen`` of the engine, polled to notice a crash.
        animations: optional tool name -> blueprint function on ``user_object``, called
            with ``vbp`` after each successful action of that tool (failures are logged).
        assign_colors: send the scene's segmentation colours on connect (one pipelined
            request per object); False when the level already carries them.
    """

    def __init__(
        self,
        scene: Scene,
        width: int = 640,
        height: int = 480,
        hfov: float = 90.0,
        host: str = "127.0.0.1",
        port: int = 9000,
        unix_socket: str | None = None,
        timeout: float = 10.0,
        camera_id: int = 0,
        user_object: str | None = None,
        connect: bool = True,
        *,
        object_names: Mapping[str, str | list[str]] | None = None,
        image_format: str = "png",
        depth_scale: float = 0.01,
        depth_kind: str = "plane",
        seg_tolerance: int = 3,
        flip_y: bool = True,
        process: Any = None,
        animations: Mapping[str, str] | None = None,
        assign_colors: bool = True,
    ):
        if not isinstance(host, str) or not host:
            raise ValueError(f"host must be a non-empty str, got {host!r}")
        if not isinstance(port, int) or isinstance(port, bool) or not 0 < port < 65536:
            raise ValueError(f"port must be an int in 1..65535, got {port!r}")
        if unix_socket is not None and (not isinstance(unix_socket, str) or not unix_socket):
            raise ValueError(f"unix_socket must be a path or None, got {unix_socket!r}")
        if not (isinstance(timeout, int | float) and not isinstance(timeout, bool) and 0 < timeout <= 600):
            raise ValueError(f"timeout must be seconds in (0, 600], got {timeout!r}")
        if not isinstance(camera_id, int) or isinstance(camera_id, bool) or camera_id < 0:
            raise ValueError(f"camera_id must be a non-negative int, got {camera_id!r}")
        if user_object is not None and (not isinstance(user_object, str) or not user_object.strip()
                                        or " " in user_object):
            raise ValueError(f"user_object must be an object name without spaces, got {user_object!r}")
        if image_format not in ("png", "bmp"):
            raise ValueError(f"image_format must be 'png' or 'bmp', got {image_format!r}")
        if depth_kind not in ("plane", "point"):
            raise ValueError(f"depth_kind must be 'plane' or 'point', got {depth_kind!r}")
        if not (isinstance(depth_scale, int | float) and depth_scale > 0):
            raise ValueError(f"depth_scale must be positive, got {depth_scale!r}")
        if not isinstance(seg_tolerance, int) or isinstance(seg_tolerance, bool) or not 0 <= seg_tolerance <= 32:
            raise ValueError(f"seg_tolerance must be an int in 0..32, got {seg_tolerance!r}")
        if animations and user_object is None:
            raise ValueError(f"animations need a user_object, got animations={dict(animations)!r}")
        self.host, self.port, self.unix_socket = host, port, unix_socket
        self.timeout = float(timeout)
        self.camera_id = camera_id
        self.user_object = user_object
        self.image_format = image_format
        self.depth_scale, self.depth_kind = float(depth_scale), depth_kind
        self.seg_tolerance = seg_tolerance
        self.flip_y = bool(flip_y)
        self.process = process
        self.animations = dict(animations or {})
        self.assign_colors = bool(assign_colors)
        self._client = None
        self._ready = False  # engine set up (camera, colours) on this backend's first connection
        self._connecting = False
        self._pushed: tuple[float, float] | None = None  # (yaw, pitch) last sent to the engine
        self.colored_objects = 0  # level objects that took a segmentation colour
        super().__init__(scene, width=width, height=height, hfov=hfov)  # Python state; reset() stays local
        self.object_names = self._object_names(object_names)
        self._palette = np.array(
            [BACKGROUND_COLOR, FLOOR_COLOR, WALL_COLOR]
            + [tuple(e.color) for e in (*scene.products, *scene.fixtures, *scene.stores, *scene.areas)],
            np.int32,
        )
        self._snapper = ColorSnapper(self._palette, seg_tolerance)
        if connect:
            self.connect()

    # -- connection --------------------------------------------------------------
    @property
    def endpoint(self) -> str:
        return self.unix_socket or f"{self.host}:{self.port}"

    def connect(self) -> None:
        """Connect (bounded by ``timeout``), check the server, set up the camera and colours once."""
        if self._closed:
            raise BackendError("connect() on a closed UnrealCVBackend")
        if self._client is not None:
            return
        self._open_client()
        if self._ready:  # a reconnect: the engine kept its set-up
            self._resync()
            return
        self._connecting = True
        try:
            status = self._request("vget /unrealcv/status")
            if str(status).lstrip().lower().startswith("error"):
                raise BackendError(f"UnrealCV at {self.endpoint} reports {status!r}")
            c = self.camera_id
            self._ok(f"vset /camera/{c}/size {self.width} {self.height}")
            self._ok(f"vset /camera/{c}/fov {self.hfov:.3f}")
            if self.assign_colors:
                self._assign_colors()
            self._ready = True
            self._push_pose(self._pose, teleport=True)
        finally:
            self._connecting = False

    def _open_client(self) -> None:
        """Connect a fresh client within ``timeout``; a refusal is retried briefly (the
        server serves one client and may not have noticed the previous one leave)."""
        cls = _client_class()
        deadline = time.monotonic() + self.timeout
        for attempt in range(_CONNECT_ATTEMPTS):
            client = cls(self.unix_socket, "unix") if self.unix_socket else cls((self.host, self.port), "inet")
            outcome: dict[str, Any] = {}

            def run(client=client, outcome=outcome):
                try:
                    outcome["ok"] = client.connect(timeout=self.timeout)
                except Exception as exc:  # noqa: BLE001 - reported below with the endpoint
                    outcome["error"] = exc

            t = threading.Thread(target=run, daemon=True, name="unrealcv-connect")
            t.start()
            t.join(max(0.0, deadline - time.monotonic()))
            if not t.is_alive() and outcome.get("ok"):
                self._client = client
                logger.info("connected to UnrealCV at %s", self.endpoint)
                return
            timed_out = t.is_alive()
            self._discard(client)  # unblocks a connect() still waiting for the greeting
            t.join(1.0)
            if timed_out:
                raise BackendError(
                    f"no UnrealCV greeting (or no answer to the client's first request) from {self.endpoint} "
                    f"within {self.timeout:g} s")
            if attempt + 1 < _CONNECT_ATTEMPTS and time.monotonic() + _CONNECT_RETRY_DELAY < deadline:
                time.sleep(_CONNECT_RETRY_DELAY)
                continue
            break
        raise BackendError(f"cannot connect to UnrealCV at {self.endpoint}: {outcome.get('error', 'refused')}")

    @staticmethod
    def _discard(client) -> None:
        sock = client.sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        try:
            client.disconnect()
        except Exception:  # noqa: BLE001 - a broken client is being thrown away
            logger.debug("ignored error while dropping an UnrealCV client", exc_info=True)

    def _drop(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            self._discard(client)

    def _check_alive(self) -> None:
        if self.process is not None and self.process.poll() is not None:
            self._drop()
            raise BackendError(f"the Unreal Engine process exited (code {self.process.returncode})")
        sock = self._client.sock if self._client is not None else None
        if sock is None:
            self._drop()
            raise BackendError(f"the UnrealCV connection to {self.endpoint} is closed")
        flags = socket.MSG_PEEK | getattr(socket, "MSG_DONTWAIT", 0)
        if not getattr(socket, "MSG_DONTWAIT", 0):
            return
        try:
            if sock.recv(1, flags) == b"":
                self._drop()
                raise BackendError(f"the UnrealCV server at {self.endpoint} closed the connection")
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:
            self._drop()
            raise BackendError(f"the UnrealCV connection to {self.endpoint} failed: {exc}") from exc

    def _ensure(self):
        if self._closed:
            raise BackendError("UnrealCVBackend is closed")
        if self._client is None:
            if self._ready:  # reconnect after a dropped client; the engine kept its state
                self._open_client()
                self._resync()
            elif self._connecting:
                self._open_client()
            else:
                self.connect()
        self._check_alive()
        return self._client

    def _request(self, cmd: str) -> str | bytes:
        """One request with the timeout; any failure drops the client and raises BackendError."""
        client = self._ensure()
        try:
            reply = client.request(cmd, timeout=self.timeout)
        except TimeoutError as exc:
            self._drop()  # a late reply would answer the next request: start afresh
            raise BackendError(f"no reply to {cmd[:80]!r} within {self.timeout:g} s from {self.endpoint}") from exc
        except (ConnectionError, OSError, AssertionError) as exc:
            self._drop()
            raise BackendError(f"UnrealCV at {self.endpoint} failed on {cmd[:80]!r}: {exc}") from exc
        if reply is None:
            self._drop()
            raise BackendError(f"UnrealCV at {self.endpoint} dropped the connection on {cmd[:80]!r}")
        return reply

    def _ok(self, cmd: str) -> str:
        reply = self._request(cmd)
        text = reply if isinstance(reply, str) else reply.decode("utf-8", "replace")
        if text.lstrip().lower().startswith("error"):
            raise BackendError(f"UnrealCV refused {cmd[:80]!r}: {text.strip()[:200]!r}")
        return text

    def _request_many(self, cmds: list[str]) -> list[str | bytes]:
        """Pipelined requests (the client's batch has no timeout): one deadline per chunk."""
        out: list[str | bytes] = []
        for k in range(0, len(cmds), _CHUNK):
            chunk = cmds[k : k + _CHUNK]
            client = self._ensure()
            try:
                for cmd in chunk:
                    raw = b"%d:%s" % (client.send_message_id, cmd.encode("utf-8"))
                    if not client.send(raw):
                        raise ConnectionError("send failed: socket is closed")
                    client.send_message_id += 1
                client.recv_num_q.put(-len(chunk))
                for _ in chunk:
                    reply = client.recv_data_q.get(timeout=self.timeout)
                    if reply is None or isinstance(reply, Exception):
                        raise ConnectionError(str(reply or "connection lost"))
                    out.append(reply)
            except Exception as exc:  # noqa: BLE001 - queue.Empty is the timeout
                self._drop()
                raise BackendError(f"UnrealCV at {self.endpoint} failed during a batch of {len(chunk)} "
                                   f"requests ({chunk[0][:60]!r}...): {exc or type(exc).__name__}") from exc
        return out

    def close(self) -> None:
        """Disconnect; safe to call twice. An engine process passed in is left running."""
        self._drop()
        self._closed = True

    # -- set-up ------------------------------------------------------------------
    def _object_names(self, mapping: Mapping[str, str | list[str]] | None) -> dict[str, list[str]]:
        scene = self.scene
        names: dict[str, list[str]] = {p.id: [i.id for i in p.instances] for p in scene.products}
        for e in (*scene.fixtures, *scene.stores, *scene.areas):
            names[e.id] = [e.id]
        for key, val in (mapping or {}).items():
            if key not in names and key not in (FLOOR_KEY, WALL_KEY):
                raise ValueError(f"object_names key must be an entity id, FLOOR_KEY or WALL_KEY, got {key!r}")
            vals = [val] if isinstance(val, str) else list(val)
            if not all(isinstance(v, str) and v and " " not in v for v in vals):
                raise ValueError(f"object_names[{key!r}] must be object names without spaces, got {val!r}")
            names[key] = vals
        return names

    def _entity_color(self, key: str) -> tuple[int, int, int]:
        if key == FLOOR_KEY:
            return FLOOR_COLOR
        if key == WALL_KEY:
            return WALL_COLOR
        for table in (self._products, self._fixtures, self._stores, self._areas):
            if key in table:
                return tuple(table[key].color)
        raise KeyError(key)

    def _assign_colors(self) -> None:
        listed = self._request("vget /objects")
        listed = listed if isinstance(listed, str) else listed.decode("utf-8", "replace")
        present = set(listed.split())
        cmds, missing = [], []
        for key, objs in self.object_names.items():
            r, g, b = self._entity_color(key)
            for obj in objs:
                if obj in present:
                    cmds.append(f"vset /object/{obj}/color {r} {g} {b}")
                else:
                    missing.append(obj)
        replies = self._request_many(cmds)
        refused = [c.split("/")[2] for c, rep in zip(cmds, replies, strict=True)
                   if str(rep).lstrip().lower().startswith("error")]
        if missing or refused:
            logger.warning("UnrealCV level %s: %d scene objects missing (e.g. %s), %d colour assignments refused",
                           self.endpoint, len(missing), missing[:5], len(refused))
        self.colored_objects = len(cmds) - len(refused)

    # -- pose --------------------------------------------------------------------
    def _ue_pose(self, pose: Pose):
        return to_ue(pose.x, pose.y, self.scene.layout.eye_height, pose.yaw, pose.pitch, flip_y=self.flip_y)

    def _push_pose(self, pose: Pose, teleport: bool) -> None:
        (X, Y, Z), (P, Yw, R) = self._ue_pose(pose)
        c = self.camera_id
        if teleport:
            self._ok(f"vset /camera/{c}/location {X:.3f} {Y:.3f} {Z:.3f}")
        self._ok(f"vset /camera/{c}/rotation {P:.3f} {Yw:.3f} {R:.3f}")
        self._pushed = (pose.yaw, pose.pitch)
        self._sync_body(pose)

    def _sync_body(self, pose: Pose) -> None:
        if self.user_object is None:
            return
        (X, Y, _), (_, Yw, _) = self._ue_pose(pose)
        self._ok(f"vset /object/{self.user_object}/location {X:.3f} {Y:.3f} 0.000")
        self._ok(f"vset /object/{self.user_object}/rotation 0.000 {Yw:.3f} 0.000")

    def _read_location(self) -> tuple[float, float]:
        text = self._ok(f"vget /camera/{self.camera_id}/location")
        try:
            loc = [float(v) for v in text.split()[:3]]
            (x, y, _), _ = from_ue(loc, flip_y=self.flip_y)
        except ValueError as exc:
            raise BackendError(f"cannot parse the camera location {text[:80]!r}") from exc
        if len(loc) < 3 or not all(math.isfinite(v) for v in loc):
            raise BackendError(f"UnrealCV reported a camera location that is not three finite numbers: {text[:80]!r}")
        return x, y

    def _resync(self) -> None:
        """After a reconnect: take the body's position from the engine (a move may have
        completed while its reply was lost) and re-send the rotation on the next action."""
        x, y = self._read_location()
        p = self._pose
        self._pose = Pose(x, y, p.yaw, p.pitch)
        self._pushed = None

    def _moveto(self, x: float, y: float) -> tuple[float, float]:
        """Sweep the camera toward (x, y) in the engine; returns where it really stopped."""
        (X, Y, Z), _ = self._ue_pose(Pose(x, y, 0.0))
        self._ok(f"vset /camera/{self.camera_id}/moveto {X:.3f} {Y:.3f} {Z:.3f}")
        return self._read_location()

    def reset(self, pose: Pose) -> None:
        """Put the user at ``pose`` (teleport in the engine), empty hands and cart."""
        super().reset(pose)
        if self._ready:
            self._push_pose(self._pose, teleport=True)

    # -- rendering -----------------------------------------------------------------
    def capture(self) -> Frame:
        self._ensure_ready()
        c, fmt = self.camera_id, self.image_format
        rgb = decode_image(reply_bytes(self._request(f"vget /camera/{c}/lit {fmt}"), "the lit view"))
        mask = decode_image(reply_bytes(self._request(f"vget /camera/{c}/object_mask {fmt}"), "the object mask"))
        focal = self.camera_intrinsics()[0, 0]
        depth = decode_depth(reply_bytes(self._request(f"vget /camera/{c}/depth npy"), "depth"),
                             scale=self.depth_scale, kind=self.depth_kind, focal=float(focal))
        want = (self.height, self.width)
        shapes = {"lit": rgb.shape[:2], "object_mask": mask.shape[:2], "depth": depth.shape}
        if any(s != want for s in shapes.values()):
            raise BackendError(f"UnrealCV images do not match the camera size {want}: {shapes}")
        seg = self._snapper(mask)
        return Frame(rgb=rgb, depth=depth, seg=seg, pose=self._pose)

    def _ensure_ready(self) -> None:
        if self._closed:
            raise BackendError("UnrealCVBackend is closed")
        if not self._ready:
            self.connect()

    # -- actions ---------------------------------------------------------------------
    def execute(self, primitive: Primitive) -> ActionResult:
        self._ensure_ready()
        result = super().execute(primitive)
        if self._pushed != (self._pose.yaw, self._pose.pitch):
            self._push_pose(self._pose, teleport=False)
        elif result.translational:
            self._sync_body(self._pose)
        func = self.animations.get(primitive.name)
        if func and result.ok:
            reply = self._request(f"vbp {self.user_object} {func}")
            if str(reply).lstrip().lower().startswith("error"):
                logger.warning("animation %s on %s failed: %s", func, self.user_object, str(reply)[:200])
        return result

    def _walk(self, heading: float, distance: float, verb: str) -> tuple[float, str]:
        p = self._pose
        rad = math.radians(heading)
        x, y = self._moveto(p.x + distance * math.cos(rad), p.y + distance * math.sin(rad))
        walked = math.hypot(x - p.x, y - p.y)
        self._pose = Pose(x, y, p.yaw, p.pitch)
        if walked >= distance - _FULL_WALK:
            return walked, f"walked {_fmt(walked)} {verb}"
        # Name the blocker when the floor plan agrees with the engine about where the body stopped.
        planned, blocker = sweep(self.obstacles, (p.x, p.y), heading, distance, self.scene.layout.body_radius)
        if blocker is not None and abs(planned - walked) <= 0.15:
            what = "the wall" if blocker < 0 else self.obstacles.names[blocker]
            return walked, f"blocked by {what} after {_fmt(walked)}"
        return walked, f"blocked after {_fmt(walked)}"

    def _route(self, goal: Pose) -> list[tuple[float, float]] | None:
        p = self._pose
        path = self.grid.plan((p.x, p.y), (goal.x, goal.y))
        if path is None:  # goals stepped in to contact may sit off the free grid: go via its nearest cell
            cell = self.grid.nearest_free(goal.x, goal.y, max_dist=1.0)
            if cell is not None:
                path = self.grid.plan((p.x, p.y), self.grid.centre(*cell))
                if path is not None:
                    path = [*path, (goal.x, goal.y)]
        return path

    def _travel(self, path: list[tuple[float, float]], goal: Pose, what: str) -> ActionResult:
        """Walk the route leg by leg with ``moveto``; the displacement is what the engine moved."""
        walked = 0.0
        p = self._pose
        here = (p.x, p.y)
        for tx, ty in path[1:]:
            if math.hypot(tx - here[0], ty - here[1]) < 1e-3:
                continue
            nx, ny = self._moveto(tx, ty)
            walked += math.hypot(nx - here[0], ny - here[1])
            here = (nx, ny)
            if math.hypot(nx - tx, ny - ty) > _ARRIVE_TOLERANCE:
                self._pose = Pose(nx, ny, p.yaw, p.pitch)
                return ActionResult(False, f"blocked on the way to {what} after {_fmt(walked)}",
                                    displacement=walked, translational=True)
        self._pose = Pose(here[0], here[1], goal.yaw % 360.0, goal.pitch)
        return ActionResult(True, f"walked {_fmt(walked)} to {what}", displacement=walked, translational=True)

    def _go_to(self, goal: Pose2, what: str, look_at=None) -> ActionResult:
        pitch = 0.0 if look_at is None else self.view_pitch(look_at, goal.x, goal.y, goal.yaw)
        target = Pose(goal.x, goal.y, goal.yaw % 360.0, pitch)
        path = self._route(target)
        if path is None:
            raise _Infeasible(f"cannot reach {what}")
        return self._travel(path, target, what)

    def _go_nearest(self, fx) -> ActionResult:
        start = self._pose
        super()._go_nearest(fx)  # plans on the floor plan only and sets the goal pose; no engine call
        goal, self._pose = self._pose, start
        path = self._route(goal)
        if path is None:
            raise _Infeasible(f"cannot reach {fx.name}")
        return self._travel(path, goal, fx.name)
