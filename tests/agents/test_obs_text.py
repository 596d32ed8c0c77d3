"""agents.obs_text reads the observation's text formats (situ_gym.text and the SoM caption)."""

from __future__ import annotations

import gymnasium as gym

import situ_gym  # noqa: F401
from agents.obs_text import (
    Marked,
    parse_caption,
    parse_catalog,
    parse_history,
    parse_nav_targets,
)
from tests.agents.test_random_agent import CATALOG, VISIBLE


def test_catalog_and_targets():
    products = parse_catalog(CATALOG)
    assert [p.id for p in products] == ["sm_p001", "sm_p002", "sm_p003"]
    assert products[1].name == "Sunny Oats, 500 g" and products[1].price == 3.49
    assert products[0].location == "Upright Freezer 2 (front)" and products[0].tags == ("allergen:fish",)
    targets = parse_nav_targets(CATALOG)
    assert [(t.handle, t.name, t.kind, t.x, t.y) for t in targets][1] == ("4", "Shelf 4", "shelf", 2.0, 4.5)
    assert targets[1].approaches == ("nearest", "front", "back")


def test_caption_sections_hands_and_cart():
    cap = parse_caption(VISIBLE + "\nVisible areas:\n[2a] Reading Nook (Light Logic)")
    assert cap.products == [
        Marked("a", "Harbor Catch Plain Frozen Cod Fillets, 1 lb"),
        Marked("b", "Sunny Oats, 500 g"),
    ]
    assert cap.fixtures == [Marked("3", "Upright Freezer 2", ("nearest", "front"))]
    assert cap.areas == [Marked("2a", "Reading Nook")]
    assert cap.holding is None and cap.cart == []
    cap = parse_caption("Holding: [c] Sunny Oats, 500 g\nCart: A; B")
    assert cap.holding == ("c", "Sunny Oats, 500 g") and cap.cart == ["A", "B"]


def test_history_speakers():
    events = parse_history("Assistant: Hi!\nUser: I can spend $1,300 at most.\nUser action: idle() -> stayed put")
    assert [s for s, _ in events] == ["assistant", "user", "action"]
    assert events[1] == ("user", "I can spend $1,300 at most.")


def test_parses_the_real_observation():
    env = gym.make("SituRec-Supermarket-v0", image_size=(320, 240))
    obs, _ = env.reset(seed=0)
    products = parse_catalog(obs["catalog"])
    targets = parse_nav_targets(obs["catalog"])
    assert len(products) == len(env.unwrapped.scene.products)
    assert len(targets) == len(env.unwrapped.scene.fixtures)
    cap = parse_caption(obs["visible"])
    marked = cap.products + cap.fixtures + cap.stores + cap.areas
    assert {m.handle for m in marked} == {v.handle for v in env.unwrapped.assistant_view.visible}
