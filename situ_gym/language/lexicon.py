"""Entity linking over one scene: products, categories, places, attribute labels, typos.

A ``SceneLexicon`` is built once per ``SceneIndex`` (``lexicon_for``) and links spans of a
tokenised text to catalog entities:

* products by full name, partial name, brand (plus product words), category noun, attribute
  plus category ("the vanilla yogurt"), singular or plural, with small typos corrected
  against the catalog vocabulary (rapidfuzz);
* fixtures, stores and areas by name, by the label before a colon ("Shelf 3"), by the area's
  own part of its name ("Floor Lamps"), by number or ordinal ("the third shelf", "aisle 3");
* attribute labels ("gluten-free" -> ``diet:gluten-free``).

Everything is keyed on lemmas, so "lamps" finds "Lamp" and "gluten free" finds "gluten-free".
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from functools import cache, lru_cache
from itertools import pairwise

from lemminflect import getAllInflections, getAllLemmas
from rapidfuzz import fuzz, process

from situ_gym.language.patterns import CHOICE_WORDS
from situ_gym.language.tokens import (
    FUNCTION_WORDS,
    SEPARATORS,
    STOPWORDS,
    Token,
    lemma,
    normalize,
    tokenize,
)
from situ_gym.scene.index import SceneIndex, per_index

__all__ = ["SceneLexicon", "Mention", "PlaceMention", "TagMention", "lexicon_for", "lemmas_of"]

_UNITS = frozenset("oz lb lbs fl ct pk pack g kg ml l qt gal count in cm pint".split())
_LONGEST_NAME = 12  # words: no product's name with a brand and a tail said after it is longer
# Words that join the parts of one product name ("Sour Cream and Onion", "Plant in Pike Pot").
_JOINERS = frozenset({"and", "in", "with", "of", "&", "n"})  # "n": "salt n vinegar"
# Words that put a product's maker after its name: "rice crackers from crispwell", "kira throw
# pillow by lintu", "2% milk of Oakridge Organics"
_MAKER_WORDS = frozenset({"from", "by", "of"})
_ORDINALS = {
    "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7,
    "eighth": 8, "ninth": 9, "tenth": 10, "eleventh": 11, "twelfth": 12,
}
_NUMBER_WORDS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
}
# Everyday words that are also catalog words; alone they never make a product mention.
_SUBJECTS = frozenset({"i", "you", "u", "he", "she", "it", "we", "they"})
_WEAK = frozenset(
    "white black red green blue gold silver brown grey clear natural light dark medium large "
    "small compact standard original plain fresh whole mixed can box bag jar tub pouch carton "
    "bottle everyday party holiday sweet soft classic modern new one set pack size family "
    "pet cat dog kids baby mini big extra super value real free".split()
) | frozenset(_NUMBER_WORDS)  # "Three quick questions" names no 3-Seat Sofa


def lemmas_of(text: str) -> tuple[str, ...]:
    """Content lemmas of a name or phrase (numbers kept, stopwords dropped)."""
    return tuple(t.lemma for t in tokenize(normalize(text)) if t.lemma not in STOPWORDS and t.text[0].isalnum())


_DIGIT_WORDS = {str(v): k for k, v in _NUMBER_WORDS.items()}


@cache
def _able_verb(word: str) -> str | None:
    """The verb an "-able"/"-ible" adjective is made from ("dimmable" -> "dim",
    "removable" -> "remove"), when lemminflect knows it as a verb."""
    if not word.endswith(("able", "ible")) or len(word) < 7:
        return None
    stem = word[:-4]
    candidates = [stem, stem + "e"] + ([stem[:-1]] if len(stem) > 2 and stem[-1] == stem[-2] else [])
    return next((c for c in candidates if getAllInflections(c, upos="VERB")), None)


_INTENSIFIERS = frozenset({"extra", "super", "ultra", "very"})
# Label heads a speaker leaves out: "lumbar" (support), "pet-friendly" (fabric), "calcium" (added)
_GENERIC_HEADS = frozenset({"support", "fabric", "add", "include", "design", "feature", "function", "finish", "lighting", "port", "paper", "compatible"})
# Words of a label phrase that the matcher reads (``SceneLexicon._tags`` skips other stopwords).
_KEPT = frozenset({"no", "not", "without"})


@cache
def _finite_verb(word: str) -> bool:
    """"doesn't", "is", "does", "reclines": a word that can only be a verb after a noun."""
    if word.endswith(("n't", "'s", "'ll", "'d")):
        return True
    forms = getAllLemmas(word)
    return bool(forms) and ("AUX" in forms or ("VERB" in forms and "NOUN" not in forms and "ADJ" not in forms))


@cache
def _adjective(word: str) -> str | None:
    """The adjective a comparative or superlative is a form of ("lighter" -> "light"), else None."""
    if not word.endswith(("er", "est")):
        return None
    adj = getAllLemmas(word).get("ADJ", ())
    return adj[0] if adj and adj[0] != word else None


@cache
def _verb_of(word: str) -> str | None:
    """The verb a word is a form of ("purify", "cutting" -> "cut"), when lemminflect knows one."""
    if getAllInflections(word, upos="VERB"):
        return word
    return next(iter(getAllLemmas(word, upos="VERB").get("VERB", ())), None)


def _label_aliases(value: str, key_name: str = "") -> list[tuple[str, ...]]:
    """Ways to say a label value: "fragrance-free" also as "no fragrance" / "without
    fragrance", "non-shedding" as "doesn't shed", "3-ply" as "three-ply", "dimmable" as
    "it dims", "adjustable arm" as "the arm adjusts", "high protein" as "packed with
    protein", "extra thick" as "thick", "saucer included" as "saucer", "pulp: none" as
    "no pulp"."""
    key = lemmas_of(value)
    if not key:
        return []
    out = [key]
    verbs = [_able_verb(w) for w in key]
    if any(verbs):
        said = tuple(v or w for v, w in zip(verbs, key, strict=True))
        out.append(said)
        if len(said) == 2:
            out.append(said[::-1])
    if key[0] == "high" and len(key) == 2:
        out += [("rich", key[1]), ("pack", key[1]), ("full", key[1]), ("lot", key[1]), ("much", key[1]),
                ("plenty", key[1]), (key[1], "rich"), ("more", key[1])]
    if key[-1] == "compatible" and len(key) >= 2:  # "smart bulb compatible" as "works with smart bulbs", "smart bulb ready"
        head = key[:-1]
        out += [("work", *head), *((*head, w) for w in ("ready", "ok", "friendly", "support", "setup"))]
    if key[0] == "removable" and len(key) == 2:  # "removable covers" as "the covers come off", "cover zips off"
        out += [(key[1], verb, "off") for verb in ("come", "zip")]
    if key[0] == "wireless" and len(key) >= 2:  # "wireless charging" as "cordless", "charges without a cable"
        out += [("cordless", *key[1:])] + [(*key[1:], "without", w) for w in ("cable", "cord", "wire")]
    if key[0] == "under" and len(key) == 3:  # "under-bed storage" as "storage under the bed", "storage underneath"
        out += [(key[2], "under", key[1]), (key[2], "under"), (key[2], "underneath"), (key[2], "beneath")]
    if key == ("low", "maintenance"):  # "easy to care for", "easy care", "basically unkillable"
        out += [("easy", "care"), ("easy", "look", "after"), ("unkillable",), ("hard", "kill")]
    if key == ("set", "of", "2") or key == ("set", "2"):  # "they come two to a pack", "a pair"
        out += [("two", "pack"), ("2", "pack"), ("pair",)]
    if key == ("extra", "absorbent"):  # "soaks up more", "absorbs more"
        out += [("soak", "up", "more"), ("absorb", "more"), ("more", "absorbent")]
    if len(key) == 2 and key[0].isdigit() and key[1] == "arm":  # "5-arm" candelabra as "holds five candles"
        out += [(n, "candle") for n in (key[0], _DIGIT_WORDS.get(key[0], key[0]))]
    if key == ("vegetarian",):  # "meat-free", "no meat in it", "meatless"
        out += [("meat", "free"), ("no", "meat"), ("without", "meat"), ("meatless",)]
    if key[0] == "reversible" and len(key) == 2:  # "reversible cushions" as "flip-able cushions", "cushions flip"
        out += [("flip", key[1]), ("flip", "able", key[1]), (key[1], "flip")]
    if key[0] == "no" and key[-1] == "need" and len(key) >= 3:  # "no box spring needed" as "you don't need a box spring",
        thing = key[1:-1]  # "no box spring", "skips the box spring"
        out += [(neg, "need", *thing) for neg in ("don't", "doesn't", "not", "dont")] + [("need", "no", *thing), key[:-1], ("skip", *thing)]
    if key[0] == "age" and len(key) == 2 and key[1].isdigit():  # "ages 6+" as "six plus", "6 years and up"
        said_as = (key[1], _DIGIT_WORDS.get(key[1], key[1]))
        out += [(n, after) for n in said_as for after in ("plus", "year", "yr", "up")]  # "three and up"
    if key[0] == "pre" and len(key) == 2:  # "pre-washed" as "already washed"
        out.append(("already", key[1]))
    if key_name == "size":  # "Family Size 32 oz" as "family size": the words before the figure name it
        figure = next((k for k, w in enumerate(key) if w[0].isdigit()), 0)
        if figure >= 2:
            out.append(key[:figure])
    if key[-1] == "base" and len(key) == 2:  # "plant-based" as "made from plants"
        out.append(("make", key[0]))
    if len(key) == 2:
        # a noun and what is done to it, said as a clause: "air purifying" as "purifies the
        # air", "grease cutting" as "cuts grease", "lumbar support" as "supports your lumbar"
        verb = _verb_of(key[1])
        if verb is not None and not key[0][0].isdigit():
            out.append((verb, key[0]))
        if key[1] == "safe":  # "pet-safe" as "safe for pets"
            out.append(("safe", key[0]))
        if not key[0][0].isdigit():
            out.append(key[::-1])  # predicated: "the shelves are adjustable", "the legs are carved"
    if len(key) >= 2 and key[-1] in _GENERIC_HEADS:
        out.append(key[:-1])  # the head said with it goes without saying: "lumbar", "calcium"
    if key[0] in _INTENSIFIERS and len(key) >= 2:
        out.append(key[1:])
    if key[-1] == "include" and len(key) >= 2:
        out.append(key[:-1])
    if key == ("none",) and key_name:
        out += [("no", *lemmas_of(key_name)), ("without", *lemmas_of(key_name))]
    if len(key) >= 2 and key[-1] == "free":
        stem = key[:-1]
        out += [("no", *stem), ("without", *stem), ("zero", *stem)]
    if key[0] == "non" and len(key) >= 2:
        out += [("doesn't", *key[1:]), ("not", *key[1:]), ("won't", *key[1:]), ("don't", *key[1:]),
                ("doesn't", lemma(key[1].removesuffix("ding").removesuffix("ing")))]
    if any(w in _DIGIT_WORDS for w in key):
        out.append(tuple(_DIGIT_WORDS.get(w, w) for w in key))
    if key[0] == "zero" and len(key) >= 2:  # "zero sugar" as "0 sugar", "no sugar", "sugar-free"
        out += [("0", *key[1:]), ("no", *key[1:]), (*key[1:], "free")]
    if len(key) == 2 and key[1] == "power":  # "battery powered" as "runs on battery"
        out.append(key[:1])
    if key[0] == "self" and len(key) == 2:  # "self-watering" as "waters itself"
        out.append((key[1], "itself"))
    if key == ("unscented",):  # "without smell" ("no fragrance" is fragrance-free)
        out += [(w, s) for w in ("no", "without") for s in ("smell", "perfume")]
    if key == ("decaf",):  # a decaf is what "no caffeine" asks for
        out += [("decaffeinate",), ("no", "caffeine"), ("without", "caffeine"), ("caffeine", "free"), ("zero", "caffeine")]
    if key[0] == "multi" and len(key) == 2:  # "multi-tier" as "several tiers", "a few tiers"
        out += [(q, key[1]) for q in ("several", "many", "few", "multiple")]
    if key[0] == "interior" and len(key) == 2:  # "interior light" as "a light inside" ("inside Light Logic" is a shop)
        out.append((key[1], "inside"))
    if key[0] == "low" and len(key) == 2:  # "low sodium" as "reduced sodium", "less sodium"
        out += [("reduce", key[1]), ("less", key[1]), ("lower", key[1])]
    if key[0] == "seat" and len(key) == 2 and key[1].isdigit():  # "seats 6" as "fits 6", "6 people"
        out += [(verb, n) for verb in ("fit", "sit") for n in (key[1], _DIGIT_WORDS.get(key[1], key[1]))]
    if len(key) == 3 and key[:2] == ("under", "bed"):  # "storage below"
        out.append((key[2], "below"))
    if key == ("dental",):  # dog chews that "help clean the teeth"
        out += [("clean", "teeth"), ("clean", "tooth"), ("teeth", "clean")]
    if key == ("senior",) and key_name == "life stage":  # "made for old dogs", "older cats"
        out += [("old", pet) for pet in ("dog", "cat", "pet")]
    if key == ("air", "purifying"):  # "cleans the air"
        out += [("clean", "air"), ("air", "clean")]
    if key == ("sensitive", "stomach"):  # "gentle on tummies", "sensitive tummy"
        out += [("sensitive", "tummy"), ("gentle", "tummy"), ("gentle", "stomach")]
    if key == ("tufted",):  # "tufting"
        out += [("tufting",), ("tuft",)]
    if key_name == "flavour" and len(key) == 1 and key[0].isalpha():  # "minty", "lemony", "nutty"
        out += [(key[0] + "y",), (key[0] + "ey",), (key[0] + key[0][-1] + "y",)]
    out += [(short,) for short in _SHORT_FORMS.get(key, ())]
    return out


_SHOP_NOUNS = frozenset({"collection", "store", "shop", "gallery", "emporium", "outlet", "boutique", "market"})
_PRICE_FIGURE = re.compile(r"\d{1,5}\.\d{2}")  # a figure with cents is a price, never part of a name (sizes: "1.5 qt")
# Words next to a place name that make a lower-case product word ("plant", "desks") a place.
_PLACE_VERBS = frozenset({"into", "enter", "leave", "exit", "inside"})
_WALKED_TO = frozenset({"to", "\u2192", "->", "toward", "towards", "past", "pass", "reach"})
_PLACE_NOUNS = frozenset({"doorway", "door", "entrance", "via", "through", "storefront", "store", "shop"})

# How notes and chat abbreviate label values.
_SHORT_FORMS = {("vegetarian",): ("veg", "veggie"), ("organic",): ("org",), ("gluten", "free"): ("gf",),
                ("scandinavian",): ("scandi", "nordic"), ("large",): ("big", "bigger", "biggest", "largest"),
                ("compact",): ("small", "smaller", "smallest", "little"), ("creamy",): ("smooth",), ("crunchy",): ("chunky",)}
_REWORDED_SPAN = 5  # at most this many tokens between the first and the last word of a reworded label
_STEM_ENDINGS = ("ability", "ible", "able", "ment", "ing", "es", "ed", "s", "er", "e")


# Everyday words for a label's words, read as them when a label is said in other words
# ("cleans the air" is air purifying, "needs little care" low maintenance, "cable mgmt",
# "no scent" fragrance-free, "pet-proof fabric" pet-friendly)
_LABEL_SYNONYMS = {"clean": "purify", "care": "maintenance", "little": "low", "scent": "fragrance",
                   "mgmt": "management", "incl": "include", "proof": "friendly", "flip": "reverse", "adj": "adjustable"}


def _label_stem(word: str) -> str:
    """The stem a label word is matched by, its everyday synonym read as the label's word."""
    return _stem(_LABEL_SYNONYMS.get(word.lower(), word))


def _stem(word: str) -> str:
    """A rough stem for matching a label's words in another form ("removable" / "remove" ->
    "remov", "purifying" / "purifies" -> "purifi", "cutting" / "cuts" -> "cut")."""
    w = word.lower()
    for end in _STEM_ENDINGS:
        if w.endswith(end) and len(w) - len(end) >= 3:
            w = w[: -len(end)]
            break
    if w.endswith("y"):
        w = w[:-1] + "i"
    if len(w) >= 4 and w[-1] == w[-2] and w[-1] not in "aeiou":
        w = w[:-1]
    return w


_SET_AGAINST_NEAR = re.compile(r"\b(?:vs|versus)\b|/|\bor\b")
_SIZE_WORDS = frozenset(_SHORT_FORMS[("large",)] + _SHORT_FORMS[("compact",)])  # "big", "little", ...
_SIZE_WORDS_BEFORE = frozenset({"one", "ones", "size", "sized", "enough", "and", "n", "with", "w", "so", "but", "too", "tho", "though"})
_SHORT_WORDS = frozenset(w for forms in _SHORT_FORMS.values() for w in forms)


@dataclass(frozen=True)
class Mention:
    """A span that refers to catalog products.

    ``candidates`` are the products it may denote, best first. ``kind`` is "product" when
    the span carries a brand or words of a product's own name, "category" when it only
    names a kind of product (possibly narrowed by attributes: "the vanilla yogurt"), and
    "unknown" when it reads like a product the catalog lacks.
    """

    start: int  # token indices [start, end)
    end: int
    char_start: int
    char_end: int
    phrase: str
    candidates: tuple[str, ...]
    kind: str  # "product" | "category" | "unknown"
    category: str | None = None

    @property
    def unique(self) -> str | None:
        return self.candidates[0] if len(self.candidates) == 1 else None


@dataclass(frozen=True)
class PlaceMention:
    start: int
    end: int
    char_start: int
    char_end: int
    phrase: str
    entity_id: str


@dataclass(frozen=True)
class TagMention:
    start: int
    end: int
    phrase: str
    tags: frozenset[str]  # "key:value" labels the phrase names
    in_name: bool = False  # part of a product's name ("Vanilla" in "... Vanilla Greek Yogurt")


class SceneLexicon:
    """The catalog and places of one scene as lemma tables (build through ``lexicon_for``)."""

    def __init__(self, index: SceneIndex):
        self.index = index
        products = index.products
        self.name_words: dict[str, frozenset[str]] = {}
        # what follows the comma in "Vale Shelving Unit, Black Powder-Coated Steel"
        self._name_tail = {pid: lemmas_of(p.name.rpartition(", ")[2]) if ", " in p.name else () for pid, p in products.items()}
        self.brand_words: dict[str, frozenset[str]] = {}
        self.tag_words: dict[str, frozenset[str]] = {}  # the words of its label values
        self.all_words: dict[str, frozenset[str]] = {}  # everything true of the product
        self.category_of = {pid: p.category for pid, p in products.items()}
        self.all_products = frozenset(products)
        self.categories: dict[tuple[str, ...], str] = {}
        df: dict[str, int] = {}
        self._name_pairs: set[tuple[str, str]] = set()  # words next to each other in a product's name
        self.brand_vocab: set[str] = set()
        self.kind_words: dict[str, frozenset[str]] = {}
        self.model_words: dict[str, frozenset[str]] = {}
        for pid, p in products.items():
            base, sep, size = p.name.rpartition(", ")
            size_words = lemmas_of(size) if sep and any(c.isdigit() for c in size) else ()
            name = lemmas_of(base if size_words else p.name)
            brand = lemmas_of(p.brand)
            cat = lemmas_of(p.category)
            self.categories[cat] = p.category
            tag_words = {w for t in p.tags for w in lemmas_of(t.partition(":")[2])}
            attr_words: set[str] = set()
            for v in p.attributes.values():
                for s in v if isinstance(v, list) else [v]:
                    attr_words.update(lemmas_of(str(s)))
            # a number in a name is said in words too: "the fjord three seat sofa" (3-Seat Sofa)
            spelled = {_DIGIT_WORDS[w] for w in name if w in _DIGIT_WORDS and w != "1"}
            self.name_words[pid] = frozenset(name) | frozenset(size_words) | frozenset(spelled)
            self._name_pairs.update(pairwise(name))
            self.brand_words[pid] = frozenset(brand)
            # the words of its name after its brand: "quill" is the model of "Quill and Co Quill
            # Office Chair" too, not only its maker
            self.model_words[pid] = frozenset(name[len(brand):] if tuple(name[: len(brand)]) == brand else name)
            self.brand_vocab.update(brand)
            self.tag_words[pid] = frozenset(tag_words)
            self.kind_words[pid] = frozenset(cat)
            # its labels' short forms are true of it too: "campo verde gf penne"
            short = {s for t in p.tags for s in _SHORT_FORMS.get(lemmas_of(t.partition(":")[2]), ())}
            self.all_words[pid] = (
                self.name_words[pid] | frozenset(cat) | frozenset(tag_words) | frozenset(attr_words) | frozenset(short)
            )
            for w in set(name) | set(cat):
                df[w] = df.get(w, 0) + 1
        n = len(products)
        self.idf = {w: math.log((n + 1) / (c + 0.5)) for w, c in df.items()}
        self.label_vocab = frozenset().union(*self.tag_words.values())
        self.category_words = {w for key in self.categories for w in key}
        carriers: dict[str, set[str]] = {}
        for pid, ws in self.tag_words.items():
            for w in ws:
                carriers.setdefault(w, set()).add(pid)
        self.tag_index = {w: frozenset(pids) for w, pids in carriers.items()}  # label word -> products carrying it
        self.name_index: dict[str, list[str]] = {}  # name word -> products whose name has it
        for pid, ws in self.name_words.items():
            for w in ws | self.brand_words[pid]:
                self.name_index.setdefault(w, []).append(pid)
        self.category_heads = {key[-1] for key in self.categories}
        self.by_category: dict[str, list[str]] = {}
        for pid, c in self.category_of.items():
            self.by_category.setdefault(c, []).append(pid)
        # what only this product's name says among its kind, and its brand: "noor" among the
        # writing desks (not "writing", which they all share, nor a kind or label word)
        self.own_words: dict[str, frozenset[str]] = {}
        for pid, ws in self.name_words.items():
            kin = [self.name_words[q] for q in self.by_category[self.category_of[pid]] if q != pid]
            self.own_words[pid] = self.brand_words[pid] | (ws - self.kind_words[pid] - self.tag_words[pid]).difference(*kin)
        self.brands: dict[tuple[str, ...], list[str]] = {}
        for pid, p in products.items():
            self.brands.setdefault(lemmas_of(p.brand), []).append(pid)
        self.brand_vocab = {w for key in self.brands for w in key}
        # the brands by their first word, the longest first ("quill and co" before "quill")
        self._brands_by_first: dict[str, list[tuple[str, ...]]] = {}
        for key in sorted((key for key in self.brands if key), key=len, reverse=True):
            self._brands_by_first.setdefault(key[0], []).append(key)
        # Words that can make up a reference to a product (attribute prose is left out: it
        # holds everyday words such as "could" or "fits").
        self.product_vocab = (
            set().union(*self.name_words.values()) | self.brand_vocab | self.category_words
        )
        # Head nouns: the category's last word and the last word of each name's core.
        self.heads = set(self.category_heads)
        for pid in products:
            core = [w for w in lemmas_of(products[pid].name.rpartition(", ")[0] or products[pid].name)
                    if not w[0].isdigit() and w not in _UNITS and w not in self.brand_words[pid]]
            if core:
                self.heads.add(core[-1])
        # Attribute labels, keyed by the lemmas of their value ("gluten free" -> diet:gluten-free).
        self.tag_phrases: dict[tuple[str, ...], set[str]] = {}
        for p in products.values():
            for tag in p.tags:
                name, _, value = tag.partition(":")
                for alias in _label_aliases(value, name):
                    # keyed as the matcher reads text: "packed with protein" is (pack, protein)
                    key = tuple(w for w in alias if w not in STOPWORDS or w in _KEPT)
                    if key:
                        self.tag_phrases.setdefault(key, set()).add(tag)
        # A label of several words said by the one word of it that is no everyday English word
        # and no other label has: "usb" is the USB port, "lumbar" lumbar support, "nailhead"
        # nailhead trim (not of a label that negates: "caffeine" is no caffeine-free; nor a
        # container, which says how it is sold: "a big 10 oz clamshell")
        label_of_word: dict[str, set[str]] = {}
        for tag in {t for p in products.values() for t in p.tags}:
            name, _, value = tag.partition(":")
            for w in lemmas_of(value):
                label_of_word.setdefault(w, set()).add(tag)
        for w, found in label_of_word.items():
            tag = next(iter(found))
            words = lemmas_of(tag.partition(":")[2])
            if (len(found) == 1 and len(words) >= 2 and not tag.startswith("packaging:") and len(w) >= 3 and w.isalpha() and not getAllLemmas(w)
                    and w not in _DIGIT_WORDS.values() and not {"free", "low", "no", "non", "zero", "pre"} & set(words)
                    and (w,) not in self.tag_phrases):
                self.tag_phrases[(w,)] = {tag}
        # Labels of two or more words by their stems, in any order and word form: "shelves you
        # can adjust" is "adjustable shelves", "purifies the air" "air purifying".
        self.tag_stems: dict[frozenset[str], set[str]] = {}
        for key, found in self.tag_phrases.items():
            stems = frozenset(_label_stem(w) for w in key)
            if len(key) >= 2 and len(stems) == len(key):
                self.tag_stems.setdefault(stems, set()).update(found)
        self._stem_first = {min(stems): [] for stems in self.tag_stems}  # each label by one of its stems
        for stems in self.tag_stems:
            self._stem_first[min(stems)].append(stems)
        self.label_words = {w for key in self.tag_phrases for w in key}
        # the words of each label key: "color" -> mustard, oak, white, ...
        self.label_words_by_key: dict[str, frozenset[str]] = {}
        for key, found in self.tag_phrases.items():
            for name in {tag.partition(":")[0] for tag in found}:
                self.label_words_by_key[name] = self.label_words_by_key.get(name, frozenset()) | set(key)
        self.tag_first: dict[str, int] = {}
        for key in self.tag_phrases:
            self.tag_first[key[0]] = max(self.tag_first.get(key[0], 0), len(key))
        self.product_vocab |= {w for key in self.tag_phrases for w in key}
        self.places: dict[tuple[str, ...], str] = {}
        self._add_places()
        self.place_first: dict[str, int] = {}
        for key in self.places:
            self.place_first[key[0]] = max(self.place_first.get(key[0], 0), len(key))
        self.place_vocab = {w for key in self.places for w in key}
        self.vocab = sorted(self.product_vocab | self.place_vocab)
        self.vocab_set = frozenset(self.vocab)
        # Typos are matched on written words ("Gamming" -> "gaming") and read as their lemma ("game").
        surface: dict[str, str] = {}
        names = [p.name for p in products.values()] + [p.brand for p in products.values()]
        names += [p.category for p in products.values()] + [index.name(e) for e in index.nav_targets]
        names += [t.partition(":")[2] for p in products.values() for t in p.tags]
        for name in names:
            for tok in tokenize(normalize(name)):
                if tok.low.isalpha() and len(tok.low) >= 4:
                    surface.setdefault(tok.low, tok.lemma)
        self._surface = surface
        self._fuzzy_pool = sorted(surface)

    # ------------------------------------------------------------------ places
    def _add_places(self) -> None:
        index = self.index
        seen: dict[tuple[str, ...], str] = {}

        def add(alias: str | tuple[str, ...], eid: str) -> None:
            key = alias if isinstance(alias, tuple) else lemmas_of(alias)
            if not key:
                return
            # an alias two places share names neither of them
            seen[key] = eid if seen.get(key, eid) == eid else ""

        for eid in index.nav_targets:
            name = index.name(eid)
            add(name, eid)
            words = lemmas_of(name)
            if len(words) >= 3 and words[-1] in _SHOP_NOUNS:
                add(words[:-1], eid)  # "Victorian Curio" for the Victorian Curio Collection
            head, colon, _ = name.partition(":")
            if colon:
                add(head, eid)
            _, dash, tail = name.partition(" - ")
            if dash:
                add(tail, eid)
                add(tail + " area", eid)
                add(tail + " section", eid)
            if name.lower().startswith("the "):
                add(name[4:], eid)
            m = re.fullmatch(r"(.*?)\s*(\d+)", head.strip())
            if m:  # "Shelf 3", "Upright Freezer 2": ordinals, numbers, the kind's last word
                kind, num = m.group(1), int(m.group(2))
                kind_l = lemmas_of(kind)
                words = [k for k, v in _ORDINALS.items() if v == num]
                for w in words:
                    add((w, *kind_l), eid)
                    if len(kind_l) > 1:
                        add((w, kind_l[-1]), eid)
                add((*kind_l, "number", str(num)), eid)
                add((kind_l[-1], str(num)), eid)
                # clipped notes: "oc3", "uf 2", "ps1", "s7" (the kind's initials and the number)
                initials = "".join(w[0] for w in kind_l)
                add((f"{initials}{num}",), eid)
                add((initials, str(num)), eid)
                spelled = [k for k, v in _NUMBER_WORDS.items() if v == num]
                for w in spelled:  # said aloud: "open cooler four", "shelf ten"
                    add((*kind_l, w), eid)
                    add((kind_l[-1], w), eid)
                if kind_l == ("shelf",):
                    add(("aisle", str(num)), eid)
                    for w in words:
                        add((w, "aisle"), eid)
        self.places = {k: v for k, v in seen.items() if v}

    # ------------------------------------------------------------------ typos
    @lru_cache(maxsize=16_384)  # noqa: B019 - one lexicon per scene, kept for the process
    def correct(self, word: str) -> str:
        """``word`` or the catalog word it is a small typo of ("vanila" -> "vanilla")."""
        if len(word) < 5 or not word.isalpha() or word in self.product_vocab or word in self.place_vocab:
            return word
        if word in FUNCTION_WORDS:
            return word
        # A real English word is a spelling variant only when very close ("yoghurt").
        cutoff = 90 if getAllLemmas(word) else 84
        if cutoff == 90 and len(word) < 6:
            return word
        hit = process.extractOne(word, self._fuzzy_pool, scorer=fuzz.ratio, score_cutoff=cutoff)
        return self._surface[hit[0]] if hit else word

    def _read(self, t: Token) -> str:
        """A token's lemma, or the catalog word it misspells ("alba's" is the Alba's)."""
        if not t.text[0].isalpha() or t.lemma in self.product_vocab or t.lemma in self.place_vocab:
            return t.lemma
        base = t.low[:-2]
        if t.low.endswith(("'s", "\u2019s")) and base in self.place_vocab:
            return base  # "oc3's right behind u", "The Plant's door"
        if t.low.endswith(("'s", "\u2019s")) and base in self.name_index and base not in self.category_words and (
            base not in self.brand_vocab and not getAllLemmas(base)
        ):
            return base  # a model name, not a kind ("the dog's teeth") or a brand's own ("BrightHome's")
        fixed = self.correct(t.low)
        return t.lemma if fixed == t.low else fixed

    # ------------------------------------------------------------------ linking
    def link(self, toks: tuple[Token, ...], text: str | None = None) -> tuple[list[Mention], list[PlaceMention], list[TagMention]]:
        """Product, place and label mentions of ``toks``. Given the ``text`` they come from, no
        mention crosses a line break: the lines of a list are items, and the last word of one
        ("..., vegan, penne") is no part of a name that starts the next ("Penne Rigate")."""
        if text is None or len(toks) < 2:
            return self._link(toks)
        mentions: list[Mention] = []
        places: list[PlaceMention] = []
        tags: list[TagMention] = []
        start = 0
        for i in range(1, len(toks) + 1):
            if i < len(toks) and "\n" not in text[toks[i - 1].end : toks[i].start]:
                continue
            m, p, t = self._link(toks[start:i], text)
            mentions += [replace(x, start=x.start + start, end=x.end + start) for x in m]
            places += [replace(x, start=x.start + start, end=x.end + start) for x in p]
            tags += [replace(x, start=x.start + start, end=x.end + start) for x in t]
            start = i
        return mentions, places, tags

    def _link(self, toks: tuple[Token, ...], text: str | None = None) -> tuple[list[Mention], list[PlaceMention], list[TagMention]]:
        lem = [self._read(t) for t in toks]
        for i, t in enumerate(toks):  # "harbor catch's plain cod": a whole brand's 's opens its product's name
            base = t.low[:-2]
            if t.low.endswith(("'s", "\u2019s")) and base in self.brand_vocab:
                read = [*lem[:i], base]
                if any((b := self._brand_at(read, start)) is not None and b[1] == i + 1 for start in range(max(0, i - 3), i + 1)):
                    lem[i] = base
        places = self._places(toks, lem)
        taken = {i for p in places for i in range(p.start, p.end)}
        mentions = self._products(toks, lem, taken, text)
        if text is not None:
            mentions = self._shared_kind(toks, lem, mentions, taken, text)
        mentions = self._narrow_by_neighbours(mentions)
        found_tags = self._tags(toks, lem, taken)
        mentions = [m for m in mentions if not self._label_not_name(m, toks, found_tags)]
        mentions = [self._kind_in_general(m, toks) for m in mentions]
        named = {i for m in mentions if m.kind != "category" for i in range(m.start, m.end)}
        tags = [
            t if not named.intersection(range(t.start, t.end)) else TagMention(t.start, t.end, t.phrase, t.tags, True)
            for t in found_tags
        ]
        return mentions, places, tags

    def _shared_kind(self, toks, lem, mentions: list[Mention], taken: set[int], text: str) -> list[Mention]:
        """Model names listed before the kind they share name one product each: "calla + ember
        clocks", "the kira, mira + oslo pillows", "ivo, greta, calla + ember floor lamps"."""
        covered = taken | {i for m in mentions for i in range(m.start, m.end)}
        found: list[Mention] = []
        for m in mentions:
            if m.kind != "product" or len(m.candidates) != 1:
                continue
            kind_at = next((k for k in range(m.start + 1, m.end) if lem[k] in self.kind_words[m.candidates[0]]), None)
            if kind_at is None:
                continue
            k = m.start
            while k >= 1:
                if toks[k - 1].text == "," or lem[k - 1] in ("and", "or", "n", "&"):
                    w = k - 2
                elif re.search(r"[+&/]", text[toks[k - 1].end : toks[k].start]):
                    w = k - 1
                else:
                    break
                if w < 0 or w in covered or lem[w] not in self.name_index or lem[w] in self.category_words or lem[w] in FUNCTION_WORDS:
                    break
                listed = (toks[w], *toks[kind_at : m.end])
                r = self._resolve(listed, [lem[w], *lem[kind_at : m.end]], 0, len(listed))
                if r is None or len(r.candidates) != 1:
                    break
                found.append(Mention(w, w + 1, toks[w].start, toks[w].end, toks[w].text, r.candidates, "product"))
                covered.add(w)
                k = w
        return sorted([*mentions, *found], key=lambda m: m.start) if found else mentions

    def names_in_view(self, toks: tuple[Token, ...], taken: set[int], in_view: frozenset[str]) -> list[Mention]:
        """"greek $5.99 vs coconut $5.29" in front of two yogurts: a word of exactly one
        product's name among those in view (and of no other's labels) names that product.
        A word that is also one of its labels ("calcium", "honeycrisp") names it only in a
        nominal frame ("the calcium one", "honeycrisp's", "-> baked"), so "I wanted vanilla"
        stays a wish. In such a frame a word only one product of the whole store is named by
        names it wherever the shopper stands ("gala 4.69 vs honeycrisp 4.49 -> honeycrisp")."""
        out = []
        for i, tok in enumerate(toks):
            w = self._read(tok)
            possessive = tok.low.endswith(("'s", "\u2019s")) and tok.low[:-2] in self.product_vocab and (
                # "how old's your cat" is "old is"; but "the sable's out" names the Sable in view
                self._sole_owner(tok.low[:-2], in_view) is not None or not {"ADJ", "ADV"} & set(getAllLemmas(tok.low[:-2]))
            )
            if possessive:  # "kestrel's out", "isla's": the name with its "'s"
                w = tok.low[:-2]
            if i in taken or not tok.text[:1].isalpha() or w in STOPWORDS or w in FUNCTION_WORDS or w in _WEAK:
                continue
            if w in self.category_words or w in _UNITS or w in _SPATIAL:
                continue
            before = toks[i - 1].low if i else ""
            if before in _SUBJECTS and not (tok.text[:1].isupper() and i > 1):
                continue  # a verb: "while he chews" names no Dental Chew (a name: "I advise you Vale")
            nxt = toks[i + 1] if i + 1 < len(toks) else None
            frame = possessive or (nxt is not None and nxt.low in ("one", "ones", "'s")) or before in CHOICE_WORDS or (
                # a bare word that opens the text or a list item on its own: "decaf, 100%",
                # "quill, easy", "swiss = sliced, 10.89 / cheddar = shredded, 4.29", or with its
                # price, set against another: "gala 4.69 vs honeycrisp 4.49"
                (i == 0 or before in ("/", "|", ";", "vs", "versus")) and nxt is not None
                and (nxt.text in (",", ":", "=", "\u2014", "-", "!") or (
                    _PRICE_FIGURE.fullmatch(nxt.text.lstrip("$")) is not None and _SET_AGAINST_NEAR.search(" ".join(t.low for t in toks[i : i + 5]))))
            )
            pid = self._sole_owner(w, in_view) or (self._sole_owner(w, self.all_products) if frame else None)
            if pid is None:
                continue
            # (a mark the tokens leave out between them, "vale (compact)", parts the words)
            joined = nxt is not None and nxt.start - tok.end <= 1
            after = self._read(nxt) if joined and nxt.text[:1].isalpha() and nxt.low not in ("um", "uh", "er", "erm") else ""
            if after == "of":
                continue  # "the top of the shelf", "the end of the aisle": a part of something
            if after and not frame and after not in STOPWORDS and after not in FUNCTION_WORDS and (
                after not in self.name_words[pid]
            ) and not _finite_verb(nxt.low):
                continue  # it modifies another noun: "the oat milk" is no oat cereal ("the delph doesn't" is the delph)
            phrase = None
            if w in self.tag_words[pid] and not (frame or (before in ("the", "that", "this") and after not in self.product_vocab)):
                phrase = self._label_phrase_in_frame(toks, i, pid)
                if phrase is None:
                    continue  # a label word names the product only in a nominal frame
                if any(m.end > phrase[0] for m in out if m.candidates == (pid,)):
                    continue  # (read with the word before it)
            if (w in self.tag_words[pid] and i == 0 and i + 2 < len(toks) and toks[i + 1].text == ","
                    and self._read(toks[i + 2]) in self.tag_words[pid]):
                continue  # the first of a list of its labels: "velvet, pet-friendly fabric, removable covers"
            a, b = phrase or (i, i + 1)
            out.append(Mention(a, b, toks[a].start, toks[b - 1].end, " ".join(t.text for t in toks[a:b]), (pid,), "product",
                               self.category_of[pid]))
        return out

    def _label_phrase_in_frame(self, toks: tuple[Token, ...], i: int, pid: str) -> tuple[int, int] | None:
        """The span of the words of ``pid``'s name around ``toks[i]`` when they stand as a noun
        in a nominal frame: "I'd say the whole grain", "whole grain one's 8.89", "gluten free is
        4.79"."""
        own = self.name_words[pid] | self.tag_words[pid]
        a, b = i, i + 1
        while a > 0 and self._read(toks[a - 1]) in own and toks[a - 1].low not in STOPWORDS:
            a -= 1
        while b < len(toks) and self._read(toks[b]) in own and toks[b].low not in STOPWORDS:
            b += 1
        if b - a < 2:
            return None  # (one word is read above, with its own frame)
        before = toks[a - 1].low if a else ""
        after = toks[b].low if b < len(toks) else ""
        priced = b + 1 < len(toks) and _PRICE_FIGURE.fullmatch(toks[b + 1].text.lstrip("$")) is not None
        ones = after in ("one", "ones", "one's")
        ends = ones or not after or not after[:1].isalpha()
        framed = ones or ((before in ("the", "that", "this") or before in CHOICE_WORDS) and ends) or (after in ("is", "=", "'s") and priced)
        return (a, b) if framed else None

    def _sole_owner(self, word: str, scope: frozenset[str]) -> str | None:
        """The one product in ``scope`` whose name has ``word``, when no other there carries it
        as a label."""
        owners = [p for p in self.name_index.get(word, ()) if p in scope]
        if len(owners) != 1 or (self.tag_index.get(word, frozenset()) & scope) - {owners[0]}:
            return None
        return owners[0]

    def _kind_in_general(self, m: Mention, toks) -> Mention:
        """"Where do I find candelabras?", "candelabras = victorian curio": one word of a name in
        the plural, with no determiner, speaks of the kind, even when one product has it."""
        if m.kind != "product" or m.end - m.start != 1:
            return m
        tok = toks[m.start]
        before = toks[m.start - 1].low if m.start else ""
        if tok.low == tok.lemma or not tok.low.endswith("s") or before in _DETERMINERS or before in ("these", "those"):
            return m
        return replace(m, kind="category", category=self.category_of[m.candidates[0]])

    def _label_not_name(self, m: Mention, toks, tags: list[TagMention]) -> bool:
        """"Anything but sour cream onion", "no turkey": words that are both a label and part of
        a product's name name the label when a wish or refusal governs them with no
        determiner ("the sour cream and onion ones" stays a product)."""
        # a stance word that opened the mention ("No Pulp" is a name too) governs the rest: "no
        # chicken" (but "the No Salt Added peanut butter" is a name)
        start = m.start
        if not (m.start and toks[m.start - 1].low in _DETERMINERS):
            while start < m.end - 1 and toks[start].low in _STANCE_WORDS:
                start += 1
        if m.kind != "product" or not any(t.start <= start and m.end <= t.end for t in tags):
            return False
        before = [t.low for t in toks[max(0, start - 3) : start]]
        if before and before[-1] in _DETERMINERS:
            return False
        return any(w in _STANCE_WORDS for w in before) or " ".join(before[-2:]) == "anything but"

    def _places(self, toks, lem) -> list[PlaceMention]:
        out, i = [], 0
        while i < len(lem):
            longest = self.place_first.get(lem[i])
            hit = None
            if longest:
                # the window may hold stopwords the key leaves out ("Night and Accent Lights")
                for n in range(min(longest + 3, len(lem) - i), 0, -1):
                    # ("leather n ink": a clipped "and" inside a name, never at its end)
                    key = tuple(w for w in lem[i : i + n] if w not in STOPWORDS and w not in SEPARATORS and w != "n")
                    last = lem[i + n - 1]
                    if key in self.places and last not in STOPWORDS and last not in SEPARATORS and last != "n":
                        hit = (n, self.places[key])
                        break
            if hit and self._place_conflicts(toks, lem, i, hit[0]):
                hit = None
            if hit:
                n, eid = hit
                out.append(PlaceMention(i, i + n, toks[i].start, toks[i + n - 1].end,
                                        " ".join(t.text for t in toks[i : i + n]), eid))
                i += n
            else:
                i += 1
        return out

    def _narrow_by_neighbours(self, mentions: list[Mention]) -> list[Mention]:
        """"the Corsa and the Elio exercise bikes", "For a bookcase, the Hollis": an ambiguous
        model name takes the kind of product named next to it."""
        out = []
        for m in mentions:
            cats = {self.category_of[p] for p in m.candidates}
            if len(m.candidates) > 1 and len(cats) > 1:
                near = [o for o in mentions if o is not m and abs(o.start - m.start) <= 12 and o.category]
                for o in near:
                    keep = tuple(p for p in m.candidates if self.category_of[p] == o.category)
                    if keep:
                        m = Mention(m.start, m.end, m.char_start, m.char_end, m.phrase, keep, m.kind, o.category if len(keep) else None)
                        break
            out.append(m)
        # "which Halden: the loveseat, the table lamp or the watering can?": a kind named next to
        # a model name of several kinds is that model's product of the kind
        models = [m for m in mentions if m.kind == "product" and len({self.category_of[p] for p in m.candidates}) > 1]
        for k, m in enumerate(out):
            if m.kind != "category" or not m.category:
                continue
            for o in models:
                own = [p for p in o.candidates if self.category_of[p] == m.category]
                if abs(o.start - m.start) <= 20 and len(own) == 1:
                    out[k] = replace(m, candidates=(own[0],), kind="product")
                    break
        return out

    def _place_conflicts(self, toks, lem, i: int, n: int) -> bool:
        """A place alias made of product words ("Desks", "Plant") names the place only when
        written as a name (capitalised) and not inside a product's name ("Snake Plant")."""
        key = [w for w in lem[i : i + n] if w not in STOPWORDS]
        if not set(key) <= self.product_vocab:
            return False
        if len(key) >= 2 and not all(pair in self._name_pairs for pair in pairwise(key)):
            return False  # "victorian curio": words of names, but in no name together
        if not toks[i].text[0].isupper() and toks[i].low not in ("the",):
            # lower case ("into the plant via doorway") only where a place is meant
            at = i - 2 if i >= 2 and lem[i - 1] == "the" else i - 1
            prev = lem[at] if at >= 0 else ""
            after = lem[i + n] if i + n < len(lem) else ""
            # (a walk's end too: "across the hall to the plant", "-> the plant"; not "next to the
            # plant", nor plants in the plural)
            walked = prev in _WALKED_TO and at == i - 2 and toks[i + n - 1].low == lem[i + n - 1] and (
                at < 1 or lem[at - 1] not in ("next", "close", "near", "add", "added"))
            arrowed = at == i - 1 and prev in ("->", "\u2192")  # "turn around + a few steps -> office chairs"
            return not (prev in _PLACE_VERBS or walked or arrowed or after in _PLACE_NOUNS)
        before = lem[i - 1] if i > 0 else ""
        after = lem[i + n] if i + n < len(lem) else ""
        return (before in self.product_vocab and before not in STOPWORDS) or (
            after in self.heads and after not in ("area", "section")
        )

    def _tags(self, toks, lem, taken) -> list[TagMention]:
        """Label phrases, matched on content lemmas ("ready to eat" = ready, eat); a comparative
        read as its adjective where the noun reading names no label ("a lighter roast")."""
        idx = [k for k, w in enumerate(lem) if w not in STOPWORDS or w in _KEPT]
        words = [lem[k] for k in idx]
        out, i = [], 0
        while i < len(words):
            hit = 0
            for first in (words[i], _adjective(toks[idx[i]].low)):
                longest = self.tag_first.get(first) if first and idx[i] not in taken else None
                for n in range(min(longest or 0, len(words) - i), 0, -1):
                    key = (first, *words[i + 1 : i + n])
                    if key in self.tag_phrases:
                        hit, words[i] = n, first
                        break
                if hit:
                    break
            if hit:
                key = tuple(words[i : i + hit])
                end = idx[i + hit - 1] + 1
                nxt = toks[end].low if end < len(toks) else ""
                # "big" is the large size of the thing it is said of: "it's a big one", "big + saucer";
                # "big family dinners", "big stuff" are about something else
                # (said before a kind of product it is its size: "a big chair", "the big set")
                if not (toks[idx[i]].low in _SIZE_WORDS and nxt[:1].isalpha() and nxt not in _SIZE_WORDS_BEFORE
                        and lemma(nxt) not in self.heads):
                    out.append(TagMention(idx[i], end, " ".join(key), frozenset(self.tag_phrases[key])))
                i += hit
            else:
                i += 1
        return out + self._reworded_tags(toks, idx, out, taken)

    def _reworded_tags(self, toks, idx, found: list[TagMention], taken) -> list[TagMention]:
        """Labels of several words said in other word forms and order, within a few words:
        "the shelves you can adjust", "cuts through grease", "a cover you can remove"."""
        said = {k for t in found for k in range(t.start, t.end)} | set(taken)
        stems = [(k, _label_stem(toks[k].lemma)) for k in idx if k not in said and toks[k].text[:1].isalpha()]
        present = {st for _, st in stems}
        out = []
        for need in (n for st in present for n in self._stem_first.get(st, ()) if n <= present):
            labels = self.tag_stems[need]
            at = [k for k, st in stems if st in need]
            first, last = min(at), max(at)
            if last - first <= _REWORDED_SPAN and {st for k, st in stems if first <= k <= last} >= need:
                out.append(TagMention(first, last + 1, " ".join(toks[k].low for k in at), frozenset(labels)))
        return out

    def _is_product_word(self, w: str, tok: Token) -> bool:
        if w in STOPWORDS or not tok.text[0].isalnum() or _PRICE_FIGURE.fullmatch(tok.text):
            return False  # "harbor catch wild salmon fillets 9.49": the price ends the name
        return w in self.product_vocab or (w[0].isdigit() and True) or w in _UNITS

    def _products(self, toks, lem, taken, text: str | None = None) -> list[Mention]:
        out: list[Mention] = []
        i, n = 0, len(lem)
        while i < n:
            # (a name opens with no bare figure, but may with a word of its own: "2% milk", "72% dark")
            if i in taken or not self._is_product_word(lem[i], toks[i]) or (
                lem[i][0].isdigit() and not ("%" in lem[i] and lem[i] in self.product_vocab)
            ):
                i += 1
                continue
            j = i
            joins = []  # where a joiner carried the run on
            while j < n and j not in taken:
                if (j > i and text is not None and lem[j - 1] in self.heads and toks[j - 1].low != lem[j - 1]
                        and "+" in text[toks[j - 1].end : toks[j].start]):
                    break  # a kind in the plural then "+" ends the names: "halden table lamps + juno desk lamps"
                brand = self._brand_at(lem, j, longer_than=1)
                if brand and not taken.intersection(range(j, brand[1])):
                    j = brand[1]  # a brand is one word of a name, "and" and all ("Quill and Co")
                elif self._is_product_word(lem[j], toks[j]):
                    j += 1
                elif (lem[j] in _JOINERS or lem[j] in _MAKER_WORDS) and j + 1 < n:
                    k = j + 1 + (lem[j + 1] in ("a", "an", "the") and j + 2 < n)
                    if (
                        k not in taken
                        and self._is_product_word(lem[k], toks[k])
                        and (
                            (lem[j] in _MAKER_WORDS and self._by_brand(lem[i:j], lem[k], lem[j] != "from"))
                            or (lem[j] in _JOINERS and self._joins_a_name(lem[i:j], lem[k]))
                        )
                    ):
                        joins.append(j)
                        j = k
                    else:
                        break
                else:
                    break
            m = self._resolve(toks, lem, i, j)
            whole = (m, j)
            for cut in reversed(joins):  # "lemon wafer cookies from sweet meadow light n crunchy"
                if m is not None and m.candidates:
                    break
                m, j = self._resolve(toks, lem, i, cut), cut
            if (m is None or not m.candidates) and whole[0] is not None:
                # no known product in a shorter run either: the run reads like one unknown name
                # ("the Calla clock and the Ember clock" is two known ones, cut at the "and")
                m, j = whole
            # "Sunny Fields ... , 12 oz": a size after a comma belongs to the name
            if m is not None:
                m, j = self._with_size(toks, lem, m, m.end)  # (a name cut short leaves the rest to read)
                out.append(m)
                i = j
            else:
                i += 1
        return out

    def _with_size(self, toks, lem, m: Mention, j: int) -> tuple[Mention, int]:
        """Extend a product mention over the rest of its name written after a comma: a size
        ("Cereal, 12 oz") or the variant ("Shelving Unit, Black Powder-Coated Steel")."""
        if not m.candidates or j >= len(toks) or toks[j].text != ",":
            return m, j
        k = j + 1
        while k < len(toks) and (lem[k][0].isdigit() or lem[k] in _UNITS or lem[k] in self.name_words[m.candidates[0]]):
            k += 1
        size = [w for w in lem[j + 1 : k]]
        variant = any(self._name_tail[p] and self._name_tail[p] == tuple(w for w in size if w not in STOPWORDS) for p in m.candidates)
        # a size has a unit ("Cereal, 12 oz"); a bare figure after a comma is a price ("no eggs, 3.09")
        if k == j + 1 or not (variant or (any(w[0].isdigit() for w in size) and any(w in _UNITS for w in size))):
            return m, j
        keep = tuple(p for p in m.candidates if set(size) <= self.name_words[p]) or m.candidates
        phrase = m.phrase + ", " + " ".join(t.text for t in toks[j + 1 : k])
        return Mention(m.start, k, m.char_start, toks[k - 1].end, phrase, keep, m.kind, m.category), k

    def _brand_at(self, lem, j: int, longer_than: int = 0) -> tuple[tuple[str, ...], int] | None:
        """The brand (of more than ``longer_than`` words) that ``lem[j:]`` opens with, and where
        it ends: "quill and co" is the brand ("quill", "co")."""
        for key in self._brands_by_first.get(lem[j], ()) if j < len(lem) else ():
            if len(key) <= longer_than:
                break
            k = j
            for n, w in enumerate(key):
                if n and k < len(lem) and lem[k] in ("and", "&", "n") and w not in ("and", "&", "n"):
                    k += 1
                if k >= len(lem) or lem[k] != w:
                    break
                k += 1
            else:
                return key, k
        return None

    def _by_brand(self, before: list[str], after: str, model: bool = False) -> bool:
        """Whether "<product words> from/by/of <brand>" names a product of that brand: "rice
        crackers from crispwell", "the oat milk from Sunny Grove", "fjord standing desk by ironbark";
        after "by" and "of" (``model``) only with a word of a name that is no kind's."""
        left = {w for w in before if w not in STOPWORDS}
        if model and left <= self.category_words:
            return False  # "a pendant light by Lumen Field" names a kind and who makes it, no product
        return bool(left) and any(after in self.brand_words[pid] and left <= self.all_words[pid] for pid in self.name_words)

    def _joins_a_name(self, before: list[str], after: str) -> bool:
        """Whether some product's name holds words of both sides of "and"/"in"/"with". A word
        said again after the joiner opens a second name ("a halden table lamp and a halden
        watering can")."""
        left = {w for w in before if w not in STOPWORDS}
        return after not in left and any(after in ws and left & ws for ws in self.name_words.values())

    def _name_inside(self, toks, lem, i: int, j: int, after: frozenset[str]) -> Mention | None:
        """A known name inside a run that no product's name covers whole, found from the brand
        it opens with (a run of labels is no name: "dairy-free + vegan coconut milk base"):
        the name ends before the run does ("the Campo Verde penne without gluten"; a tail that
        names a kind or a brand is part of the name), the brand's own name follows it ("Clear
        Spring's sugar-free Zero Sugar Cola"), or words before the brand are no part of it
        ("add Clear Spring's Lime Sparkling Water"). Not across a join of two names."""
        run = lem[:j]
        brands = {b: found for b in range(i, j) if (found := self._brand_at(run, b))}
        in_brand = {k for b, (_, end) in brands.items() for k in range(b, end)}  # ("Quill and Co's Quill Office Chair")
        if any(w in ("and", "&") or w in _MAKER_WORDS for k, w in enumerate(lem[i:j], i) if k not in in_brand):
            return None  # two names joined: _products cuts the run at the join
        if not brands:
            return None
        b = min(brands)
        brand, brand_end = brands[b]
        if b > i:
            m = self._resolve(toks, lem, b, j)
            return m if m is not None and m.candidates else None
        for k in range(j - 1, brand_end, -1):
            tail = {w for w in lem[k:j] if w not in STOPWORDS}
            if tail & (self.heads | self.brand_vocab):
                break
            m = self._resolve(toks, lem, i, k, after | (tail & self.product_vocab), cut=False)
            if m is not None and m.candidates and m.kind == "product":
                return m
        for k in range(brand_end, j - 1):
            m = self._resolve(toks, lem, k, j, cut=False)
            ours = tuple(p for p in (m.candidates if m else ()) if p in self.brands[brand])
            if ours and m.kind == "product":
                phrase = " ".join(t.text for t in toks[i:j])
                return replace(m, start=i, char_start=toks[i].start, phrase=phrase, candidates=ours)
        return None

    def _fits_clipped(self, pid: str, content: set[str], numbers: set[str], heads: set[str]) -> bool:
        """Whether ``pid``'s name holds the words, some of them cut short as notes cut them:
        "hearthside lentil veg soup", "the fresh mozz ball"."""
        ws = self.all_words[pid] | self.brand_words[pid]
        if not numbers <= ws or not heads <= (self.name_words[pid] | self.kind_words[pid] | ws):
            return False
        return all(
            w in ws or (len(w) >= 3 and w.isalpha() and any(x.startswith(w) and len(x) > len(w) for x in self.name_words[pid]))
            for w in content
        )

    def _resolve(self, toks, lem, i: int, j: int, after: frozenset[str] = frozenset(), cut: bool = True) -> Mention | None:
        """The mention that ``toks[i:j]`` names, if any; ``after`` holds the name words said
        right after a cut-short name, which favour the products that carry them; ``cut``: look
        for a known name inside a run no name covers whole (``_name_inside``)."""
        words = [w for w in lem[i:j] if w not in _JOINERS and w not in STOPWORDS]
        content = {w for w in words if not w[0].isdigit() and w not in _UNITS}
        if not content:
            return None
        has_head = bool(content & self.heads)
        # a brand is a proper name: alone and in lower case it is an ordinary word ("rattan")
        brand_hit = [key for key in self.brands if key and set(key) <= content]
        if brand_hit and len(content) == 1 and not toks[i].text[:1].isupper():
            brand_hit = []
        # A model name said alone ("the Hollis", "the Ridgeline") names a product too: a
        # capitalised word that only a few products' names carry.
        sentence_start = i == 0 or toks[i - 1].text in (".", "!", "?", ":")
        model = toks[i].text[:1].isupper() and any(
            0 < len(self.name_index.get(w, ())) <= 8
            and w not in self.category_words
            and w not in FUNCTION_WORDS
            and not (sentence_start and getAllLemmas(w))
            for w in content
        )
        # lower case, a word of a brand with a word of one product's name: "oakridge chamomile"
        partial = not (has_head or brand_hit or model) and len(content) >= 2 and any(
            w in self.brand_vocab and w not in self.label_vocab and w not in self.category_words for w in content
        )
        # lower case, a model's own word with a word of its kind: "the bexley pendant", "zephyr pendant"
        modelled = not (has_head or brand_hit or model or partial) and len(content) >= 2 and bool(content & self.category_words) and any(
            0 < len(self.name_index.get(w, ())) <= 8 and w not in self.category_words and w not in self.label_vocab
            and w not in FUNCTION_WORDS for w in content
        )
        if not has_head and not brand_hit and not model and not partial and not modelled:
            return None
        if content <= _WEAK:
            return None
        numbers = {w for w in words if w[0].isdigit()}
        # (a head noun names what the product is, not one of its labels: "classic milk" is no
        # lasagna that contains milk)
        heads = content & self.heads
        cands = [
            pid for pid, ws in self.all_words.items()
            if content <= (ws | self.brand_words[pid]) and numbers <= ws
            and heads <= (self.name_words[pid] | self.kind_words[pid] | self.brand_words[pid])
        ]
        if not cands and brand_hit:
            cands = [pid for pid in self.all_words if self._fits_clipped(pid, content, numbers, heads)]
        if (partial or modelled) and len(cands) != 1:
            return None
        favoured = [pid for pid in cands if after & self.all_words[pid]]
        cands = favoured or cands
        phrase = " ".join(t.text for t in toks[i:j])
        cs, ce = toks[i].start, toks[j - 1].end
        if not cands:
            # (once per run, and only over a run as long as a name: a keyword-stuffed run of a
            # hundred product words is no name with a tail, and cutting it every way is costly)
            inside = self._name_inside(toks, lem, i, j, after) if cut and j - i <= _LONGEST_NAME else None
            if inside is not None:
                return inside
            caps = [t for t in toks[i:j] if t.text[0].isupper()]
            if has_head and caps:
                return Mention(i, j, cs, ce, phrase, (), "unknown")
            # drop leading words no product explains ("great vanilla yogurt")
            if j - i > 1:
                return self._resolve(toks, lem, i + 1, j)
            return None
        def coverage(pid: str) -> float:
            name = self.name_words[pid] | self.brand_words[pid]
            total = sum(self.idf.get(w, 1.0) for w in name) or 1.0
            return sum(self.idf.get(w, 1.0) for w in content & name) / total

        cands.sort(key=lambda pid: (-coverage(pid), pid))
        # (judged on the best-covered candidate, not on whichever the catalog lists first; an
        # everyday word of a brand not said whole is no name: "dairy milk" is no Meadow Creek Dairy)
        specific = bool(brand_hit) or any(
            w not in self.category_words and w not in self.tag_words[pid] and w not in _SHORT_WORDS
            and not (w in self.brand_words[pid] and (w not in self.model_words[pid] or len(content) < 2) and getAllLemmas(w)
                     and len(content & self.brand_words[pid]) < 2)
            for pid in cands[:1] for w in content
        ) or (  # "the honeycrisps", "gala apples": an attribute word of the one product's own name
            len(cands) == 1 and any(w in self.name_words[cands[0]] and w not in self.category_words for w in content)
        )
        bare_brand = bool(brand_hit) and content <= {w for key in brand_hit for w in key}
        if specific and (has_head or brand_hit) and not bare_brand:
            # a bare model name ("the Kira") stays ambiguous: the kind named beside it decides,
            # and so does a bare brand ("golden acre" is every Golden Acre product, not the
            # one with the shortest name)
            best = coverage(cands[0])
            cands = [pid for pid in cands if coverage(pid) >= best - 1e-9]
        exact = self.categories.get(tuple(w for w in words if w in self.category_words))
        if not specific and exact is not None and any(self.category_of[p] == exact for p in cands):
            cands = [p for p in cands if self.category_of[p] == exact]  # "oatmeal", not "Oatmeal Cookies"
        cats = {self.category_of[pid] for pid in cands}
        category = cats.pop() if len(cats) == 1 else None
        return Mention(i, j, cs, ce, phrase, tuple(cands), "product" if specific else "category", category)


@per_index
def lexicon_for(index: SceneIndex) -> SceneLexicon:
    """The (cached) lexicon of ``index``."""
    return SceneLexicon(index)


# Words for parts and places that some names carry ("Marble Top", "Corner Desk"): said in the
# store they locate things, they do not name a product.
_SPATIAL = _PLACE_NOUNS | frozenset(
    "top bottom side front back left right end corner middle center centre edge row level aisle floor wall "
    "exit way part area section shelf shelves stand base rack display window room hall upper lower".split()
)
_DETERMINERS = frozenset("the this that these those a an your my our its their".split())
# Words that make a following label a wish or a refusal rather than a product's name.
_STANCE_WORDS = frozenset(
    "no not without avoid avoiding but prefer want need like love something anything any some rather "
    "free allergic hate dislike skip".split()
)
