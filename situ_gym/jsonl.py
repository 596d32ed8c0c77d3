"""JSON text from outside the process: decoding with bounded nesting, and JSON-lines files
whose lines are objects, read with one-line errors naming the file and line.

Every place that decodes text it did not write itself (a model's reply, a trajectory or
data file, a request) decodes it here. The standard decoder recurses once per nesting
level: an input nested a few thousand levels deep makes it raise ``RecursionError``, and
anything nested a few hundred levels deep that it does return makes every later recursive
walk (scrubbing, validation, dumping) raise instead. Nothing this project reads nests more
than a dozen levels, so depth beyond :data:`MAX_DEPTH` is refused up front, with the
position, as a :class:`json.JSONDecodeError` like any other malformed input.

Numbers must be finite: ``NaN`` and ``Infinity`` (a Python extension, not JSON), numbers
beyond a double's range (``1e400``, which Python reads as ``inf``) and integers of more than
64 digits (Python refuses to convert 4,300, with a ValueError of its own) are refused the
same way, since nothing downstream can use them and no JSON writer can write them back.

>>> loads('{"a": [1, {"b": null}]}')
{'a': [1, {'b': None}]}
>>> loads('[' * 100 + ']' * 100)
Traceback (most recent call last):
...
json.decoder.JSONDecodeError: nested deeper than 64 levels: line 1 column 65 (char 64)
>>> loads(bytes([0x5b, 0xff, 0x5d]))
Traceback (most recent call last):
...
json.decoder.JSONDecodeError: not UTF-8 (byte 0xff): line 1 column 2 (char 1)
>>> loads('{"reward": 1e400}')
Traceback (most recent call last):
...
json.decoder.JSONDecodeError: number out of range 1e400: line 1 column 12 (char 11)
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Iterable, Iterator
from typing import Any

__all__ = ["MAX_DEPTH", "bad_leaf", "decode_at", "decode_json", "field_path", "loads", "object_lines", "suspect"]

MAX_DEPTH = 64
# One token per match: a whole JSON string (its closing quote optional: a cut-off string
# runs to the end), or one bracket. The string branch is the unrolled-loop form, linear.
_TOKENS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?|[\[\]{}]', re.DOTALL)


class _NotFinite(ValueError):
    def __init__(self, token: str):
        super().__init__(token)
        self.token = token


def _finite_float(token: str) -> float:
    value = float(token)
    if not math.isfinite(value):
        raise _NotFinite(token)
    return value


def _no_constant(token: str) -> float:
    raise _NotFinite(token)


_MAX_INT_DIGITS = 64


def _bounded_int(token: str) -> int:
    if len(token) > _MAX_INT_DIGITS + 1:  # + 1: a minus sign
        raise _NotFinite(token[:20] + "...")
    return int(token)


_DECODER = json.JSONDecoder(parse_float=_finite_float, parse_constant=_no_constant, parse_int=_bounded_int)


def _not_finite_error(exc: _NotFinite, text: str, start: int) -> json.JSONDecodeError:
    pos = text.find(exc.token.removesuffix("..."), start)
    return json.JSONDecodeError(f"number out of range {exc.token}", text, max(pos, start))


def _check_depth(text: str, start: int, max_depth: int) -> None:
    """Raise JSONDecodeError at the first bracket opening level ``max_depth + 1`` of the
    value that begins at ``text[start]``."""
    if text.count("{", start) + text.count("[", start) <= max_depth:
        return  # cannot nest deeper than it has brackets (the common case: no scan)
    depth = 0
    for m in _TOKENS.finditer(text, start):
        ch = text[m.start()]
        if ch in "{[":
            depth += 1
            if depth > max_depth:
                raise json.JSONDecodeError(f"nested deeper than {max_depth} levels", text, m.start())
        elif ch in "}]":
            depth -= 1
            if depth <= 0:
                return  # the value that began at ``start`` has closed


def decode_at(text: str, pos: int = 0, *, max_depth: int = MAX_DEPTH) -> tuple[Any, int]:
    """``json.JSONDecoder().raw_decode(text, pos)`` with nesting bounded and numbers finite:
    ``(value, end)``; JSONDecodeError otherwise, never RecursionError."""
    _check_depth(text, pos, max_depth)
    try:
        return _DECODER.raw_decode(text, pos)
    except _NotFinite as exc:
        raise _not_finite_error(exc, text, pos) from None
    except RecursionError:  # pragma: no cover - the depth check comes first; a last guard
        raise json.JSONDecodeError("nested too deeply", text, pos) from None


def loads(text: str | bytes, *, max_depth: int = MAX_DEPTH) -> Any:
    """``json.loads`` for text from outside: JSONDecodeError (a ValueError) for malformed or
    too deeply nested JSON or a number that is not finite, never RecursionError."""
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise json.JSONDecodeError(f"not UTF-8 (byte {exc.object[exc.start]:#04x})",
                                       bytes(text[: exc.start]).decode("utf-8"), exc.start) from None
    start = len(text) - len(text.lstrip())
    _check_depth(text, start, max_depth)
    try:
        return _DECODER.decode(text)
    except _NotFinite as exc:
        raise _not_finite_error(exc, text, start) from None
    except RecursionError:  # pragma: no cover - the depth check comes first; a last guard
        raise json.JSONDecodeError("nested too deeply", text, start) from None


def object_lines(
    lines: Iterable[str], path: str | os.PathLike, *, error: type[ValueError] = ValueError
) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for each non-blank line; ``error("PATH:LINE: ...")`` at the
    first line that is not JSON or not an object."""
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            value = loads(line)
        except json.JSONDecodeError as exc:
            raise error(f"{path}:{n}: not JSON: {exc.msg} at column {exc.colno}") from None
        if not isinstance(value, dict):
            raise error(f"{path}:{n}: expected a JSON object, got {type(value).__name__}")
        yield n, value


# ---- naming the field that holds what cannot be saved (file readers' messages)

# What a line must contain for bad_leaf to find something: the NaN / Infinity tokens, an
# exponent of three digits or a 309-digit mantissa (a float that overflows), a surrogate
# escape, or (in text about to be written) a surrogate itself.
_SUSPECT = re.compile(r"NaN|Infinity|[eE][+]?\d{3}|\d{309}|\\u[dD][89a-fA-F]|[\ud800-\udfff]")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def field_path(loc: Any) -> str:
    """A field path for a one-line message: ``turns.0.reward.'a b'`` (odd keys quoted and
    shortened, so a hostile key cannot make the message long or break it in two)."""
    parts = []
    for part in loc:
        text = str(part)
        parts.append(text if re.fullmatch(r"[\w/@#-]{1,40}", text) else repr(text[:40]))
    return ".".join(parts) or "<root>"


def bad_leaf(value: Any) -> tuple[tuple, str] | None:
    """``(path, problem)`` of the first string or key holding a lone UTF-16 surrogate (a
    ``"\\ud800"`` escape: not Unicode text, it can be neither encoded nor printed) or the
    first number that is not finite (``NaN``, ``Infinity``, ``1e400``), at any depth, where
    ``path`` holds the keys and indices down to it; None when there is none. Iterative: any
    nesting is fine.

    >>> bad_leaf({"a": [1, {"b": float("nan")}]})
    (('a', 1, 'b'), 'nan is not a finite number')
    """
    stack: list[tuple[tuple, Any]] = [((), value)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, str):
            m = _LONE_SURROGATE.search(node)
            if m:
                return path, f"lone surrogate {m.group()!r} (not Unicode text)"
        elif isinstance(node, float):
            if not math.isfinite(node):
                return path, f"{node!r} is not a finite number"
        elif isinstance(node, dict):
            for k in node:
                m = _LONE_SURROGATE.search(k) if isinstance(k, str) else None
                if m:
                    return (*path, k), f"lone surrogate {m.group()!r} in a key (not Unicode text)"
            stack.extend(((*path, k), v) for k, v in reversed(node.items()))
        elif isinstance(node, list):
            stack.extend(((*path, i), v) for i, v in reversed(list(enumerate(node))))
    return None


def decode_json(text: str) -> Any:
    """``loads(text)`` (nesting bounded, numbers in range), except that a value it
    refuses for holding a number that is not finite (``NaN``, ``1e400``) is returned anyway,
    so that :func:`bad_leaf` can name the field that holds it: a file's reader says "field
    turns.3.reward.x: nan is not a finite number" rather than only a column. Anything else
    jsonl refuses stays refused: ``ValueError`` (``JSONDecodeError`` for malformed or too
    deeply nested JSON, or too long an integer)."""
    try:
        return loads(text)
    except json.JSONDecodeError as exc:
        if exc.msg.startswith("nested"):
            raise
        try:  # the depth is checked already: the standard decoder cannot recurse too deep
            value = json.loads(text)
        except ValueError:
            raise exc from None
        if bad_leaf(value) is None:  # refused for what bad_leaf cannot name (a 65-digit integer)
            raise exc from None
        return value


def suspect(text: str) -> bool:
    """Whether ``bad_leaf`` can find anything in the value decoded from ``text`` (a cheap
    test first, so clean lines are not walked)."""
    return _SUSPECT.search(text) is not None
