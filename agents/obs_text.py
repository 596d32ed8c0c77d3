"""Parse the text fields of a SituRec observation (formats in situ_gym.text and the caption)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import NamedTuple

__all__ = [
    "CatalogEntry",
    "Marked",
    "NavTarget",
    "Caption",
    "parse_catalog",
    "catalog_lines",
    "parse_nav_targets",
    "parse_caption",
    "parse_history",
]


@dataclass(frozen=True)
class CatalogEntry:
    id: str
    name: str
    category: str
    price: float
    location: str  # e.g. "Upright Freezer 2 (front)" or "Light Logic / Reading Nook"
    tags: tuple[str, ...]


@dataclass(frozen=True)
class NavTarget:
    handle: str
    name: str
    kind: str
    x: float
    y: float
    approaches: tuple[str, ...]


class Marked(NamedTuple):
    """One marked entity of the caption, in the reader's handles."""

    handle: str
    name: str
    approaches: tuple[str, ...] = ()  # fixtures and stores: the approach options listed


@dataclass
class Caption:
    products: list[Marked] = field(default_factory=list)
    fixtures: list[Marked] = field(default_factory=list)
    stores: list[Marked] = field(default_factory=list)
    areas: list[Marked] = field(default_factory=list)
    holding: tuple[str, str] | None = None  # (handle, name)
    cart: list[str] = field(default_factory=list)  # names


_TARGET = re.compile(r"^\[([^\]]+)\] (.+?) \| (.+?) \| \(([-0-9.]+), ([-0-9.]+)\) \| (.*)$")
_ENTRY = re.compile(r"^\[([^\]]+)\] (.*?)(?: \(([0-9.]+ m|approach: [^)]*|[^()]*)\))?$")


def parse_catalog(text: str) -> list[CatalogEntry]:
    entries = []
    for line in text.splitlines():
        parts = [p.strip() for p in line.split(" | ")]
        if len(parts) != 6 or not parts[3].startswith("$"):
            continue
        pid, name, category, price, location, tags = parts
        entries.append(
            CatalogEntry(
                id=pid,
                name=name,
                category=category,
                price=float(price[1:].replace(",", "")),
                location=location,
                tags=tuple(t.strip() for t in tags.split(";") if t.strip()),
            )
        )
    return entries


def catalog_lines(text: str) -> dict[str, str]:
    """Product id -> its catalog line, verbatim, for every catalog entry in ``text``."""
    lines = {}
    for line in text.splitlines():
        parts = line.split(" | ")
        if len(parts) == 6 and parts[3].strip().startswith("$"):
            lines.setdefault(parts[0].strip(), line)
    return lines


def parse_nav_targets(text: str) -> list[NavTarget]:
    targets = []
    for line in text.splitlines():
        m = _TARGET.match(line.strip())
        if m:
            handle, name, kind, x, y, approaches = m.groups()
            targets.append(
                NavTarget(handle, name, kind, float(x), float(y), tuple(a.strip() for a in approaches.split(",")))
            )
    return targets


def parse_caption(text: str) -> Caption:
    cap = Caption()
    section: list | None = None
    sections = {
        "Visible products:": cap.products,
        "Visible fixtures:": cap.fixtures,
        "Visible stores:": cap.stores,
        "Visible areas:": cap.areas,
    }
    for raw in text.splitlines():
        line = raw.strip()
        if line in sections:
            section = sections[line]
            continue
        if line.startswith("Holding:"):
            rest = line[len("Holding:") :].strip()
            m = re.match(r"^\[([^\]]+)\] (.+)$", rest)
            cap.holding = (m.group(1), m.group(2)) if m else None
            section = None
            continue
        if line.startswith("Cart:"):
            rest = line[len("Cart:") :].strip()
            cap.cart = [] if rest in ("", "empty") else [c.strip() for c in rest.split(";")]
            section = None
            continue
        m = _ENTRY.match(line)
        if m and section is not None:
            note = m.group(3) or ""
            approaches = tuple(a.strip() for a in note[len("approach:") :].split(",")) if note.startswith("approach:") else ()
            section.append(Marked(m.group(1), m.group(2).strip(), approaches))
    return cap


def parse_history(text: str) -> list[tuple[str, str]]:
    """(speaker, text) pairs; speaker is "assistant", "user" or "action"."""
    events = []
    for line in text.splitlines():
        for prefix, speaker in (("Assistant: ", "assistant"), ("User: ", "user"), ("User action: ", "action")):
            if line.startswith(prefix):
                events.append((speaker, line[len(prefix) :]))
                break
    return events
