"""Read a JSON object out of a model's reply (code fences, chatter around it), with json only.

>>> extract_json('Sure! ```json\\n{"a": 1}\\n```')
{'a': 1}
>>> extract_json('no object here')
Traceback (most recent call last):
...
ValueError: no JSON object found in the reply
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["extract_json"]


def extract_json(text: str) -> dict[str, Any]:
    """The first JSON object in ``text`` that parses; ValueError (with the reason) otherwise."""
    if not isinstance(text, str):
        raise ValueError(f"reply must be text, got {type(text).__name__}")
    decoder = json.JSONDecoder()
    start = text.find("{")
    last_error = "no JSON object found in the reply"
    while start != -1:
        try:
            value, _ = decoder.raw_decode(text, start)
        except json.JSONDecodeError as exc:
            last_error = f"invalid JSON: {exc.msg} at character {exc.pos}"
        else:
            if isinstance(value, dict):
                return value
        start = text.find("{", start + 1)
    raise ValueError(last_error)
