"""JSON-lines text whose lines are objects, read with one-line errors naming the file and line."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from typing import Any

__all__ = ["object_lines"]


def object_lines(
    lines: Iterable[str], path: str | os.PathLike, *, error: type[ValueError] = ValueError
) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for each non-blank line; ``error("PATH:LINE: ...")`` at the
    first line that is not JSON or not an object."""
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            raise error(f"{path}:{n}: not JSON: {exc.msg} at column {exc.colno}") from None
        if not isinstance(value, dict):
            raise error(f"{path}:{n}: expected a JSON object, got {type(value).__name__}")
        yield n, value
