"""The seeded rule-based shopper: reads the assistant through the language layer, then acts.

Each turn: the assistant's response is analysed once (``situ_gym.language.analyze``, with the
shopper's view and the product under discussion as context). From that analysis, never from
the assistant's hidden annotations:

* the product to act on is the one proposed (or, failing that, the one under discussion, or
  when browsing alone a visible product whose name fits the wanted category); it is inspected
  (``pick_up_item`` / ``check_item``; a product the assistant described may be judged on its
  word unless the task or a conscientious persona wants it checked) and then judged by
  ``decision.Decision`` (persona policy in ``persona``): buy, ask for a reason, voice a
  trade-off, or reject with a reason;
* otherwise understood navigation guidance is followed (``navigation.Navigator``) with
  probability ``Persona.navigation_following``, else the shopper explores;
* every part of the assistant's question is answered, with at most one new goal detail a turn
  (``disclosure.choose_disclosure``): a slot asked again is restated, one the shopper has
  nothing for is answered so, one whose detail must wait is put off in words;
* explanations count when the analysis finds one (about any product; what it cites is
  remembered per product for trade-offs);
* patience: a turn is unproductive when the response is empty or repeated, or brings no new
  answer, proposal, guidance, explanation, view or inspection; past ``Persona.patience``
  unproductive turns the shopper gives up.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np

from situ_gym.actions.tools import LEGAL_TOOLS, TARGET_ARGUMENT
from situ_gym.language import Utterance, analyze, analyze_reply, lemma, lexicon_for, put_forward
from situ_gym.protocol import check_protocol
from situ_gym.scene.index import SceneIndex
from situ_gym.scene.model import DisclosureItem, Profile, Task
from situ_gym.scene.wording import label_value, spoken_name
from situ_gym.som.types import RoleView, VisibleEntity
from situ_gym.stores import store_spec
from situ_gym.user.base import UserObservation, UserSimulator, UserTurn
from situ_gym.user.rule.decision import Decision, Verdict
from situ_gym.user.rule.disclosure import choose_disclosure
from situ_gym.user.rule.navigation import Navigator
from situ_gym.user.rule.persona import Persona
from situ_gym.user.rule.speech import REMARKS, answer_part, format_price, say
from situ_gym.user.rule.state import EpisodeState

__all__ = ["RuleBasedUser"]

logger = logging.getLogger(__name__)

_GLANCE_DISTANCE = 4.0  # metres: a fitting product this close catches the shopper's eye
# The backend's own messages for a move stopped by an obstacle (system text, not dialogue).
_BLOCKED = ("block", "collid", "obstruct", "cannot move", "can't move", "could not", "no room")


def _first_word(sentence: str) -> str:
    return sentence.split(" ", 1)[0].strip(".,!?").lower()


class RuleBasedUser(UserSimulator):
    """Seeded rule-based shopper (see the module docstring). Same rng seed -> same turns."""

    name = "rule"

    def __init__(self, protocol: str = "default") -> None:
        self.protocol = check_protocol(protocol)  # "paper": needs and budget are hard limits (A.3)
        self._ready = False

    # ------------------------------------------------------------------ episode
    def reset(self, task: Task, profile: Profile, index: SceneIndex, rng: np.random.Generator) -> None:
        if task.store != index.store:
            raise ValueError(f"task {task.id!r} is for {task.store!r}, scene is {index.store!r}")
        if not isinstance(rng, np.random.Generator):
            raise ValueError(f"rng must be a numpy Generator, got {type(rng).__name__}")
        self.task, self.profile, self.index, self.rng = task, profile, index, rng
        # Wording draws from its own stream, so that how the shopper phrases a reply never
        # changes what it decides: two assistants that differ only in style meet the same
        # shopper decisions wherever they are read the same.
        self.voice = np.random.default_rng(int(rng.integers(2**63)))
        self.store = task.store
        self.spec = store_spec(task.store)
        self.lexicon = lexicon_for(index)
        self.persona = Persona.of(profile, task, protocol=self.protocol)
        # The goal details in disclosure order; a shopper can always name its category.
        self.items: list[DisclosureItem] = list(task.disclosure)
        if not any(item.kind == "category" for item in self.items):
            self.items.append(DisclosureItem(kind="category", text=task.category, value=task.category))
        self.state = EpisodeState()
        self.decision = Decision(task, self.persona, self.state, rng)
        self.navigator = Navigator(index, self.store, self.state, rng, self.persona.navigation_following, self._hinted,
                                   voice=self.voice)
        cat = [lemma(w) for w in task.category.lower().split()]
        self._cat_head = cat[-1] if cat else ""
        self._goal_words = set(cat) | {lemma(w) for t in task.required_tags for w in label_value(t).lower().split()}
        self._ready = True

    @property
    def unproductive_turns(self) -> int:
        return self.state.unproductive

    @property
    def disclosed_kinds(self) -> list[str]:
        return [self.items[i].kind for i in sorted(self.state.disclosed)]

    # ------------------------------------------------------------------ one turn
    def respond(self, obs: UserObservation) -> UserTurn:
        if not self._ready:
            raise ValueError("respond() called before reset()")
        state = self.state
        if state.gave_up:
            return self._give_up()
        visible = {v.entity_id: v for v in obs.view.visible}
        context = set(visible) | ({obs.held_item} if obs.held_item else set())
        # the assistant's words read as the reply to the shopper's own last words
        last_user = next((text for role, text in reversed(obs.history) if role == "user"), "")
        heard = analyze(last_user, self.lexicon)
        u = analyze_reply(
            obs.assistant_response or "", self.lexicon, heard=heard, visible=context, focus=state.considering,
        )

        new_seen = set(visible) - state.seen
        state.seen |= set(visible)
        new_inspected = set(obs.inspected) - state.inspected
        state.inspected |= set(obs.inspected)
        key = " ".join(u.text.lower().split())
        repeated = bool(key) and key in state.responses
        state.responses.add(key)
        # A reason counts when it says something concrete about a product (its labels,
        # price, budget fit or use); "let me help you with that" explains nothing.
        explained = u.explanation is not None and bool(u.explanation.cites) and not repeated
        if explained:
            state.explanations += 1
            if u.explanation.product:
                state.explained.setdefault(u.explanation.product, set()).update(u.explanation.cites)
        # What the words put forward: the same rule as the env's recommendation limit.
        proposals = [p for p in put_forward(u, compare_requested=heard.asks_to_compare) if p in self.index.products]
        if u.refers_to_focus and state.considering and not proposals:
            proposals = [state.considering]
        new_proposal = [p for p in proposals if p not in state.proposed]
        state.proposed |= set(proposals)

        revealed: list[str] = []
        call, intent, action_text = self._decide(obs, u, visible, proposals, revealed)
        followed = intent == "follow"

        generic = bool(u.questions) and not u.asks or "other" in u.asks
        parts_told = choose_disclosure(self.items, state.disclosed, u.asks, generic, self.persona, self.rng,
                                       may_tell_new=not revealed)
        for part in parts_told:
            if part.how == "new":
                state.disclosed.add(part.item)
                revealed.append(self.items[part.item].kind)
        disclosure_text = " ".join(filter(None, (answer_part(self.voice, p, self.items, self.store) for p in parts_told)))
        hows = {p.how for p in parts_told}
        answered = ("new" in hows and (bool(u.questions) or obs.turn == 1)) or "none" in hows
        restated_only = "again" in hows and hows <= {"again", "later"}

        # Patience: did this turn move anything forward?
        signal = answered or bool(new_proposal) or followed or explained
        progress = bool(new_seen or new_inspected)
        productive = (signal or progress) and not (u.empty or repeated)
        if restated_only and not (new_proposal or followed or explained or progress):
            productive = False
        if obs.turn == 1 and not u.empty:
            productive = True
        if not productive and intent not in ("buy", "inspect"):
            state.unproductive += 1
        if state.unproductive > self.persona.patience and intent not in ("buy", "inspect"):
            state.gave_up = True
            return self._give_up()

        parts = self._opening(u, repeated, intent, obs.turn)
        for sentence in (disclosure_text, action_text):
            if sentence:
                parts.append(sentence)
        if len(parts) >= 2 and _first_word(parts[0]) == _first_word(parts[1]):
            parts.pop(0)  # "Sure. Sure, turning left." -> "Sure, turning left."
        remark = self._remark()
        if remark:
            parts.append(remark)
        if intent == "explore" and disclosure_text and call["name"] == "idle":
            intent = "answer"
        if obs.turn == 1 and intent in ("explore", "answer"):
            intent = "open"
        call = self._legalize(call, obs.view, obs.held_item)
        if not parts:
            parts.append(say(self.voice, "ack"))
        return UserTurn(utterance=" ".join(parts), tool_call=call, revealed=revealed, gave_up=False, intent=intent)

    # ------------------------------------------------------------------ decisions
    def _decide(self, obs, u: Utterance, visible, proposals: list[str], revealed: list[str]):
        state = self.state
        held = obs.held_item
        guided = u.navigation is not None or u.location is not None
        # Products pointed out ("the salmon fillets are right there") catch the eye when they
        # are in view and of the wanted kind; only proposals count as recommendations.
        pointed = [p for p in u.mentioned if p in visible and self._relevance(p) >= 2]
        candidate = self._candidate(obs, visible, proposals + pointed, self_directed=obs.turn > 1 and not guided)
        if held and held in state.rejected and candidate != held and self.spec.holds_items:
            return {"name": "drop_item", "arguments": {}}, "reject", say(self.voice, "put_back", name=self._name(held, obs, visible))
        if candidate is not None:
            call, intent, sentence = self._product_turn(obs, candidate, visible, revealed)
        else:
            blocked = self._blocked(obs)
            move = self.navigator.guided(self._visible_nav(u, visible), visible, blocked)
            call, intent, sentence = move or self.navigator.explore(visible, blocked)
        stale = [p for p in u.products if p in state.rejected and p != candidate]
        if stale:  # the assistant brought up something already turned down
            sentence = say(self.voice, "already_rejected", name=self._name(stale[0], obs, visible)) + " " + sentence
        return call, intent, sentence

    def _visible_nav(self, u: Utterance, visible):
        """The instruction (or where-statement: "it's at the front of Shelf 1"), retargeted to a
        visible place it also names ("the Desks area in Leather and Ink")."""
        nav = u.navigation or u.location
        if nav is None or nav.target is None or nav.target in visible:
            return nav
        for p in u.places:
            if p.entity_id in visible and p.entity_id != nav.landmark:
                from dataclasses import replace

                rel = "into" if self.index.kind(p.entity_id) == "store" and self.index.kind(nav.target) == "area" else nav.relation
                return replace(nav, target=p.entity_id, relation=rel, approach="inside" if rel == "into" else nav.approach)
        return nav

    def _candidate(self, obs, visible, proposals: list[str], self_directed: bool) -> str | None:
        state = self.state
        held = obs.held_item
        if held and held not in state.rejected:
            return held
        fresh = [p for p in proposals if p not in state.rejected]
        if state.considering in fresh:
            return state.considering
        if fresh:
            return fresh[0]
        if state.considering and state.considering not in state.rejected and state.considering in visible:
            return state.considering
        if obs.turn <= 1:
            return None
        scored = []
        for eid, v in visible.items():
            if v.kind != "product" or eid in state.rejected:
                continue
            s = self._relevance(eid)
            if s >= 2 and (self_directed or v.distance <= _GLANCE_DISTANCE):
                scored.append((-s, v.distance, eid))
        return sorted(scored)[0][2] if scored else None

    def _relevance(self, pid: str) -> int:
        """How well a product in view fits the goal: 2 for the wanted kind of product (a
        shopper tells a rice cereal from rice at a glance), 1 per other goal word in its name."""
        product = self.index.products[pid]
        ws = {lemma(w) for w in product.name.lower().replace(",", " ").split()}
        score = 2 if product.category == self.task.category else 0
        return score + len((self._goal_words - {self._cat_head}) & ws) if score else 0

    def _hinted(self, v: VisibleEntity) -> bool:
        """Whether a place's name (or shop theme) suggests the wanted goods."""
        words = {lemma(w) for w in v.name.lower().replace(":", " ").replace(",", " ").replace("-", " ").split()}
        if self._goal_words & words:
            return True
        if v.kind == "store" and v.entity_id in self.index.stores:
            # A storefront's sign and directory: its theme and the names of its display areas.
            store = self.index.stores[v.entity_id]
            signs = " ".join([store.theme] + [self.index.name(a) for a in store.area_ids if a in self.index.areas])
            return bool(self._goal_words & {lemma(w) for w in signs.lower().replace(",", " ").replace("-", " ").split()})
        return False

    def _product_turn(self, obs, pid: str, visible, revealed: list[str]):
        state = self.state
        name = self._name(pid, obs, visible)
        handle = visible[pid].handle if pid in visible else obs.view.handle_of(pid)
        reachable = handle is not None and (pid in visible or pid == obs.held_item)
        state.considering = pid
        inspected = obs.inspected
        careful = self.task.acceptance.inspect_before_buying or self.persona.checks_details
        if pid not in inspected and not careful and self._described(pid):
            # This shopper trusts what the assistant just told it (price or labels) and judges
            # the product at a glance instead of picking it up first (AcceptancePolicy); a
            # conscientious one always checks for itself (Persona.checks_details).
            p = self.index.products[pid]
            inspected = {**inspected, pid: {"name": p.name, "category": p.category, "price": p.price, "tags": list(p.tags)}}
        if pid not in inspected:
            if not reachable:
                return {"name": "idle", "arguments": {}}, "ask", say(self.voice, "cannot_see", name=name)
            if obs.held_item and obs.held_item != pid and self.spec.holds_items:
                return {"name": "drop_item", "arguments": {}}, "explore", say(self.voice, "put_back", name=self._name(obs.held_item, obs, visible))
            tool = self.spec.inspect_tool
            return {"name": tool, "arguments": {"item": handle}}, "inspect", say(self.voice, f"inspect_{tool}", name=name)
        outcome, verdict, cheaper = self.decision.decide(pid, inspected)
        price = format_price(inspected[pid].get("price", 0.0))
        idle = {"name": "idle", "arguments": {}}
        if outcome == "reject":
            other = self._name(cheaper, obs, visible) if cheaper else None
            return self._reject(obs, pid, name, price, verdict, other, visible, revealed)
        if outcome == "hesitate":
            if verdict.soft_reason == "budget":
                self._reveal("budget", None, revealed)
                return idle, "ask", say(self.voice, "hesitate_budget", name=name, price=price)
            self._reveal("need", verdict.tag, revealed)
            return idle, "ask", say(self.voice, "hesitate_need", name=name, feature=label_value(verdict.tag or ""))
        if outcome == "explain":
            return idle, "ask", say(self.voice, "ask_explain", name=name)
        if not reachable:
            return idle, "ask", say(self.voice, "cannot_see", name=name)
        key = "buy_tradeoff" if outcome == "buy_tradeoff" else "buy"
        return {"name": "add_to_cart", "arguments": {"item": handle}}, "buy", say(self.voice, key, name=name, price=price)

    def _described(self, pid: str) -> bool:
        """Whether the assistant has told the shopper this product's price or labels."""
        return bool(self.state.explained.get(pid))

    def _reject(self, obs, pid, name, price, verdict: Verdict, other, visible, revealed):
        state = self.state
        state.rejected.add(pid)
        if state.considering == pid:
            state.considering = None
        kind = verdict.kind
        if kind == "budget":
            if self._reveal("budget", None, revealed):
                sentence = say(self.voice, "reject_budget_reveal", name=name, price=price, budget=format_price(self.task.budget))
            else:
                sentence = say(self.voice, "reject_budget", name=name, price=price)
        elif kind in ("avoid", "need"):
            if self._reveal(kind, verdict.tag, revealed):
                sentence = say(self.voice, f"reject_{kind}", name=name, feature=label_value(verdict.tag or ""))
            else:
                sentence = say(self.voice, "reject_generic", name=name)
        elif kind == "pricier":
            sentence = say(self.voice, "reject_pricier", name=name, other=other)
        elif kind == "substitute":
            sentence = say(self.voice, "reject_substitute", name=name)
        else:
            sentence = say(self.voice, "reject_category", name=name)
        style = self.task.acceptance.rejection_style
        if style == "clarify":
            sentence += " " + say(self.voice, "style_clarify")
        elif style == "compare":
            sentence += " " + say(self.voice, "style_compare")
        if self.spec.holds_items and obs.held_item == pid:
            call = {"name": "drop_item", "arguments": {}}
        elif not self.spec.holds_items and pid in visible:
            call = {"name": "do_not_add_to_cart", "arguments": {"item": visible[pid].handle}}
        else:
            call = {"name": "idle", "arguments": {}}
        return call, "reject", sentence

    def _reveal(self, kind: str, tag: str | None, revealed: list[str]) -> bool:
        """May a reason naming a goal detail be spoken? It was told before, or it becomes this
        turn's one new detail (recorded in ``revealed``); else the reason stays vague."""
        items = self.items
        of_kind = [i for i in range(len(items)) if items[i].kind == kind]
        if tag is not None:
            of_kind = [i for i in of_kind if items[i].value == tag] or of_kind
        if any(i in self.state.disclosed for i in of_kind):
            return True
        if revealed or not self.state.disclosed:
            return False
        if of_kind:
            self.state.disclosed.add(of_kind[0])
        revealed.append(kind)
        return True

    # ------------------------------------------------------------------ wording
    def _opening(self, u: Utterance, repeated: bool, intent: str, turn: int) -> list[str]:
        rng, talk = self.voice, self.persona.talkativeness
        if u.empty:
            return [say(self.voice, "confused")]
        if repeated and intent not in ("buy", "inspect", "reject"):
            return [say(self.voice, "repeated")]
        if turn == 1 and u.greeting:
            return [say(self.voice, "greet")]
        if talk != "low" and rng.random() < (0.8 if talk == "high" else 0.4):
            return [say(self.voice, "ack")]
        return []

    def _remark(self) -> str:
        if self.persona.talkativeness != "high" or self.voice.random() >= 0.35:
            return ""
        options = REMARKS.get(self.persona.behavior_style, REMARKS["default"])
        fresh = [r for r in options if r not in self.state.remarks_used]
        if not fresh:
            return ""
        remark = fresh[int(self.voice.integers(len(fresh)))]
        self.state.remarks_used.add(remark)
        return remark

    def _name(self, pid: str, obs: UserObservation, visible) -> str:
        if pid in visible:
            return spoken_name(visible[pid].name)
        details = obs.inspected.get(pid, {})
        return spoken_name(str(details.get("name") or self.index.name(pid)))

    def _give_up(self) -> UserTurn:
        return UserTurn(utterance=say(self.voice, "give_up"), tool_call={"name": "idle", "arguments": {}},
                        revealed=[], gave_up=True, intent="give_up")

    @staticmethod
    def _blocked(obs: UserObservation) -> bool:
        return obs.last_result is not None and any(w in obs.last_result.lower() for w in _BLOCKED)

    def _legalize(self, call: dict[str, Any], view: RoleView, held: str | None) -> dict[str, Any]:
        """``call`` if legal in this store and view, else ``idle`` (logged)."""
        name = call.get("name")
        problem = None
        if name not in LEGAL_TOOLS[self.store]:
            problem = f"tool {name!r} is not legal in {self.store}"
        elif name in TARGET_ARGUMENT:
            handle = call["arguments"].get(TARGET_ARGUMENT[name])
            eid = view.handles.get(handle)
            if eid is None:
                problem = f"handle {handle!r} is not in the user's view"
            elif eid not in set(view.visible_ids()) and not (eid == held and TARGET_ARGUMENT[name] == "item"):
                problem = f"target {eid!r} is not visible"
        elif name == "drop_item" and held is None:
            problem = "drop_item without a held item"
        if problem:
            logger.warning("rule user replaced an illegal call %s with idle: %s", call, problem)
            return {"name": "idle", "arguments": {}}
        return call
