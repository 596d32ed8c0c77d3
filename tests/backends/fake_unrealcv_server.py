"""A loopback fake UnrealCV server: the real framed protocol over TCP, a tiny in-memory world.

Speaks what ``situ_gym.backends.unrealcv`` sends: frames of magic ``0x9E2B83C1`` (uint32
LE) + payload length (uint32 LE) + ``"<id>:<command>"``, replies ``"<id>:<body>"``, the
``connected to <Project>`` greeting right after accept, one client at a time. The world
is one camera (location/rotation in cm/degrees, fov, size), a wall at ``X = wall_x`` cm
that ``moveto`` cannot cross (the body keeps ``radius_cm`` from it), a set of named
objects with segmentation colours, and synthetic images: the lit view and the object
mask show one rectangle of ``mask_object`` (its mask colour shifted by ``mask_shift``
through "gamma") plus a stray patch of an unknown colour; depth is ``far_cm`` with the
rectangle at ``near_cm`` (float32, centimetres). Binds 127.0.0.1 on an ephemeral port.
"""

from __future__ import annotations

import io
import select
import socket
import struct
import threading
import time

import cv2
import numpy as np

__all__ = ["FakeUnrealCVServer", "MAGIC", "STRAY_COLOR", "scene_objects"]

MAGIC = 0x9E2B83C1
STRAY_COLOR = (100, 7, 250)  # in the mask, in no scene palette -> must snap to BACKGROUND

_TEMPLATES = [
    "vget /unrealcv/commands",
    "vget /unrealcv/status",
    "vget /objects",
    "vget /camera/[id]/location",
    "vset /camera/[id]/location [x] [y] [z]",
    "vset /camera/[id]/moveto [x] [y] [z]",
    "vget /camera/[id]/rotation",
    "vset /camera/[id]/rotation [pitch] [yaw] [roll]",
    "vset /camera/[id]/fov [fov]",
    "vset /camera/[id]/size [w] [h]",
    "vget /camera/[id]/[viewmode] [format]",
    "vget /object/[name]/color",
    "vset /object/[name]/color [r] [g] [b]",
    "vset /object/[name]/location [x] [y] [z]",
    "vset /object/[name]/rotation [pitch] [yaw] [roll]",
    "vbp [obj] [func]",
]


def _recv_exact(conn: socket.socket, n: int) -> bytes | None:
    buf = b""
    while len(buf) < n:
        chunk = conn.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


def frame(payload: bytes) -> bytes:
    return struct.pack("<II", MAGIC, len(payload)) + payload


class FakeUnrealCVServer:
    """Start with ``start()`` (or as a context manager); ``port`` is set once listening.

    Args:
        objects: object names in the level (each starts with mask colour (0, 0, 0)).
        mask_object: the object drawn as the rectangle in every image.
        greet: False accepts connections but never sends the greeting.
        wall_x: X (cm) of a wall that ``moveto`` cannot cross from below; None: no wall.
    """

    def __init__(self, objects=(), mask_object=None, *, greet=True, wall_x=None, radius_cm=30.0,
                 mask_shift=(2, -2, 1), near_cm=150.0, far_cm=300.0, project="FakeMart"):
        self.objects = {name: (0, 0, 0) for name in objects}
        self.mask_object = mask_object
        self.greet = greet
        self.wall_x = wall_x
        self.radius_cm = radius_cm
        self.mask_shift = mask_shift
        self.near_cm, self.far_cm = near_cm, far_cm
        self.project = project
        self.location = [0.0, 0.0, 0.0]
        self.rotation = [0.0, 0.0, 0.0]
        self.fov = 90.0
        self.size = (64, 48)
        self.commands: list[str] = []  # every command received, in order
        self.accepted = 0  # connections served (greeted or not)
        self.delays: list[tuple[str, float]] = []  # (command prefix, seconds): delay the next match once
        self.replies: dict[str, bytes] = {}  # command prefix -> reply sent instead of the world's (a broken engine)
        self.port: int | None = None
        self._sock: socket.socket | None = None
        self._conns: list[socket.socket] = []
        self._busy = False
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._stopped = threading.Event()

    # -- lifecycle -------------------------------------------------------------
    def start(self, port: int = 0) -> FakeUnrealCVServer:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", port))
        sock.listen(4)
        sock.settimeout(0.1)
        self._sock, self.port = sock, sock.getsockname()[1]
        t = threading.Thread(target=self._accept_loop, daemon=True, name="fake-unrealcv-accept")
        t.start()
        self._threads.append(t)
        return self

    def kill(self) -> None:
        """Die like a crashed engine: stop listening and drop every connection."""
        self._stopped.set()
        with self._lock:
            conns, self._conns = self._conns, []
        for c in conns:
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            c.close()
        if self._sock is not None:
            self._sock.close()
        for t in self._threads:
            t.join(timeout=2.0)

    stop = kill

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.kill()

    # -- networking ------------------------------------------------------------
    def _accept_loop(self):
        while not self._stopped.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            conn.settimeout(None)
            with self._lock:
                if self._busy:  # one client at a time, like the real server
                    conn.close()
                    continue
                self._busy = True
                self.accepted += 1
                self._conns.append(conn)
            t = threading.Thread(target=self._serve, args=(conn,), daemon=True, name="fake-unrealcv-conn")
            t.start()
            self._threads.append(t)

    def _serve(self, conn: socket.socket):
        try:
            if not self.greet:
                self._stopped.wait()  # accept, then say nothing
                return
            conn.sendall(frame(f"connected to {self.project}".encode()))
            while not self._stopped.is_set():
                head = _recv_exact(conn, 8)
                if head is None:
                    return
                magic, size = struct.unpack("<II", head)
                if magic != MAGIC or size == 0:
                    return
                payload = _recv_exact(conn, size)
                if payload is None:
                    return
                rid, _, cmd = payload.partition(b":")
                cmd = cmd.decode()
                self.commands.append(cmd)
                if not self._maybe_delay(conn, cmd) or self._stopped.is_set():
                    return
                conn.sendall(frame(rid + b":" + self._handle(cmd)))
        except OSError:
            return
        finally:
            with self._lock:
                self._busy = False
                if conn in self._conns:
                    self._conns.remove(conn)
            conn.close()

    def _maybe_delay(self, conn: socket.socket, cmd: str) -> bool:
        """Hold the reply if a delay matches; False when the client hung up meanwhile."""
        for k, (prefix, seconds) in enumerate(self.delays):
            if cmd.startswith(prefix):
                del self.delays[k]
                end = time.monotonic() + seconds
                while time.monotonic() < end and not self._stopped.is_set():
                    ready, _, _ = select.select([conn], [], [], 0.02)
                    if ready:
                        if not conn.recv(1, socket.MSG_PEEK):
                            return False
                        time.sleep(0.01)  # a pipelined request waits its turn
                return True
        return True

    # -- the world -------------------------------------------------------------
    def _handle(self, cmd: str) -> bytes:
        for prefix, reply in self.replies.items():
            if cmd.startswith(prefix):
                return reply
        parts = cmd.split()
        try:
            return self._dispatch(parts)
        except (ValueError, IndexError, KeyError) as exc:
            return f"error {type(exc).__name__}: {exc}".encode()

    def _dispatch(self, parts: list[str]) -> bytes:
        verb, path, args = parts[0], parts[1], parts[2:]
        seg = path.strip("/").split("/")
        if verb == "vget" and path == "/unrealcv/commands":
            return "\n".join(_TEMPLATES).encode()
        if verb == "vget" and path == "/unrealcv/status":
            return b"Is Listening\nClient Connected\n9000\nConfigs:\nWidth=640\nHeight=480"
        if verb == "vget" and path == "/objects":
            return " ".join(self.objects).encode()
        if verb == "vbp":
            return b'{"ok": "true"}'
        if seg[0] == "camera":
            return self._camera(verb, seg[2], args)
        if seg[0] == "object":
            name, attr = seg[1], seg[2]
            if name not in self.objects:
                return f"error Can not find object {name}".encode()
            if attr == "color" and verb == "vset":
                self.objects[name] = tuple(int(a) for a in args[:3])
                return b"ok"
            if attr == "color":
                r, g, b = self.objects[name]
                return f"(R={r},G={g},B={b},A=255)".encode()
            return b"ok"
        return b"error Command not found"

    def _camera(self, verb: str, attr: str, args: list[str]) -> bytes:
        if verb == "vset":
            vals = [float(a) for a in args]
            if attr == "location":
                self.location = vals[:3]
            elif attr == "moveto":
                self.location = self._sweep(self.location, vals[:3])
            elif attr == "rotation":
                self.rotation = vals[:3]
            elif attr == "fov":
                self.fov = vals[0]
            elif attr == "size":
                self.size = (int(vals[0]), int(vals[1]))
            else:
                return b"error unknown camera attribute"
            return b"ok"
        if attr == "location":
            return " ".join(f"{v:.3f}" for v in self.location).encode()
        if attr == "rotation":
            return " ".join(f"{v:.3f}" for v in self.rotation).encode()
        fmt = args[0] if args else "png"
        return self._image(attr, fmt)

    def _sweep(self, start, target):
        if self.wall_x is None:
            return list(target)
        limit = self.wall_x - self.radius_cm
        if target[0] <= limit or start[0] >= limit:
            return list(target)
        t = (limit - start[0]) / (target[0] - start[0])
        return [s + t * (e - s) for s, e in zip(start, target, strict=True)]

    def _rect(self):
        w, h = self.size
        return slice(h // 4, h // 2), slice(w // 4, w // 2)

    def _image(self, mode: str, fmt: str) -> bytes:
        w, h = self.size
        ys, xs = self._rect()
        if mode == "depth":
            if fmt != "npy":
                return b"error depth needs npy"
            depth = np.full((h, w), self.far_cm, np.float32)
            depth[ys, xs] = self.near_cm
            buf = io.BytesIO()
            np.save(buf, depth, allow_pickle=False)
            return buf.getvalue()
        if mode == "lit":
            rgb = np.zeros((h, w, 3), np.uint8)
            rgb[..., 0] = np.linspace(0, 255, w, dtype=np.uint8)[None, :]
            rgb[..., 1] = 90
            rgb[ys, xs] = (250, 200, 10)
        elif mode == "object_mask":
            rgb = np.zeros((h, w, 3), np.uint8)
            if self.mask_object is not None:
                color = np.array(self.objects[self.mask_object], int) + np.array(self.mask_shift, int)
                rgb[ys, xs] = np.clip(color, 0, 255).astype(np.uint8)
            rgb[-4:, -4:] = STRAY_COLOR
        else:
            return f"error unknown viewmode {mode}".encode()
        bgr = np.ascontiguousarray(rgb[..., ::-1])
        if fmt == "bmp":  # 32-bit BGRA rows top-down (negative height), like the engine's BMP
            return _bmp_top_down(np.dstack([bgr, np.full((h, w), 255, np.uint8)]))
        if fmt == "png":
            ok, data = cv2.imencode(".png", bgr)
        else:
            return f"error unknown format {fmt}".encode()
        if not ok:
            return b"error encode failed"
        return data.tobytes()


def scene_objects(scene) -> list[str]:
    """The engine's object names for ``scene``: every product instance and every fixture."""
    return [i.id for p in scene.products for i in p.instances] + [f.id for f in scene.fixtures]


def _bmp_top_down(bgra: np.ndarray) -> bytes:
    h, w = bgra.shape[:2]
    pixels = np.ascontiguousarray(bgra).tobytes()
    info = struct.pack("<IiiHHIIiiII", 40, w, -h, 1, 32, 0, len(pixels), 2835, 2835, 0, 0)
    head = struct.pack("<2sIHHI", b"BM", 14 + len(info) + len(pixels), 0, 0, 14 + len(info))
    return head + info + pixels


def wait_for(pred, timeout: float = 2.0) -> bool:
    """Poll ``pred`` until true or ``timeout`` seconds pass (bounded test helper)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.01)
    return bool(pred())


def bench(repeats: int = 50) -> None:
    """Print the Python-side cost of the UnrealCV backend on loopback (the fake engine is instant).

    ``python -m tests.backends.fake_unrealcv_server --bench`` from the repository root.
    """
    import os

    from situ_gym.backends.base import Primitive
    from situ_gym.backends.unrealcv import UnrealCVBackend
    from situ_gym.scene.loader import load_scene

    scene = load_scene("supermarket")
    names = [i.id for p in scene.products for i in p.instances] + [f.id for f in scene.fixtures]
    print(f"load average {os.getloadavg()[0]:.2f}; best of 3 rounds; supermarket scene, 640x480")
    with FakeUnrealCVServer(names, mask_object=names[0]) as srv:
        best = {}
        for _ in range(3):
            t0 = time.perf_counter()
            b = UnrealCVBackend(scene, width=640, height=480, port=srv.port, timeout=10.0)
            key = f"connect + set-up ({b.colored_objects} colours)"
            best[key] = min(best.get(key, 1e9), time.perf_counter() - t0)
            for fmt in ("png", "bmp"):
                b.image_format = fmt
                t0 = time.perf_counter()
                for _ in range(repeats):
                    b.capture()
                key = f"capture {fmt} (lit + mask + depth npy + snap), ms"
                best[key] = min(best.get(key, 1e9), (time.perf_counter() - t0) / repeats * 1e3)
            t0 = time.perf_counter()
            for k in range(repeats):
                b.execute(Primitive("turn" if k % 2 else "move_backward", {"direction": "left", "angle": 10,
                                                                            "distance": "short"}))
            key = "execute move/turn (moveto + read-back | rotation), ms"
            best[key] = min(best.get(key, 1e9), (time.perf_counter() - t0) / repeats * 1e3)
            b.close()
    for key, val in best.items():
        print(f"{key:60s} {val:8.2f}" + (" s" if key.startswith("connect") else ""))


def main(argv: list[str] | None = None) -> None:
    """Run as a stand-in "packaged binary": port and size from ``--ini``, until SIGTERM."""
    import argparse
    import configparser
    import signal

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ini", help="unrealcv.ini with [UnrealCV.Core] Port/Width/Height")
    parser.add_argument("--bench", action="store_true", help="print the backend's Python-side costs and exit")
    args, _engine_flags = parser.parse_known_args(argv)
    if args.bench:
        bench()
        return
    if not args.ini:
        parser.error("--ini is required unless --bench")
    ini = configparser.ConfigParser()
    ini.optionxform = str
    ini.read(args.ini)
    core = ini["UnrealCV.Core"]
    srv = FakeUnrealCVServer(project="FakeBinary")
    srv.size = (int(core["Width"]), int(core["Height"]))
    srv.start(int(core["Port"]))
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    done.wait(120.0)  # bounded: a forgotten stand-in exits by itself
    srv.kill()


if __name__ == "__main__":
    main()
