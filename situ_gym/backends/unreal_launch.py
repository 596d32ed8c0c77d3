"""Start a packaged Unreal Engine binary with the UnrealCV plugin and wait until it answers.

What gym-unrealcv and UnrealZoo do, with their rough edges removed: the port comes from
an ``unrealcv.ini`` written beside the binary (``[UnrealCV.Core] Port= Width= Height=``)
under a file lock, so parallel launches from one build do not read each other's ini;
the process starts in its own process group and is killed as a group (at ``close()``,
on garbage collection of a forgotten handle at exit); readiness is polled (a TCP
connect that receives the ``connected to <Project>`` greeting) until a deadline rather
than a fixed sleep; a binary that exits early fails at once with its exit code and the
tail of its log.

>>> proc = launch("/opt/SituMart/Binaries/Linux/SituMart-Linux-Shipping", "SituMart")  # doctest: +SKIP
>>> backend = UnrealCVBackend(scene, port=proc.port, process=proc.popen)  # doctest: +SKIP
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import signal
import socket
import struct
import subprocess
import sys
import time
import weakref
from pathlib import Path

from situ_gym.backends.base import BackendError

__all__ = ["UnrealProcess", "launch", "free_port", "write_ini", "wait_for_greeting"]

logger = logging.getLogger(__name__)

_MAGIC = 0x9E2B83C1
_LIVE: weakref.WeakSet[UnrealProcess] = weakref.WeakSet()


def free_port(host: str = "127.0.0.1") -> int:
    """A port the OS just reported free (the greeting check confirms it is really ours)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def write_ini(directory: str | Path, port: int, width: int, height: int) -> Path:
    """Write ``unrealcv.ini`` (read by the plugin at start-up from the binary's folder)."""
    path = Path(directory) / "unrealcv.ini"
    path.write_text(f"[UnrealCV.Core]\nPort={port}\nWidth={width}\nHeight={height}\n")
    return path


def wait_for_greeting(host: str, port: int, deadline: float, popen: subprocess.Popen | None = None,
                      poll: float = 0.2) -> str:
    """Poll until the server at ``host:port`` greets; returns the greeting text.

    Raises BackendError when ``popen`` exits first or when ``deadline`` (a
    ``time.monotonic()`` value) passes.
    """
    last = "nothing tried"
    while True:
        if popen is not None and popen.poll() is not None:
            raise BackendError(f"the Unreal process exited with code {popen.returncode} before UnrealCV answered")
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise BackendError(f"UnrealCV on {host}:{port} did not greet in time (last: {last})")
        try:
            with socket.create_connection((host, port), timeout=min(max(remaining, 0.05), 2.0)) as s:
                head = _recv_exact(s, 8)
                magic, size = struct.unpack("<II", head)
                if magic != _MAGIC or size > 4096:
                    raise OSError(f"not an UnrealCV frame (magic {magic:#x})")
                text = _recv_exact(s, size).decode("utf-8", "replace")
                if text.startswith("connected"):
                    return text
                last = f"unexpected greeting {text[:60]!r}"
        except (OSError, struct.error) as exc:
            last = str(exc) or type(exc).__name__
        time.sleep(min(poll, max(0.0, deadline - time.monotonic())))


def _recv_exact(s: socket.socket, n: int) -> bytes:
    buf = b""
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            raise OSError("connection closed")
        buf += chunk
    return buf


class UnrealProcess:
    """A launched engine: ``popen``, ``port``, ``log_path``; ``close()`` kills its process group."""

    def __init__(self, popen: subprocess.Popen, port: int, log_path: Path | None, ini_path: Path):
        self.popen, self.port, self.log_path, self.ini_path = popen, port, log_path, ini_path
        _LIVE.add(self)

    @property
    def alive(self) -> bool:
        return self.popen.poll() is None

    def log_tail(self, n: int = 2000) -> str:
        if self.log_path is None or not self.log_path.exists():
            return ""
        return self.log_path.read_bytes()[-n:].decode("utf-8", "replace")

    def close(self, grace: float = 5.0) -> None:
        """Terminate the process group (SIGTERM, then SIGKILL after ``grace`` s); safe twice."""
        if self.popen.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.popen.pid, signal.SIGTERM)
            try:
                self.popen.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(self.popen.pid, signal.SIGKILL)
                self.popen.wait(timeout=grace)
        _LIVE.discard(self)

    def __enter__(self) -> UnrealProcess:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


@atexit.register
def _close_all() -> None:
    for proc in list(_LIVE):
        with contextlib.suppress(Exception):
            proc.close(grace=2.0)


def launch(
    binary: str | Path,
    map_name: str | None = None,
    *,
    port: int | None = None,
    width: int = 640,
    height: int = 480,
    offscreen: bool = True,
    gpu: int | None = None,
    extra_args: tuple[str, ...] | list[str] = (),
    ini_dir: str | Path | None = None,
    ready_timeout: float = 120.0,
    log_path: str | Path | None = None,
) -> UnrealProcess:
    """Start ``binary`` (a packaged UE build with UnrealCV) and wait for its greeting.

    Args:
        binary: the executable (``<Project>/Binaries/Linux/<Project>-Linux-Shipping``).
        map_name: the level to open (first argument), e.g. ``"SituMart"``.
        port: UnrealCV port; default a free one. Written to ``unrealcv.ini`` in ``ini_dir``
            (default: the binary's folder) together with ``width``/``height``.
        offscreen: add ``-RenderOffScreen`` (no window; needs a GPU driver, no display).
        gpu: ``-graphicsadapter=N``.
        extra_args: appended verbatim (e.g. ``-nosound``).
        ready_timeout: seconds to wait for the greeting (first start compiles shaders).
        log_path: where stdout/stderr go (default: ``unrealcv_<port>.log`` in ``ini_dir``).
    """
    exe = Path(binary)
    if not exe.is_file() or not os.access(exe, os.X_OK):
        raise ValueError(f"binary must be an executable file, got {str(binary)!r}")
    for name, val in (("width", width), ("height", height)):
        if not isinstance(val, int) or isinstance(val, bool) or val < 16:
            raise ValueError(f"{name} must be an int >= 16, got {val!r}")
    if port is not None and (not isinstance(port, int) or isinstance(port, bool) or not 0 < port < 65536):
        raise ValueError(f"port must be an int in 1..65535 or None, got {port!r}")
    if not (isinstance(ready_timeout, int | float) and ready_timeout > 0):
        raise ValueError(f"ready_timeout must be positive seconds, got {ready_timeout!r}")
    if gpu is not None and (not isinstance(gpu, int) or gpu < 0):
        raise ValueError(f"gpu must be a non-negative int or None, got {gpu!r}")
    folder = Path(ini_dir) if ini_dir is not None else exe.parent
    port = port or free_port()
    args = [str(exe)] + ([map_name] if map_name else []) + [f"-ResX={width}", f"-ResY={height}"]
    if offscreen:
        args.append("-RenderOffScreen")
    if gpu is not None:
        args.append(f"-graphicsadapter={gpu}")
    args += [str(a) for a in extra_args]
    log = Path(log_path) if log_path is not None else folder / f"unrealcv_{port}.log"
    deadline = time.monotonic() + float(ready_timeout)
    # One launch at a time per ini folder: the plugin reads the ini once while starting.
    with open(folder / ".situ_gym_launch.lock", "w") as lock:
        _lock(lock)
        ini = write_ini(folder, port, width, height)
        with open(log, "wb") as out:
            popen = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                     cwd=str(exe.parent), start_new_session=True)
        proc = UnrealProcess(popen, port, log, ini)
        try:
            greeting = wait_for_greeting("127.0.0.1", port, deadline, popen)
        except BackendError as exc:
            tail = proc.log_tail(600)
            proc.close(grace=2.0)
            raise BackendError(f"{exc} ({' '.join(args)}); log tail: {tail!r}") from exc
    logger.info("Unreal started (pid %d, port %d): %s", popen.pid, port, greeting)
    return proc


def _lock(fh) -> None:
    if sys.platform.startswith("win"):  # no fcntl: launches from one folder must not overlap
        return
    import fcntl

    fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
