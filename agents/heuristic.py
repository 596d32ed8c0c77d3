"""A strong non-LLM baseline assistant: elicit, filter, route, recommend, confirm.

It reads only the observation text (catalog, fixed targets, caption, history, pose),
exactly what a text-only language model would get, and keeps a belief about the
shopper's needs built from the shopper's own words.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from agents.base import Assistant
from agents.obs_text import (
    CatalogEntry,
    Marked,
    NavTarget,
    parse_caption,
    parse_catalog,
    parse_history,
    parse_nav_targets,
)
from situ_gym.actions.assistant import MAX_RANKING
from situ_gym.language import SceneLexicon, analyze, lexicon_for
from situ_gym.scene import SceneIndex
from situ_gym.scene.loader import load_scene
from situ_gym.stores import PAPER_STORES, store_spec

__all__ = ["HeuristicAssistant"]

# The env's record of a shopper action on a product ("pick_up_item(item=NAME)"): structured
# action notation written by the env, not free text.
HANDLED_ITEM = re.compile(r"(do_not_add_to_cart|pick_up_item|check_item)\(item=(.+?)\)")



def _short(name: str) -> str:
    """"Shelf 3: jam, coffee, tea" -> "Shelf 3" (fixture names carry their contents)."""
    return name.split(":", 1)[0].strip()


@lru_cache(maxsize=4)
def _lexicon(store: str) -> SceneLexicon:
    """The store's catalog as the language layer reads it (the same catalog the observation lists)."""
    return lexicon_for(SceneIndex(load_scene(store)))


@dataclass
class _Belief:
    category: str | None = None
    budget: float | None = None
    required: set[str] = field(default_factory=set)
    avoided: set[str] = field(default_factory=set)
    context_words: set[str] = field(default_factory=set)
    rejected: set[str] = field(default_factory=set)


class HeuristicAssistant(Assistant):
    """Greets, asks about unknown slots, filters the catalog, routes, recommends, confirms."""

    name = "heuristic"

    ranking_size = MAX_RANKING  # ids per ranking

    def __init__(self, max_questions: int = 3):
        self.max_questions = max_questions

    # ------------------------------------------------------------------ episode
    def reset(self, observation: dict[str, Any], info: dict[str, Any], *, seed: int | None = None) -> None:
        self.store = info.get("store", PAPER_STORES[0])
        self.spec = store_spec(self.store)
        self.catalog: dict[str, CatalogEntry] = {e.id: e for e in parse_catalog(observation["catalog"])}
        self.targets: dict[str, NavTarget] = {t.handle: t for t in parse_nav_targets(observation["catalog"])}
        self.target_by_name = {t.name.lower(): t for t in self.targets.values()}
        self.place_names = sorted(
            {n for t in self.targets.values() for n in (t.name.lower(), _short(t.name).lower())}, key=len, reverse=True
        )
        self.lexicon = _lexicon(self.store)
        self.by_category: dict[str, list[str]] = {}
        for e in self.catalog.values():
            self.by_category.setdefault(e.category, []).append(e.id)
        self.last_user = None
        self.belief = _Belief()
        self.turn = 0
        self.seen_events = 0
        self.asked: list[str] = []
        self.recommended: list[str] = []
        self.explanations: dict[str, int] = {}
        self.confirmations = 0
        self.scans: list[tuple[str, int]] = []
        self.last_scan_turn = 0
        # The no-caption ablation (App. D.4), as agent_info says; the caption's own title tells
        # it too, for runners that hand over the store only.
        self.no_caption = info.get("ablation") == "no_ego_view_no_caption"
        self.blind = self.no_caption
        self.last_recommended: str | None = None
        self.focus: str | None = None  # product the shopper is inspecting or was recommended
        self.said: list[str] = []

    def act(self, observation: dict[str, Any]) -> str:
        self.turn += 1
        events = parse_history(observation["history"])
        new_events = events[self.seen_events :]
        self.seen_events = len(events)
        self._update_belief(new_events)
        caption = parse_caption(observation["visible"])
        # Without visual captions (App. D.4 ablation) the caption lists every fixed target:
        # all of them may be named, and products are named by display name.
        self.blind = self.no_caption or "Navigation targets" in observation["visible"]
        if self.blind:
            for t in self.targets.values():
                kind = "areas" if t.kind.startswith("area") else "stores" if t.kind == "store" else "fixtures"
                getattr(caption, kind).append(Marked(t.handle, t.name, t.approaches))
        pose = observation["pose"]
        ranking = self._rank()
        action, expected, response = self._decide(caption, ranking, pose, events)
        response = self._fresh(response)
        return json.dumps(
            {
                "response": response,
                "assistant_actions": [action],
                "expected_user_action": expected,
                "ranking": [p.id for p in ranking[: self.ranking_size]],
            }
        )

    _REPHRASE = (
        "{} I'll keep guiding you.",
        "As a next step: {}",
        "{} We're getting closer.",
        "Next: {}",
        "{} Tell me if anything blocks your way.",
    )

    def _fresh(self, response: str) -> str:
        """Say it differently when the same sentence was already used (repetition stalls)."""
        n = self.said.count(response)
        self.said.append(response)
        if n == 0:
            return response
        return self._REPHRASE[(n - 1) % len(self._REPHRASE)].format(response)

    # ------------------------------------------------------------------ belief
    def _update_belief(self, events: list[tuple[str, str]]) -> None:
        b = self.belief
        for speaker, text in events:
            if speaker == "action":
                m = HANDLED_ITEM.match(text)
                pid = self._product_by_name(m.group(2)) if m else None
                if pid and m.group(1) == "do_not_add_to_cart":
                    b.rejected.add(pid)
                elif pid:
                    self.focus = pid  # the shopper is looking at it now
                continue
            if speaker != "user":
                continue
            focus = self.focus or self.last_recommended
            u = analyze(text, self.lexicon, focus=focus)
            self.last_user = u
            # A kind of product named as something to avoid ("it can't contain any milk") is
            # no request for it.
            avoided_words = {w for t in u.avoids for w in t.partition(":")[2].lower().split()}
            named = [
                m for m in u.mentions
                if m.kind == "category" and m.category in self.by_category
                and not set(m.phrase.lower().split()) <= avoided_words
            ]
            if named and (b.category is None or not u.products):
                b.category = named[0].category
            elif b.category is None and u.categories:
                b.category = next((c for c in u.categories if c in self.by_category), None)
            if u.budget is not None:
                b.budget = u.budget.amount
            # Labels count as wishes only when the believed category carries them at all.
            carried = {t for pid in self.by_category.get(b.category, self.catalog) for t in self.catalog[pid].tags}
            b.avoided.update(t for t in u.avoids if t in carried)
            b.required.update(t for t in u.wants if t in carried and t not in b.avoided)
            b.required -= b.avoided
            b.context_words.update(t.lemma for t in u.tokens if t.text[:1].isalpha() and len(t.lemma) > 2)
            if u.rejects and not u.accepts:
                target = (u.products[:1] or [focus])[0]
                if target:
                    b.rejected.add(target)
                    if self.focus == target:
                        self.focus = None

    def _product_by_name(self, name: str) -> str | None:
        name = name.strip().lower()
        for pid, e in self.catalog.items():
            if e.name.lower() == name:
                return pid
        return None

    def _score(self, e: CatalogEntry) -> float:
        b = self.belief
        score = 0.0
        if b.category is not None:
            score += 10.0 if e.category == b.category else -10.0
        tags = set(e.tags)
        score += 3.0 * len(tags & b.required) - 2.0 * len(b.required - tags)
        score -= 20.0 * len(tags & b.avoided)
        if b.budget is not None:
            score += 2.0 if e.price <= b.budget else -8.0
        score += 0.5 * len(self.lexicon.all_words.get(e.id, frozenset()) & b.context_words)
        if e.id in b.rejected:
            score -= 50.0
        return score

    def _rank(self) -> list[CatalogEntry]:
        return sorted(self.catalog.values(), key=lambda e: (-self._score(e), e.price, e.id))

    def _confident(self, e: CatalogEntry) -> bool:
        b = self.belief
        tags = set(e.tags)
        return (
            b.category is not None
            and e.category == b.category
            and e.id not in b.rejected
            and not (tags & b.avoided)
            and b.required <= tags
            and (b.budget is None or e.price <= b.budget)
        )

    # ------------------------------------------------------------------ policy
    def _decide(self, caption, ranking, pose, events):
        b = self.belief
        last = self.last_user
        idle = {"name": "idle", "arguments": {}}

        if self.turn == 1:
            return (
                {"type": "Greet"},
                idle,
                "Hi! I'm happy to help you shop today. What are you looking for, and what will you use it for?",
            )
        if b.category is None and self.asked.count("category") < 2:
            self.asked.append("category")
            return (
                {"type": "AskPreference"},
                idle,
                "What kind of product do you have in mind? A product type or how you plan to use it helps me find the right aisle.",
            )

        if not ranking:  # nothing in the catalog it was shown matches yet (compact view, a silent shopper)
            return (
                {"type": "ClarifyNeed"},
                idle,
                "Tell me a little more about what you need, a product type, a brand or what it is for, "
                "and I'll find it for you.",
            )
        best = ranking[0]
        visible = {m.name.lower(): m.handle for m in caption.products}
        if self.blind:
            visible = self._products_here(events)
        holding = caption.holding
        best_handle = visible.get(best.name.lower())
        inspect_tool = self.spec.inspect_tool

        # The shopper is considering a product (ours or one it picked): answer, then confirm.
        focus = self.focus or self.last_recommended
        if focus and focus not in b.rejected:
            rec = self.catalog[focus]
            held = holding is not None and holding[1].lower() == rec.name.lower()
            handle = holding[0] if held else visible.get(rec.name.lower())
            asking = last is not None and bool(last.questions or last.requests)
            asked_about = (last is not None and rec.id in last.products) or asking
            # Only a product believed to fit is named with a purchase prompt or a reason: the
            # shopper counts every product proposed (whatever the label), and a doubtful one
            # would spend one of its three recommendations.
            if handle is not None and not self._confident(rec) and asked_about:
                # Doubtful: state the facts and let the shopper judge (no proposal, no prompt).
                facts = ", ".join(t.split(":", 1)[-1] for t in rec.tags[:4])
                return (
                    {"type": "AnswerQuestion"},
                    {"name": inspect_tool if not held else "idle", "arguments": {"item": handle} if not held else {}},
                    f"The {rec.name} costs ${rec.price:.2f}; its labels say {facts}.",
                )
            if handle is not None and self._confident(rec):
                inspected = held or any(
                    s == "action" and t.startswith(inspect_tool) and rec.name in t for s, t in events
                )
                if asking:
                    kind = "Compare" if {"compare", "alternatives"} & set(last.requests) else "Explain"
                    return (
                        {"type": kind},
                        {"name": "add_to_cart", "arguments": {"item": handle}},
                        self._explain(rec, variant=self.explanations.get(rec.id, 0), ranking=ranking),
                    )
                if inspected:
                    n = self.confirmations = self.confirmations + 1
                    closing = ["If you're happy with it, add it to your cart.", "Shall we put it in your cart?", "It's ready to go in your cart whenever you are."][n % 3]
                    return (
                        {"type": "ConfirmPurchase"},
                        {"name": "add_to_cart", "arguments": {"item": handle}},
                        f"The {rec.name} matches what you told me. {closing}",
                    )
                return (
                    {"type": "Explain"},
                    {"name": inspect_tool, "arguments": {"item": handle}},
                    f"Take a closer look. {self._explain(rec, variant=0, ranking=ranking)}",
                )

        if b.budget is None and "budget" not in self.asked:
            self.asked.append("budget")
            return (
                {"type": "AskPreference"},
                idle,
                f"Got it, {b.category}. Roughly how much would you like to spend?"
                if b.category
                else "Roughly how much would you like to spend?",
            )
        if len(self.asked) < self.max_questions and "features" not in self.asked and not b.required:
            self.asked.append("features")
            return (
                {"type": "ClarifyNeed"},
                idle,
                f"Any must-haves or things to avoid for your {b.category or 'purchase'}, like flavour, material, size or allergens?",
            )

        # Best confident product in view (the top one may be just out of sight).
        if best_handle is None or not self._confident(best):
            for cand in ranking[:15]:
                if self._confident(cand) and cand.name.lower() in visible:
                    best, best_handle = cand, visible[cand.name.lower()]
                    break
        if best_handle is not None and self._confident(best) and len(self.recommended) < 3:
            self.recommended.append(best.id)
            self.last_recommended = self.focus = best.id
            return (
                {"type": "Recommend", "display_name": best.name, "visible_now": True, "reason": self._explain(best, 0, ranking)},
                {"name": inspect_tool, "arguments": {"item": best_handle}},
                f"{self._explain(best, 0, ranking)} Have a look at it.",
            )
        if self.last_recommended in b.rejected:
            self.last_recommended = None
            return (
                {"type": "HandleRejection"},
                idle,
                # No product named: naming one the shopper cannot see yet would spend a
                # recommendation (the shopper counts what is proposed, whatever the label).
                f"Understood, I'll skip that one. There's a better match for your {best.category}; let me guide you to it.",
            )
        return self._navigate(best, caption, pose, events)

    def _explain(self, e: CatalogEntry, variant: int = 0, ranking: list[CatalogEntry] | None = None) -> str:
        """A grounded reason from the catalog; each variant gives a new angle (no repeats)."""
        self.explanations[e.id] = variant + 1
        b = self.belief
        matched = [t.split(":", 1)[-1] for t in e.tags if t in b.required]
        features = [t.split(":", 1)[-1] for t in e.tags if not t.startswith(("allergen:", "size:"))][:4]
        budget = f", within your ${b.budget:.0f} budget" if b.budget is not None and e.price <= b.budget else ""
        if variant % 3 == 0:
            why = " and ".join(matched) if matched else ", ".join(features)
            return f"I suggest the {e.name} because it is {why} and costs ${e.price:.2f}{budget}."
        if variant % 3 == 1:
            alternatives = [r for r in (ranking or []) if r.id != e.id and r.category == e.category][:1]
            if alternatives:
                alt = alternatives[0]
                diff = "costs more" if alt.price > e.price else "misses some of what you asked for"
                return f"Compared with the {alt.name}, which {diff}, the {e.name} suits you better since it offers {', '.join(features)}."
            return f"The {e.name} is the closest match here since it offers {', '.join(features)}."
        avoided = sorted({t.split(":", 1)[-1] for t in b.avoided})
        clean = f" and has none of {', '.join(avoided)}" if avoided else ""
        return f"The {e.name} fits your needs because it is a {e.category}{clean}, priced at ${e.price:.2f}."

    # ------------------------------------------------------------------ navigation
    def _products_here(self, events) -> dict[str, str]:
        """Blind mode: products at the place the shopper last walked to, by display name."""
        last = next((t for sp, t in reversed(events) if sp == "action" and t.startswith("move_to_")), "")
        m = re.match(r"move_to_\w+\((?:fixture|store|area)=(.+?)(?:, approach=\w+)?\) -> walked", last)
        if not m:
            return {}
        place = _short(m.group(1)).lower()
        return {
            e.name.lower(): e.name
            for e in self.catalog.values()
            if any(_short(part).lower() == place for part in re.sub(r" \((front|back)\)$", "", e.location).split(" / "))
        }

    def _inside_store(self, events) -> str | None:
        """The store the shopper walked into last (from the executed actions), if any."""
        inside = None
        for speaker, text in events:
            if speaker != "action":
                continue
            m = re.match(r"move_to_store\(store=(.+?), approach=(\w+)\) -> walked", text)
            if m:
                inside = m.group(1) if m.group(2) == "inside_doorway" else None
                continue
            m = re.match(r"move_to_area\(area=(.+?)\) -> walked", text)
            if m and m.group(1).lower() in self.target_by_name:
                kind = self.target_by_name[m.group(1).lower()].kind
                inside = kind[len("area of ") :] if kind.startswith("area of ") else inside
        return inside

    def scans_at(self, handle: str) -> int:
        return sum(1 for h, _ in self.scans if h == handle)

    def _goal_targets(self, e: CatalogEntry) -> list[NavTarget]:
        """Fixed targets holding the product: [fixture] or [store, area]."""
        names = [n.strip() for n in re.sub(r" \((front|back)\)$", "", e.location).split(" / ")]
        return [self.target_by_name[n.lower()] for n in names if n.lower() in self.target_by_name]

    def _navigate(self, best: CatalogEntry, caption, pose, events):
        goals = self._goal_targets(best)
        if not goals:
            return ({"type": "AskPreference"}, {"name": "idle", "arguments": {}}, "Could you tell me a bit more about what you need?")
        goal = goals[-1]
        side_match = re.search(r"\((front|back)\)$", best.location)
        x, y, yaw = float(pose[0]), float(pose[1]), float(pose[2])
        visible_targets = {m.handle: m.name for m in caption.fixtures + caption.stores + caption.areas}
        if self.blind:
            # No view: guess from the map what the shopper can see (ahead, within 25 m).
            def ahead(t: NavTarget) -> bool:
                bearing = math.degrees(math.atan2(t.y - y, t.x - x))
                return abs((bearing - yaw + 180.0) % 360.0 - 180.0) < 45.0 and math.hypot(t.x - x, t.y - y) < 25.0

            visible_targets = {h: n for h, n in visible_targets.items() if h in self.targets and ahead(self.targets[h])}
        action = {"type": "Navigate", "navigation_goal": goal.handle, "reason": f"The {best.category} is at {_short(goal.name)}."}

        def finish(expected, response, waypoint: NavTarget | None, approach: str):
            if self.spec.layout == "stores":
                # null: nothing to aim at in view yet, the shopper turns or walks to find it
                action["next_waypoint"] = waypoint.handle if waypoint else None
                action["target_approach"] = approach
            return action, expected, response

        # Arrived at the goal but the product is not in view: scan along it.
        last_action = next((t for sp, t in reversed(events) if sp == "action"), "")
        arrived = bool(re.match(r"move_to_(fixture|area)", last_action)) and (
            _short(goal.name).lower() in last_action.lower()
        ) or bool(self.scans and self.scans[-1][0] == goal.handle and self.turn - self.last_scan_turn <= 1)
        if arrived and self.scans_at(goal.handle) < 4:
            n = self.scans_at(goal.handle)
            self.scans.append((goal.handle, n))
            self.last_scan_turn = self.turn
            if self.spec.layout == "fixtures":
                direction = "left" if n % 2 == 0 else "right"
                distance = "medium" if n < 2 else "long"
                return finish(
                    {"name": "side_step", "arguments": {"direction": direction, "distance": distance}},
                    f"You're at {_short(goal.name)}. Step {direction} along it; the {best.category} is further along this side.",
                    None,
                    "nearest",
                )
            direction = "left" if n % 2 == 0 else "right"
            return finish(
                {"name": "turn", "arguments": {"direction": direction, "angle": 45}},
                f"You're in {_short(goal.name)}. Turn {direction} a little; the {best.category} is on display here.",
                None,
                "area",
            )

        # Home: go to the area if visible; else into its store (leaving another store first).
        if self.spec.layout == "stores":
            store_t = goals[0]
            inside = self._inside_store(events)
            if goal.handle in visible_targets:
                return finish(
                    {"name": "move_to_area", "arguments": {"area": goal.handle}},
                    f"Head over to the {goal.name} in {store_t.name}; the {best.category} is there.",
                    goal,
                    "area",
                )
            if inside == store_t.name:
                direction = "left" if self.turn % 2 else "right"
                return finish(
                    {"name": "turn", "arguments": {"direction": direction, "angle": 90}},
                    f"You're in {store_t.name}. Turn {direction} to find the {_short(goal.name)} display.",
                    None,
                    "area",
                )
            here = self.target_by_name.get(inside.lower()) if inside else None
            if here is not None and here.handle in visible_targets:
                return finish(
                    {"name": "move_to_store", "arguments": {"store": here.handle, "approach": "outside_doorway"}},
                    f"Let's leave {here.name} through its doorway first; {store_t.name} is elsewhere on the floor.",
                    here,
                    "outside_doorway",
                )
            if store_t.handle in visible_targets:
                return finish(
                    {"name": "move_to_store", "arguments": {"store": store_t.handle, "approach": "inside_doorway"}},
                    f"Walk into {store_t.name} through its doorway, just inside.",
                    store_t,
                    "inside_doorway",
                )
        elif goal.handle in visible_targets:
            approach = side_match.group(1) if side_match and side_match.group(1) in goal.approaches else "nearest"
            words = {"front": "front of", "back": "back of", "nearest": "nearest side of"}[approach]
            return finish(
                {"name": "move_to_fixture", "arguments": {"fixture": goal.handle, "approach": approach}},
                f"The {best.category} is at the {words} {_short(goal.name)}. Head there.",
                goal,
                approach,
            )

        # Goal not in view: hop to a visible target clearly closer to it, else turn toward it.
        # In the Home store an area is only reachable through its store's doorway.
        route = goals[0] if self.spec.layout == "stores" else goal
        gx, gy = route.x, route.y
        here = math.hypot(gx - x, gy - y)
        best_hop, best_d = None, here - 2.0
        for handle in visible_targets:
            t = self.targets.get(handle)
            if t is None or t.kind.startswith("area") or math.hypot(t.x - x, t.y - y) < 3.0:
                continue
            if _short(t.name).lower() in last_action.lower():
                continue  # the shopper is already there
            d = math.hypot(gx - t.x, gy - t.y)
            if d < best_d:
                best_hop, best_d = t, d
        if best_hop is not None:
            if best_hop.kind == "store":
                expected = {"name": "move_to_store", "arguments": {"store": best_hop.handle, "approach": "outside_doorway"}}
                say, approach = f"Walk to the doorway of {best_hop.name}, just outside", "outside_doorway"
            else:
                expected = {"name": "move_to_fixture", "arguments": {"fixture": best_hop.handle, "approach": "nearest"}}
                say, approach = f"Walk over to the nearest side of {_short(best_hop.name)}", "nearest"
            return finish(expected, f"{say}; {_short(goal.name)} is beyond it.", best_hop, approach)
        bearing = math.degrees(math.atan2(gy - y, gx - x))
        delta = (bearing - yaw + 180.0) % 360.0 - 180.0
        walked_last = last_action.startswith("move_forward")
        if walked_last and abs(delta) <= 25.0:
            delta = 90.0 if self.turn % 2 else -90.0  # walked toward it and still no sight: look around
        if abs(delta) > 25.0:
            direction = "left" if delta > 0 else "right"
            angle = int(min(180, max(15, round(abs(delta) / 15.0) * 15)))
            return finish(
                {"name": "turn", "arguments": {"direction": direction, "angle": angle}},
                f"Turn {direction} about {angle} degrees; {_short(route.name)} is in that direction.",
                None,
                self.spec.default_approach,
            )
        return finish(
            {"name": "move_forward", "arguments": {"distance": "medium"}},
            f"Walk ahead a few steps toward {_short(route.name)}.",
            None,
            self.spec.default_approach,
        )
