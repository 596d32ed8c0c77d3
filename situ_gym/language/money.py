"""Amounts of money in any written form: "$3.49", "3.49 dollars", "under twenty bucks",
"about five quid", "$12ish", "4 dollars 50", "3,99 €", the bare "24.99" of a clipped note, and
a price said aloud: "three eighty-nine", "eleven oh nine", "two nineteen ninety-nine".

Both the shopper (a stated budget) and RecRM (a price claim to check) read amounts here, so
a price written one way is caught exactly as it is written another.

>>> [(a.value, a.approx) for a in amounts("It's 3.49 dollars, or about five quid, under $20ish.")]
[(3.49, False), (5.0, True), (20.0, True)]
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from situ_gym.language.tokens import lemma

__all__ = ["Amount", "amounts", "figure_value", "number_value", "quantities"]

_UNITS = {
    "zero": 0, "one": 1, "a": 1, "an": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14,
    "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19,
}
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}
_WORD = "|".join(sorted(set(_UNITS) - {"a", "an"} | set(_TENS), key=len, reverse=True))
# "twenty", "twenty-five", "a hundred", "two hundred and fifty", "a couple of"
_NUMBER_WORDS = (
    rf"(?:(?:a|an|one|two|three|four|five|six|seven|eight|nine)\s+hundred(?:\s+(?:and\s+)?(?:{_WORD})(?:[-\s](?:{_WORD}))?)?"
    rf"|(?:{_WORD})(?:[-\s](?:one|two|three|four|five|six|seven|eight|nine))?|a\s+couple(?:\s+of)?)"
)
_DIGITS = r"\d{1,7}(?:[,.]\d{3})*(?:[.,]\d{1,2})?"
_CURRENCY = r"(?:dollars?|bucks?|usd|quid|pounds?|euros?|eur|gbp|€|£)"
_APPROX_BEFORE = re.compile(
    r"(?:about|around|roughly|approximately|approx\.?|near(?:ly)?|almost|circa|ca\.?|some|~|just over|just under)\s*$"
)
_APPROX_AFTER = re.compile(r"^\s*(?:-?ish\b|or so\b|give or take\b|and change\b)")
_DIGIT_WORD = "|".join(w for w, v in _UNITS.items() if 1 <= v <= 9 and w not in ("a", "an"))
_TEENS = "|".join(w for w, v in _UNITS.items() if v >= 10)
_TENS_WORD = "|".join(_TENS)
_TWO_DIGITS = rf"(?:(?:{_TENS_WORD})(?:[-\s](?:{_DIGIT_WORD}))?|{_TEENS})"
_CENTS_SAID = rf"(?:oh[-\s](?:{_DIGIT_WORD})|{_TWO_DIGITS})"
# Said aloud, a price is dollars then cents with no unit: "three eighty-nine", "eleven oh nine",
# "two nineteen ninety-nine" (219.99), "eleven eighty nine ninety nine" (1189.99); not a time, a
# size or a count ("eleven thirty pm").
_SAID = re.compile(
    rf"\b(?:(?P<t>{_TWO_DIGITS})\s+(?P<td>{_TWO_DIGITS}|oh[-\s](?:{_DIGIT_WORD}))\s+(?P<tc>{_CENTS_SAID})"  # "fifteen fifty nine ninety nine"
    rf"|(?P<o>{_DIGIT_WORD})\s+oh[-\s](?P<od>{_DIGIT_WORD})\s+(?P<oc>{_TWO_DIGITS})"  # "two oh nine ninety-nine"
    rf"|(?P<h>{_DIGIT_WORD})\s+(?P<hd>{_TWO_DIGITS})\s+(?P<hc>{_CENTS_SAID})"
    rf"|(?P<sd>{_DIGIT_WORD}|{_TWO_DIGITS})\s+(?P<sc>{_CENTS_SAID}))\b"
    r"(?!\s*(?:am|pm|a\.m|p\.m|o'?clock|minutes?|hours?|percent|%|oz|ounces?|lbs?|pounds?|inch|inches|cm|feet|ft|"
    r"dollars?|bucks?|cents?|count|ct|pack|rolls?|bags?|pieces?|people|years?|degrees?|steps?|metres?|meters?))",
    re.IGNORECASE,
)
_HUNDREDS_BEFORE = re.compile(rf"\b(a|an|{_DIGIT_WORD})\s+hundred\s+(?:and\s+)?$", re.IGNORECASE)
_AMOUNT = re.compile(
    rf"(?P<sym>[$£€])\s?(?P<d1>{_DIGITS})(?:\s?(?:k)\b)?"
    rf"|(?<![\w.,])(?P<d2>{_DIGITS})\s?(?P<u2>{_CURRENCY})(?:\s+(?P<c2>\d{{1,2}})\b(?!\s*(?:%|oz|lb|cm|in|ft|m\b)))?"
    rf"|\b(?P<w>{_NUMBER_WORDS})\s+(?P<u3>{_CURRENCY})(?:\s+(?:and\s+)?(?P<c3>\d{{1,2}}|{_WORD})\b)?"
    # a rough figure marked by a tilde ("~260", "~ 57") with nothing but a money word after it
    # (not "~105 degrees", "~5 shelves")
    r"|~\s?(?P<d5>\d{1,5}(?:\.\d{1,2})?)(?!\d|[.,]\d)"
    r"(?=\s*(?:$|[^\w\s]|(?:bucks?|dollars?|usd|ish|or so|each|total|and|for|but|so|vs|versus|or)\b))"
    # a bare figure with cents, as clipped notes write prices ("rec: kira mat, 24.99"); not a size
    r"|(?<![\w.,$£€x×])(?P<d4>\d{1,3}(?:,\d{3})+\.\d{2}|\d{1,5}\.\d{2})"
    r"(?!\d|[.,]\d|\s?(?:%|oz|fl|lb|lbs|g|kg|ml|l|cl|cm|mm|m|in|ft|count|ct|pack|x)\b)"
    # a rough bare figure: "240ish", "36-ish"
    r"|(?<![\w.,$£€~])(?P<d6>\d{1,5}(?:\.\d{1,2})?)(?=-?ish\b)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Amount:
    value: float
    start: int
    end: int
    written: str  # the text as written ("3.49 dollars")
    approx: bool = False  # "about", "-ish", "or so": a rough figure
    exact_cents: bool = False  # written with cents ("3.49"), so a cent off is wrong

    @property
    def bare(self) -> bool:
        """Written without a currency ("24.99"): a price only where a product is in question."""
        return not re.search(r"[$£€]|[a-z]", self.written, re.IGNORECASE)


def number_value(words: str) -> float | None:
    """The value of a number written in words ("twenty-five", "a hundred and fifty"), or None."""
    ws = [w for w in re.split(r"[-\s]+", words.lower().strip()) if w and w != "and"]
    if ws[:2] == ["a", "couple"]:
        return 2.0
    total, current = 0, 0
    for w in ws:
        if w in ("of",):
            continue
        if w == "hundred":
            current = (current or 1) * 100
        elif w in _TENS:
            current += _TENS[w]
        elif w in _UNITS:
            current += _UNITS[w]
        else:
            return None
    return float(total + current)


def figure_value(word: str) -> float | None:
    """A bare figure in digits or words: "30", "1,600", "3.49", "thirty" (None for no figure)."""
    return _digits_value(word)[0] if word[:1].isdigit() else number_value(word)


def _digits_value(text: str) -> tuple[float, bool]:
    """"3.49" -> (3.49, True); "1,299" -> (1299, False); "3,99" (decimal comma) -> (3.99, True)."""
    if re.fullmatch(r"\d{1,7}[,.]\d{1,2}", text):
        return float(text.replace(",", ".")), True
    return float(re.sub(r"[,.](?=\d{3}\b)", "", text).replace(",", "")), "." in text


def amounts(text: str) -> list[Amount]:
    """Every amount of money in ``text``, in order."""
    out: list[Amount] = []
    for m in _AMOUNT.finditer(text):
        if m.group("d1"):
            value, cents = _digits_value(m.group("d1"))
        elif m.group("d4"):
            value, cents = float(m.group("d4").replace(",", "")), True
        elif m.group("d5") or m.group("d6"):  # rough: "~260", "240ish"
            value, cents = float(m.group("d5") or m.group("d6")), False
        elif m.group("d2"):
            value, cents = _digits_value(m.group("d2"))
            extra = m.group("c2")
            if extra and not cents:  # "4 dollars 50"
                value, cents = value + int(extra) / 100.0, True
        else:
            words = number_value(m.group("w"))
            if words is None:
                continue
            value, cents = words, False
            extra = m.group("c3")
            if extra:
                cents_value = int(extra) if extra.isdigit() else number_value(extra)
                if cents_value is not None and cents_value < 100:
                    value, cents = value + cents_value / 100.0, True
        approx = bool(_APPROX_BEFORE.search(text[max(0, m.start() - 16) : m.start()].lower())) or bool(
            _APPROX_AFTER.match(text[m.end() : m.end() + 12].lower())
        )
        out.append(Amount(value, m.start(), m.end(), m.group(0), approx or bool(m.group("d5")), cents))
    for m in _SAID.finditer(text):
        if any(a.start < m.end() and m.start() < a.end for a in out):
            continue
        # "two oh nine ninety-nine", "two nineteen ...", "thirteen oh nine ninety nine" (1309.99)
        three = next((k for k in ("t", "o", "h") if m.group(k)), None)
        if three:
            dollars = number_value(m.group(three)) * 100 + number_value(m.group(three + "d").lower().replace("oh", "").strip())
            said_cents = m.group(three + "c")
        else:
            dollars, said_cents = number_value(m.group("sd")), m.group("sc")
            hundreds = _HUNDREDS_BEFORE.search(text[max(0, m.start() - 24) : m.start()])
            if hundreds and dollars is not None:  # "a hundred seventy nine ninety nine"
                dollars += 100 * number_value(hundreds.group(1))
        cents_value = number_value(said_cents.lower().replace("oh", "").strip() or "zero")
        if dollars is None or cents_value is None:
            continue
        approx = bool(_APPROX_BEFORE.search(text[max(0, m.start() - 16) : m.start()].lower()))
        out.append(Amount(dollars + cents_value / 100.0, m.start(), m.end(), m.group(0), approx, True))
    out.sort(key=lambda a: a.start)
    return out


# ---------------------------------------------------------------------- quantities
# A size said with its unit: "32 oz", "twenty nine ounce", "96 loads", "12-count", "a 12 lb bag".
# Units read as one family each; nouns that count items ("12 bars", "24 pops") count.
_QUANTITY_UNITS = {
    "oz": "oz", "ounce": "oz", "ounces": "oz", "lb": "lb", "lbs": "lb", "pound": "lb", "pounds": "lb",
    "gal": "gal", "gallon": "gal", "gallons": "gal", "qt": "qt", "quart": "qt", "quarts": "qt",
    "pint": "pint", "pints": "pint", "in": "in", "inch": "in", "inches": "in",
    "load": "loads", "loads": "loads", "roll": "rolls", "rolls": "rolls", "bag": "bags", "bags": "bags",
    **dict.fromkeys(("count", "ct", "pack", "pk", "bars", "pieces", "pcs", "pops", "cups", "packets", "cans",
                     "bottles", "pods", "servings", "eggs", "waffles", "sticks"), "count"),
}


# A figure and the word after it; the word is a size when it is a unit (or a count noun given).
_DIGIT_WORD = r"(?:zero|oh|one|two|three|four|five|six|seven|eight|nine)"
_QUANTITY = re.compile(
    rf"(?<![\w$.])(?P<n>\d+(?:\.\d+)?|{_NUMBER_WORDS}(?:\s+point\s+{_DIGIT_WORD})?)(?P<half>\s+and\s+a\s+half)?\s*(?:-\s*)?"
    rf"(?:x\s+(?P<each>\d+(?:\.\d+)?)\s*)?(?:fl\.?\s+|fluid\s+|mega\s+)?(?P<u>[a-z]+)\b"
)


# A count said by what holds it: "12 in the box", "six in the bag", "a bag of 6" ("$3.79 for 12"
# says how it is sold, as "5.99 for a 4-pack" does);
# and one unit said with an article: "a whole gallon", "a pound".
_HOLDERS = r"(?:box|bag|pack|packet|carton|case|jar|tub|bunch|tray|tin|sleeve)"
_COUNTED_BY_HOLDER = re.compile(
    rf"(?<![\w$.])(?P<n>\d+|{_NUMBER_WORDS})\s+(?:in (?:(?:the|a|each|one|every) )?|per |to an? ){_HOLDERS}\b"
    rf"|\b{_HOLDERS} of (?P<m>\d+|{_NUMBER_WORDS})\b(?!\s*(?:oz|lb|ounces?|pounds?)\b)"
)
# "a dozen", "half a dozen", "two dozen"
_DOZEN = re.compile(rf"\b(?:(?P<half>half (?:an? )?)|(?P<n>\d+|{_NUMBER_WORDS}) )?dozen\b")
# A count said with its price: "12 for 4.19", "$3.39 for 10", "ten for three dollars"
_COUNT_FOR_PRICE = re.compile(
    rf"(?<!shelf )(?<!aisle )(?<![\w$.])(?P<n>\d+|{_NUMBER_WORDS}) for \$?\s?\d"
    rf"|(?:\$\s?\d+(?:\.\d\d)?|\d+\.\d\d) for (?P<m>\d+)\b(?![.,]\d)(?!\s*-?\s*[a-z%])"
    # "7 bucks 19 for 12", "4 bucks 89 for four"
    rf"|\b\d+ bucks(?: \d\d)? for (?P<k>\d+|{_NUMBER_WORDS})\b(?![.,]\d)(?!\s*-?\s*[a-z%])"
)
_ONE_UNIT = re.compile(r"(?<!half )\ban? (?:whole |full |single )?(?P<u>gallon|pound|quart|pint)\b")
# "half gal", "a half gallon", "half a pound" (not "two and a half pounds", read above)
_HALF_UNIT = re.compile(r"(?<!and a )(?<!and )\bhalf(?: an?)? (?P<u>gal|gallon|lb|pound|qt|quart|pint)\b")


def _figure(said: str) -> float | None:
    """A count or size's figure, in digits or words ("12", "twenty nine")."""
    return float(said) if said[:1].isdigit() else figure_value(said.replace(" ", "-"))


def quantities(text: str, count_nouns: frozenset[str] = frozenset()) -> set[tuple[float, str]]:
    """Every (value, unit family) size said in ``text`` ("thirty two ounces" -> (32.0, "oz");
    "two and a half pounds" -> (2.5, "lb"); "12 x 12 fl oz" -> (12.0, "count") and (12.0,
    "oz"); "12 in the box" -> (12.0, "count"); "a whole gallon" -> (1.0, "gal"); "half gal" -> (0.5, "gal")). Nouns whose
    lemma is in ``count_nouns`` count too: the kind of the product talked about ("80 plates" of
    plates)."""
    low = text.lower()
    out: set[tuple[float, str]] = set()
    for m in (*_COUNTED_BY_HOLDER.finditer(low), *_COUNT_FOR_PRICE.finditer(low)):
        said = m.groupdict()
        value = _figure(said["n"] or said["m"] or said.get("k"))
        if value is not None:
            out.add((value, "count"))
    for m in _DOZEN.finditer(low):
        times = 0.5 if m.group("half") else (number_value(m.group("n")) if m.group("n") else 1) or 1
        out.add((12.0 * times, "count"))
    out |= {(1.0, _QUANTITY_UNITS[m.group("u")]) for m in _ONE_UNIT.finditer(low)}
    out |= {(0.5, _QUANTITY_UNITS[m.group("u")]) for m in _HALF_UNIT.finditer(low)}
    for m in _QUANTITY.finditer(low):
        word = m.group("u")
        if word == "in" and re.match(rf"\s+(?:the|a|each|one|every|{_HOLDERS})\b", low[m.end() :]):
            continue  # "12 in the box" is a count (above), not twelve inches
        # (the kind's own items count: "40 bags" of trash bags is their count)
        unit = "count" if count_nouns and lemma(word) in count_nouns else _QUANTITY_UNITS.get(word)
        if unit is None:
            continue
        said, _, tenth = m.group("n").partition(" point ")  # "eighteen point six ounces"
        value = _figure(said)
        if value is not None and tenth:
            value += (number_value(tenth.strip()) or 0) / 10
        if value is None:
            continue
        value += 0.5 if m.group("half") else 0.0
        if m.group("each"):  # "8 x 12 fl oz": eight cans of twelve ounces
            out |= {(value, "count"), (float(m.group("each")), unit)}
        else:
            out.add((value, unit))
    return out
