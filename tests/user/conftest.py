"""A minimal shop loop over the shopper world of tests/world.py, for the user-simulator tests."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from situ_gym.scene.index import SceneIndex
from situ_gym.som.types import RoleView
from situ_gym.user import UserObservation
from tests.world import role_view, shopper_home, shopper_market

# User handles: numbers for products (renumbered per view), letters for fixtures/stores, A1.. for areas.
FIXED_HANDLES = {
    "sm_f01": "B",
    "sm_f02": "C",
    "sm_f03": "D",
    "hf_s01": "E",
    "hf_s02": "F",
    "hf_a01": "A1",
}


def details(index: SceneIndex, pid: str) -> dict[str, Any]:
    p = index.products[pid]
    return {
        "price": p.price,
        "attributes": dict(p.attributes),
        "tags": list(p.tags),
        "category": p.category,
        "name": p.name,
    }


def make_view(
    index: SceneIndex, visible_ids: list[str], held: str | None = None, first_number: int = 41
) -> RoleView:
    """A user RoleView by hand: products numbered from ``first_number``, fixed target handles."""
    handles = {h: eid for eid, h in FIXED_HANDLES.items() if eid in index.entities}
    shown, numbers = [], itertools.count(first_number)
    for eid in visible_ids:
        handle = str(next(numbers)) if index.kind(eid) == "product" else FIXED_HANDLES[eid]
        handles[handle] = eid
        shown.append(handle)
    if held is not None and held not in visible_ids:
        handles[str(next(numbers))] = held
    return role_view("user", index, handles, shown, distances=[1.0 + k for k in range(len(shown))])


class MiniShop:
    """A stand-in for the env loop: a few places, each with a fixed set of visible entities."""

    def __init__(self, index: SceneIndex, places: dict[str, list[str]], start: str):
        self.index, self.places, self.place = index, places, start
        self.held: str | None = None
        self.cart: list[str] = []
        self.inspected: dict[str, dict[str, Any]] = {}
        self.history: list[tuple[str, str]] = []
        self.last_result: str | None = None
        self.turn = 0
        self.view = make_view(index, places[start])

    def observe(self, response: str) -> UserObservation:
        self.turn += 1
        self.history.append(("assistant", response))
        return UserObservation(
            turn=self.turn,
            assistant_response=response,
            view=self.view,
            held_item=self.held,
            cart=list(self.cart),
            inspected=dict(self.inspected),
            last_result=self.last_result,
            history=list(self.history),
        )

    def apply(self, utterance: str, call: dict[str, Any]) -> None:
        self.history.append(("user", utterance))
        name, args = call["name"], call.get("arguments", {})
        target = None
        for key in ("item", "fixture", "store", "area"):
            if key in args:
                target = self.view.handles[args[key]]
        if name in ("move_to_fixture", "move_to_store", "move_to_area") and target in self.places:
            self.place = target
        elif name == "pick_up_item":
            self.held = target
            self.inspected[target] = details(self.index, target)
        elif name == "check_item":
            self.inspected[target] = details(self.index, target)
        elif name == "drop_item":
            self.held = None
        elif name == "add_to_cart":
            self.cart.append(target)
        self.last_result = f"{name} done"
        self.view = make_view(
            self.index,
            self.places[self.place],
            held=self.held,
            first_number=41 + 3 * (self.turn % 2),
        )


@pytest.fixture
def sm_index() -> SceneIndex:
    return SceneIndex(shopper_market())


@pytest.fixture
def hf_index() -> SceneIndex:
    return SceneIndex(shopper_home())
