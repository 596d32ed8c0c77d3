"""Role handles: formats, fixed per scene, different orders per role; the caption text."""

from __future__ import annotations

import re

import pytest

from situ_gym.scene.index import SceneIndex
from situ_gym.som import RoleView, VisibleEntity, caption, fixed_handles, fixed_handles_by_id
from situ_gym.som.labels import letters, product_label
from tests.world import marks_home, marks_market

USER_FIXTURE = re.compile(r"^[A-Z]+$")
USER_AREA = re.compile(r"^[A-Z]+\d+$")
ASSISTANT_FIXTURE = re.compile(r"^\d+$")
ASSISTANT_AREA = re.compile(r"^\d+[a-z]+$")


def test_letters_are_bijective_base_26():
    assert [letters(i) for i in (0, 1, 25, 26, 27, 51, 52, 701, 702)] == [
        "A", "B", "Z", "AA", "AB", "AZ", "BA", "ZZ", "AAA"
    ]  # fmt: skip
    assert len({letters(i) for i in range(2000)}) == 2000
    assert letters(27, upper=False) == "ab"
    with pytest.raises(ValueError, match="-1"):
        letters(-1)


def test_product_labels_per_role():
    assert [product_label(i, "user") for i in range(3)] == ["1", "2", "3"]
    assert [product_label(i, "assistant") for i in (0, 1, 25, 26, 27)] == [
        "a",
        "b",
        "z",
        "aa",
        "ab",
    ]
    assert all(re.fullmatch(r"\d+", product_label(i, "user")) for i in range(100))
    assert all(re.fullmatch(r"[a-z]+", product_label(i, "assistant")) for i in range(100))
    with pytest.raises(ValueError, match="'shopper'"):
        product_label(0, "shopper")


def test_supermarket_fixed_handles_formats_and_coverage():
    index = SceneIndex(marks_market(n_fixtures=30))
    user, assistant = fixed_handles(index, "user"), fixed_handles(index, "assistant")
    assert all(USER_FIXTURE.match(h) for h in user)
    assert all(ASSISTANT_FIXTURE.match(h) for h in assistant)
    assert sorted(user.values()) == sorted(assistant.values()) == sorted(index.fixtures)
    assert "AA" in user and "30" in assistant  # past Z / past 9
    # assistant numbers fixtures in scene order
    assert [assistant[str(i + 1)] for i in range(30)] == list(index.fixtures)


def test_home_fixed_handles_formats_and_area_prefixes():
    index = SceneIndex(marks_home())
    for role, store_re, area_re in (
        ("user", USER_FIXTURE, USER_AREA),
        ("assistant", ASSISTANT_FIXTURE, ASSISTANT_AREA),
    ):
        handles = fixed_handles(index, role)
        by_id = fixed_handles_by_id(index, role)
        assert sorted(handles.values()) == sorted(index.nav_targets)
        for store_id in index.stores:
            assert store_re.match(by_id[store_id])
        for area_id, area in index.areas.items():
            handle = by_id[area_id]
            assert area_re.match(handle)
            # the area handle starts with its store's handle in the same role
            assert re.match(r"^([A-Z]+|\d+)", handle).group(1) == by_id[area.store_id]
            assert handles[handle] == area_id


@pytest.mark.parametrize("make", [marks_market, marks_home])
def test_user_order_never_matches_assistant_order(make):
    index = SceneIndex(make())
    user = fixed_handles_by_id(index, "user")
    assistant = fixed_handles_by_id(index, "assistant")
    buildings = list(index.fixtures) + list(index.stores)
    for eid in buildings:  # letter position != number: one label never reveals the other
        assert ord(user[eid]) - ord("A") + 1 != int(assistant[eid])
    for area in index.areas.values():
        user_num = int(user[area.id][len(user[area.store_id]) :])
        assistant_letter = assistant[area.id][len(assistant[area.store_id]) :]
        assert user_num != ord(assistant_letter) - ord("a") + 1


def test_fixed_handles_are_stable_and_keyed_on_scene_name():
    a1 = fixed_handles(SceneIndex(marks_market(n_fixtures=8)), "user")
    a2 = fixed_handles(SceneIndex(marks_market(n_fixtures=8)), "user")
    assert a1 == a2 and list(a1) == list(a2)
    others = [
        fixed_handles(SceneIndex(marks_market(n_fixtures=8, name=f"market-{i}")), "user")
        for i in range(4)
    ]
    assert any(o != a1 for o in others)  # the permutation depends on the scene name


def test_fixed_handles_returns_copies():
    index = SceneIndex(marks_market())
    fixed_handles(index, "user").clear()
    assert fixed_handles(index, "user")


def test_handle_maps_are_sorted_by_handle():
    index = SceneIndex(marks_market(n_fixtures=30))
    user = list(fixed_handles(index, "user"))
    assert user[:3] == ["A", "B", "C"] and user[-4:] == ["AA", "AB", "AC", "AD"]
    assert list(fixed_handles(index, "assistant"))[8:11] == ["9", "10", "11"]


def _view(index: SceneIndex) -> RoleView:
    visible = [
        VisibleEntity("a", "p0", "product", "Product 0", 2.34, 100),
        VisibleEntity("b", "p1", "product", "Product 1", 4.0, 80),
        VisibleEntity("1", "f0", "fixture", "Shelf 0", 3.0, 500),
        VisibleEntity("2", "f1", "fixture", "Shelf 1", 3.0, 500),
    ]
    handles = {"a": "p0", "b": "p1", "c": "p3", **fixed_handles(index, "assistant")}
    return RoleView("assistant", image=None, handles=handles, visible=visible)


def test_caption_supermarket_exact():
    index = SceneIndex(marks_market())
    text = caption(_view(index), index, held_item="p3", cart=["p0", "p1"])
    assert text == (
        "Visible products:\n"
        "[a] Product 0 (2.3 m)\n"
        "[b] Product 1 (4.0 m)\n"
        "Visible fixtures:\n"
        "[1] Shelf 0 (approach: nearest, front, back)\n"
        "[2] Shelf 1 (approach: nearest, front)\n"
        "Holding: [c] Product 3\n"
        "Cart: Product 0; Product 1"
    )


def test_caption_empty_view_keeps_holding_and_cart():
    index = SceneIndex(marks_market())
    view = RoleView("user", image=None, handles=fixed_handles(index, "user"), visible=[])
    assert caption(view, index, held_item=None, cart=[]) == "Holding: nothing\nCart: empty"


def test_caption_home_stores_and_areas():
    index = SceneIndex(marks_home())
    by_id = fixed_handles_by_id(index, "user")
    view = RoleView(
        "user",
        image=None,
        handles=fixed_handles(index, "user"),
        visible=[
            VisibleEntity(by_id["s1"], "s1", "store", "Store 1", 5.0, 900),
            VisibleEntity(by_id["a10"], "a10", "area", "Area 10", 6.0, 300),
        ],
    )
    text = caption(view, index, held_item=None, cart=[])
    assert text.splitlines() == [
        "Visible stores:",
        f"[{by_id['s1']}] Store 1 (approach: outside_doorway, inside_doorway)",
        "Visible areas:",
        f"[{by_id['a10']}] Area 10 (Store 1)",
        "Holding: nothing",
        "Cart: empty",
    ]
