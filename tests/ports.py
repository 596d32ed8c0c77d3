"""Loopback ports for the tests' servers and launchers: a fixed one (accelerate's 29500) is
taken when the suite runs in several workers (pytest-xdist)."""

import socket


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
