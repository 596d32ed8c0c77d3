"""Catalog claims in a response, for the RecRM judges: which products it names (brand-only
and unknown names included), in which clause, with which labels and places.

Tokens come from :mod:`situ_gym.language.tokens` (the layer's one tokenizer); this lexicon
keeps the claim-level views the factual-consistency judge needs (words that describe a
product, names that cover a display name) beside the dialogue-level ``SceneLexicon``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

from situ_gym.language.tokens import STOPWORDS, Token
from situ_gym.language.tokens import tokenize as _layer_tokenize
from situ_gym.scene.index import SceneIndex, per_index

__all__ = [
    "FUNCTION_WORDS",
    "UNCHECKED_TAG_KEYS",
    "VAGUE_WORDS",
    "NEGATIONS",
    "Token",
    "Mention",
    "Lexicon",
    "lexicon",
    "tokenize",
    "words",
    "clauses",
]

# Clause boundaries: sentence ends, commas (not before a size: "Cereal, 12 oz"), semicolons,
# dashes and a few conjunctions.
_CLAUSE = re.compile(
    r"(?<=[.!?;])\s+|\n+|,(?!\s*\d)\s*|\s+[-\u2013\u2014]\s+|\s+(?:but|while|whereas|since|because|though|although|however)\s+",
    re.IGNORECASE,
)

FUNCTION_WORDS = STOPWORDS  # articles, pronouns, copulas: never what a claim is about
NEGATIONS = frozenset(
    "none nothing avoid avoids skip not no never isn't aren't doesn't don't without neither nor isnt arent doesnt dont".split()
)
# Capitalised words that begin sentences or address people, never product names.
_COMMON_CAPS = frozenset(
    "i i'm i'd i'll i've you you're we we're let let's here there this that these those it it's "
    "try how what which who where when why would could should can may might do does did yes no ok "
    "okay sure great perfect hi hello hey welcome thanks thank please sorry good nice also and but "
    "or so if then now just maybe one our my your the a an its they if".split()
)


# Tag keys whose values are situational or too vague to read as product claims.
UNCHECKED_TAG_KEYS = frozenset(
    {"use", "season", "origin", "pulp", "ripeness", "taste", "fat", "egg", "life stage"}
)
VAGUE_WORDS = frozenset(
    "fresh original plain standard natural clear light dark medium whole mixed none some everyday "
    "party holiday sweet modern contemporary classic eco adult large compact firm small regular "
    "can bar ground wet "
    "simple soft white black red green blue gold silver brown".split()
)


def _place_aliases(name: str) -> list[str]:
    """How people say a place: "Shelf 1" for "Shelf 1: cereal, ...", "Floor Lamps" for "Light Logic - Floor Lamps"."""
    out = [name]
    head, sep, _ = name.partition(":")
    if sep:
        out.append(head)
    _, sep, tail = name.partition(" - ")
    if sep:
        out.append(tail)
    return out


_DETERMINERS = frozenset("the a an some their those these this that".split())
_GENERIC_NOUNS = frozenset(
    "one ones brand brands line range option options product products version kind kinds "
    "selection item items stuff".split()
)
_VERBS = frozenset(
    "is are was were has have had makes make made does do did sells sell offers offer comes come "
    "tastes taste looks look works work fits fit costs cost would will can could should might may".split()
)


@lru_cache(maxsize=8192)
def tokenize(text: str) -> tuple[Token, ...]:
    """The layer's word tokens (punctuation left out) with their spans; cached, since the
    judges re-read the same texts. Apostrophes are dropped from ``low`` ("doesnt")."""
    return tuple(t._replace(low=t.low.replace("'", "")) for t in _layer_tokenize(text) if t.text[0].isalnum())


@lru_cache(maxsize=8192)
def _words(text: str) -> tuple[str, ...]:
    return tuple(t.low for t in tokenize(text))


def words(text: str) -> list[str]:
    """Lower-case word tokens (hyphens split words; apostrophes are dropped)."""
    return list(_words(text))


def clauses(text: str, protect: Sequence[tuple[int, int]] = ()) -> list[tuple[int, int]]:
    """Character spans of the clauses of ``text`` (sentences split at commas, conjunctions).

    No split falls inside a ``protect`` span (a product name such as "Tikka Masala, Family Size").
    """
    spans, pos = [], 0
    for m in _CLAUSE.finditer(text):
        if any(s < m.start() < e for s, e in protect):
            continue
        if m.start() > pos:
            spans.append((pos, m.start()))
        pos = m.end()
    if pos < len(text):
        spans.append((pos, len(text)))
    return spans


@dataclass(frozen=True)
class Mention:
    """A product reference found in a response.

    ``candidates`` are the catalog products it may denote (several for a bare brand);
    empty with ``unknown=True`` when the phrase names a product the catalog lacks.
    """

    start: int
    end: int
    phrase: str
    candidates: frozenset[str]
    unknown: bool = False
    how: str = "name"  # "name", "brand", "unknown_brand"


class Lexicon:
    """Word-level views of one scene's catalog, built once per SceneIndex (see ``lexicon``)."""

    def __init__(self, index: SceneIndex):
        self.index = index
        self.vocab: set[str] = set()
        self.brand_products: dict[tuple[str, ...], list[str]] = {}
        self.name_words: dict[str, frozenset[str]] = {}
        self.core_names: dict[tuple[str, ...], set[str]] = {}
        generic: set[str] = set()  # words of categories, groups and labels
        self.head_nouns: set[str] = set()
        for pid, p in index.products.items():
            name_w = words(p.name)
            brand_w = words(p.brand)
            base, sep, size = p.name.rpartition(", ")
            base_w = words(base) if sep and any(c.isdigit() for c in size) else name_w
            self.vocab.update(name_w, brand_w, words(p.category), words(p.group))
            # words a reference to the product may use: its name, brand and category
            self.name_words[pid] = (
                frozenset(name_w) | frozenset(brand_w) | frozenset(words(p.category))
            )
            self.brand_products.setdefault(tuple(t.text for t in tokenize(p.brand)), []).append(pid)
            core = tuple(base_w[len(brand_w) :])
            if base_w[: len(brand_w)] != brand_w:
                core = tuple(w for w in base_w if w not in brand_w)
            if len(core) >= 2:
                self.core_names.setdefault(core, set()).add(pid)
            generic.update(words(p.category), words(p.group))
            for tag in p.tags:
                generic.update(words(tag.partition(":")[2]))
            for w in words(p.category):  # "granola bars": granola, bars, bar
                if w in FUNCTION_WORDS or len(w) < 3:
                    continue
                self.head_nouns.add(w)
                self.head_nouns.add(w[:-1] if w.endswith("s") else w + "s")
            content = [
                w for w in core if w not in FUNCTION_WORDS and not w.isdigit() and len(w) > 2
            ]
            if content:
                self.head_nouns.add(content[-1])
        self.content_vocab = self.vocab - FUNCTION_WORDS
        # A name without its brand counts as a mention only when it is distinctive:
        # three words or more, or a word no category or label uses ("Milk Chocolate" is not).
        self.core_names = {
            core: pids
            for core, pids in self.core_names.items()
            if len(core) >= 3 or any(w not in generic for w in core)
        }
        # Places: fixture / store / area names (lower-case word tuples -> entity id).
        self.places: dict[tuple[str, ...], str] = {}
        for eid in index.nav_targets:
            for alias in _place_aliases(index.name(eid)):
                key = tuple(words(alias))
                if key:
                    # an alias two places share names neither of them
                    self.places[key] = eid if self.places.get(key, eid) == eid else ""
        self.places = {k: v for k, v in self.places.items() if v}
        self.place_words: set[str] = {w for key in self.places for w in key}
        # Tag phrases: value words of "key:value" labels -> tags.
        # Only labels a shopper would hear as a claim about the product are checked;
        # vague words ("fresh", "large", "original") and situational keys are left out.
        self.tag_phrases: dict[tuple[str, ...], set[str]] = {}
        for p in index.products.values():
            for tag in p.tags:
                key_name, _, value = tag.partition(":")
                key = tuple(words(value))
                if (
                    not key
                    or key_name in UNCHECKED_TAG_KEYS
                    or (len(key) == 1 and key[0] in VAGUE_WORDS)
                ):
                    continue
                self.tag_phrases.setdefault(key, set()).add(tag)
        self.tag_firsts: dict[str, int] = {}  # first word -> longest label phrase starting with it
        for key in self.tag_phrases:
            self.tag_firsts[key[0]] = max(self.tag_firsts.get(key[0], 0), len(key))
        # Text a product can be truthfully described with (name, category, attributes).
        self.descr_words: dict[str, frozenset[str]] = {}
        for pid, p in index.products.items():
            bag = set(self.name_words[pid]) | set(words(p.category)) | set(words(p.group))
            for v in p.attributes.values():
                for s in v if isinstance(v, list) else [v]:
                    bag.update(words(str(s)))
            self.descr_words[pid] = frozenset(bag)
        self._known_caps = {w for w in self.vocab} | self.place_words | _COMMON_CAPS
        self._mention_cache: dict[str, tuple[Mention, ...]] = {}
        self._brands_by_first_low: dict[str, list[tuple[str, ...]]] = {}  # by the first word, lower case
        for brand in self.brand_products:
            if brand:
                self._brands_by_first_low.setdefault(brand[0].lower(), []).append(brand)
        self._cores_by_first: dict[str, list[tuple[str, ...]]] = {}
        for core in self.core_names:
            self._cores_by_first.setdefault(core[0], []).append(core)

    # ------------------------------------------------------------- mentions
    def mentions(self, text: str) -> list[Mention]:
        """Product mentions in ``text``: catalog names, brands (+ product words), unknown names."""
        found = self._mention_cache.get(text)
        if found is None:
            if len(self._mention_cache) > 4096:
                self._mention_cache.clear()
            found = self._mention_cache[text] = tuple(self._mentions(text))
        return list(found)

    def _mentions(self, text: str) -> list[Mention]:
        toks = tokenize(text)
        low = [t.low for t in toks]
        out: list[Mention] = []
        covered: set[int] = set()
        # 1) brand (case-sensitive) followed by a run of catalog product words
        for i in range(len(toks)):
            for brand in self._brands_by_first_low.get(low[i], ()):
                pids = self.brand_products[brand]
                n = len(brand)
                written = tuple(t.text for t in toks[i : i + n])
                # as written ("Campo Verde"), or in lower case ("campo verde avocado oil") when
                # words of one of its products follow: a lower-case brand alone is just words
                as_written = written == brand
                if not as_written and tuple(w.lower() for w in written) != tuple(w.lower() for w in brand):
                    continue
                j = i + n
                run: list[str] = []
                while j < len(toks) and len(run) < 8:
                    w = low[j]
                    if (
                        w in FUNCTION_WORDS
                        or w not in self.content_vocab
                        or not _joined(text, toks[j - 1], toks[j])
                    ):
                        break
                    run.append(w)
                    j += 1
                cands = set(pids)
                used = 0
                for k in range(len(run)):
                    nxt = {pid for pid in cands if run[k] in self.name_words[pid]}
                    if not nxt:
                        break
                    cands, used = nxt, k + 1
                if not as_written and used == 0:
                    continue
                end_tok = i + n + used - 1
                unknown = bool(run) and used == 0
                if not run:
                    invented = self._invented_after(text, toks, low, i, n)
                    if invented:
                        unknown, run = True, low[i + n : i + n + invented]
                if unknown:
                    end_tok = i + n + len(run) - 1
                end_tok = max(end_tok, i + n - 1)
                out.append(
                    Mention(
                        toks[i].start,
                        toks[end_tok].end,
                        text[toks[i].start : toks[end_tok].end],
                        frozenset() if unknown else frozenset(cands),
                        unknown=unknown,
                        how="brand",
                    )
                )
                covered.update(range(i, end_tok + 1))
        # 2) a product's name without its brand (at least two words)
        for i in range(len(low)):
            for core in self._cores_by_first.get(low[i], ()):
                pids = self.core_names[core]
                n = len(core)
                if tuple(low[i : i + n]) == core and covered.isdisjoint(range(i, i + n)):
                    out.append(
                        Mention(
                            toks[i].start,
                            toks[i + n - 1].end,
                            text[toks[i].start : toks[i + n - 1].end],
                            frozenset(pids),
                        )
                    )
                    covered.update(range(i, i + n))
        # 3) product-like names the catalog lacks: capitalised words (one unknown to the
        #    catalog, or several that no product's name covers) ending in a product noun
        i = 0
        while i < len(toks):
            if i in covered or not toks[i].text[0].isupper():
                i += 1
                continue
            j = i + 1
            while (
                j < len(toks)
                and toks[j].text[0].isupper()
                and j not in covered
                and _joined(text, toks[j - 1], toks[j])
            ):
                j += 1
            while i < j and (
                low[i] in _COMMON_CAPS
                or (i == 0 or _sentence_gap(text, toks[i - 1], toks[i]))
                and low[i] not in self.vocab
                and j - i > 1
            ):
                i += 1  # "Try", "Our", sentence-initial words
            if i >= j:
                i = j
                continue
            caps = toks[i:j]
            sentence_start = i == 0 or _sentence_gap(text, toks[i - 1], toks[i])
            unknown_caps = [t for t in caps if t.low not in self._known_caps]
            if sentence_start and len(caps) == 1:
                unknown_caps = []
            k = j
            while (
                k < len(toks)
                and low[k] in self.content_vocab
                and k not in covered
                and k - j < 6
                and _joined(text, toks[k - 1], toks[k])
            ):
                k += 1
            heads = [idx for idx in range(i, k) if low[idx] in self.head_nouns]
            last = heads[-1] if heads else None
            phrase_words = low[i : (last + 1 if last is not None else j)]
            invented = False
            if last is not None and unknown_caps and last >= j:
                invented = True
            elif last is not None and len(caps) >= 2 and not set(phrase_words) <= self.place_words:
                invented = not self.products_covering(" ".join(phrase_words))
            if invented:
                out.append(
                    Mention(
                        toks[i].start,
                        toks[last].end,
                        text[toks[i].start : toks[last].end],
                        frozenset(),
                        unknown=True,
                        how="unknown_brand",
                    )
                )
                covered.update(range(i, last + 1))
                i = last + 1
                continue
            i = max(j, i + 1)
        # a mention followed by the rest of a candidate's full name ("..., Family Size 32 oz",
        # "Snake Plant in Pike Pot, Large") is that product, and covers the whole name
        lowtext = text.lower()
        for k, m in enumerate(out):
            spans: dict[str, tuple[int, int]] = {}
            for pid in m.candidates:
                full = self.index.products[pid].name.lower()
                at = lowtext.find(full, max(0, m.start - len(full)))
                if at != -1 and at <= m.start < at + len(full):
                    spans[pid] = (at, at + len(full))
            if spans:
                longest = max(e - s for s, e in spans.values())
                keep = frozenset(pid for pid, (s, e) in spans.items() if e - s == longest)
                end = max(e for s, e in spans.values())
                out[k] = replace(m, end=max(m.end, end), candidates=keep)
        out.sort(key=lambda m: m.start)
        return out

    def _invented_after(self, text: str, toks: list[Token], low: list[str], i: int, n: int) -> int:
        """After "the <Brand>": how many words outside the catalog read as a product ("chocolate puffs")."""
        det = i > 0 and low[i - 1] in _DETERMINERS
        run: list[str] = []
        j = i + n
        while j < len(toks) and len(run) < 4 and _joined(text, toks[j - 1], toks[j]):
            if low[j] in FUNCTION_WORDS or low[j] in _VERBS:
                break
            run.append(low[j])
            j += 1
        content = [w for w in run if w not in _GENERIC_NOUNS]
        return len(run) if content and (det or any(w in self.head_nouns for w in run)) else 0

    def covers(self, pid: str, phrase: str) -> bool:
        """Whether every content word of ``phrase`` occurs in product ``pid``'s name or brand."""
        ws = [w for w in words(phrase) if w not in FUNCTION_WORDS]
        return bool(ws) and all(w in self.name_words[pid] for w in ws)

    def products_covering(self, phrase: str) -> list[str]:
        return [pid for pid in self.index.products if self.covers(pid, phrase)]


def _sentence_gap(text: str, a: Token, b: Token) -> bool:
    """Whether a sentence (or a list after a colon) starts between two tokens."""
    return text[a.end : b.start].strip()[-1:] in (".", "!", "?", ":")


def _joined(text: str, a: Token, b: Token) -> bool:
    """Whether two neighbouring tokens belong to one phrase (only spaces or a hyphen between)."""
    gap = text[a.end : b.start]
    return gap.strip() in ("", "-", "%", "&", "/", "%-")


@per_index
def lexicon(index: SceneIndex) -> Lexicon:
    """The (cached) Lexicon of ``index``."""
    return Lexicon(index)
