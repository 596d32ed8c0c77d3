"""Finding the assistant's JSON object in whatever text a model produced.

Code fences, prose around the JSON, trailing commas and lone surrogates are tolerated;
only the JSON decoder is used (never ``eval``), and the work on a pathological input is
bounded.
"""

from __future__ import annotations

import re
from typing import Any

from situ_gym.jsonl import decode_at, loads

__all__ = ["extract_json_object", "recover_response", "scrub_surrogates", "MAX_RESPONSE_CHARS"]

MAX_RESPONSE_CHARS = 2000
_TOP_KEYS = ("response", "assistant_actions", "expected_user_action", "ranking")
# Bounds on the work spent on a pathological input.
_MAX_STARTS = 64  # '{' positions tried with the JSON decoder
_MAX_REPAIRS = 4  # '{' positions tried again after repairing trailing commas
_MAX_REPAIR_CHARS = 200_000
# Decode errors that name a limit rather than a syntax error (situ_gym.jsonl's messages).
_REFUSALS = ("nested deeper", "number out of range")

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\r?\n?(.*?)```", re.DOTALL)
_SIGNIFICANT = re.compile(r'[{}"\\]')
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")


def _segments(text: str) -> list[str]:
    """Fenced blocks first (in order), then the whole text."""
    blocks = [m.group(2) for m in _FENCE.finditer(text)]
    return [b for b in blocks if "{" in b or "[" in b] + [text]


def _balanced_end(text: str, start: int) -> int | None:
    """End (exclusive) of the brace-balanced span opening at ``text[start] == '{'``,
    honouring JSON strings and escapes; None if it never closes."""
    depth = 0
    in_string = False
    skip = -1
    for m in _SIGNIFICANT.finditer(text, start):
        pos = m.start()
        if pos <= skip:
            continue
        ch = m.group()
        if in_string:
            if ch == "\\":
                skip = pos + 1
            elif ch == '"':
                in_string = False
            continue
        if ch == '"':
            in_string = True
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return pos + 1
    return None


_SURROGATE = re.compile("[\ud800-\udfff]")


def scrub_surrogates(value: Any) -> Any:
    """``value`` with every lone UTF-16 surrogate (e.g. from a ``"\\ud800"`` escape) in its
    strings, keys included, replaced by U+FFFD: such text cannot be encoded as UTF-8, so a
    record holding it could not be saved. Iterative: any depth of nesting is fine."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if not isinstance(value, (dict, list)):
        return value
    root: Any = {} if isinstance(value, dict) else []
    stack = [(value, root)]
    while stack:
        source, copy = stack.pop()
        for key, item in (source.items() if isinstance(source, dict) else enumerate(source)):
            if isinstance(item, (dict, list)):
                new: Any = {} if isinstance(item, dict) else []
                stack.append((item, new))  # filled later; already in place in ``copy``
            else:
                new = _SURROGATE.sub("\ufffd", item) if isinstance(item, str) else item
            if isinstance(copy, dict):
                copy[_SURROGATE.sub("\ufffd", key) if isinstance(key, str) else key] = new
            else:
                copy.append(new)
    return root


def _loads(candidate: str) -> tuple[Any, bool]:
    try:
        return loads(candidate), True
    except ValueError:
        return None, False


def extract_json_object(text: str) -> tuple[dict[str, Any] | None, str | None]:
    """Find the assistant's JSON object in ``text``: ``(object, None)`` or ``(None, error)``.

    Looks in fenced code blocks first, then in the whole text; takes the first balanced
    top-level object that carries one of the schema's keys (else the first object
    found). A top-level array holding exactly one object is unwrapped; any other
    non-object JSON is an error. Trailing commas are repaired, and an object encoded
    twice (a JSON string holding the object) is decoded.

    >>> extract_json_object('Sure! ```json\\n{"response": "Hi", "ranking": [],}\\n```')
    ({'response': 'Hi', 'ranking': []}, None)
    >>> extract_json_object('[1, 2]')
    (None, 'output must be a JSON object, got list of 2')
    """
    first_dict: dict[str, Any] | None = None
    refused: str | None = None  # well-formed JSON that situ_gym.jsonl refuses, and why
    for segment in _segments(text):
        stripped = segment.strip()
        if stripped[:1] in ("[", "{", '"') or stripped[:1].isdigit():
            value, ok = _loads(stripped)
            if ok and isinstance(value, str) and value.lstrip().startswith("{"):
                inner, inner_ok = _loads(value)  # the object encoded twice, as a JSON string
                if inner_ok and isinstance(inner, dict):
                    return inner, None
            if ok and not isinstance(value, dict):
                if isinstance(value, list) and len(value) == 1 and isinstance(value[0], dict):
                    return value[0], None
                kind = "null" if value is None else type(value).__name__
                if isinstance(value, list):
                    return None, f"output must be a JSON object, got list of {len(value)}"
                return None, f"output must be a JSON object, got {kind}"
        starts = repairs = 0
        pos = segment.find("{")
        while pos != -1 and starts < _MAX_STARTS:
            starts += 1
            end = pos + 1
            try:
                value, end = decode_at(segment, pos)
                ok = True
            except ValueError as exc:
                value, ok = None, False
                if refused is None and str(exc).startswith(_REFUSALS):
                    refused = f"JSON refused: {getattr(exc, 'msg', exc)} (character {getattr(exc, 'pos', pos)})"
            if not ok and repairs < _MAX_REPAIRS and len(segment) - pos <= _MAX_REPAIR_CHARS:
                repairs += 1
                close = _balanced_end(segment, pos)
                if close is not None:
                    value, ok = _loads(_TRAILING_COMMA.sub(r"\1", segment[pos:close]))
                    end = close
            if ok and isinstance(value, dict):
                if any(key in value for key in _TOP_KEYS):
                    return value, None
                if first_dict is None:
                    first_dict = value
                pos = segment.find("{", end)
            else:
                pos = segment.find("{", pos + 1)
    if refused is not None:  # a keyless object found after it is a fragment of the refused one
        return None, refused
    if first_dict is not None:
        return first_dict, None
    return None, "no JSON object found in the output"


# At most 2 * MAX_RESPONSE_CHARS characters of the string are read: enough for the cut.
_RESPONSE_KEY = re.compile(r'"response"\s*:\s*"((?:[^"\\]|\\.){0,4000})', re.DOTALL)


def _truncate(text: str) -> str:
    text = text.strip()
    return text if len(text) <= MAX_RESPONSE_CHARS else text[:MAX_RESPONSE_CHARS].rstrip()


def recover_response(text: str, obj: dict[str, Any] | None = None) -> str:
    """The user-facing text of a possibly broken turn, at most MAX_RESPONSE_CHARS long.

    From the parsed object's ``"response"``; else from a ``"response": "..."`` pair in
    the raw text (also when the string is cut off); else the raw text itself when it
    reads as prose (JSON and code fences removed); else "".
    """
    if obj is not None and isinstance(obj.get("response"), str):
        return _truncate(obj["response"])
    m = _RESPONSE_KEY.search(text)
    if m is not None:
        body = m.group(1)
        if body.endswith("\\") and not body.endswith("\\\\"):
            body = body[:-1]  # a cut-off escape
        decoded, ok = _loads(f'"{body}"')
        return _truncate(decoded if ok and isinstance(decoded, str) else body)
    prose = _FENCE.sub(" ", text)
    first, last = prose.find("{"), prose.rfind("}")
    if first != -1 and last > first:
        prose = prose[:first] + " " + prose[last + 1 :]
    prose = re.sub(r"\s+", " ", prose).strip()
    if '":' in prose or not any(ch.isalpha() for ch in prose[:MAX_RESPONSE_CHARS]):
        return ""
    return _truncate(prose)


# ---------------------------------------------------------------- names and handles
