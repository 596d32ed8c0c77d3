"""validate_user_call and render_tool_schema: the user's tool calls against the user's view."""

from __future__ import annotations

import doctest

import pytest

import situ_gym.actions.validate as validate_module
from situ_gym.actions import LEGAL_TOOLS, TOOLS, render_tool_schema, validate_user_call
from situ_gym.backends.base import Primitive


def call(name, **arguments):
    return {"name": name, "arguments": arguments}


def market_call(c, views, market, held=None, **kw):
    return validate_user_call(
        c, store="supermarket", view=views[1], held_item=held, index=market, **kw
    )


def test_move_to_fixture_resolves_entity(market, market_views):
    prim, tc = market_call(
        call("move_to_fixture", fixture="A", approach="front"), market_views, market
    )
    assert prim == Primitive("move_to_fixture", {"fixture": "sm_f01", "approach": "front"}, translational=True)
    assert tc.name == "move_to_fixture" and tc.target_id == "sm_f01"
    assert tc.arguments == {"fixture": "A", "approach": "front"}  # as given, user handles
    assert tc.legal and tc.valid and tc.error is None


def test_movement_arguments_cleaned(market, market_views):
    prim, tc = market_call(
        call("turn_and_move", direction=" Left", angle=45, distance="MEDIUM"), market_views, market
    )
    # The backend gets metres and degrees (it checks nothing again); the record keeps the words.
    assert prim == Primitive(
        "turn_and_move", {"direction": "left", "angle": 45.0, "distance": 1.5}, translational=True
    )
    assert tc.arguments["distance"] == "MEDIUM"
    assert tc.valid and tc.target_id is None


def test_invisible_target_rejected(market, market_views):
    # B is the user's fixed handle of the dairy cooler, which is not in view now.
    prim, tc = market_call(
        call("move_to_fixture", fixture="B", approach="nearest"), market_views, market
    )
    assert prim is None
    assert (tc.legal, tc.valid, tc.target_id) == (True, False, None)
    assert tc.error == "fixture handle 'B' is not visible in the user's view"


def test_unknown_handle_rejected(market, market_views):
    prim, tc = market_call(call("pick_up_item", item="9"), market_views, market)
    assert prim is None and tc.error == "item handle '9' is not visible in the user's view"


def test_assistant_handles_mean_nothing_to_the_user(market, market_views):
    prim, tc = market_call(call("pick_up_item", item="a"), market_views, market)
    assert prim is None and not tc.valid


def test_held_item_accepted_for_add_to_cart(market, market_views):
    prim, tc = market_call(call("add_to_cart", item="3"), market_views, market, held="sm_p003")
    assert prim == Primitive("add_to_cart", {"item": "sm_p003"})
    assert tc.valid and tc.target_id == "sm_p003"


def test_item_neither_visible_nor_held_rejected(market, market_views):
    prim, tc = market_call(call("add_to_cart", item="3"), market_views, market, held=None)
    assert prim is None
    assert tc.error == "item handle '3' is neither visible nor held in the user's view"


def test_visible_item_add_to_cart(market, market_views):
    prim, tc = market_call(
        call("add_to_cart", item=1), market_views, market
    )  # a bare number is read as "1"
    assert prim == Primitive("add_to_cart", {"item": "sm_p001"})


def test_kind_mismatch_rejected(market, market_views):
    prim, tc = market_call(call("pick_up_item", item="A"), market_views, market)
    assert prim is None and tc.error == "item handle 'A' names a fixture, not a product"
    prim, tc = market_call(
        call("move_to_fixture", fixture="1", approach="front"), market_views, market
    )
    assert prim is None and tc.error == "fixture handle '1' names a product, not a fixture"


def test_unknown_and_illegal_tools_rejected(market, market_views, home, home_views):
    prim, tc = market_call(call("fly", height=3), market_views, market)
    assert prim is None
    assert (tc.name, tc.legal, tc.valid) == ("fly", False, False)
    assert tc.error == "'fly' is not a legal tool in supermarket"
    assert tc.arguments == {"height": 3}
    prim, tc = market_call(call("check_item", item="1"), market_views, market)
    assert prim is None and not tc.legal
    prim, tc = validate_user_call(
        call("pick_up_item", item="1"), store="home_furnishings", view=home_views[1], held_item=None
    )
    assert prim is None and tc.error == "'pick_up_item' is not a legal tool in home_furnishings"


def test_drop_item_needs_a_held_item(market, market_views):
    prim, tc = market_call(call("drop_item"), market_views, market, held=None)
    assert prim is None and tc.error == "drop_item needs a held item, but the hands are empty"
    prim, tc = market_call({"name": "drop_item"}, market_views, market, held="sm_p003")
    assert prim == Primitive("drop_item", {}) and tc.valid


def test_back_approach_needs_a_back_viewpoint(market, market_views):
    # The freezer (A) has only a front viewpoint; the cereal shelf (C) likewise.
    prim, tc = market_call(
        call("move_to_fixture", fixture="A", approach="back"), market_views, market
    )
    assert prim is None
    assert (
        tc.error
        == "move_to_fixture approach 'back' is not available at 'Frozen Seafood Freezer' (has front)"
    )
    # Without the index the side is left to the backend.
    prim, _ = validate_user_call(
        call("move_to_fixture", fixture="A", approach="back"),
        store="supermarket",
        view=market_views[1],
        held_item=None,
    )
    assert prim == Primitive("move_to_fixture", {"fixture": "sm_f01", "approach": "back"}, translational=True)


@pytest.mark.parametrize(
    ("c", "error"),
    [
        (call("turn", direction="left"), "turn requires argument 'angle'"),
        (call("turn", direction="left", angle=0.5), "turn.angle must be in [1, 180], got 0.5"),
        (
            call("turn", direction="left", angle=float("nan")),
            "turn.angle must be in [1, 180], got nan",
        ),
        (
            call("turn", direction="left", angle=True),
            "turn.angle must be a number of degrees, got True",
        ),
        (
            call("look_up_down", direction="left", angle=10),
            "look_up_down.direction must be one of up/down, got 'left'",
        ),
        (
            call("move_forward", distance="far"),
            "move_forward.distance must be one of short/medium/long, got 'far'",
        ),
        (call("move_to_fixture", fixture="A"), "move_to_fixture requires argument 'approach'"),
        (
            call("move_to_fixture", fixture="A", approach="inside_doorway"),
            "move_to_fixture.approach must be one of nearest/front/back, got 'inside_doorway'",
        ),
        (call("idle", why="tired"), "idle has no argument 'why' (allowed: none)"),
        (call("pick_up_item", item=["1"]), "pick_up_item.item must be a handle string, got <list>"),
        ({"name": "idle", "arguments": "not json"}, "idle: arguments must be an object, got str"),
    ],
)
def test_argument_errors(c, error, market, market_views):
    prim, tc = market_call(c, market_views, market)
    assert prim is None and tc.legal and not tc.valid
    assert tc.error == error


def test_several_errors_are_joined(market, market_views):
    _, tc = market_call(
        call("turn_and_move", direction="up", angle=999, distance="far"), market_views, market
    )
    assert tc.error.count(";") == 2


@pytest.mark.parametrize(
    "c",
    [
        None,
        5,
        "move_forward",
        [],
        ["idle"],
        {},
        {"name": None},
        {"name": ["idle"]},
        {"name": 3, "arguments": {}},
        {"name": "x" * 1_000_000},
        {"name": "turn", "arguments": {"direction": {"deep": [[[]]]}, "angle": 10**400}},
        {"name": "idle", "arguments": "[" * 100_000},
        {"name": "pick_up_item", "arguments": {"item": "ü" * 100_000}},
    ],
)
def test_bad_calls_never_raise(c, market, market_views):
    prim, tc = market_call(c, market_views, market)
    assert prim is None and not tc.valid and tc.error
    assert len(tc.name) <= 100 and len(tc.error) < 400


def test_json_string_arguments_accepted(market, market_views):
    prim, tc = market_call(
        {"name": "side_step", "arguments": '{"direction": "right", "distance": "short"}'},
        market_views,
        market,
    )
    assert prim == Primitive("side_step", {"direction": "right", "distance": 0.5}, translational=True)


def test_home_tools(home, home_views):
    view = home_views[1]
    prim, tc = validate_user_call(
        call("move_to_store", store="A", approach="outside_doorway"),
        store="home_furnishings",
        view=view,
        held_item=None,
    )
    assert prim == Primitive("move_to_store", {"store": "hf_s01", "approach": "outside_doorway"}, translational=True)
    prim, tc = validate_user_call(
        call("move_to_area", area="A1"), store="home_furnishings", view=view, held_item=None
    )
    assert prim == Primitive("move_to_area", {"area": "hf_a01"}, translational=True) and tc.target_id == "hf_a01"
    prim, tc = validate_user_call(
        call("move_to_area", area="B1"), store="home_furnishings", view=view, held_item=None
    )
    assert prim is None and tc.error == "area handle 'B1' is not visible in the user's view"
    prim, tc = validate_user_call(
        call("move_to_area", area="A"), store="home_furnishings", view=view, held_item=None
    )
    assert prim is None and tc.error == "area handle 'A' names a store, not an area"
    for tool in ("check_item", "do_not_add_to_cart", "add_to_cart"):
        prim, tc = validate_user_call(
            call(tool, item="2"), store="home_furnishings", view=view, held_item=None
        )
        assert prim == Primitive(tool, {"item": "hf_p002"}), tool


def test_unknown_store_is_a_programming_error(market_views):
    with pytest.raises(ValueError, match="'mall'"):
        validate_user_call(call("idle"), store="mall", view=market_views[1], held_item=None)
    with pytest.raises(ValueError, match="'mall'"):
        render_tool_schema("mall")


@pytest.mark.parametrize("store", ["supermarket", "home_furnishings"])
def test_render_tool_schema_lists_exactly_the_legal_tools(store):
    text = render_tool_schema(store)
    lines = text.splitlines()
    assert [line.split("(")[0][2:] for line in lines] == list(LEGAL_TOOLS[store])
    for line, name in zip(lines, LEGAL_TOOLS[store], strict=True):
        for arg in TOOLS[name].arguments:
            assert f"{arg}:" in line
        assert TOOLS[name].description in line
    other = "home_furnishings" if store == "supermarket" else "supermarket"
    for name in set(LEGAL_TOOLS[other]) - set(LEGAL_TOOLS[store]):
        assert f"- {name}(" not in text


def test_module_doctests():
    result = doctest.testmod(validate_module)
    assert result.attempted >= 3 and result.failed == 0
