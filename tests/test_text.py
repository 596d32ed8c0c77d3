"""situ_gym.text: the catalog / location index / fixed-target text of the observation."""

from __future__ import annotations

from situ_gym.scene import SceneIndex
from situ_gym.scene.loader import load_scene
from situ_gym.som import fixed_handles
from situ_gym.text import catalog_text, nav_targets_text, product_side


def test_catalog_lists_every_product_with_location_side_and_labels():
    index = SceneIndex(load_scene("supermarket"))
    lines = catalog_text(index).splitlines()
    assert lines[0].startswith("Catalog (id | name | category | price | location | attributes)")
    assert len(lines) == 1 + len(index.products)
    p = next(iter(index.products.values()))
    side = product_side(index, p.id)
    assert side in ("front", "back")
    assert lines[1] == (
        f"{p.id} | {p.name} | {p.category} | ${p.price:,.2f} | {index.name(p.fixture_id)} ({side}) | "
        + "; ".join(p.tags)
    )
    # The side is the face the product's instances look out of.
    fixture = index.fixtures[p.fixture_id]
    facing = p.instances[0].facing
    assert (abs((facing - fixture.front_yaw + 180) % 360 - 180) < 90) == (side == "front")


def test_home_locations_and_thousands_separator():
    index = SceneIndex(load_scene("home_furnishings"))
    text = catalog_text(index)
    q = list(index.products.values())[-1]
    assert f"| {index.name(q.store_id)} / {index.name(q.area_id)} |" in text
    assert "$1," in text
    assert product_side(index, q.id) is None


def test_nav_targets_give_each_fixed_handle_with_position_and_approaches():
    index = SceneIndex(load_scene("home_furnishings"))
    handles = fixed_handles(index, "assistant")
    lines = nav_targets_text(index, handles).splitlines()
    assert len(lines) == 1 + len(index.stores) + len(index.areas)
    store_id = next(iter(index.stores))
    handle = next(h for h, e in handles.items() if e == store_id)
    line = next(ln for ln in lines if ln.startswith(f"[{handle}] "))
    door = index.stores[store_id].approach["outside_doorway"]
    assert line.endswith(f"| store | ({door.x:.1f}, {door.y:.1f}) | outside_doorway, inside_doorway")
