"""Where the rule shopper goes: following understood guidance, or exploring on its own.

Guidance arrives as a ``situ_gym.language.NavInstruction`` (target, relation, direction,
distance, angle, approach); this module turns it into one legal user tool call in the
shopper's own handles. A target the shopper cannot see cannot be walked to (the tools need a
visible target): it asks or looks around instead. The shopper does not re-walk to the spot it
stands on nor walk into the obstacle that just blocked it (both feed the motion-stall rule).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from situ_gym.language import NavInstruction
from situ_gym.scene.index import SceneIndex
from situ_gym.scene.wording import place_phrase
from situ_gym.som.types import VisibleEntity
from situ_gym.stores import store_spec
from situ_gym.user.rule.speech import say
from situ_gym.user.rule.state import EpisodeState

__all__ = ["Move", "call_for_direction", "describe_call", "Navigator"]

Move = tuple[dict[str, Any], str, str]  # (tool call, intent, sentence)
_TURN_ONLY = ("turn", "look_up_down")


def call_for_direction(nav: NavInstruction) -> dict[str, Any] | None:
    """The tool call for guidance without a target ("turn left", "a step to the right along it")."""
    d, dist, angle = nav.direction, nav.distance or "medium", float(nav.angle or 90.0)
    if d == "around":
        return {"name": "turn", "arguments": {"direction": "right", "angle": 180.0}}
    if d in ("up", "down"):
        return {"name": "look_up_down", "arguments": {"direction": d, "angle": float(nav.angle or 20.0)}}
    if d in ("left", "right"):
        if nav.relation == "along":
            return {"name": "side_step", "arguments": {"direction": d, "distance": nav.distance or "short"}}
        if nav.distance is not None:
            return {"name": "turn_and_move", "arguments": {"direction": d, "angle": angle, "distance": dist}}
        return {"name": "turn", "arguments": {"direction": d, "angle": angle}}
    if d == "back":
        return {"name": "move_backward", "arguments": {"distance": nav.distance or "short"}}
    if d == "ahead" or nav.relation in ("along", "past", "toward"):
        return {"name": "move_forward", "arguments": {"distance": dist}}
    return None


def describe_call(call: dict[str, Any]) -> str:
    a, name = call["arguments"], call["name"]
    if name == "turn":
        return "turning around" if a["angle"] >= 180 else f"turning {a['direction']}"
    if name == "turn_and_move":
        return f"turning {a['direction']} and walking on"
    if name == "side_step":
        return f"stepping to the {a['direction']}"
    if name == "look_up_down":
        return f"looking {a['direction']}"
    if name == "move_backward":
        return "stepping back"
    return "walking ahead"


class Navigator:
    """Navigation decisions of one episode (reads and updates the shared ``EpisodeState``)."""

    def __init__(self, index: SceneIndex, store: str, state: EpisodeState, rng: np.random.Generator,
                 following: float, hinted, voice: np.random.Generator | None = None):
        self.index, self.store, self.state, self.rng = index, store, state, rng
        self.voice = rng if voice is None else voice  # wording draws (the shopper's own stream)
        self.following = following
        self.hinted = hinted  # callable(VisibleEntity) -> bool: name suggests the wanted goods

    def name_of(self, v: VisibleEntity) -> str:
        return place_phrase(v.kind, v.name)

    # ------------------------------------------------------------------ guidance
    def guided(self, nav: NavInstruction | None, visible: dict[str, VisibleEntity], blocked: bool) -> Move | None:
        """Follow ``nav`` (with probability ``following``), or None when there is none."""
        if nav is None:
            return None
        target = visible.get(nav.target) if nav.target else None
        if nav.target and target is None and nav.target in self.index.entities:
            # Named a place the shopper cannot see: a direction given with it still helps.
            call = call_for_direction(nav)
            if call is None:
                kind = self.index.kind(nav.target)
                name = place_phrase(kind, self.index.name(nav.target))
                side = "left" if self.rng.random() < 0.5 else "right"
                look = {"name": "turn", "arguments": {"direction": side, "angle": 60.0}}
                return look, "ask", say(self.voice, "cannot_see_place", name=name)
            nav = NavInstruction(direction=nav.direction, distance=nav.distance, angle=nav.angle, relation=None)
        if target is None and call_for_direction(nav) is None:
            return None
        if self.rng.random() >= self.following:
            avoid = {target.entity_id} if target is not None else set()
            call, _, sentence = self.explore(visible, blocked, exclude=avoid)
            return call, "explore", say(self.voice, "decline_guidance") + " " + sentence
        if target is not None:
            return self.goto(target, nav, "follow")
        call = call_for_direction(nav)
        self.state.explore_moves = 0
        if call["name"] not in _TURN_ONLY and blocked:
            side = "left" if self.rng.random() < 0.5 else "right"
            turn = {"name": "turn", "arguments": {"direction": side, "angle": 45.0}}
            return turn, "ask", say(self.voice, "blocked_ask")
        if call["name"] not in _TURN_ONLY:
            self.state.at = None
        return call, "follow", say(self.voice, "follow_direction", direction=describe_call(call))

    def goto(self, v: VisibleEntity, nav: NavInstruction | None, intent: str) -> Move:
        state = self.state
        state.explore_moves = 0
        approach_hint = nav.approach if nav is not None else None
        relation = nav.relation if nav is not None else None
        if v.kind == "fixture":
            sides = self.index.fixtures[v.entity_id].approach if v.entity_id in self.index.fixtures else {}
            approach = "nearest"
            if (approach_hint == "back" or relation == "behind") and "back" in sides:
                approach = "back"
            elif approach_hint == "front" and "front" in sides:
                approach = "front"
            call = {"name": "move_to_fixture", "arguments": {"fixture": v.handle, "approach": approach}}
            key = ("follow_fixture_back" if approach == "back" else "follow_fixture") if intent == "follow" else "explore_target"
        elif v.kind == "store":
            outside = relation == "out_of" or approach_hint == "outside"
            approach = "outside_doorway" if outside else "inside_doorway"
            call = {"name": "move_to_store", "arguments": {"store": v.handle, "approach": approach}}
            key = ("follow_store_outside" if outside else "follow_store_inside") if intent == "follow" else "explore_target"
        else:
            call = {"name": "move_to_area", "arguments": {"area": v.handle}}
            key = "follow_area" if intent == "follow" else "explore_target"
        place = (v.entity_id, call["arguments"].get("approach"))
        if place == state.at:
            # Already standing there: a direction given with it ("stay by Shelf 2 and slide to
            # your left") is followed along the fixture; otherwise look around, never walk 0 m.
            along = call_for_direction(replace(nav, target=None, relation="along")) if nav and nav.direction in ("left", "right") else None
            if along is not None and intent == "follow":
                return along, "follow", say(self.voice, "follow_direction", direction=describe_call(along))
            return self.scan(v)
        state.at = place
        state.scans = 0
        state.visited.append(v.entity_id)
        return call, intent, say(self.voice, key, name=self.name_of(v))

    def scan(self, v: VisibleEntity | str) -> Move:
        """Look around where the shopper stands (turn a little, tilt the view, step aside)."""
        name = self.name_of(v) if isinstance(v, VisibleEntity) else place_phrase(self.index.kind(v), self.index.name(v))
        rng = self.rng
        side = "left" if rng.random() < 0.5 else "right"
        options = [
            {"name": "turn", "arguments": {"direction": side, "angle": 30.0}},
            {"name": "turn", "arguments": {"direction": side, "angle": 60.0}},
            {"name": "look_up_down", "arguments": {"direction": "down", "angle": 15.0}},
            {"name": "side_step", "arguments": {"direction": side, "distance": "medium"}},
        ]
        call = options[int(rng.integers(len(options)))]
        return call, "explore", say(self.voice, "already_there", name=name)

    # ------------------------------------------------------------------ on its own
    def explore(self, visible: dict[str, VisibleEntity], blocked: bool, exclude=frozenset()) -> Move:
        rng, state = self.rng, self.state
        side = "left" if rng.random() < 0.5 else "right"
        if blocked:
            state.explore_moves = 0
            angle = float(rng.choice([60.0, 90.0, 120.0]))
            return {"name": "turn", "arguments": {"direction": side, "angle": angle}}, "explore", say(self.voice, "blocked")
        targets = [
            v for v in visible.values()
            if v.kind in ("fixture", "store", "area") and v.entity_id not in state.visited[-3:] and v.entity_id not in exclude
        ]
        if targets:
            hinted = [v for v in targets if self.hinted(v)]
            unvisited = [v for v in targets if v.entity_id not in state.visited]
            pool = hinted or (unvisited if rng.random() < 0.6 else [])
            if store_spec(self.store).layout == "stores":
                areas = [v for v in pool if v.kind == "area"]  # inside a store, its areas first
                pool = areas or pool
            if pool:
                return self.goto(min(pool, key=lambda e: (e.distance, e.handle)), None, "explore")
        products_here = any(v.kind == "product" for v in visible.values())
        if state.at is not None and products_here and state.scans < 2:
            state.scans += 1
            return self.scan(state.at[0])
        if state.at is not None:
            # Just arrived, facing the target: turn away from it before walking on.
            state.at = None
            state.explore_moves = 1
            angle = float(rng.choice([90.0, 135.0, 180.0]))
            call = {"name": "turn_and_move", "arguments": {"direction": side, "angle": angle, "distance": "medium"}}
        elif state.explore_moves >= 2:
            state.explore_moves = 0
            angle = float(rng.choice([45.0, 90.0, 135.0]))
            call = {"name": "turn", "arguments": {"direction": side, "angle": angle}}
        else:
            state.explore_moves += 1
            state.at = None
            if rng.random() < 0.45:
                call = {"name": "move_forward", "arguments": {"distance": "medium"}}
            else:
                angle = float(rng.choice([30.0, 45.0, 60.0, 90.0]))
                call = {"name": "turn_and_move", "arguments": {"direction": side, "angle": angle, "distance": "medium"}}
        return call, "explore", say(self.voice, "explore")
