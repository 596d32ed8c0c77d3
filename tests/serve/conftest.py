"""A SituRec OpenEnv server on a loopback port, run in a thread of the test process."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from types import SimpleNamespace

import pytest

pytest.importorskip("openenv.core", reason='the serve extra: pip install "situ-gym[serve]"')

PHARMACY_ENV_ID = "SituRec-Pharmacy-v0"


@contextmanager
def running_server(**kwargs) -> Iterator[SimpleNamespace]:
    """``url`` and ``sessions()`` (the open session count) of a server made by ``create_app(**kwargs)``."""
    import uvicorn

    from situ_gym.serve import create_app

    app = create_app(**kwargs)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))  # any free port: tests run in parallel processes too
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the test server did not start")
        time.sleep(0.02)
    try:
        yield SimpleNamespace(url=f"http://127.0.0.1:{sock.getsockname()[1]}",
                              sessions=lambda: app.state.openenv_server.active_sessions)
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()


@pytest.fixture(scope="package")
def server(pharmacy_folder):
    """One server for the tests that need no special settings (16 sessions, 10-minute timeout),
    serving every registered store (the paper's two and the pharmacy)."""
    with running_server(max_sessions=16, session_timeout=600) as running:
        yield running
