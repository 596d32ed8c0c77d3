"""Normalisation, tokens with lemmas, and sentence spans: the first stage of every reading."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import NamedTuple

from lemminflect import getAllLemmas, getAllLemmasOOV

__all__ = ["FUNCTION_WORDS", "MAX_CHARS", "Token", "normalize", "tokenize", "lemma", "sentence_spans", "spans_between", "STOPWORDS"]

MAX_CHARS = 4_000  # longer input is cut here: analysis time stays bounded
_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2013": "-", "\u2014": "-"})
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_SPACE = re.compile(r"\s+")
# Words (hyphens split them: "gluten-free" -> gluten, free, so both spellings match), numbers
# with decimals, the punctuation that separates sentences and questions, and the marks notes
# use as separators (a spaced dash, an arrow, "=", "|", "/"): a name never runs across them
# ("copper kettle decaf ground - no caffeine" names the decaf, not a product with "no caffeine").
_TOKEN = re.compile(r"\$|[A-Za-z]+(?:'[A-Za-z]+)?|\d+(?:[.,]\d+)*%?|[?!.;:,]|[-=]>|\u2192|(?<!\S)-{1,2}(?!\S)|[=|/]")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\s*\n+\s*|(?<=[.!?])$")

# The separator tokens above: they end a product name, but a place name may hold a spaced dash
# ("Light Logic - Table and Desk Lamps"), so place matching skips them.
SEPARATORS = frozenset({"-", "--", "->", "=>", "\u2192", "=", "|", "/"})

STOPWORDS = frozenset(
    "a an the of and or for with to in on at by from your you my our this that these those it its "
    "is are was be been being i me we us they them their there here some any just".split()
)


# Closed-class English words (modals, pronouns, prepositions, conjunctions). The lemma
# dictionary does not list them, so they are named here to keep them from being read as
# typos of catalog words ("could" is not "cloud").
FUNCTION_WORDS = frozenset(
    "a about above across after again against all almost along also although always am among an and another any "
    "anybody anyone anything anywhere are around as at be because been before behind being below beneath beside "
    "besides between beyond both but by can cannot could did do does doing done down during each either else "
    "enough even ever every everybody everyone everything everywhere few for from further had has have having he "
    "her here hers herself him himself his how however i if in inside instead into is it its itself just least "
    "less lest many may me might mine more most much must my myself near neither never nevertheless next no nobody "
    "none noone nor not nothing now nowhere of off often on once one only onto or other others otherwise ought our "
    "ours ourselves out outside over own per perhaps quite rather really same shall she should since so some "
    "somebody someone something sometimes somewhere still such than that the their theirs them themselves then "
    "there therefore these they this those though through throughout thus till to too toward towards under "
    "underneath unless unlike until up upon us versus very via vs was we well were what whatever when whenever where "
    "whereas wherever whether which while who whoever whom whose why will with within without would yet you your "
    "yours yourself yourselves okay ok yes yeah nope hello hi hey thanks please sorry".split()
)


class Token(NamedTuple):
    text: str  # as written
    low: str  # lower case
    lemma: str  # dictionary form ("lamps" -> "lamp", "looking" -> "look")
    start: int
    end: int
    verb: str = ""  # the verb it is a form of ("turning" -> "turn", "heading" -> "head"), else the lemma


# Chat-model markup carries no words: emphasis marks, bullets, numbering and headers at line
# starts, emoji and pictographs (a "?" followed by an emoji still ends a question).
_EMPHASIS = re.compile(r"\*\*|__|~~|`|(?<!\w)\*(?=\S)|(?<=\S)\*(?!\w)")
_LINE_MARK = re.compile(r"(?m)^[ \t]*(?:#{1,6}|[-*\u2022+>]|\d{1,2}[.)])[ \t]+")


# (ticks, crosses, sparkles and the other symbols and dingbats count as emoji: "gaming desk \u2714
# rgb lighting", "juno desk lamp \u2728 usb port")
_EMOJI = "\U0001F000-\U0001FAFF\u2600-\u27BF\u2B50"
_EMOJI_BETWEEN = re.compile(rf"(?<=[\w)%])\s*[{_EMOJI}][{_EMOJI}\u200d\ufe0f\s]*(?=[\w$(])")


def _markup_free(text: str) -> str:
    text = _LINE_MARK.sub("", _EMPHASIS.sub("", text))
    text = re.sub(r"(?<=\s)@(?=\s)", "at", text)  # "pet treats @ front of shelf 12"
    # An emoji or a tick between words ends what came before, as a mark would: "... so skip
    # \U0001F645 the vale tho" (a comma), "a planter \U0001FAB4 What size?" (a full stop before a
    # capital), "velvet \u2714 pet-friendly \u2714 1,559.99" (labels, no part of a name said before
    # them); other dingbats are list marks and only go.
    text = _EMOJI_BETWEEN.sub(lambda m: " . " if text[m.end()].isupper() else " , ", text)
    return "".join(
        " " if (unicodedata.category(c) in ("So", "Cs", "Co") and c != "\u00b0") or c in "\u200d\ufe0f" else c
        for c in text
    )


def normalize(text: object) -> str:
    """NFKC, straight quotes, no control characters, no markdown marks or emoji, single
    spaces, at most ``MAX_CHARS``.

    Never raises: any object is read through ``str``; surrogates and other unencodable
    characters are dropped.
    """
    if not isinstance(text, str):
        text = "" if text is None else str(text)
    text = text[: MAX_CHARS * 2]
    text = text.encode("utf-8", "ignore").decode("utf-8", "ignore")
    text = unicodedata.normalize("NFKC", text).translate(_QUOTES)
    text = _CONTROL.sub(" ", text)
    text = _markup_free(text)
    text = "\n".join(_SPACE.sub(" ", line).strip() for line in text.split("\n"))
    return text.strip()[:MAX_CHARS]


# A modal is a word of its own: "could" is no form of "can" (the tin), "might" none of "may".
_MODALS = frozenset({"could", "would", "should", "might", "must", "shall"})


@lru_cache(maxsize=65_536)
def lemma(word: str) -> str:
    """Dictionary form of a lower-case word; nouns first ("glasses" -> "glass")."""
    if not word.isalpha() or len(word) < 3:
        return word
    if "'" in word or word in _MODALS:
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
def verb_lemma(word: str) -> str:
    """The verb an -ing word is a form of ("turning" -> "turn", where ``lemma`` reads the noun
    "turning"); else its lemma. Motion is read from verbs in any form."""
    if word.endswith("ing") and word.isalpha() and len(word) >= 5:  # "left" stays a direction
        forms = getAllLemmas(word)
        if "VERB" in forms:
            return forms["VERB"][0]
    return lemma(word)


@lru_cache(maxsize=8_192)
def tokenize(text: str) -> tuple[Token, ...]:
    """Tokens of an already normalised text (see ``normalize``), with lemmas and spans."""
    out = []
    for m in _TOKEN.finditer(text):
        w = m.group(0)
        low = w.lower()
        out.append(Token(w, low, lemma(low), m.start(), m.end(), verb_lemma(low)))
    return tuple(out)


def spans_between(pattern: re.Pattern[str], text: str) -> list[tuple[int, int]]:
    """Character spans of ``text`` between the matches of ``pattern`` (blank ones dropped)."""
    spans, pos = [], 0
    for m in pattern.finditer(text):
        if m.start() > pos:
            spans.append((pos, m.start()))
        pos = m.end()
    if pos < len(text):
        spans.append((pos, len(text)))
    return [(s, e) for s, e in spans if text[s:e].strip()]


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Character spans of the sentences of ``text`` (ends at . ! ? and line breaks).

    A period inside a price or a size ("$4.50", "16.9 fl oz") is no sentence end: the
    splitter only splits after whitespace, so these stay whole."""
    return spans_between(_SENTENCE_END, text)
