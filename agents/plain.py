"""PlainAssistant: asks, guides by place names, recommends one product at a time with reasons.

Written from the paper's description of good assistance (SituRecBench sections 2-3, App. B)
and nothing else: greet and ask one question at a time (category, budget, must-haves,
things to avoid), read the answers with its own plain word matching
(``agents.plain_reading``), filter and rank the catalog, walk the shopper to the product's
fixture, store or display area by name (``agents.plain_route``), recommend the best fit by
its display name with catalog facts as the reason, answer questions, move on after a no,
and invite the purchase when the shopper is looking at a fitting product.
"""

from __future__ import annotations

import json
import re
import zlib
from typing import Any

import numpy as np

from agents.base import Assistant
from agents.obs_text import (
    CatalogEntry,
    NavTarget,
    parse_caption,
    parse_catalog,
    parse_history,
    parse_nav_targets,
)
from agents.plain_reading import CatalogVocabulary, read_utterance
from agents.plain_route import (
    Step,
    home_step,
    product_distances,
    short_place,
    split_location,
    supermarket_step,
)
from situ_gym.actions.assistant import MAX_RANKING
from situ_gym.actions.tools import LEGAL_TOOLS
from situ_gym.stores import PAPER_STORES, store_spec

__all__ = ["PlainAssistant", "describe_label"]

NEAR_ENOUGH = 5.0  # metres: close enough to point the shopper at a product on display
_ACTION = re.compile(r"^(\w+)\((.*)\) -> ")
_KEY_WORDS = {"flavour": "flavours", "material": "materials", "color": "colours", "style": "styles",
              "diet": "dietary needs", "size": "sizes", "feature": "features", "packaging": "packaging",
              "variety": "varieties", "ripeness": "ripeness"}


def describe_label(tag: str) -> str:
    """"flavour:honey" -> "honey flavour"; labels read as a person would say them."""
    key, _, value = tag.partition(":")
    if not value:
        return key
    return {
        "flavour": f"{value} flavour",
        "style": f"{value} style",
        "size": f"{value} size" if not value[0].isdigit() else value,
        "packaging": f"sold in a {value}",
        "allergen": f"contains {value}",
        "material": f"made of {value}",
    }.get(key, value)


def _join(parts: list[str]) -> str:
    if len(parts) <= 1:
        return "".join(parts)
    return ", ".join(parts[:-1]) + " and " + parts[-1]


def _money(value: float) -> str:
    return f"${value:,.2f}".replace(".00", "")


class PlainAssistant(Assistant):
    """A plainly written shopping assistant (no knowledge of the shopper's wording).

    Deterministic: the same seed, catalog and conversation give the same turns; the seed
    only picks between equivalent phrasings.
    """

    name = "plain"

    def __init__(self, max_questions: int = 3):
        if max_questions < 0:
            raise ValueError(f"max_questions must be >= 0, got {max_questions!r}")
        self.max_questions = max_questions
        self.store = PAPER_STORES[0]
        self.spec = store_spec(self.store)
        self._rng = np.random.default_rng(0)

    # ------------------------------------------------------------------ episode state
    def reset(self, observation: dict[str, Any], info: dict[str, Any], *, seed: int | None = None) -> None:
        catalog = observation.get("catalog", "")
        store = info.get("store")
        if store not in LEGAL_TOOLS:
            store = PAPER_STORES[1] if "outside_doorway" in catalog else PAPER_STORES[0]
        self.store = store
        self.spec = store_spec(store)
        # seed and task both pick the wording, so that one run shows every phrasing
        self._rng = np.random.default_rng([seed or 0, zlib.crc32(str(info.get("task_id", "")).encode())])
        self.products = parse_catalog(catalog)
        self.by_id = {p.id: p for p in self.products}
        self.by_name = {p.name: p for p in self.products}
        self.targets = parse_nav_targets(catalog)
        self.vocab = CatalogVocabulary.from_catalog(self.products, [t.name for t in self.targets])
        self.prices = {p.name: p.price for p in self.products}
        self.category: str | None = None
        self.category_options: list[str] = []
        self.budget: float | None = None
        self.wanted: set[str] = set()
        self.avoided: set[str] = set()
        self.rejected: set[str] = set()
        self.recommended: list[str] = []
        self.inspected: set[str] = set()
        self.asked: list[str] = []
        self.focus: str | None = None
        self.accepted = False
        self.questions: list[str] = []
        self.just_rejected: str | None = None
        self.last_act: str | None = None
        self._seen = 0
        self._said: set[str] = set()

    def _say(self, *variants: str) -> str:
        """One of equivalent phrasings, seeded; one not said yet in this episode if possible."""
        order = [variants[i] for i in self._rng.permutation(len(variants))]
        text = next((v for v in order if v not in self._said), order[0])
        self._said.add(text)
        return text

    # ------------------------------------------------------------------ reading
    def _read(self, events: list[tuple[str, str]]) -> None:
        self.questions = []
        self.just_rejected = None
        for speaker, text in events:
            if speaker == "user":
                self._read_words(text)
            elif speaker == "action":
                self._read_action(text)

    def _reject(self, pid: str | None, labels: set[str] = frozenset(), price: bool = False) -> None:
        if pid is None or pid not in self.by_id:
            return
        self.rejected.add(pid)
        self.just_rejected = pid
        product = self.by_id[pid]
        # the labels they named while turning it down are what they do not want
        self.avoided |= labels & set(product.tags) - self.wanted
        if price and (self.budget is None or self.budget >= product.price):
            self.budget = round(product.price - 0.01, 2)
        if self.focus == pid:
            self.focus = None
            self.accepted = False

    def _read_words(self, text: str) -> None:
        only = {t for p in self.products if p.category == self.category for t in p.tags} if self.category else None
        reading = read_utterance(text, self.vocab, asked_budget=self.asked[-1:] == ["budget"], prices=self.prices,
                                 only_labels=only)
        if self.category is None and reading.categories:  # read again, hearing that category's labels
            category = max(reading.categories, key=len)
            only = {t for p in self.products if p.category == category for t in p.tags}
            reading = read_utterance(text, self.vocab, prices=self.prices, only_labels=only)
        if reading.categories:
            self.category = max(reading.categories, key=len) if self.category not in reading.categories else self.category
            self.category_options = []
        elif reading.head_matches and self.category is None:
            if len(reading.head_matches) == 1:
                self.category = reading.head_matches[0]
            else:
                self.category_options = sorted(reading.head_matches)
        if reading.budget is not None:
            self.budget = reading.budget
        self.wanted = (self.wanted - reading.avoided) | reading.wanted
        self.avoided = (self.avoided - reading.wanted) | reading.avoided
        for name in reading.rejected_names:
            self._reject(self.by_name[name].id, reading.rejection_labels, reading.price_complaint)
        proposing = self.last_act in ("Recommend", "ConfirmPurchase", "Explain", "AnswerQuestion", "Compare")
        if reading.rejects and proposing and self.focus is not None:
            self._reject(self.focus, reading.rejection_labels, reading.price_complaint)
        if reading.accepts and self.focus is not None and not reading.rejects:
            self.accepted = True
        for name in reading.named:  # the product they talk about (and did not turn down) is in focus
            p = self.by_name[name]
            if p.id not in self.rejected and name not in reading.rejected_names and self.category in (None, p.category):
                self.focus = p.id
        self.questions = reading.questions

    def _read_action(self, text: str) -> None:
        m = _ACTION.match(text)
        if not m:
            return
        tool, args = m.groups()
        item = args[len("item="):] if args.startswith("item=") else None
        pid = self.by_name[item].id if item in self.by_name else None
        if tool in ("pick_up_item", "check_item") and pid is not None:
            self.inspected.add(pid)
            if pid not in self.rejected:
                self.focus = pid
        elif tool == "do_not_add_to_cart":
            self._reject(pid)
        elif tool == "drop_item" and self.focus in self.inspected:
            self._reject(self.focus)  # put back after reading the label: not this one

    # ------------------------------------------------------------------ ranking
    def _fits(self, p: CatalogEntry) -> bool:
        return p.id not in self.rejected and not (self.avoided & set(p.tags))

    def _suits(self, p: CatalogEntry) -> bool:
        """Worth buying by everything we heard: category, budget, wishes to avoid, no rejection."""
        affordable = self.budget is None or p.price <= self.budget
        return self._fits(p) and p.category == self.category and affordable

    def _candidates(self) -> list[CatalogEntry]:
        if self.category is None:
            return []
        pool = [p for p in self.products if p.category == self.category and self._fits(p)]
        within = [p for p in pool if self.budget is None or p.price <= self.budget]
        pool = within or sorted(pool, key=lambda p: p.price)[:1]  # nothing affordable: the cheapest
        return sorted(pool, key=lambda p: (-len(self.wanted & set(p.tags)), p.price, p.id))

    def _ranking(self, candidates: list[CatalogEntry]) -> list[str]:
        ids = [p.id for p in candidates]
        if self.category is not None:
            rest = sorted((p for p in self.products if p.category == self.category and p.id not in ids),
                          key=lambda p: (p.id in self.rejected, p.price, p.id))
            ids += [p.id for p in rest]
        return ids[:MAX_RANKING]

    # ------------------------------------------------------------------ words
    def _facts(self, p: CatalogEntry, *, all_labels: bool = False) -> str:
        liked = [t for t in p.tags if t in self.wanted]
        others = [t for t in p.tags if t not in self.wanted and (all_labels or not t.startswith("allergen:"))]
        labels = [describe_label(t) for t in liked + others[: (len(others) if all_labels else max(0, 3 - len(liked)))]]
        article = "an" if p.category[:1].lower() in "aeiou" else "a"
        return f"{article} {p.category} ({_join(labels)})" if labels else f"{article} {p.category}"

    def _reason(self, p: CatalogEntry) -> str:
        liked = [describe_label(t) for t in p.tags if t in self.wanted]
        parts = []
        if liked:
            parts.append(f"it has the {_join(liked)} you asked for")
        if self.budget is not None:
            parts.append(f"at {_money(p.price)} it stays within your {_money(self.budget)} budget"
                         if p.price <= self.budget else f"at {_money(p.price)} it is only a little over your budget")
        else:
            parts.append(f"it costs {_money(p.price)}")
        clear = [t.split(":", 1)[1] for t in self.avoided if ":" in t]
        if clear:
            parts.append(f"it has no {_join(sorted(set(clear)))}")
        return _join(parts)

    def _place(self, p: CatalogEntry) -> str:
        place, detail = split_location(p.location)
        if self.spec.layout == "fixtures":
            return f"on {short_place(place)}" + (f", {detail} side" if detail else "")
        return f"in {place}, {detail.split(' - ', 1)[-1]} section" if detail else f"in {place}"

    # ------------------------------------------------------------------ turn
    def act(self, observation: dict[str, Any]) -> str:
        events = parse_history(observation.get("history", ""))
        self._read(events[self._seen:])
        self._seen = len(events)
        caption = parse_caption(observation.get("visible", ""))
        pose = tuple(float(v) for v in observation.get("pose", (0.0, 0.0, 0.0)))
        distances = product_distances(observation.get("visible", ""))
        candidates = self._candidates()
        action, response, expected = self._decide(events, caption, pose, distances, candidates)
        self.last_act = action["type"]
        return json.dumps({
            "response": response,
            "assistant_actions": [action],
            "expected_user_action": expected,
            "ranking": self._ranking(candidates),
        })

    def _handle_of(self, caption, pid: str) -> tuple[str | None, float]:
        name = self.by_id[pid].name
        if caption.holding and caption.holding[1] == name:
            return caption.holding[0], 0.0
        for m in caption.products:
            if m.name == name:
                return m.handle, self._distances.get(m.handle, 0.0)
        return None, float("inf")

    def _inspect_tool(self) -> str:
        return self.spec.inspect_tool

    def _decide(self, events, caption, pose, distances, candidates):
        self._distances = distances
        idle = {"name": "idle", "arguments": {}}
        if not events:
            self.asked.append("category")
            return {"type": "Greet"}, self._say(
                "Hello! I'm here to help you find what you need. What are you shopping for today?",
                "Hi there, welcome! What kind of product can I help you find today?",
            ), idle

        focus = self.by_id.get(self.focus) if self.focus else None
        if focus is not None and self.questions:
            answer = self._answer(focus, caption, pose, candidates)
            if answer is not None:
                return answer

        if self.category is None:
            if self.category_options:
                options = _join(self.category_options[:4]).replace(" and ", " or ")
                return {"type": "ClarifyNeed"}, f"Just to be sure, do you mean {options}?", idle
            self.asked.append("category")
            text = self._say(
                "What sort of item are you looking for?",
                "Could you tell me which kind of product you need today?",
            )
            return {"type": "AskPreference"}, text, idle

        asked_after_category = len([a for a in self.asked if a != "category"])
        if asked_after_category < self.max_questions and len(candidates) > 1:
            question = self._next_question(candidates)
            if question is not None:
                return question

        # a fitting product in the shopper's hands or being looked at: invite the purchase
        if focus is not None and self._suits(focus) and (self.accepted or focus.id in self.inspected):
            handle, _ = self._handle_of(caption, focus.id)
            if handle is not None:
                return {"type": "ConfirmPurchase"}, self._say(
                    f"The {focus.name} suits what you described, so you can put it in your cart whenever you're ready.",
                    f"If you're happy with the {focus.name}, go ahead and add it to your cart.",
                ), {"name": "add_to_cart", "arguments": {"item": handle}}

        if not candidates:
            return {"type": "HandleRejection"}, self._say(
                f"I'm sorry, I've run out of {self.category} that match everything you told me. "
                "Would you bend on one of your wishes, or would another kind of product do?",
                f"Nothing else among the {self.category} fits all of that, I'm afraid. "
                "Is there something you could do without, or a different product I can find?",
            ), idle

        top = candidates[0]
        prefix = ""
        if self.just_rejected is not None:
            prefix = self._say("Understood, let's leave that one. ", "No problem, I'll find you something else. ")
        handle, distance = self._handle_of(caption, top.id)
        if handle is not None and distance <= NEAR_ENOUGH:
            expected = {"name": self._inspect_tool(), "arguments": {"item": handle}}
            if top.id not in self.recommended:
                self.recommended.append(top.id)
                self.focus = top.id
                reason = f"I'd recommend it because {self._reason(top)}."
                text = prefix + self._say(
                    f"I'd suggest the {top.name}. It's {self._facts(top)}, and {self._reason(top)}. Have a closer look at it.",
                    f"My pick for you is the {top.name}: {self._facts(top)}. {self._reason(top).capitalize()}. Take a look at it.",
                )
                return ({"type": "Recommend", "display_name": top.name, "visible_now": True, "reason": reason},
                        text, expected)
            self.focus = top.id
            return {"type": "Explain"}, (
                f"The {top.name} is right in front of you. It's {self._facts(top)}, and {self._reason(top)}. "
                "Have a look at it."
            ), expected
        return self._navigate(top, caption, pose, prefix)

    def _next_question(self, candidates: list[CatalogEntry]):
        idle = {"name": "idle", "arguments": {}}
        if self.budget is None and "budget" not in self.asked:
            self.asked.append("budget")
            return {"type": "AskPreference"}, self._say(
                f"Good, {self.category} it is. How much are you willing to spend?",
                f"Great, let's find you the right {self.category}. What budget do you have in mind?",
            ), idle
        if "needs" not in self.asked and not self.wanted:
            self.asked.append("needs")
            keys = sorted({t.split(":", 1)[0] for p in candidates for t in p.tags if ":" in t} - {"allergen"})
            kinds = _join([_KEY_WORDS.get(k, k) for k in keys[:3]]) or "features"
            return {"type": "AskPreference"}, (
                f"Is there anything it must have? For {self.category} I can check {kinds}."
            ), idle
        if "avoid" not in self.asked and not self.avoided and len(candidates) > 3:
            self.asked.append("avoid")
            return {"type": "AskPreference"}, (
                "And is there anything you'd rather avoid, such as an ingredient, material or colour?"
            ), idle
        return None

    def _answer(self, focus: CatalogEntry, caption, pose, candidates):
        handle, _ = self._handle_of(caption, focus.id)
        expected = ({"name": "add_to_cart", "arguments": {"item": handle}} if handle is not None
                    else {"name": "idle", "arguments": {}})
        kind = self.questions[0]
        if kind == "others" and len(candidates) > 1:
            other = next((p for p in candidates if p.id != focus.id), None)
            if other is not None:
                a, b = f"the {focus.name}", f"the {other.name}"
                return {"type": "Compare"}, self._say(
                    f"Side by side: {a} costs {_money(focus.price)} and is {self._facts(focus)}, "
                    f"while {b} costs {_money(other.price)} and is {self._facts(other)}.",
                    f"Compared with {b} ({_money(other.price)}), {a} is {self._facts(focus)} at "
                    f"{_money(focus.price)}, and {self._reason(focus)}.",
                    f"{a[0].upper() + a[1:]} gives you {self._facts(focus)} for {_money(focus.price)}; "
                    f"{b} is {self._facts(other)} for {_money(other.price)}.",
                ), expected
        if kind == "where":  # "I don't see it": the way to our best match
            return self._navigate(candidates[0] if candidates else focus, caption, pose, "")
        if kind == "price":
            return {"type": "AnswerQuestion"}, self._say(
                f"The {focus.name} costs {_money(focus.price)}.",
                f"It's {_money(focus.price)} for the {focus.name}.",
            ), expected
        if kind == "details":
            return {"type": "AnswerQuestion"}, self._say(
                f"The {focus.name} is {self._facts(focus, all_labels=True)}, priced at {_money(focus.price)}.",
                f"Here are the details: the {focus.name} is {self._facts(focus, all_labels=True)} "
                f"and sells for {_money(focus.price)}.",
            ), expected
        if kind in ("why", "others"):
            facts, reason = self._facts(focus), self._reason(focus)
            return {"type": "Explain"}, self._say(
                f"The {focus.name} is a good match: {reason}. It's {facts}.",
                f"I think the {focus.name} is right for you because {reason}.",
                f"Here's why the {focus.name} works: it's {facts}, and {reason}.",
                f"In short, the {focus.name} is {facts}, and {reason}. That's what you were after.",
            ), expected
        return None

    def _navigate(self, p: CatalogEntry, caption, pose, prefix: str):
        place, detail = split_location(p.location)
        if self.spec.layout == "fixtures":
            fixture = next((t for t in self.targets if t.name == place), None)
            if fixture is None:
                raise ValueError(f"no navigation target named {place!r}")
            step = supermarket_step(pose, caption, self.targets, fixture, detail)
            goal: NavTarget = fixture
        else:
            step: Step = home_step(pose, caption, self.targets, place, detail)
            goal = next((t for t in self.targets if t.name == (detail or place)), None)
        where = self._place(p)
        text = prefix + self._say(
            f"The {p.category} you want is {where}. Please {step.words}.",
            f"You'll find the {p.category} {where}, so {step.words}.",
            f"Next, {step.words}; the {p.category} is {where}.",
            f"The {p.category} is {where}. From here, {step.words}.",
        )
        action: dict[str, Any] = {
            "type": "Navigate",
            "navigation_goal": goal.handle,
            "reason": f"The best match for you is {where}.",
        }
        if self.spec.layout == "stores":
            action["next_waypoint"] = step.waypoint
            action["target_approach"] = step.approach or ("area" if detail else "inside_doorway")
        return action, text, step.call
