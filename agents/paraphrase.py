"""ParaphrasingAssistant: the heuristic's decisions, said in other words.

Wraps ``HeuristicAssistant`` and keeps its structured output (``assistant_actions``,
``expected_user_action``, ``ranking``) byte for byte; only ``response`` is rewritten, from
those fields and the catalog (names, prices, labels, places), with several seeded
phrasings per dialogue action: recommendations as questions, explanations without cue
words, navigation with other verbs and relations. Product and place names mentioned by
the heuristic survive verbatim; no run of six words (names aside) is kept.
"""

from __future__ import annotations

import json
import re
import zlib
from typing import Any

import numpy as np

from agents.base import Assistant
from agents.heuristic import HeuristicAssistant
from agents.obs_text import CatalogEntry, parse_caption, parse_catalog, parse_nav_targets
from agents.plain import describe_label
from agents.plain_route import short_place

__all__ = ["ParaphrasingAssistant", "shared_runs", "mentioned"]

RUN = 6  # words in a row that may not be shared with the heuristic's response
_MONEY = re.compile(r"\$\s?(\d[\d,]*(?:\.\d+)?)")
_WORD = re.compile(r"[a-z0-9$]+(?:['.,][a-z0-9]+)*")
_ENTITY = "\u2022"  # stands for a masked name when comparing runs


def mentioned(text: str, names: list[str]) -> list[str]:
    """Names (longest first, non-overlapping) in order of appearance in ``text``."""
    found: list[tuple[int, str]] = []
    taken: list[tuple[int, int]] = []
    for name in sorted(set(names), key=lambda n: (-len(n), n)):
        for m in re.finditer(r"(?<![A-Za-z0-9])" + re.escape(name) + r"(?![A-Za-z0-9])", text):
            span = (m.start(), m.end())
            if any(a < span[1] and span[0] < b for a, b in taken):
                continue
            taken.append(span)
            found.append((m.start(), name))
    seen: list[str] = []
    for _, name in sorted(found):
        if name not in seen:
            seen.append(name)
    return seen


def _mask(text: str, names: list[str]) -> list[str]:
    for name in sorted(set(names), key=len, reverse=True):
        text = text.replace(name, f" {_ENTITY} ")
    return [w for w in _WORD.findall(text.lower().replace(_ENTITY, " ent1ty ")) if w]


def shared_runs(a: str, b: str, names: list[str], n: int = RUN) -> set[tuple[str, ...]]:
    """Runs of ``n`` words common to both texts, each listed name counting as one word."""
    wa, wb = _mask(a, names), _mask(b, names)
    grams = {tuple(wa[i : i + n]) for i in range(len(wa) - n + 1)}
    return {g for g in (tuple(wb[i : i + n]) for i in range(len(wb) - n + 1)) if g in grams}


def _money(value: float) -> str:
    return f"${value:,.2f}".replace(".00", "")


def _join(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1] if parts else ""


class ParaphrasingAssistant(Assistant):
    """The heuristic assistant with its own words replaced (seeded choice among phrasings)."""

    name = "paraphrase"

    def __init__(self, max_questions: int = 3):
        self.inner = HeuristicAssistant(max_questions=max_questions)
        self._rng = np.random.default_rng(0)

    def reset(self, observation: dict[str, Any], info: dict[str, Any], *, seed: int | None = None) -> None:
        self.inner.reset(observation, info, seed=seed)
        # seed and task both pick the wording, so that one run shows every phrasing
        self._rng = np.random.default_rng([seed or 0, zlib.crc32(str(info.get("task_id", "")).encode())])
        catalog = observation.get("catalog", "")
        self.products = {p.name: p for p in parse_catalog(catalog)}
        targets = parse_nav_targets(catalog)
        self.places = sorted({t.name for t in targets} | {short_place(t.name) for t in targets}
                             | {t.name.split(" - ", 1)[-1] for t in targets if " - " in t.name})
        self.categories = sorted({p.category for p in self.products.values()}, key=len, reverse=True)
        self._said: set[str] = set()  # our own lines this episode: we never say one twice
        self._last_original: str | None = None
        self.last_heuristic: dict[str, Any] = {}
        self._originals: dict[str, str] = {}  # our response -> the heuristic's

    def _as_heard_by_inner(self, observation: dict[str, Any]) -> dict[str, Any]:
        """The observation with our past lines put back into the heuristic's own words, so
        that only the shopper hears the rewording (the heuristic's state is its own)."""
        lines = []
        for line in observation.get("history", "").split("\n"):
            if line.startswith("Assistant: ") and line[len("Assistant: "):] in self._originals:
                line = "Assistant: " + self._originals[line[len("Assistant: "):]]
            lines.append(line)
        return {**observation, "history": "\n".join(lines)}

    def act(self, observation: dict[str, Any]) -> str:
        out = json.loads(self.inner.act(self._as_heard_by_inner(observation)))
        self.last_heuristic = dict(out)  # what the heuristic said, for inspection and tests
        original = out.get("response", "")
        out["response"] = self.rephrase(out, original, parse_caption(observation.get("visible", "")))
        self._originals[out["response"]] = original
        return json.dumps(out)

    # ------------------------------------------------------------------ rewriting
    def rephrase(self, out: dict[str, Any], original: str, caption) -> str:
        """New words for ``original`` carrying the same names and facts."""
        action = (out.get("assistant_actions") or [{}])[0]
        kind = action.get("type", "")
        self._last_original = original
        names = mentioned(original, list(self.products))
        rest = original
        for n in names:
            rest = rest.replace(n, " ")
        places = mentioned(rest, self.places)
        facts = self._facts(original, names, rest)
        builder = getattr(self, f"_say_{kind.lower()}", self._say_other)
        variants = builder(action, out.get("expected_user_action") or {}, names, places, facts, caption)
        keep = names + places
        order = [variants[i] for i in self._rng.permutation(len(variants))] + [self._plain_facts(names, places, facts)]
        for text in order:
            text = self._complete(text, names, places)
            if not shared_runs(original, text, keep + self.categories) and text not in self._said:
                self._said.add(text)
                return text
        return self._complete(order[-1], names, places)

    def _facts(self, original: str, names: list[str], rest: str) -> dict[str, Any]:
        low = rest.lower()
        prices = {round(p.price, 2) for n in names if (p := self.products.get(n))}
        amounts = [float(a.replace(",", "")) for a in _MONEY.findall(rest)]
        budget = next((a for a in amounts if round(a, 2) not in prices), None)
        focus = self.products.get(names[-1]) if names else None
        labels: list[str] = []
        missing: list[str] = []
        pool = [t for p in self.products.values() for t in p.tags]
        for tag in dict.fromkeys(pool):
            value = tag.partition(":")[2]
            if value and re.search(r"(?<![a-z])" + re.escape(value.lower()) + r"(?![a-z])", low):
                if focus is not None and tag in focus.tags:
                    labels.append(tag)
                elif value not in [m for m in missing]:
                    missing.append(value)
        category = next((c for c in self.categories if re.search(r"\b" + re.escape(c) + r"\b", low)), None)
        words = set(re.findall(r"[a-z]+", low))
        direction = "left" if "left" in words else "right" if "right" in words else None
        return {"budget": budget, "labels": labels, "without": missing, "category": category,
                "direction": direction, "question": original.rstrip().endswith("?")}

    def _complete(self, text: str, names: list[str], places: list[str]) -> str:
        """Every name the heuristic said must still be said."""
        lost = [n for n in names + places if n not in text]
        if lost:
            text += " " + _join(lost) + (" is" if len(lost) == 1 else " are") + " part of the plan."
        return text

    def _describe(self, p: CatalogEntry, labels: list[str]) -> str:
        said = [describe_label(t) for t in labels if not t.startswith("allergen:")]
        if not said:  # nothing singled out: two of the catalog's own labels
            said = [describe_label(t) for t in p.tags if not t.startswith("allergen:")][:2]
        return _join(said) if said else f"a plain {p.category}"

    def _budget(self, facts, p: CatalogEntry | None) -> str:
        b = facts["budget"]
        if b is None or p is None:
            return ""
        return self._pick([f", under your {_money(b)} limit", f", so you stay below {_money(b)}",
                           f"; your {_money(b)} ceiling is safe"]) if p.price <= b else f", a bit above {_money(b)}"

    def _pick(self, options: list[str]) -> str:
        return options[int(self._rng.integers(len(options)))]

    # one builder per dialogue action: (action, expected, product names, places, facts, caption) -> variants
    def _say_greet(self, action, expected, names, places, facts, caption) -> list[str]:
        return ["Hello and welcome! Tell me what you're after today and what it's for.",
                "Hi, good to see you. What are you hoping to pick up today, and what will it be used for?",
                "Welcome in! What can I help you find, and what do you need it for?"]

    def _say_askpreference(self, action, expected, names, places, facts, caption) -> list[str]:
        return self._ask(facts)

    def _say_clarifyneed(self, action, expected, names, places, facts, caption) -> list[str]:
        return self._ask(facts)

    def _ask(self, facts) -> list[str]:
        cat = facts["category"]
        lead = f"Noted, {cat}. " if cat else ""
        text = (self._last_original or "").lower()
        if any(w in text for w in ("spend", "budget", "price", "pay", "cost")):
            return [lead + "What's the most you'd want to pay?",
                    lead + "What price range are you thinking of?",
                    lead + "How much were you planning to put toward it?"]
        if any(w in text for w in ("must", "avoid", "prefer", "flavour", "material", "allergen")):
            thing = f"the {cat}" if cat else "it"
            return [f"Is there something {thing} really needs to have, or something to steer clear of, "
                    "say a flavour, a material, a size or an allergen?",
                    f"Tell me any requirements for {thing}, and anything you'd rather not have: "
                    "flavour, material, size, allergens?",
                    f"Which features matter for {thing}, and which would rule it out? "
                    "Think flavour, material, size or allergens."]
        return [lead + "What would you like to find today, and what's it for?",
                lead + "What kind of item are you after, and for what occasion?",
                lead + "Which product are you hunting for, and how will you use it?"]

    def _say_recommend(self, action, expected, names, places, facts, caption) -> list[str]:
        name = action.get("display_name") or (names[0] if names else "")
        p = self.products.get(name)
        if p is None:
            return [f"How about the {name}?", f"Have you considered the {name}?"]
        desc, price, within = self._describe(p, facts["labels"]), _money(p.price), self._budget(facts, p)
        look = {"pick_up_item": self._pick([" Pick it up and read the label.", " Grab it and check the pack."]),
                "check_item": self._pick([" Give it a closer look.", " Go and inspect it up close."])}.get(
                    expected.get("name"), "")
        return [f"How about the {name}? It's {desc}, priced at {price}{within}.{look}",
                f"Take a look at the {name}: {desc}, for {price}{within}.{look}",
                f"What do you think of the {name}? You get {desc} at {price}{within}.{look}",
                f"The {name} could be the one: {desc}, and it's {price}{within}.{look}"]

    def _say_explain(self, action, expected, names, places, facts, caption) -> list[str]:
        focus_name = self._expected_item(expected, caption) or (names[-1] if names else None)
        p = self.products.get(focus_name) if focus_name else None
        if p is None:
            return [self._plain_facts(names, places, facts)]
        others = [self.products[n] for n in names if n != focus_name and n in self.products]
        desc, price, within = self._describe(p, facts["labels"]), _money(p.price), self._budget(facts, p)
        clean = f" There's no {_join(facts['without'])} in it." if facts["without"] else ""
        if others:
            o = others[0]
            cheaper = "and it's the cheaper of the two" if p.price < o.price else "and it has more of what you listed"
            return [f"Between the {o.name} ({_money(o.price)}) and the {focus_name} ({price}), I'd pick the "
                    f"{focus_name}: {desc}, {cheaper}.",
                    f"Put the {focus_name} next to the {o.name}: the first gives you {desc} at {price}, {cheaper}.",
                    f"The {focus_name} beats the {o.name} for you. It has {desc}, {cheaper}."]
        return [f"The {focus_name} is a {p.category}: {desc}, at {price}{within}.{clean}",
                f"Here's what the {focus_name} offers: {desc}, for {price}{within}.{clean}",
                f"On the {focus_name}: it's a {p.category}, {desc}, and it costs {price}{within}.{clean}"]

    _say_compare = _say_explain

    def _say_confirmpurchase(self, action, expected, names, places, facts, caption) -> list[str]:
        name = self._expected_item(expected, caption) or (names[0] if names else "item")
        if names and name not in names:
            name = names[0]
        return [f"Happy with the {name}? Then pop it into your cart.",
                f"The {name} ticks your boxes, so feel free to add it to the cart.",
                f"Want to go ahead with the {name}? You can put it in your cart now."]

    def _say_handlerejection(self, action, expected, names, places, facts, caption) -> list[str]:
        if not names:
            return ["Okay, that one's out. Let's keep looking together.",
                    "Fair enough, we'll set that aside and find something better."]
        name = names[-1]
        return [f"Okay, that one's out. Let's try the {name} instead; I'll take you to it.",
                f"Fair enough. The {name} may work better for you, so follow me over there.",
                f"No worries, scratch that. Next up is the {name}; I'll lead the way."]

    def _say_answerquestion(self, action, expected, names, places, facts, caption) -> list[str]:
        return [self._plain_facts(names, places, facts, style) for style in range(3)]

    def _say_other(self, action, expected, names, places, facts, caption) -> list[str]:
        return [self._plain_facts(names, places, facts)]

    def _plain_facts(self, names: list[str], places: list[str], facts, style: int = 0) -> str:
        parts = []
        for n in names:
            p = self.products.get(n)
            if p is not None:
                labels = [t for t in facts["labels"] if t in p.tags]
                described = self._describe(p, labels) if labels else ""
                if style == 1:
                    parts.append(f"Here is what the {n} offers: {described + ', for ' if described else 'a price of '}{_money(p.price)}.")
                elif style == 2:
                    parts.append(f"At {_money(p.price)}, the {n}" + (f" is {described}." if described else " is on the shelf here."))
                else:
                    parts.append(f"The {n} sells for {_money(p.price)}" + (f" and is {described}." if described else "."))
        if places:
            parts.append(f"Look for it around {_join(places)}.")
        return " ".join(parts) or "Let me know how I can help next."

    def _expected_item(self, expected: dict[str, Any], caption) -> str | None:
        handle = (expected.get("arguments") or {}).get("item")
        if handle is None:
            return None
        if caption.holding and caption.holding[0] == handle:
            return caption.holding[1]
        return next((m.name for m in caption.products if m.handle == handle), None)

    def _say_navigate(self, action, expected, names, places, facts, caption) -> list[str]:
        call, args = expected.get("name", ""), expected.get("arguments") or {}
        cat = facts["category"]
        thing = f"the {cat}" if cat else "what we're after"
        here, there = (places + [None, None])[:2]
        if there is None:
            there = here
        beyond = f" {there} is past it." if there and there != here else ""
        if call == "turn":
            d, angle = args.get("direction", "left"), args.get("angle", 90)
            goal = here or thing
            also = f" We want {thing}." if cat and here else ""
            return [f"Rotate roughly {angle} degrees to your {d}; {goal} lies that way.{also}",
                    f"{goal[0].upper() + goal[1:]} is off to your {d}, so swing round about {angle} degrees.{also}",
                    f"Face {d}, turning around {angle} degrees, and look for {goal}.{also}"]
        if call in ("move_forward", "turn_and_move", "move_and_turn"):
            return [f"Keep going straight on toward {here}.", f"Carry on forward a little, heading for {here}.",
                    f"Just walk on ahead in the direction of {here}."]
        if call == "side_step":
            d = args.get("direction", "left")
            return [f"While you're at {here}, shuffle a few steps to the {d}; {thing} sits a bit further down.",
                    f"Stay by {here} and slide over to your {d}; {thing} is along that stretch."]
        if call == "move_to_fixture":
            side = args.get("approach", "nearest")
            at = "the closest end of" if side == "nearest" else f"the {side} face of"
            return [f"Make your way to {at} {here}.{beyond} You'll find {thing} there." if not beyond
                    else f"Make your way to {at} {here}.{beyond}",
                    f"Go round to {at} {here}." + (beyond or f" That's where {thing} is kept."),
                    f"Your next stop is {at} {here}." + (beyond or f" You'll see {thing} stocked there.")]
        if call == "move_to_store":
            inside = args.get("approach") == "inside_doorway"
            if inside:
                return [f"Step through the entrance of {here} and into the shop.",
                        f"Go on into {here}, just past its entrance.",
                        f"Enter {here} through its doorway."]
            if len(places) >= 2:
                return [f"Head out of {here} by the entrance first; {there} is somewhere else on this floor.",
                        f"Exit {here} through its doorway; {there} is in another part of the floor.",
                        f"Make for the entrance of {here}, stopping just outside.{beyond}"]
            return [f"Make for the entrance of {here}, stopping just outside.",
                    f"Walk up to the front of {here} without going in."]
        if call == "move_to_area":
            if there == here and here and " - " in here:
                there = here.split(" - ", 1)[0]
            return [f"Make for the {here} display inside {there}; that's where {thing} is kept.",
                    f"Inside {there}, walk over to the {here} section for {thing}.",
                    f"Go to the {here} corner of {there}, where {thing} is on show."]
        return [f"Let's get you toward {_join(places)}." if places else "Let's keep moving.",
                f"Our route goes by {_join(places)}." if places else "Let's carry on."]
