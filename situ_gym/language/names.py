"""Catalog names and Set-of-Mark references as they appear in free text.

``normalize_name`` and ``name_table`` match names written loosely (case, accents and
punctuation ignored) to scene entities; ``find_marker_disclosures`` finds marker labels a
response gives away.

* Marker disclosure: the response may not name a marker label. Always flagged: a
  handle-shaped token (``7``, ``b``, ``aa``, ``1a``, ``A1``) in square or curly
  brackets (``[a]``), after ``label``/``labelled``/``marker``/``mark``/``marked``
  (``label 7``, ``marker "1a"``), or after ``#`` (``#5``). Flagged only when the token is
  one of the assistant's current handles: ``(3)`` and ``handle b``, and kind words
  followed by it (``shelf 7``, ``item b``, ``store 2``, ``area 1a``, ``aisle 7``; also
  product/fixture/shop/freezer/cooler) unless that phrase is part of an
  entity name in the scene (a store whose fixtures are named "Aisle 7 ..." may say
  "aisle 7"). Our Supermarket names its fixtures "Shelf N: ...", so "shelf 7" is a
  real name there, while "aisle 7" (no aisle names) is flagged when 7 is a handle. Common short words (``a``, ``in``, ``it``...) after a label word are only
  flagged when quoted or bracketed, so "a great choice", "$3.99", "marked down" pass.
"""

from __future__ import annotations

import re
import unicodedata

from situ_gym.scene.index import SceneIndex, per_index

__all__ = ["normalize_name", "name_table", "find_marker_disclosures"]

def normalize_name(text: str) -> str:
    """Lowercase, accents and apostrophes dropped, other punctuation collapsed to spaces."""
    text = unicodedata.normalize("NFKD", text)
    text = "".join(ch for ch in text if not unicodedata.combining(ch)).lower()
    text = re.sub(r"['\u2019`]", "", text).replace("&", " and ")
    return " ".join(re.findall(r"[^\W_]+", text))


def name_table(index: SceneIndex, group: str) -> dict[str, str | None]:
    """Normalised name -> entity id (None where two entities share the name) of the
    ``"products"`` or the navigation targets (``"nav"``)."""
    return _name_tables(index)[group]


@per_index
def _name_tables(index: SceneIndex) -> dict[str, dict[str, str | None]]:
    groups = {"products": index.products, "nav": {eid: index.entities[eid] for eid in index.nav_targets}}
    tables: dict[str, dict[str, str | None]] = {}
    for group, entities in groups.items():
        table = tables[group] = {}
        for eid, entity in entities.items():
            key = normalize_name(entity.name)
            table[key] = None if key in table and table[key] != eid else eid
    return tables



@per_index
def _entity_names(index: SceneIndex) -> tuple[str, ...]:
    """Normalised entity names, space-padded for whole-word phrase search."""
    return tuple(" " + normalize_name(e.name) + " " for e in index.entities.values())


_TOKEN = r"(?:\d{1,3}[A-Za-z]?|[A-Za-z]{1,2}\d{0,2})"
_END = r"(?![\w%$])(?![.,]\d)"
_BRACKETED = re.compile(r"[\[{]\s*(" + _TOKEN + r")\s*[\]}]")
_PAREN = re.compile(r"(?<![A-Za-z])\(\s*(" + _TOKEN + r")\s*\)")  # not "item(s)"
_HASH = re.compile(r"(?<![\w&#])#(" + _TOKEN + r")" + _END)  # "#5", not "# 5" headings
_LABELLED = re.compile(
    r"\b(labels?|label(?:l?ed)|markers?|mark|marked|handles?)\b(?:\s+(?:as|with))?(?:\s*[:=#]\s*|\s+)"
    r"([\"'\u2018\u201c\[(])?\s*(" + _TOKEN + r")" + _END + r"(?(2)[\"'\u2019\u201d\])]?)",
    re.IGNORECASE,
)
_KIND_WORD = re.compile(
    r"\b(items?|products?|fixtures?|shel(?:f|ves)|stores?|shops?|areas?|freezers?|coolers?|"
    r"aisles?)\s+"
    r"([\"'\u2018\u201c\[(])?\s*(" + _TOKEN + r")" + _END + r"(?(2)[\"'\u2019\u201d\])]?)",
    re.IGNORECASE,
)
_UNIT = re.compile(r"\d+[gGlL]")  # "label: 5g sugar", "2l" - quantities, not areas
_STOPWORDS = frozenset(
    "a i an am as at be by do go he if in is it me my no of on or so to up us we ok oz lb "
    "kg g ml l".split()
)


def find_marker_disclosures(
    response: str, *, handles: dict[str, str] | None = None, index: SceneIndex | None = None
) -> list[str]:
    """Marker references in ``response``: the matched text in reading order, without
    repeats; overlapping forms ("marked [1]") count once.

    ``handles`` are the assistant's current handles (see the module docstring for which
    forms need them); ``index`` supplies entity names, so phrases that are part of a
    real name ("Aisle 7") are not flagged.

    >>> find_marker_disclosures("Try [a], or the one with label 7 - $3.99, a great choice")
    ['[a]', 'label 7']
    """
    current = set(handles or ())
    names: tuple[str, ...] | None = None
    hits: list[tuple[int, int, str]] = []

    def add(m: re.Match[str]) -> None:
        start, end = m.span()
        if all(end <= s or start >= e for s, e, _ in hits):  # overlaps are one reference
            hits.append((start, end, m.group(0).strip()))

    for m in _BRACKETED.finditer(response):
        add(m)
    for m in _HASH.finditer(response):
        add(m)
    for m in _PAREN.finditer(response):
        if m.group(1) in current:
            add(m)
    for m in _LABELLED.finditer(response):
        word, quote, token = m.group(1).lower(), m.group(2), m.group(3)
        if not quote and (token.lower() in _STOPWORDS or _UNIT.fullmatch(token)):
            continue
        if word.startswith("handle") and token not in current and not quote:
            continue
        add(m)
    for m in _KIND_WORD.finditer(response):
        quote, token = m.group(2), m.group(3)
        if token not in current or (not quote and token.lower() in _STOPWORDS):
            continue
        if index is not None:
            if names is None:
                names = _entity_names(index)
            phrase = " " + normalize_name(m.group(0)) + " "
            if any(phrase in name for name in names):
                continue
        add(m)
    found: list[str] = []
    for _, _, text in sorted(hits):
        if text not in found:
            found.append(text)
    return found
