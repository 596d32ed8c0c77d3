"""The seeded rule-based shopper: discloses its goal gradually, follows guidance, inspects, decides.

Policy summary (paper App. A.3, "User Profiles and Task Construction"):

* Disclosure: the first turn states the first category/use item of ``Task.disclosure``;
  later turns add at most one new key detail each, preferring the detail the assistant just
  asked about (keywords in a question sentence); questions about details already given are
  answered again without counting as new.
* Navigation: guidance toward a fixture/store/area the user can see (matched by its name
  words, or the label before a colon: "Shelf 3") or a direction is followed with
  probability ``Interaction.navigation_following``; otherwise the user explores (visits
  visible targets whose names suggest its category, else unvisited ones; turns; walks on).
  It does not re-walk to the spot it stands on or walk into the obstacle that just
  blocked it (both would feed the motion-stall rule): it looks around or asks instead.
* Products: a product named in the response and visible (or held), else a visible product
  whose name fits the task's category, is inspected (``pick_up_item`` / ``check_item``)
  and then bought only if the inspected details fit: price <= budget, every required tag,
  no avoided tag, the task's category. Substitutes (fitting products other than the target)
  need ``accept_substitutes`` and a draw against ``substitute_willingness``. Before buying,
  the user wants ``explanations_needed`` (scaled by ``explanation_seeking``) explanation
  turns. Unsuitable items are rejected with a reason, shaped by ``rejection_style``.
* Patience: unproductive turns (empty or repeated response, a question about something
  already said, no new guidance, product, explanation, view change or inspection) are
  counted over the episode; when the count exceeds ``Interaction.patience`` the user gives
  up with a closing utterance and ``idle``.

This user always inspects before buying (its only trusted source of price and tags is the
inspection), so ``AcceptancePolicy.inspect_before_buying=False`` behaves like ``True``.
"""

from __future__ import annotations

import logging
import re
from typing import Any

import numpy as np

from situ_gym.actions.tools import LEGAL_TOOLS, TARGET_ARGUMENT, TRANSLATIONAL_TOOLS
from situ_gym.scene.index import SceneIndex
from situ_gym.scene.model import DisclosureItem, Profile, Task
from situ_gym.som.types import RoleView, VisibleEntity
from situ_gym.user import templates as T
from situ_gym.user.base import UserObservation, UserSimulator, UserTurn
from situ_gym.user.reading import (
    BLOCKED_WORDS,
    EXPLAIN_WORDS,
    GREET_WORDS,
    HINTS,
    asked_kinds,
    describe_direction,
    mentions,
    name_match_score,
    parse_direction,
    short_label,
    stem,
    tag_feature,
    words,
)

__all__ = [
    "RuleBasedUser",
    "words",
    "name_match_score",
    "mentions",
    "parse_direction",
    "asked_kinds",
]

logger = logging.getLogger(__name__)

_SUBSTITUTE_P = {"low": 0.35, "medium": 0.65, "high": 0.9}
_EXPLAIN_SCALE = {"low": -1, "medium": 0, "high": 1}
_ANSWER_P = {"low": 0.5, "medium": 0.75, "high": 1.0}  # disclose on a generic question
_VOLUNTEER_P = {"low": 0.1, "medium": 0.2, "high": 0.35}  # disclose unasked
_GLANCE_DISTANCE = 4.0  # metres: a fitting product this close catches the user's eye
_PRICIER = 0.15  # high price sensitivity: reject when another fit is this much cheaper


class RuleBasedUser(UserSimulator):
    """Seeded rule-based shopper (see module docstring). Same rng seed -> same turns."""

    name = "rule"

    def __init__(self) -> None:
        self._ready = False

    # ------------------------------------------------------------------ episode state
    def reset(
        self, task: Task, profile: Profile, index: SceneIndex, rng: np.random.Generator
    ) -> None:
        if task.store != index.store:
            raise ValueError(f"task {task.id!r} is for {task.store!r}, scene is {index.store!r}")
        if not isinstance(rng, np.random.Generator):
            raise ValueError(f"rng must be a numpy Generator, got {type(rng).__name__}")
        self.task, self.profile, self.index, self.rng = task, profile, index, rng
        self.store = task.store
        self.style = profile.interaction
        self.acceptance = task.acceptance
        # The goal details in disclosure order; a shopper can always name its category, so
        # a task without a "category" item gets one (said when asked for the product type).
        self._items: list[DisclosureItem] = list(task.disclosure)
        if not any(item.kind == "category" for item in self._items):
            self._items.append(
                DisclosureItem(kind="category", text=task.category, value=task.category)
            )
        self._disclosed: set[int] = set()  # indices into self._items
        self._fillers_used: set[str] = set()
        self._unproductive = 0
        self._explanations = 0
        self._explain_asks = 0
        self._rejected: set[str] = set()
        self._substitute_ok: dict[str, bool] = {}
        self._considering: str | None = None
        self._responses: set[str] = set()
        self._seen: set[str] = set()
        self._inspected_known: set[str] = set()
        self._mentioned: set[str] = set()
        self._mentioned_now: list[str] = []
        self._visited: list[str] = []
        self._explore_moves = 0
        self._at: tuple[str, str | None] | None = None  # where the last move_to_* took the user
        self._scans = 0  # look-arounds since arriving there
        self._gave_up = False
        self._ready = True
        # Category words: the head noun (last word) counts double for name relevance.
        cat = words(task.category, keep_numbers=False)
        self._cat_head = cat[-1] if cat else ""
        self._cat_words = set(cat) | {
            w for t in task.required_tags for w in words(tag_feature(t), keep_numbers=False)
        }
        self._explain_needed = max(
            0, task.acceptance.explanations_needed + _EXPLAIN_SCALE[self.style.explanation_seeking]
        )
        if task.acceptance.explanations_needed == 0:
            self._explain_needed = 0

    @property
    def unproductive_turns(self) -> int:
        return self._unproductive

    @property
    def disclosed_kinds(self) -> list[str]:
        return [self._items[i].kind for i in sorted(self._disclosed)]

    # ------------------------------------------------------------------ main step
    def respond(self, obs: UserObservation) -> UserTurn:
        if not self._ready:
            raise ValueError("respond() called before reset()")
        if self._gave_up:
            return self._give_up_turn()
        text = obs.assistant_response or ""
        low = text.lower()
        view = obs.view
        visible = {v.entity_id: v for v in view.visible}

        new_seen = set(visible) - self._seen
        self._seen |= set(visible)
        new_inspected = set(obs.inspected) - self._inspected_known
        self._inspected_known |= set(obs.inspected)
        norm = " ".join(low.split())
        empty = not norm
        repeated = (not empty) and norm in self._responses
        self._responses.add(norm)
        explained = any(w in low for w in EXPLAIN_WORDS) and not repeated
        if explained:
            self._explanations += 1
        mentioned = self._mentioned_products(text, visible, obs)
        self._mentioned_now = mentioned
        new_mention = [pid for pid in mentioned if pid not in self._mentioned]
        self._mentioned |= set(mentioned)

        rev: list[str] = []  # at most one disclosure kind this turn
        parts: list[str] = []
        # Product decision, navigation or exploration.
        call, intent, action_text, reason_kind = self._decide(obs, text, visible, mentioned, rev)
        followed = intent == "follow"

        # Disclosure: opening, the asked-for detail, or an occasional unasked one.
        asked = asked_kinds(text)
        restated_only = False
        disclosure_text = ""
        if not rev:
            item_idx, restate_idx = self._choose_disclosure(obs.turn, text, asked)
            if item_idx is not None:
                item = self._items[item_idx]
                self._disclosed.add(item_idx)
                rev.append(item.kind)
                disclosure_text = T.detail_sentence(self.rng, item.kind, item.text, item.value)
            elif restate_idx is not None:
                item = self._items[restate_idx]
                disclosure_text = T.restate_sentence(self.rng, item.kind, item.text, item.value)
                restated_only = True
        answered_new = bool(rev) and bool(asked or "?" in text or obs.turn == 1)

        # Productivity (patience).
        assistant_signal = bool(answered_new or new_mention or followed or explained)
        progress = bool(new_seen or new_inspected)
        productive = (assistant_signal or progress) and not (empty or repeated)
        if restated_only and not (new_mention or followed or explained or progress):
            productive = False
        if obs.turn == 1 and not empty:
            productive = True
        if not productive and intent not in ("buy", "inspect"):
            self._unproductive += 1
        if self._unproductive > self.style.patience and intent not in ("buy", "inspect"):
            self._gave_up = True
            return self._give_up_turn(revealed=[])

        # Wording.
        talk = self.style.talkativeness
        if empty:
            parts.append(T.pick(self.rng, "confused"))
        elif repeated and intent not in ("buy", "inspect", "reject"):
            parts.append(T.pick(self.rng, "repeated"))
        elif obs.turn == 1 and any(g in low + " " for g in GREET_WORDS):
            parts.append(T.pick(self.rng, "greet"))
        elif talk != "low" and self.rng.random() < (0.8 if talk == "high" else 0.4):
            parts.append(T.pick(self.rng, "ack"))
        if disclosure_text:
            parts.append(disclosure_text)
        if action_text:
            parts.append(action_text)
        if talk == "high" and self.rng.random() < 0.35:
            # A personal remark now and then, each at most once per episode.
            fillers = T.STYLE_FILLERS.get(self.style.behavior_style, T.STYLE_FILLERS["default"])
            fresh = [f for f in fillers if f not in self._fillers_used]
            if fresh:
                filler = fresh[int(self.rng.integers(len(fresh)))]
                self._fillers_used.add(filler)
                parts.append(filler)
        if intent == "explore" and disclosure_text and call["name"] == "idle":
            intent = "answer"
        if obs.turn == 1 and intent in ("explore", "answer"):
            intent = "open"
        call = self._legalize(call, view, obs.held_item)
        if not parts:
            parts.append(T.pick(self.rng, "ack"))
        return UserTurn(
            utterance=" ".join(p for p in parts if p),
            tool_call=call,
            revealed=rev,
            gave_up=False,
            intent=intent,
        )

    # ------------------------------------------------------------------ disclosure
    def _choose_disclosure(
        self, turn: int, text: str, asked: list[str]
    ) -> tuple[int | None, int | None]:
        """(index to disclose now, index to restate) — at most one of them is not None."""
        items = self._items
        pending = [i for i in range(len(items)) if i not in self._disclosed]
        if not items:
            return None, None
        opening = [i for i in range(len(items)) if items[i].kind in ("category", "use")]
        if not self._disclosed:
            first = opening[0] if opening else 0
            return first, None
        for kind in asked:
            kinds = ("category", "use") if kind in ("category", "use") else (kind,)
            fresh = [i for i in pending if items[i].kind in kinds]
            if fresh:
                return fresh[0], None
            old = [i for i in sorted(self._disclosed) if items[i].kind in kinds]
            if old:
                return None, old[0]
        if not pending:
            return None, None
        talk = self.style.talkativeness
        p = _ANSWER_P[talk] if "?" in text else _VOLUNTEER_P[talk]
        if self.rng.random() < p:
            return pending[0], None
        return None, None

    def _reveal_for(self, kind: str, tag: str | None, rev: list[str]) -> bool:
        """Account for a rejection reason that names a goal detail.

        Returns True when the detail may be spoken: it was told before, or it becomes this
        turn's one new detail (recorded in ``rev``). False when the turn already carries a
        new detail or the opening is still due; the caller then words the reason vaguely.
        """
        items = self._items
        of_kind = [i for i in range(len(items)) if items[i].kind == kind]
        if tag is not None:
            exact = [i for i in of_kind if items[i].value == tag]
            of_kind = exact or of_kind
        if any(i in self._disclosed for i in of_kind):
            return True
        if rev or not self._disclosed:
            return False
        if of_kind:
            self._disclosed.add(of_kind[0])
        rev.append(kind)
        return True

    # ------------------------------------------------------------------ decisions
    def _decide(
        self,
        obs: UserObservation,
        text: str,
        visible: dict[str, VisibleEntity],
        mentioned: list[str],
        rev: list[str],
    ) -> tuple[dict[str, Any], str, str, str]:
        """Choose (tool call, intent, sentence, reason kind) for this turn."""
        held = obs.held_item
        # Browse on its own only after the opening and when the assistant gives no guidance.
        guided = self._mentioned_target(text, visible) is not None or parse_direction(text)
        self_directed = obs.turn > 1 and not guided
        candidate = self._candidate(obs, visible, mentioned, self_directed)
        # Holding something we rejected (Supermarket): put it back first.
        if held and held in self._rejected and candidate != held and self.store == "supermarket":
            put_back = T.pick(self.rng, "put_back", name=self._product_name(held, obs, visible))
            return {"name": "drop_item", "arguments": {}}, "reject", put_back, "drop"
        if candidate is not None:
            return self._product_turn(obs, candidate, visible, rev)
        call, intent, sentence, kind = self._move_turn(obs, text, visible)
        stale = [pid for pid in self._mentioned_now if pid in self._rejected]
        if stale:
            name = self._product_name(stale[0], obs, visible)
            sentence = T.pick(self.rng, "already_rejected", name=name) + " " + sentence
        return call, intent, sentence, kind

    def _candidate(
        self,
        obs: UserObservation,
        visible: dict[str, VisibleEntity],
        mentioned: list[str],
        self_directed: bool,
    ) -> str | None:
        """The product to act on: held, named in the response, being considered, or (when
        ``self_directed``) a visible product whose display name fits the wanted category."""
        held = obs.held_item
        if held and held not in self._rejected:
            return held
        reachable = [pid for pid in mentioned if pid not in self._rejected]
        if self._considering in reachable:
            return self._considering  # the item under discussion, even if others are compared
        if reachable:
            return reachable[0]
        if (
            self._considering
            and self._considering not in self._rejected
            and self._considering in visible
        ):
            return self._considering
        if obs.turn <= 1:
            return None
        scored = []
        for eid, v in visible.items():
            if v.kind != "product" or eid in self._rejected:
                continue
            s = self._relevance(v.name)
            # Browsing on its own: any product whose name fits; under guidance only one
            # close by.
            if s >= 2 and (self_directed or v.distance <= _GLANCE_DISTANCE):
                scored.append((-s, v.distance, eid))
        if scored:
            return sorted(scored)[0][2]
        return None

    def _relevance(self, name: str) -> int:
        """Name fit to the wanted category: 2 for its head noun, 1 per other goal word."""
        ws = {stem(w) for w in words(name, keep_numbers=False)}
        head = stem(self._cat_head) if self._cat_head else ""
        score = 2 if head and head in ws else 0
        score += len(({stem(w) for w in self._cat_words} - {head}) & ws)
        return score

    def _assess(self, pid: str, details: dict[str, Any]) -> tuple[str, str | None]:
        """("fit", None) or (reason kind, offending tag) from the inspected details."""
        tags = set(details.get("tags", []))
        price = float(details.get("price", float("inf")))
        for tag in self.task.avoided_tags:
            if tag in tags:
                return "avoid", tag
        if price > self.task.budget:
            return "budget", None
        category = details.get("category")
        if category is not None and category != self.task.category:
            return "category", None
        for tag in self.task.required_tags:
            if tag not in tags:
                return "need", tag
        return "fit", None

    def _product_name(
        self, pid: str, obs: UserObservation, visible: dict[str, VisibleEntity]
    ) -> str:
        if pid in visible:
            return visible[pid].name
        details = obs.inspected.get(pid, {})
        return str(details.get("name") or self.index.name(pid))

    def _product_handle(
        self, pid: str, view: RoleView, visible: dict[str, VisibleEntity]
    ) -> str | None:
        if pid in visible:
            return visible[pid].handle
        return view.handle_of(pid)

    def _product_turn(
        self,
        obs: UserObservation,
        pid: str,
        visible: dict[str, VisibleEntity],
        rev: list[str],
    ) -> tuple[dict[str, Any], str, str, str]:
        view = obs.view
        name = self._product_name(pid, obs, visible)
        handle = self._product_handle(pid, view, visible)
        reachable = handle is not None and (pid in visible or pid == obs.held_item)
        self._considering = pid
        if pid not in obs.inspected:
            if not reachable:
                return (
                    {"name": "idle", "arguments": {}},
                    "ask",
                    T.pick(self.rng, "cannot_see", name=name),
                    "lost",
                )
            tool = "pick_up_item" if self.store == "supermarket" else "check_item"
            if obs.held_item and obs.held_item != pid and self.store == "supermarket":
                put_back = T.pick(
                    self.rng, "put_back", name=self._product_name(obs.held_item, obs, visible)
                )
                return {"name": "drop_item", "arguments": {}}, "explore", put_back, "drop"
            return (
                {"name": tool, "arguments": {"item": handle}},
                "inspect",
                T.pick(self.rng, f"inspect_{self.store}", name=name),
                "inspect",
            )
        details = obs.inspected[pid]
        verdict, tag = self._assess(pid, details)
        price = T.format_price(details.get("price", 0.0))
        if verdict == "fit" and pid != self.task.target_product_id:
            if not self.acceptance.accept_substitutes:
                verdict = "substitute"
            else:
                if pid not in self._substitute_ok:
                    p = _SUBSTITUTE_P[self.style.substitute_willingness]
                    self._substitute_ok[pid] = bool(self.rng.random() < p)
                if not self._substitute_ok[pid]:
                    verdict = "substitute"
        other_name = None
        if verdict == "fit" and self.style.price_sensitivity == "high":
            cheaper = self._cheaper_fit(pid, obs)
            if cheaper is not None:
                verdict, other_name = "pricier", self._product_name(cheaper, obs, visible)
        if verdict != "fit":
            return self._reject(pid, name, price, verdict, tag, other_name, obs, visible, rev)
        # A fit: explanations first, then buy.
        if self._explanations < self._explain_needed:
            self._explain_asks += 1
            return (
                {"name": "idle", "arguments": {}},
                "ask",
                T.pick(self.rng, "ask_explain", name=name),
                "fit",
            )
        if not reachable:
            return (
                {"name": "idle", "arguments": {}},
                "ask",
                T.pick(self.rng, "cannot_see", name=name),
                "lost",
            )
        return (
            {"name": "add_to_cart", "arguments": {"item": handle}},
            "buy",
            T.pick(self.rng, "buy", name=name, price=price),
            "fit",
        )

    def _cheaper_fit(self, pid: str, obs: UserObservation) -> str | None:
        price = float(obs.inspected[pid].get("price", 0.0))
        best = None
        for other, details in obs.inspected.items():
            if other == pid or other in self._rejected:
                continue
            if self._assess(other, details)[0] != "fit":
                continue
            if other != self.task.target_product_id and not self.acceptance.accept_substitutes:
                continue
            p = float(details.get("price", float("inf")))
            if p <= price * (1.0 - _PRICIER) and (best is None or p < best[0]):
                best = (p, other)
        return best[1] if best else None

    def _reject(
        self,
        pid: str,
        name: str,
        price: str,
        verdict: str,
        tag: str | None,
        other_name: str | None,
        obs: UserObservation,
        visible: dict[str, VisibleEntity],
        rev: list[str],
    ) -> tuple[dict[str, Any], str, str, str]:
        self._rejected.add(pid)
        if self._considering == pid:
            self._considering = None
        rng = self.rng
        if verdict == "budget":
            if self._reveal_for("budget", None, rev):
                sentence = T.pick(
                    rng,
                    "reject_budget_reveal",
                    name=name,
                    price=price,
                    budget=T.format_price(self.task.budget),
                )
            else:
                sentence = T.pick(rng, "reject_budget", name=name, price=price)
        elif verdict in ("avoid", "need"):
            if self._reveal_for(verdict, tag, rev):
                sentence = T.pick(
                    rng, f"reject_{verdict}", name=name, feature=tag_feature(tag or "")
                )
            else:
                sentence = T.pick(rng, "reject_generic", name=name)
        elif verdict == "pricier":
            sentence = T.pick(rng, "reject_pricier", name=name, other=other_name)
        elif verdict == "substitute":
            sentence = T.pick(rng, "reject_substitute", name=name)
        else:
            sentence = T.pick(rng, "reject_category", name=name)
        style = self.acceptance.rejection_style
        if style == "clarify":
            sentence += " " + T.pick(rng, "style_clarify")
        elif style == "compare":
            sentence += " " + T.pick(rng, "style_compare")
        if self.store == "supermarket" and obs.held_item == pid:
            call = {"name": "drop_item", "arguments": {}}
        elif self.store == "home_furnishings" and pid in visible:
            call = {"name": "do_not_add_to_cart", "arguments": {"item": visible[pid].handle}}
        else:
            call = {"name": "idle", "arguments": {}}
        return call, "reject", sentence, verdict

    # ------------------------------------------------------------------ navigation
    def _move_turn(
        self, obs: UserObservation, text: str, visible: dict[str, VisibleEntity]
    ) -> tuple[dict[str, Any], str, str, str]:
        target = self._mentioned_target(text, visible)
        direction = parse_direction(text) if target is None else None
        if target is not None or direction is not None:
            follow = self.rng.random() < self.style.navigation_following
            if follow:
                if target is not None:
                    return self._goto(target, text, "follow")
                self._explore_moves = 0
                if direction["name"] in ("move_forward", "move_and_turn") and self._blocked(obs):
                    # Walking into the same obstacle again would stall: turn a little and ask.
                    side = "left" if self.rng.random() < 0.5 else "right"
                    call = {"name": "turn", "arguments": {"direction": side, "angle": 45.0}}
                    return call, "ask", T.pick(self.rng, "blocked_ask"), ""
                if direction["name"] in TRANSLATIONAL_TOOLS:
                    self._at = None
                return (
                    direction,
                    "follow",
                    T.pick(self.rng, "follow_direction", direction=describe_direction(direction)),
                    "",
                )
            avoid = {target.entity_id} if target is not None else set()
            call, _, sentence, _ = self._explore(obs, visible, exclude=avoid)
            return call, "explore", T.pick(self.rng, "decline_guidance") + " " + sentence, ""
        call, intent, sentence, _ = self._explore(obs, visible)
        return call, intent, sentence, ""

    def _goto(
        self, v: VisibleEntity, text: str, intent: str
    ) -> tuple[dict[str, Any], str, str, str]:
        low = text.lower()
        self._explore_moves = 0
        if v.kind == "fixture":
            approach = "nearest"
            sides = (
                self.index.fixtures[v.entity_id].approach
                if v.entity_id in self.index.fixtures
                else {}
            )
            if re.search(r"\b(back|rear|behind|other side)\b", low) and "back" in sides:
                approach = "back"
            elif re.search(r"\bfront\b", low) and "front" in sides:
                approach = "front"
            call = {
                "name": "move_to_fixture",
                "arguments": {"fixture": v.handle, "approach": approach},
            }
            key = "follow_fixture" if intent == "follow" else "explore_target"
        elif v.kind == "store":
            outside = re.search(r"\b(outside|entrance|doorway|storefront|front of)\b", low)
            inside = re.search(r"\b(inside|into|enter|go in|walk in|step in)\b", low)
            approach = "outside_doorway" if outside and not inside else "inside_doorway"
            call = {"name": "move_to_store", "arguments": {"store": v.handle, "approach": approach}}
            if intent == "follow":
                key = (
                    "follow_store_inside"
                    if approach == "inside_doorway"
                    else "follow_store_outside"
                )
            else:
                key = "explore_target"
        else:
            call = {"name": "move_to_area", "arguments": {"area": v.handle}}
            key = "follow_area" if intent == "follow" else "explore_target"
        place = (v.entity_id, call["arguments"].get("approach"))
        if place == self._at:
            # Already standing there: look around locally instead of walking 0 m again.
            return self._scan(v)
        self._at = place
        self._scans = 0
        self._visited.append(v.entity_id)
        return call, intent, T.pick(self.rng, key, name=short_label(v.name)), ""

    def _scan(self, v: VisibleEntity) -> tuple[dict[str, Any], str, str, str]:
        """Look around where the user stands (turn a little or tilt the view)."""
        rng = self.rng
        side = "left" if rng.random() < 0.5 else "right"
        options = [
            {"name": "turn", "arguments": {"direction": side, "angle": 30.0}},
            {"name": "turn", "arguments": {"direction": side, "angle": 60.0}},
            {"name": "look_up_down", "arguments": {"direction": "down", "angle": 15.0}},
            {"name": "side_step", "arguments": {"direction": side, "distance": "medium"}},
        ]
        call = options[int(rng.integers(len(options)))]
        return call, "explore", T.pick(rng, "already_there", name=short_label(v.name)), ""

    def _explore(
        self,
        obs: UserObservation,
        visible: dict[str, VisibleEntity],
        exclude: set[str] | frozenset[str] = frozenset(),
    ) -> tuple[dict[str, Any], str, str, str]:
        rng = self.rng
        side = "left" if rng.random() < 0.5 else "right"
        if self._blocked(obs):
            self._explore_moves = 0
            angle = float(rng.choice([60.0, 90.0, 120.0]))
            return (
                {"name": "turn", "arguments": {"direction": side, "angle": angle}},
                "explore",
                T.pick(rng, "blocked"),
                "",
            )
        targets = [
            v
            for v in visible.values()
            if v.kind in ("fixture", "store", "area")
            and v.entity_id not in self._visited[-3:]
            and v.entity_id not in exclude
        ]
        if targets:
            hinted = [v for v in targets if self._hinted(v)]
            unvisited = [v for v in targets if v.entity_id not in self._visited]
            pool = hinted or (unvisited if rng.random() < 0.6 else [])
            if self.store == "home_furnishings":
                # Inside a store, prefer its display areas before wandering off.
                areas = [v for v in pool if v.kind == "area"]
                pool = areas or pool
            if pool:
                v = min(pool, key=lambda e: (e.distance, e.handle))
                return self._goto(v, "", "explore")
        products_here = any(v.kind == "product" for v in visible.values())
        if self._at is not None and products_here and self._scans < 2:
            # Products in front of the user: look them over and ask before walking off.
            self._scans += 1
            return self._scan(visible.get(self._at[0]) or next(iter(visible.values())))
        if self._at is not None:
            # Just arrived, facing the target: turn away from it before walking on.
            self._at = None
            self._explore_moves = 1
            angle = float(rng.choice([90.0, 135.0, 180.0]))
            call = {
                "name": "turn_and_move",
                "arguments": {"direction": side, "angle": angle, "distance": "medium"},
            }
        elif self._explore_moves >= 2:
            # Turn in place after two walks, to see new directions.
            self._explore_moves = 0
            angle = float(rng.choice([45.0, 90.0, 135.0]))
            call = {"name": "turn", "arguments": {"direction": side, "angle": angle}}
        else:
            self._explore_moves += 1
            self._at = None
            r = rng.random()
            if r < 0.45:
                call = {"name": "move_forward", "arguments": {"distance": "medium"}}
            else:
                angle = float(rng.choice([30.0, 45.0, 60.0, 90.0]))
                call = {
                    "name": "turn_and_move",
                    "arguments": {"direction": side, "angle": angle, "distance": "medium"},
                }
        return call, "explore", T.pick(rng, "explore"), ""

    @staticmethod
    def _blocked(obs: UserObservation) -> bool:
        """Whether the user's last action was stopped by an obstacle."""
        return obs.last_result is not None and any(
            w in obs.last_result.lower() for w in BLOCKED_WORDS
        )

    def _hinted(self, v: VisibleEntity) -> bool:
        """Whether a target's name (or shop theme) suggests it holds the wanted category."""
        goal = {stem(w) for w in self._cat_words}
        name_words = {stem(w) for w in words(v.name)}
        if goal & name_words:
            return True
        if v.kind == "store" and v.entity_id in self.index.stores:
            if goal & {stem(w) for w in words(self.index.stores[v.entity_id].theme)}:
                return True
        return any(key in name_words and goal & set(related) for key, related in HINTS.items())

    # ------------------------------------------------------------------ matching
    def _mentioned_products(
        self, text: str, visible: dict[str, VisibleEntity], obs: UserObservation
    ) -> list[str]:
        if not text.strip():
            return []
        pool: dict[str, str] = {eid: v.name for eid, v in visible.items() if v.kind == "product"}
        if obs.held_item:
            pool.setdefault(obs.held_item, self._product_name(obs.held_item, obs, visible))
        # Names of places ("Shelf 2: granola bars, peanut butter, jam") are not product mentions.
        for v in visible.values():
            if v.kind != "product":
                text = re.sub(re.escape(v.name), " ", text, flags=re.IGNORECASE)
        for fixture in self.index.fixtures.values():
            if ":" in fixture.name:
                text = re.sub(re.escape(fixture.name), " ", text, flags=re.IGNORECASE)
        scored, partial = [], []
        for pid, name in pool.items():
            ok, score = mentions(name, text, keep_numbers=False)
            dist = visible[pid].distance if pid in visible else 0.0
            if ok:
                scored.append((-score[0], -score[1], dist, pid))
            elif score[1] >= 2 and score[0] >= 1 / 3:
                partial.append((score[1], pid))
        if not scored and partial:
            # A short form ("the cod fillets") counts when one visible product fits it best.
            partial.sort(reverse=True)
            if len(partial) == 1 or partial[0][0] > partial[1][0]:
                return [partial[0][1]]
        if any(s[0] <= -1.0 for s in scored):
            scored = [s for s in scored if s[0] <= -1.0]  # verbatim names beat word overlaps
        return [s[3] for s in sorted(scored)]

    def _mentioned_target(
        self, text: str, visible: dict[str, VisibleEntity]
    ) -> VisibleEntity | None:
        if not text.strip():
            return None
        scored = []
        for v in visible.values():
            if v.kind not in ("fixture", "store", "area"):
                continue
            ok, score = mentions(v.name, text)
            if ok:
                scored.append((-score[0], -score[1], v.distance, v.handle, v))
        return sorted(scored, key=lambda s: s[:4])[0][4] if scored else None

    # ------------------------------------------------------------------ helpers
    def _give_up_turn(self, revealed: list[str] | None = None) -> UserTurn:
        return UserTurn(
            utterance=T.pick(self.rng, "give_up"),
            tool_call={"name": "idle", "arguments": {}},
            revealed=list(revealed or []),
            gave_up=True,
            intent="give_up",
        )

    def _legalize(self, call: dict[str, Any], view: RoleView, held: str | None) -> dict[str, Any]:
        """Return ``call`` if it is legal in this store and view, else ``idle`` (logged)."""
        name = call.get("name")
        problem = None
        if name not in LEGAL_TOOLS[self.store]:
            problem = f"tool {name!r} is not legal in {self.store}"
        elif name in TARGET_ARGUMENT:
            handle = call["arguments"].get(TARGET_ARGUMENT[name])
            eid = view.handles.get(handle)
            visible_ids = set(view.visible_ids())
            if eid is None:
                problem = f"handle {handle!r} is not in the user's view"
            elif eid not in visible_ids and not (eid == held and TARGET_ARGUMENT[name] == "item"):
                problem = f"target {eid!r} is not visible"
        elif name == "drop_item" and held is None:
            problem = "drop_item without a held item"
        if problem:
            logger.warning("rule user replaced an illegal call %s with idle: %s", call, problem)
            return {"name": "idle", "arguments": {}}
        return call
