"""Normalisation, tokens with lemmas, and sentence spans: the first stage of every reading."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import NamedTuple

from lemminflect import getAllLemmas, getAllLemmasOOV

__all__ = ["MAX_CHARS", "Token", "normalize", "tokenize", "lemma", "sentence_spans", "STOPWORDS"]

MAX_CHARS = 4_000  # longer input is cut here: analysis time stays bounded
_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2013": "-", "\u2014": "-"})
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_SPACE = re.compile(r"\s+")
# Words (hyphens split them: "gluten-free" -> gluten, free, so both spellings match), numbers
# with decimals, and the punctuation that separates sentences and questions.
_TOKEN = re.compile(r"\$|[A-Za-z]+(?:'[A-Za-z]+)?|\d+(?:[.,]\d+)*%?|[?!.;:,]")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\s*\n+\s*|(?<=[.!?])$")

STOPWORDS = frozenset(
    "a an the of and or for with to in on at by from your you my our this that these those it its "
    "is are was be been being i me we us they them their there here some any just".split()
)


class Token(NamedTuple):
    text: str  # as written
    low: str  # lower case
    lemma: str  # dictionary form ("lamps" -> "lamp", "looking" -> "look")
    start: int
    end: int


def normalize(text: object) -> str:
    """NFKC, straight quotes, no control characters, single spaces, at most ``MAX_CHARS``.

    Never raises: any object is read through ``str``; surrogates and other unencodable
    characters are dropped.
    """
    if not isinstance(text, str):
        text = "" if text is None else str(text)
    text = text[: MAX_CHARS * 2]
    text = text.encode("utf-8", "ignore").decode("utf-8", "ignore")
    text = unicodedata.normalize("NFKC", text).translate(_QUOTES)
    text = _CONTROL.sub(" ", text)
    text = "\n".join(_SPACE.sub(" ", line).strip() for line in text.split("\n"))
    return text.strip()[:MAX_CHARS]


@lru_cache(maxsize=65_536)
def lemma(word: str) -> str:
    """Dictionary form of a lower-case word; nouns first ("glasses" -> "glass")."""
    if not word.isalpha() or len(word) < 3:
        return word
    if "'" in word:
        return word
    forms = getAllLemmas(word)
    for pos in ("NOUN", "VERB", "ADJ", "AUX", "ADV", "PROPN"):
        if pos in forms:
            return forms[pos][0]
    if word.endswith("s") and not word.endswith("ss"):
        oov = getAllLemmasOOV(word, "NOUN")
        if "NOUN" in oov:
            return oov["NOUN"][0]
    return word


@lru_cache(maxsize=8_192)
def tokenize(text: str) -> tuple[Token, ...]:
    """Tokens of an already normalised text (see ``normalize``), with lemmas and spans."""
    out = []
    for m in _TOKEN.finditer(text):
        w = m.group(0)
        low = w.lower()
        out.append(Token(w, low, lemma(low), m.start(), m.end()))
    return tuple(out)


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Character spans of the sentences of ``text`` (ends at . ! ? and line breaks)."""
    spans, pos = [], 0
    for m in _SENTENCE_END.finditer(text):
        if m.start() > pos:
            spans.append((pos, m.start()))
        pos = m.end()
    if pos < len(text):
        spans.append((pos, len(text)))
    # A period inside a price or a size ("$4.50", "16.9 fl oz") is no sentence end: the
    # splitter only splits after whitespace, so these stay whole.
    return [(s, e) for s, e in spans if text[s:e].strip()]
