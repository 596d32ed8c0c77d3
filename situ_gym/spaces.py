"""Text spaces that really contain what the env returns (any printable BMP character)."""

from __future__ import annotations

import copy
import functools

from gymnasium.spaces import Text

__all__ = ["MAX_OBS_TEXT", "MAX_ACTION_TEXT", "text_space", "sanitize_text", "clip_text"]

MAX_OBS_TEXT = 100_000  # catalog ~30k chars; history is clipped from the front beyond this
MAX_ACTION_TEXT = 20_000
REPLACEMENT = "\ufffd"


@functools.cache
def _charset() -> str:
    # Printable characters of the Basic Multilingual Plane plus newline and tab: covers
    # dialogue in any script; astral characters (emoji) are replaced, see sanitize_text.
    printable = (c for c in map(chr, range(0x10000)) if c.isprintable())
    return "".join(printable) + "\n\t"



@functools.cache
def _prototype(max_length: int) -> Text:
    return Text(max_length, min_length=0, charset=_charset())


def text_space(max_length: int) -> Text:
    """A fresh Text space over the shared charset.

    Building the charset tables costs ~0.2 s and ~10 MB, so envs share them: each space is
    a shallow copy of one prototype with its own (unseeded) random generator.
    """
    space = copy.copy(_prototype(max_length))
    space._np_random = None  # own generator, seeded by the env
    return space


@functools.cache
def _allowed() -> frozenset[str]:
    return frozenset(_charset())


def sanitize_text(text: str, max_length: int = MAX_OBS_TEXT, *, keep: str = "tail") -> str:
    """Replace characters outside the charset and clip to ``max_length``.

    ``keep="tail"`` keeps the end (dialogue history), ``"head"`` the start.
    """
    allowed = _allowed()
    if not all(c in allowed for c in text):
        text = "".join(c if c in allowed else REPLACEMENT for c in text)
    return clip_text(text, max_length, keep=keep)


def clip_text(text: str, max_length: int = MAX_OBS_TEXT, *, keep: str = "tail") -> str:
    """Clip already-sanitized text to ``max_length`` (see :func:`sanitize_text`)."""
    if len(text) <= max_length:
        return text
    marker = "...\n"
    return marker + text[-(max_length - len(marker)) :] if keep == "tail" else text[:max_length]

