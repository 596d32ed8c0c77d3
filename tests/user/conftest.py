"""Tiny in-code stores, tasks, profiles and a minimal shop loop for the user-simulator tests."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

from situ_gym.scene.index import SceneIndex
from situ_gym.scene.model import (
    AcceptancePolicy,
    Area,
    DisclosureItem,
    Fixture,
    Interaction,
    Layout,
    Pose2,
    Product,
    Profile,
    Scene,
    Store,
    Task,
)
from situ_gym.som.types import RoleView, VisibleEntity
from situ_gym.user import UserObservation

_COLORS = ((1 + i % 250, 40 + (i // 250) % 200, 200) for i in itertools.count())  # never runs out


def _product(pid, name, category, price, tags, **loc) -> Product:
    return Product(
        id=pid,
        name=name,
        brand=name.split()[0],
        category=category,
        group="test",
        price=price,
        attributes={"note": name.lower()},
        tags=tags,
        color=next(_COLORS),
        instances=[],
        **loc,
    )


def supermarket_scene() -> Scene:
    fz, sh, co = "sm_f01", "sm_f02", "sm_f03"
    products = [
        _product(
            "sm_p01",
            "Harbor Catch Plain Cod Fillets",
            "frozen fish",
            9.49,
            ["prep:plain", "diet:high_protein"],
            fixture_id=fz,
        ),
        _product(
            "sm_p02",
            "Harbor Catch Breaded Tilapia",
            "frozen fish",
            7.99,
            ["prep:breaded", "diet:high_protein"],
            fixture_id=fz,
        ),
        _product(
            "sm_p03",
            "Ocean Prime Wild Salmon Fillets",
            "frozen fish",
            14.99,
            ["prep:plain", "diet:high_protein"],
            fixture_id=fz,
        ),
        _product(
            "sm_p04",
            "Northern Plain Haddock Fillets",
            "frozen fish",
            8.79,
            ["prep:plain", "diet:high_protein"],
            fixture_id=fz,
        ),
        _product("sm_p05", "Sunny Oat Crunch Cereal", "cereal", 4.5, ["diet:vegan"], fixture_id=sh),
    ]
    box = (0.0, 0.0, 1.0, 1.0)

    def fixture(fid, name, kind, pids, back=False):
        approach = {"front": Pose2(x=0.5, y=-1.0, yaw=90.0)}
        if back:
            approach["back"] = Pose2(x=0.5, y=2.0, yaw=-90.0)
        return Fixture(
            id=fid,
            name=name,
            kind=kind,
            footprint=box,
            height=2.0,
            levels=[0.5],
            color=next(_COLORS),
            front_yaw=-90.0,
            approach=approach,
            product_ids=pids,
        )

    fixtures = [
        fixture(
            fz, "Upright Freezer 2", "upright_freezer", ["sm_p01", "sm_p02", "sm_p03", "sm_p04"]
        ),
        fixture(sh, "Breakfast Shelf 1", "shelf", ["sm_p05"], back=True),
        fixture(co, "Open Cooler 3", "open_cooler", []),
    ]
    layout = Layout(bounds=(-10.0, -10.0, 10.0, 10.0), walls=[], start=Pose2(x=0.0, y=-5.0))
    return Scene(
        store="supermarket",
        name="tiny market",
        layout=layout,
        products=products,
        fixtures=fixtures,
        waypoints=[],
    )


def home_scene() -> Scene:
    products = [
        _product(
            "hf_p01",
            "Brass Arc Floor Lamp",
            "floor lamp",
            129.0,
            ["style:modern", "material:brass"],
            store_id="hf_s01",
            area_id="hf_a01",
        ),
        _product(
            "hf_p02",
            "Rattan Globe Floor Lamp",
            "floor lamp",
            89.0,
            ["style:boho", "material:rattan"],
            store_id="hf_s01",
            area_id="hf_a01",
        ),
        _product(
            "hf_p03",
            "Wicker Rattan Floor Lamp",
            "floor lamp",
            49.0,
            ["style:boho", "material:rattan"],
            store_id="hf_s01",
            area_id="hf_a01",
        ),
    ]
    box = (0.0, 0.0, 5.0, 5.0)
    stores = [
        Store(
            id="hf_s01",
            name="Light Logic",
            theme="indoor lighting",
            footprint=box,
            wall_height=3.0,
            color=next(_COLORS),
            doorway=(2.0, 0.0, 3.0, 0.1),
            approach={
                "outside_doorway": Pose2(x=2.5, y=-0.5),
                "inside_doorway": Pose2(x=2.5, y=0.5),
            },
            area_ids=["hf_a01"],
            product_ids=["hf_p01", "hf_p02", "hf_p03"],
        ),
        Store(
            id="hf_s02",
            name="The Plant",
            theme="plants and planters",
            footprint=box,
            wall_height=3.0,
            color=next(_COLORS),
            doorway=(2.0, 0.0, 3.0, 0.1),
            approach={
                "outside_doorway": Pose2(x=2.5, y=-0.5),
                "inside_doorway": Pose2(x=2.5, y=0.5),
            },
            area_ids=[],
            product_ids=[],
        ),
    ]
    areas = [
        Area(
            id="hf_a01",
            store_id="hf_s01",
            name="Reading Nook",
            footprint=box,
            color=next(_COLORS),
            approach=Pose2(x=1.0, y=1.0),
            product_ids=["hf_p01", "hf_p02", "hf_p03"],
        )
    ]
    layout = Layout(bounds=(-10.0, -10.0, 10.0, 10.0), walls=[], start=Pose2(x=0.0, y=-5.0))
    return Scene(
        store="home_furnishings",
        name="tiny home",
        layout=layout,
        products=products,
        stores=stores,
        areas=areas,
        waypoints=[],
    )


def make_profile(**interaction: Any) -> Profile:
    settings = dict(
        behavior_style="cautious",
        patience=3,
        price_sensitivity="medium",
        explanation_seeking="medium",
        substitute_willingness="medium",
        navigation_following=1.0,
        talkativeness="medium",
    )
    settings.update(interaction)
    return Profile(
        id="u01",
        name="Dana",
        persona="busy nurse",
        gender="female",
        demographics={"age_group": "30-39"},
        big_five={
            k: 0.5
            for k in (
                "openness",
                "conscientiousness",
                "extraversion",
                "agreeableness",
                "neuroticism",
            )
        },
        interaction=Interaction(**settings),
    )


def make_sm_task(**acceptance: Any) -> Task:
    policy = dict(
        inspect_before_buying=True,
        explanations_needed=0,
        accept_substitutes=False,
        rejection_style="clarify",
    )
    policy.update(acceptance)
    return Task(
        id="sm_t01",
        store="supermarket",
        profile_id="u01",
        theme="dinner",
        request="I want a plain white fish for a quick dinner, under $10, nothing breaded.",
        category="frozen fish",
        required_tags=["prep:plain"],
        avoided_tags=["prep:breaded"],
        target_product_id="sm_p01",
        disclosure=[
            DisclosureItem(kind="category", text="some frozen fish", value="frozen fish"),
            DisclosureItem(kind="use", text="a quick weeknight dinner"),
            DisclosureItem(kind="budget", text="under $10", value=10.0),
            DisclosureItem(kind="avoid", text="anything breaded", value="prep:breaded"),
            DisclosureItem(kind="need", text="plain fillets", value="prep:plain"),
        ],
        acceptance=AcceptancePolicy(**policy),
        budget_tier="strict",
        budget=10.0,
        reference_set=["sm_p01", "sm_p04"],
        subset=0,
    )


def make_hf_task(**acceptance: Any) -> Task:
    policy = dict(
        inspect_before_buying=True,
        explanations_needed=0,
        accept_substitutes=False,
        rejection_style="reason",
    )
    policy.update(acceptance)
    return Task(
        id="hf_t01",
        store="home_furnishings",
        profile_id="u01",
        theme="reading light",
        request="A warm floor lamp for my reading corner, under $100, natural materials.",
        category="floor lamp",
        required_tags=["material:rattan"],
        avoided_tags=["style:modern"],
        target_product_id="hf_p02",
        disclosure=[
            DisclosureItem(kind="use", text="lighting my reading corner"),
            DisclosureItem(kind="budget", text="under $100", value=100.0),
            DisclosureItem(kind="need", text="natural rattan", value="material:rattan"),
        ],
        acceptance=AcceptancePolicy(**policy),
        budget_tier="strict",
        budget=100.0,
        reference_set=["hf_p02"],
        subset=0,
    )


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
    visible = []
    n = first_number
    for k, eid in enumerate(visible_ids):
        kind = index.kind(eid)
        if kind == "product":
            handle = str(n)
            n += 1
        else:
            handle = FIXED_HANDLES[eid]
        handles[handle] = eid
        visible.append(
            VisibleEntity(
                handle=handle,
                entity_id=eid,
                kind=kind,
                name=index.name(eid),
                distance=1.0 + k,
                pixels=500,
            )
        )
    if held is not None and held not in visible_ids:
        handles[str(n)] = held
    return RoleView(
        role="user", image=np.zeros((4, 4, 3), np.uint8), handles=handles, visible=visible
    )


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
    return SceneIndex(supermarket_scene())


@pytest.fixture
def hf_index() -> SceneIndex:
    return SceneIndex(home_scene())
