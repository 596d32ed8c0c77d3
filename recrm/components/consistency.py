"""C_consist: rule-based factual-consistency gate (item and content hallucination)."""

from __future__ import annotations

import re
from typing import Any

from recrm.components.base import ComponentScore
from recrm.context import TurnContext
from situ_gym.language import patterns as P
from situ_gym.language.claims import (
    FUNCTION_WORDS,
    NEGATIONS,
    Lexicon,
    Mention,
    clauses,
    lexicon,
    tokenize,
)
from situ_gym.language.money import Amount, amounts

__all__ = ["FactualConsistency"]

_FOCUS_ACTIONS = ("Explain", "AnswerQuestion", "Compare", "ConfirmPurchase")


class FactualConsistency:
    """C_consist in {0, 1}: 1 iff no hallucination is found in the turn.

    Item hallucination (``details["findings"][i]["kind"] == "item"``):

    * ``unknown_product``: the response names a product the catalog lacks — a known
      brand followed by product words none of that brand's products carry ("Harbor Catch
      salmon burgers"), or unknown capitalised words before product words ending in a
      product noun ("Ocean Fresh cod fillets");
    * ``display_name``: the Recommend action's display name matches no catalog product
      or not the product it resolved to;
    * ``ranking``: ranked ids outside the catalog;
    * ``price``: an amount in any written form (``situ_gym.language.money``: "$3.49",
      "3.49 dollars", "about three bucks", a clipped note's bare "3.49") stated next to a
      product (same sentence; else the turn's focus product) that differs from its catalog
      price by more than a cent (whole-dollar amounts may round: within $0.50; rough ones,
      "about", "-ish", within 10%). Amounts near budget words ("under", "budget",
      "within") are not price claims;
    * ``attribute``: a tag value ("gluten-free", "oak") stated of a product (same
      clause, or via "it/this/they") that neither its tags nor its name, category or
      attributes carry; negated and preference clauses ("you wanted ...") are skipped,
      as are vague words and situational keys (``situ_gym.language.claims.VAGUE_WORDS``,
      ``UNCHECKED_TAG_KEYS``); allergens count only after "contains";
    * ``location``: "in/at/on <fixture, store or area>" said of a product kept elsewhere;
    * ``visibility``: Recommend says ``visible_now`` while the product is not in view.

    Content hallucination (``kind == "content"``): commercial claims the catalog cannot
    support (discounts, promotions, awards, popularity, stock, ratings: ``commercial``);
    wishes attributed to the shopper that it never voiced ("since you said you love
    organic": ``preference``, labels checked against what the shopper said and revealed);
    and claims about the user's state that the record contradicts: "already in your cart", "you're holding" / "picked up" when
    the cart or hand holds no such product; a budget figure the user has not stated, or
    one that differs from what they said.
    """

    name = "consistency"

    def __init__(self, price_tolerance: float = 0.01, whole_dollar_tolerance: float = 0.5):
        if price_tolerance < 0 or whole_dollar_tolerance < 0:
            raise ValueError(
                f"tolerances must be >= 0, got {price_tolerance!r}, {whole_dollar_tolerance!r}"
            )
        self.price_tolerance = price_tolerance
        self.whole_dollar_tolerance = whole_dollar_tolerance

    def score(self, ctx: TurnContext) -> ComponentScore:
        lex = lexicon(ctx.index)
        text = ctx.response
        findings: list[dict[str, Any]] = []

        def found(kind: str, check: str, msg: str) -> None:
            findings.append({"kind": kind, "check": check, "message": msg})

        mentions = lex.mentions(text)
        for m in mentions:
            if m.unknown:
                found(
                    "item", "unknown_product", f"names a product not in the catalog: {m.phrase!r}"
                )
        self._check_action(ctx, lex, found)
        focus = _focus(ctx)
        products = ctx.index.products

        all_toks = tokenize(text)
        # negations inside product names ("No Salt Added") do not negate a clause
        named = [any(m.start <= t.start < m.end for m in mentions) for t in all_toks]
        parts = []
        for start, end in clauses(text, [(m.start, m.end) for m in mentions]):
            ks = [k for k, t in enumerate(all_toks) if start <= t.start < end]
            parts.append(
                (
                    start,
                    end,
                    [all_toks[k].low for k in ks],
                    {all_toks[k].low for k in ks if not named[k]},
                )
            )

        # ---- price claims
        sentences = _spans(P.CLAIM_SENTENCE_END, text)
        for am in amounts(text):  # "$3.49", "3.49 dollars", "about three bucks", a clipped "3.49"
            if any(m.start <= am.start < m.end for m in mentions):
                continue  # a figure inside a product's name
            before = [t.low for t in all_toks if t.end <= am.start][-4:]
            if P.BUDGET_WORDS.intersection(before) or "up" in before and "to" in before:
                continue
            if _in_budget_claim(text, am.start):
                continue
            ref = _referent(text, am.start, sentences, mentions, focus)
            if not ref:
                continue
            if not any(self._price_ok(am, products[pid].price) for pid in ref):
                names = ", ".join(
                    f"{products[p].name} (${products[p].price:.2f})" for p in sorted(ref)
                )
                found("item", "price", f"states {am.written!r} for {names}")

        # ---- attribute and location claims, clause by clause
        # "it" / "they" continue the product talked about last; "this one" is the focus
        # product (in a Compare: "Compared with X, this one ... it offers Y" -> Y is the focus's)
        current: set[str] = {focus} if focus else set()
        for start, end, low, free in parts:
            if not low:
                continue
            negated = bool(NEGATIONS.intersection(free))
            ref_here = [m for m in mentions if start <= m.start < end and m.candidates]
            if ref_here:
                ref = set().union(*(m.candidates for m in ref_here))
                current = set(ref_here[-1].candidates)
            elif focus and _this_one(low):
                ref = current = {focus}
            elif P.REFERRING_PRONOUNS.intersection(low):
                ref = current
            else:
                ref = set()
            if not ref or negated:
                continue
            places = list(_find_places(low, lex.places))
            masked = list(low)  # place names ("Leather and Ink") are no attribute claims
            for i, place in places:
                masked[i : i + len(place)] = ["\0"] * len(place)
            # "since you wanted gluten-free" restates a wish; "it's exactly the gluten-free one
            # you want" also says the product is gluten-free, and is checked as such
            wish_only = P.PREFERENCE_WORDS.intersection(low) and not _ATTRIBUTES.search(" ".join(low))
            if not wish_only:
                for phrase in _find_phrases(masked, lex):
                    tags = lex.tag_phrases[phrase]
                    if all(t.startswith("allergen:") for t in tags) and not _says_contains(
                        low, phrase
                    ):
                        continue  # "great with milk" is no allergen claim; "contains milk" is
                    ok = any(
                        tags.intersection(products[pid].tags) or set(phrase) <= lex.descr_words[pid]
                        for pid in ref
                    )
                    if not ok:
                        names = ", ".join(products[p].name for p in sorted(ref))
                        found(
                            "item",
                            "attribute",
                            f"calls {names} {' '.join(phrase)!r}, which its tags do not support",
                        )
            for i, place in places:
                if (
                    i == 0
                    or low[i - 1] not in P.PLACE_PREPOSITIONS
                    and not (low[i - 1] == "the" and i > 1 and low[i - 2] in P.PLACE_PREPOSITIONS)
                ):
                    continue
                eid = lex.places[place]
                if not any(eid in ctx.index.location_of(pid) for pid in ref):
                    names = ", ".join(products[p].name for p in sorted(ref))
                    found(
                        "item",
                        "location",
                        f"places {names} in {ctx.index.name(eid)!r}; the location index disagrees",
                    )

        # ---- claims about the user's state
        for start, end, low, free in parts:
            clause = text[start:end]
            if NEGATIONS.intersection(free) or "yet" in free:
                continue
            ref_here = [m for m in mentions if start <= m.start < end and m.candidates]
            prev = [m for m in mentions if m.start < start and m.candidates]
            ref = (
                set().union(*(m.candidates for m in ref_here))
                if ref_here
                else (set(prev[-1].candidates) if prev and P.REFERRING_PRONOUNS.intersection(low) else set())
            )
            if P.CART_CLAIM.search(clause):
                if not ctx.cart:
                    found("content", "cart", f"says {clause.strip()!r} but the cart is empty")
                elif ref and not ref.intersection(ctx.cart):
                    found(
                        "content",
                        "cart",
                        f"says {clause.strip()!r} but the cart holds {list(ctx.cart)}",
                    )
            if P.HAND_CLAIM.search(clause):
                if ctx.held_item is None:
                    found(
                        "content", "holding", f"says {clause.strip()!r} but the user holds nothing"
                    )
                elif ref and ctx.held_item not in ref:
                    found(
                        "content",
                        "holding",
                        f"says {clause.strip()!r} but the user holds {ctx.held_item!r}",
                    )
        for bm in P.BUDGET_CLAIM.finditer(text):
            written = next(g for g in bm.groups() if g)
            amount = float(written)
            budget = _revealed_budget(ctx)
            if budget is None:
                found("content", "budget", f"cites a ${amount:g} budget the user has not stated")
            elif not self._price_ok(Amount(amount, 0, 0, written, exact_cents="." in written), budget):
                found("content", "budget", f"cites a ${amount:g} budget; the user said ${budget:g}")

        said = ctx.said
        for claim in said.claims:
            # The catalog records no promotions, awards, ratings, popularity or stock levels.
            found("content", "commercial", f"claims {claim!r}, which the catalog does not support")
        told = {t for u in ctx.shopper_said for t in u.wants + u.avoids}
        told |= {str(i.value) for i in ctx.revealed_items if isinstance(i.value, str)}
        for cue in P.ABOUT_THE_SHOPPER.finditer(said.text):
            # the labels said right after "you said / you wanted / you love ..."
            window = (cue.end(), cue.end() + 40)
            claimed = {
                tag
                for t in said.tags
                if not t.in_name and window[0] <= said.tokens[t.start].start < window[1]
                for tag in t.tags
            }
            if claimed and not claimed & told:
                found(
                    "content",
                    "preference",
                    f"says the shopper asked for {sorted(claimed)[0].partition(':')[2]!r}, which they never said",
                )

        gate = 0.0 if findings else 1.0
        return ComponentScore(gate, {"gate": gate, "findings": findings})

    # ------------------------------------------------------------------ helpers
    def _price_ok(self, amount: Amount, price: float) -> bool:
        """Exact to the cent when written with cents; a whole figure may round (within
        ``whole_dollar_tolerance``); a rough one ("about five bucks") within 10% as well."""
        gap = abs(amount.value - price)
        if gap <= self.price_tolerance + 1e-9:
            return True
        if amount.approx:
            return gap <= max(self.whole_dollar_tolerance, 0.10 * price) + 1e-9
        return not amount.exact_cents and gap <= self.whole_dollar_tolerance + 1e-9

    def _check_action(self, ctx: TurnContext, lex: Lexicon, found) -> None:
        products = ctx.index.products
        for pid in ctx.ranking:
            if pid not in products:
                found("item", "ranking", f"ranks {pid!r}, which is not in the catalog")
        if ctx.action_type != "Recommend":
            return
        action = ctx.action or {}
        display = str(action.get("display_name") or "").strip()
        rid = ctx.recommended_id
        if rid is not None and rid not in products:
            found("item", "display_name", f"recommends {rid!r}, which is not in the catalog")
            return
        if display:
            if rid is None:
                if not lex.products_covering(display):
                    found(
                        "item",
                        "display_name",
                        f"recommends {display!r}, which matches no catalog product",
                    )
            elif not lex.covers(rid, display):
                found(
                    "item",
                    "display_name",
                    f"display name {display!r} does not match {products[rid].name!r}",
                )
        visible_now = action.get("visible_now")
        if isinstance(visible_now, str):
            visible_now = visible_now.strip().lower() in ("true", "yes", "1")
        if (
            visible_now is True
            and rid is not None
            and rid not in ctx.visible
            and rid != ctx.held_item
        ):
            found(
                "item",
                "visibility",
                f"says {products[rid].name!r} is visible now; it is not in view",
            )


def _spans(pattern: re.Pattern[str], text: str) -> list[tuple[int, int]]:
    out, pos = [], 0
    for m in pattern.finditer(text):
        out.append((pos, m.start()))
        pos = m.end()
    out.append((pos, len(text)))
    return out


def _focus(ctx: TurnContext) -> str | None:
    """The product the turn is about when the text says "it": recommended, discussed or held."""
    if ctx.recommended_id in ctx.index.products:
        return ctx.recommended_id
    if ctx.action_type in _FOCUS_ACTIONS:
        for t in reversed(ctx.history):
            if t.recommended_id in ctx.index.products:
                return t.recommended_id
    return ctx.held_item


def _referent(
    text: str, pos: int, sentences, mentions: list[Mention], focus: str | None
) -> set[str]:
    """Products a claim at ``pos`` is about: the sentence's last earlier mention; else, after
    "it/this", the text's last earlier mention or the focus; else the sentence's next one."""
    for s, e in sentences:
        if s <= pos <= e:
            inside = [m for m in mentions if s <= m.start < e and m.candidates]
            before = [m for m in inside if m.start < pos]
            if before:
                return set(before[-1].candidates)
            if any(m.unknown for m in mentions if s <= m.start < e):
                return set()  # already reported as an unknown product
            lead = {t.low for t in tokenize(text[s:pos])}
            if P.REFERRING_PRONOUNS & lead or not inside:
                earlier = [m for m in mentions if m.start < s and m.candidates]
                if earlier:
                    return set(earlier[-1].candidates)
                return {focus} if focus else set()
            return set(inside[0].candidates)
    return set()


_ATTRIBUTES = re.compile(
    r"\b(?:it|this|that|they|which|these|those)\s*(?:'s|'re|is|are)\b|\bis (?:exactly |just |really )?(?:the|a|an)\b"
    r"|\bone (?:that )?you\b|\bjust like you\b|\bas you (?:wanted|asked|said)\b"
)


def _in_budget_claim(text: str, pos: int) -> bool:
    return any(m.start() <= pos < m.end() for m in P.BUDGET_CLAIM.finditer(text))


def _find_phrases(low: list[str], lex: Lexicon):
    """Label phrases (longest first) in ``low`` that no nearby negation cancels."""
    table = lex.tag_phrases
    for i, w in enumerate(low):
        longest = lex.tag_firsts.get(w)
        if longest is None:
            continue
        for n in range(min(longest, len(low) - i), 0, -1):
            key = tuple(low[i : i + n])
            if key in table and not (n == 1 and key[0] in FUNCTION_WORDS):
                if not NEGATIONS.intersection(low[max(0, i - 3) : i]):
                    yield key
                break


def _find_places(low: list[str], places: dict[tuple[str, ...], str]):
    firsts = {key[0] for key in places}
    for i in range(len(low)):
        if low[i] not in firsts:
            continue
        for key in places:
            if key[0] == low[i] and tuple(low[i : i + len(key)]) == key:
                yield i, key


def _this_one(low: list[str]) -> bool:
    return any(
        a == "this" and b in ("one", "product", "item", "option")
        for a, b in zip(low, low[1:], strict=False)
    )


def _says_contains(low: list[str], phrase: tuple[str, ...]) -> bool:
    n = len(phrase)
    for i in range(len(low) - n + 1):
        if tuple(low[i : i + n]) == phrase and {"contains", "contain", "containing"} & set(
            low[max(0, i - 3) : i]
        ):
            return True
    return False


def _revealed_budget(ctx: TurnContext) -> float | None:
    for item in ctx.revealed_items:
        if item.kind == "budget":
            return float(item.value) if isinstance(item.value, (int, float)) else ctx.task.budget
    return None
