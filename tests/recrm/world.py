"""A tiny hand-built supermarket (7 products, 3 fixtures) and one task, for RecRM tests."""

from __future__ import annotations

import json
from typing import Any

from situ_gym.records import ToolCall, TurnRecord
from situ_gym.scene.index import SceneIndex
from situ_gym.scene.model import (
    AcceptancePolicy,
    DisclosureItem,
    Fixture,
    Layout,
    Pose2,
    Product,
    Scene,
    Task,
    Waypoint,
)

# id, name, brand, category, group, price, tags, fixture
PRODUCTS = [
    (
        "sm_p001",
        "Harbor Catch Plain Frozen Cod Fillets, 1 lb",
        "Harbor Catch",
        "frozen fish",
        "frozen foods",
        9.99,
        ["diet:high-protein"],
        "sm_f01",
    ),
    (
        "sm_p002",
        "Harbor Catch Breaded Fish Sticks, 24 ct",
        "Harbor Catch",
        "frozen fish",
        "frozen foods",
        7.49,
        ["diet:kid-friendly"],
        "sm_f01",
    ),
    (
        "sm_p003",
        "Polar Bay Wild Salmon Portions, 12 oz",
        "Polar Bay",
        "frozen fish",
        "frozen foods",
        13.99,
        ["diet:high-protein", "diet:gluten-free"],
        "sm_f01",
    ),
    (
        "sm_p004",
        "Sunny Fields Gluten-Free Oat Cereal, 12 oz",
        "Sunny Fields",
        "breakfast cereal",
        "pantry",
        4.99,
        ["diet:gluten-free", "diet:vegan"],
        "sm_f02",
    ),
    (
        "sm_p005",
        "Sunny Fields Honey Nut Crunch Cereal, 14 oz",
        "Sunny Fields",
        "breakfast cereal",
        "pantry",
        3.99,
        ["allergen:contains-nuts", "flavor:honey"],
        "sm_f02",
    ),
    (
        "sm_p006",
        "Morning Mill Almond Granola, 16 oz",
        "Morning Mill",
        "granola",
        "pantry",
        5.49,
        ["allergen:contains-nuts", "diet:vegan"],
        "sm_f02",
    ),
    (
        "sm_p007",
        "Green Valley Organic Bananas, 2 lb",
        "Green Valley",
        "fresh fruit",
        "produce",
        1.99,
        ["diet:organic"],
        "sm_f03",
    ),
    (
        "sm_p008",
        "Sunny Fields Gluten-Free Corn Flakes, 10 oz",
        "Sunny Fields",
        "breakfast cereal",
        "pantry",
        6.49,
        ["diet:gluten-free"],
        "sm_f02",
    ),
]
FIXTURES = [
    ("sm_f01", "Upright Freezer 2", "upright_freezer"),
    ("sm_f02", "Cereal Shelf 1", "shelf"),
    ("sm_f03", "Produce Stand 1", "produce_stand"),
]


def make_index() -> SceneIndex:
    products = [
        Product(
            id=pid,
            name=name,
            brand=brand,
            category=cat,
            group=group,
            price=price,
            attributes={"size": name.rsplit(", ", 1)[-1]},
            tags=tags,
            color=(10 + i, 20, 30),
            fixture_id=fix,
            instances=[],
        )
        for i, (pid, name, brand, cat, group, price, tags, fix) in enumerate(PRODUCTS)
    ]
    fixtures = [
        Fixture(
            id=fid,
            name=name,
            kind=kind,
            footprint=(i * 3.0, 0.0, i * 3.0 + 2.0, 1.0),
            height=2.0,
            levels=[0.5, 1.0],
            color=(100 + i, 50, 50),
            front_yaw=90.0,
            approach={"front": Pose2(x=i * 3.0 + 1.0, y=2.0, yaw=270.0)},
            product_ids=[p[0] for p in PRODUCTS if p[7] == fid],
        )
        for i, (fid, name, kind) in enumerate(FIXTURES)
    ]
    scene = Scene(
        store="supermarket",
        name="toy market",
        layout=Layout(bounds=(0.0, 0.0, 12.0, 8.0), walls=[], start=Pose2(x=1.0, y=6.0)),
        products=products,
        fixtures=fixtures,
        waypoints=[Waypoint(id="w0", x=1.0, y=6.0, neighbors=[])],
    )
    return SceneIndex(scene)


def make_task(accept_substitutes: bool = True, **overrides: Any) -> Task:
    fields: dict[str, Any] = dict(
        id="sm_t001",
        store="supermarket",
        profile_id="pr_01",
        theme="family breakfast",
        request="A gluten-free breakfast cereal for the kids, no nuts, under $6.",
        category="breakfast cereal",
        required_tags=["diet:gluten-free"],
        avoided_tags=["allergen:contains-nuts"],
        target_product_id="sm_p004",
        disclosure=[
            DisclosureItem(
                kind="category", text="I need some breakfast cereal", value="breakfast cereal"
            ),
            DisclosureItem(kind="budget", text="under six dollars please", value=6.0),
            DisclosureItem(
                kind="avoid", text="no nuts, my son is allergic", value="allergen:contains-nuts"
            ),
            DisclosureItem(kind="need", text="it has to be gluten-free", value="diet:gluten-free"),
        ],
        acceptance=AcceptancePolicy(
            inspect_before_buying=False,
            explanations_needed=0,
            accept_substitutes=accept_substitutes,
            rejection_style="reason",
        ),
        budget_tier="strict",
        budget=6.0,
        reference_set=["sm_p004", "sm_p008"],
        subset=0,
    )
    fields.update(overrides)
    return Task(**fields)


def output(
    response: str,
    action: dict | None = None,
    ranking: list[str] | None = None,
    eua: dict | None = None,
) -> str:
    obj = {
        "response": response,
        "assistant_actions": [action or {"type": "AskPreference"}],
        "ranking": ranking or [],
    }
    if eua is not None:
        obj["expected_user_action"] = eua
    return json.dumps(obj)


def turn(
    response: str,
    action_type: str = "AskPreference",
    *,
    n: int = 1,
    action: dict | None = None,
    recommended_id: str | None = None,
    ranking: list[str] | None = None,
    errors: list[str] | None = None,
    visible: list[str] | None = None,
    eua: ToolCall | None = None,
    user: str = "",
    revealed: list[str] | None = None,
    held: str | None = None,
    cart: list[str] | None = None,
    raw: str | None = None,
) -> TurnRecord:
    """A TurnRecord as the env would write it; ``eua`` defaults to a legal idle."""
    action = {"type": action_type, **(action or {})}
    if eua is None:
        eua = ToolCall(name="idle", arguments={})
    return TurnRecord(
        turn=n,
        assistant_raw=raw
        if raw is not None
        else output(response, action, ranking, {"name": eua.name, "arguments": eua.arguments}),
        assistant_valid=not errors,
        assistant_errors=errors or [],
        response=response,
        action_type=action_type,
        action=action,
        recommended_id=recommended_id,
        expected_user_action=eua,
        ranking=ranking or [],
        user_utterance=user,
        visible_before=visible
        if visible is not None
        else ["sm_f02", "sm_p004", "sm_p005", "sm_p008"],
        held_item=held,
        cart=cart or [],
        revealed=revealed or [],
    )


def honest_recommend(n: int = 3) -> TurnRecord:
    """What a good heuristic assistant says once category, budget and nuts are known."""
    return turn(
        "The Sunny Fields Gluten-Free Oat Cereal is $4.99, gluten-free and made without nuts, so it fits your kids and your budget.",
        "Recommend",
        n=n,
        action={
            "display_name": "Sunny Fields Gluten-Free Oat Cereal",
            "visible_now": True,
            "reason": "gluten-free, nut-free and under budget",
        },
        recommended_id="sm_p004",
        ranking=["sm_p004", "sm_p008", "sm_p005"],
        eua=ToolCall(name="pick_up_item", arguments={"item": "a"}, target_id="sm_p004"),
    )


def opening_history() -> list[TurnRecord]:
    """Two earlier turns in which the user revealed category and budget."""
    return [
        turn(
            "Hi! What are you shopping for today?",
            "Greet",
            n=1,
            user="I need some breakfast cereal.",
            revealed=["category"],
        ),
        turn(
            "Any price range in mind?",
            "AskPreference",
            n=2,
            user="Under six dollars please.",
            revealed=["budget"],
        ),
    ]
