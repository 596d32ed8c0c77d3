"""Behaviour of the seeded rule-based shopper."""

from __future__ import annotations

import re

import numpy as np
import pytest

from situ_gym.actions.tools import LEGAL_TOOLS, TARGET_ARGUMENT
from situ_gym.language import analyze
from situ_gym.user import RuleBasedUser, RuleModerator, make_user
from situ_gym.user.rule.navigation import call_for_direction
from tests.world import shopper_home_task, shopper_market_task, shopper_profile

from .conftest import MiniShop, make_view

SM_PLACES = {
    "start": ["sm_f01", "sm_f02", "sm_f03"],
    "sm_f01": ["sm_f01", "sm_p01", "sm_p02", "sm_p03", "sm_p04", "sm_f03"],
    "sm_f02": ["sm_f02", "sm_p05", "sm_f01"],
    "sm_f03": ["sm_f03", "sm_f02"],
}

ASSISTANT_LINES = [
    "Hello! What are you looking for today?",
    "What's your budget for this?",
    "Is there anything you want to avoid?",
    "Do you have a preferred flavour or style?",
    "Head to the Upright Freezer 2 on your left.",
    "I recommend the Harbor Catch Breaded Tilapia because it's quick to cook.",
    "The Ocean Prime Wild Salmon Fillets are great for dinner since they're rich in protein.",
    "Try the Harbor Catch Plain Cod Fillets, ideal for a quick dinner because they're plain.",
    "The Northern Plain Haddock Fillets are a good alternative.",
    "Would you like to see the Sunny Oat Crunch Cereal at the Breakfast Shelf 1?",
    "Turn right and walk a few steps.",
    "Anything else I should know?",
    "",
]


def _user(index, task=None, seed=0, **interaction):
    user = RuleBasedUser()
    user.reset(
        task or shopper_market_task(), shopper_profile(**interaction), index, np.random.default_rng(seed)
    )
    return user


def _run(
    index, seed, task=None, turns=20, script=None, places=SM_PLACES, start="start", **interaction
):
    """Play one episode against a random (or scripted) assistant; returns (shop, turns)."""
    user = _user(index, task, seed, **interaction)
    shop = MiniShop(index, places, start)
    rng = np.random.default_rng(1000 + seed)
    out = []
    for t in range(turns):
        if script is not None:
            response = script[t] if t < len(script) else script[-1]
        else:
            response = ASSISTANT_LINES[int(rng.integers(len(ASSISTANT_LINES)))]
        obs = shop.observe(response)
        turn = user.respond(obs)
        out.append((obs, turn))
        shop.apply(turn.utterance, turn.tool_call)
        if shop.cart or turn.gave_up:
            break
    return shop, out


def _handle_pattern(handle: str) -> re.Pattern:
    return re.compile(r"(?<![A-Za-z0-9$.])" + re.escape(handle) + r"(?![A-Za-z0-9])")


def test_at_most_one_new_detail_per_turn_and_asked_detail_first(sm_index):
    script = [
        "Hi! How can I help you today?",
        "Is there anything you want to avoid?",
        "Sure. What's your budget?",
        "What's your budget again?",
        "Do you have a preferred style or size?",
        "What is it for, what occasion?",
        "Okay, anything else?",
        "Let me think.",
    ] * 2
    for seed in range(15):
        user = _user(sm_index, seed=seed, talkativeness="high", navigation_following=0.0)
        shop = MiniShop(sm_index, SM_PLACES, "start")
        seen: list[str] = []
        for t, response in enumerate(script):
            turn = user.respond(shop.observe(response))
            shop.apply(turn.utterance, turn.tool_call)
            assert len(turn.revealed) <= 1, (t, turn)
            assert not set(turn.revealed) & set(seen), f"{turn.revealed} told twice"
            seen += turn.revealed
            if t == 0:
                assert turn.revealed == ["category"]
                assert "frozen fish" in turn.utterance
            if t == 1:
                assert turn.revealed == ["avoid"] and "breaded" in turn.utterance
            if t == 2:
                assert turn.revealed == ["budget"] and "$10" in turn.utterance
            if t == 3:  # asked again: answered, not counted as new
                assert turn.revealed == [] and "$10" in turn.utterance
            if t == 4:
                assert turn.revealed == ["need"]
        assert set(seen) == {"category", "use", "budget", "avoid", "need"}


def test_never_buys_over_budget_or_with_avoided_tag(sm_index, hf_index):
    purchases = 0
    for seed in range(40):
        for index, task, places, start in (
            (sm_index, shopper_market_task(accept_substitutes=True), SM_PLACES, "start"),
            (sm_index, shopper_market_task(explanations_needed=2), SM_PLACES, "sm_f01"),
            (hf_index, shopper_home_task(accept_substitutes=True), HF_PLACES, "start"),
        ):
            shop, _ = _run(
                index,
                seed,
                task=task,
                places=places,
                start=start,
                substitute_willingness="high",
                price_sensitivity="high",
            )
            for pid in shop.cart:
                p = index.products[pid]
                assert p.price <= task.budget, (seed, pid)
                assert not set(p.tags) & set(task.avoided_tags), (seed, pid)
                assert set(task.required_tags) <= set(p.tags), (seed, pid)
                assert pid in shop.inspected
            purchases += bool(shop.cart)
    assert purchases >= 20  # it does buy fitting products, not just refuse everything


def test_buys_target_after_inspecting_when_shown_and_recommended(sm_index):
    user = _user(sm_index, seed=3)
    shop = MiniShop(sm_index, SM_PLACES, "sm_f01")
    shop.apply("", {"name": "idle", "arguments": {}})  # arrive at the freezer
    pitch = (
        "I recommend the Harbor Catch Plain Cod Fillets: plain fillets, ideal for a quick dinner."
    )
    calls, views = [], []
    for response in ["Hello! What do you need?", pitch, pitch]:
        obs = shop.observe(response)
        turn = user.respond(obs)
        calls.append(turn.tool_call)
        views.append(obs.view)
        shop.apply(turn.utterance, turn.tool_call)
    assert calls[0]["name"] not in ("pick_up_item", "add_to_cart")  # opens first
    assert calls[1]["name"] == "pick_up_item"
    assert views[1].handles[calls[1]["arguments"]["item"]] == "sm_p01"
    assert calls[2]["name"] == "add_to_cart"
    assert views[2].handles[calls[2]["arguments"]["item"]] == "sm_p01"
    assert shop.cart == ["sm_p01"]
    assert turn.intent == "buy" and "Harbor Catch Plain Cod Fillets" in turn.utterance


def test_waits_for_explanations_before_buying(sm_index):
    task = shopper_market_task(explanations_needed=2)
    user = _user(sm_index, task, seed=1, explanation_seeking="medium")
    shop = MiniShop(sm_index, SM_PLACES, "sm_f01")
    bare = "Have a look at the Harbor Catch Plain Cod Fillets."
    names = []
    for response in [
        "Hi, what are you after?",
        bare,
        bare,
        bare,
        "They suit your needs because they are plain.",
        "They're cheaper than the salmon, which means you stay in budget.",
    ]:
        turn = user.respond(shop.observe(response))
        names.append(turn.tool_call["name"])
        shop.apply(turn.utterance, turn.tool_call)
    assert names[1] == "pick_up_item"
    assert "add_to_cart" not in names[:5]
    assert names[5] == "add_to_cart"


def test_rejects_unsuitable_item_with_reason_and_drops_it(sm_index):
    # price sensitivity "high": no budget slack, so the price alone rules it out (see Persona)
    user = _user(sm_index, shopper_market_task(rejection_style="clarify"), seed=2, price_sensitivity="high")
    shop = MiniShop(sm_index, SM_PLACES, "sm_f01")
    script = [
        "Hi! What are you shopping for?",
        "Try the Ocean Prime Wild Salmon Fillets.",
        "Try the Ocean Prime Wild Salmon Fillets.",
    ]
    for response in script:
        turn = user.respond(shop.observe(response))
        shop.apply(turn.utterance, turn.tool_call)
    assert turn.intent == "reject" and turn.tool_call["name"] == "drop_item"
    assert "$14.99" in turn.utterance and "?" in turn.utterance
    ended, reason = RuleModerator().should_end(
        shop.history, script[-1], turn.utterance, turn.tool_call, turn
    )
    assert not ended, reason


def test_home_check_then_do_not_add_then_buy_target(hf_index):
    user = _user(hf_index, shopper_home_task(), seed=0)
    shop = MiniShop(hf_index, HF_PLACES, "hf_a01")
    script = [
        "Welcome! What can I help you find?",
        "How about the Brass Arc Floor Lamp?",
        "How about the Brass Arc Floor Lamp?",
        "Then the Rattan Globe Floor Lamp.",
        "Then the Rattan Globe Floor Lamp.",
    ]
    calls = []
    for response in script:
        turn = user.respond(shop.observe(response))
        calls.append(turn.tool_call["name"])
        shop.apply(turn.utterance, turn.tool_call)
    assert calls[1:] == ["check_item", "do_not_add_to_cart", "check_item", "add_to_cart"]
    assert shop.cart == ["hf_p02"]


HF_PLACES = {
    "start": ["hf_s01", "hf_s02"],
    "hf_s01": ["hf_s01", "hf_a01", "hf_p01"],
    "hf_s02": ["hf_s02", "hf_s01"],
    "hf_a01": ["hf_a01", "hf_p01", "hf_p02"],
}


@pytest.mark.parametrize("seed", range(10))
def test_follows_visible_named_fixture_always_at_1_and_never_at_0(sm_index, seed):
    lines = [
        "The cereal is at the front of the Breakfast Shelf 1, just ahead.",
        "Please walk to the front of Breakfast Shelf 1.",
        "You'll find it in front of the Breakfast Shelf 1.",
    ]
    view_ids = ["sm_f01", "sm_f02", "sm_f03"]
    for p, expect in ((1.0, True), (0.0, False)):
        for k, line in enumerate(lines):
            user = _user(sm_index, seed=seed * 10 + k, navigation_following=p)
            user.respond(_obs(sm_index, 1, "Hi! What do you need?", view_ids))
            turn = user.respond(_obs(sm_index, 2, line, view_ids))
            moved_there = (
                turn.tool_call["name"] == "move_to_fixture"
                and turn.tool_call["arguments"]["fixture"] == "C"
            )
            assert moved_there is expect, (p, line, turn)
            assert (turn.intent == "follow") is expect
            if expect:
                assert turn.tool_call["arguments"]["approach"] == "front"
                assert "Breakfast Shelf 1" in turn.utterance


def test_repeated_guidance_to_where_the_user_stands_makes_it_look_around(sm_index):
    view_ids = ["sm_f01", "sm_f02", "sm_f03"]
    user = _user(sm_index, seed=0, navigation_following=1.0)
    user.respond(_obs(sm_index, 1, "Hi! What do you need?", view_ids))
    first = user.respond(_obs(sm_index, 2, "Go to the front of Breakfast Shelf 1.", view_ids))
    again = user.respond(_obs(sm_index, 3, "Walk to the front of Breakfast Shelf 1.", view_ids))
    assert first.tool_call["name"] == "move_to_fixture"
    # no second 0 m walk to the same spot (that feeds the motion-stall rule): look around
    assert again.tool_call["name"] in ("turn", "look_up_down", "side_step")
    assert "Breakfast Shelf 1" in again.utterance
    back = user.respond(_obs(sm_index, 4, "Now the back of Breakfast Shelf 1.", view_ids))
    assert back.tool_call["arguments"] == {"fixture": "C", "approach": "back"}


def test_follows_store_area_and_direction_wording(hf_index, sm_index):
    ids = ["hf_s01", "hf_s02", "hf_a01"]
    user = _user(hf_index, shopper_home_task(), seed=0, navigation_following=1.0)
    user.respond(_obs(hf_index, 1, "Hello!", ids))
    turn = user.respond(_obs(hf_index, 2, "Walk to the entrance of Light Logic.", ids))
    assert turn.tool_call == {
        "name": "move_to_store",
        "arguments": {"store": "E", "approach": "outside_doorway"},
    }
    turn = user.respond(_obs(hf_index, 3, "Now go into Light Logic.", ids))
    assert turn.tool_call["arguments"]["approach"] == "inside_doorway"
    turn = user.respond(_obs(hf_index, 4, "The lamps are in the reading nook area.", ids))
    assert turn.tool_call == {"name": "move_to_area", "arguments": {"area": "A1"}}
    def parse_direction(text):
        nav = analyze(text).navigation
        return None if nav is None else call_for_direction(nav)

    assert parse_direction("Turn left and walk a few steps") == {
        "name": "turn_and_move",
        "arguments": {"direction": "left", "angle": 90.0, "distance": "short"},
    }
    assert parse_direction("Turn right 45 degrees.")["arguments"] == {
        "direction": "right",
        "angle": 45.0,
    }
    assert parse_direction("Look up at the top shelf")["name"] == "look_up_down"
    assert parse_direction("Sounds good, thanks.") is None


def _obs(index, turn, text, visible_ids, held=None):
    from situ_gym.user import UserObservation

    return UserObservation(
        turn=turn, assistant_response=text, view=make_view(index, visible_ids, held)
    )


@pytest.mark.parametrize("patience", [1, 2, 4])
def test_gives_up_after_patience_unproductive_turns(sm_index, patience):
    user = _user(sm_index, seed=5, patience=patience)
    view_ids = ["sm_f03"]
    turn = user.respond(_obs(sm_index, 1, "Hi, how can I help?", view_ids))
    assert not turn.gave_up
    for k in range(1, patience + 2):
        # the same unhelpful line again and again, or nothing at all
        text = "Hi, how can I help?" if k % 2 else ""
        turn = user.respond(_obs(sm_index, 1 + k, text, view_ids))
        if k <= patience:
            assert not turn.gave_up, k
            assert user.unproductive_turns == k
    assert turn.gave_up and turn.intent == "give_up"
    assert turn.tool_call == {"name": "idle", "arguments": {}}
    ended, reason = RuleModerator().should_end([], text, turn.utterance, turn.tool_call, turn)
    assert ended, reason
    # text alone is enough for the moderator too (an LLM user gives no UserTurn)
    assert RuleModerator().should_end([], text, turn.utterance, turn.tool_call, None)[0]


def test_helpful_turns_do_not_cost_patience(sm_index):
    user = _user(sm_index, seed=0, patience=1, navigation_following=1.0)
    shop, turns = _run(
        sm_index,
        0,
        script=[
            "Hi! What are you looking for?",
            "What's your budget?",
            "Anything you want to avoid?",
            "Head to the Upright Freezer 2.",
            "The Harbor Catch Plain Cod Fillets are plain, great for you.",
        ],
        patience=1,
    )
    assert not any(t.gave_up for _, t in turns)
    assert shop.cart == ["sm_p01"]
    del user


def test_tool_calls_legal_and_utterances_free_of_handles(sm_index, hf_index):
    for seed in range(25):
        for index, task, places in (
            (sm_index, shopper_market_task(), SM_PLACES),
            (hf_index, shopper_home_task(), HF_PLACES),
        ):
            shop, turns = _run(
                index,
                seed,
                task=task,
                places=places,
                talkativeness="high",
                navigation_following=0.5,
            )
            for obs, turn in turns:
                call = turn.tool_call
                assert call["name"] in LEGAL_TOOLS[task.store]
                if call["name"] in TARGET_ARGUMENT:
                    handle = call["arguments"][TARGET_ARGUMENT[call["name"]]]
                    assert handle in obs.view.handles
                    eid = obs.view.handles[handle]
                    assert eid in obs.view.visible_ids() or eid == obs.held_item
                for handle in obs.view.handles:
                    assert not _handle_pattern(handle).search(turn.utterance), (
                        handle,
                        turn.utterance,
                    )
                assert turn.utterance.strip()


def test_same_seed_same_turns_and_different_seeds_differ(sm_index):
    def transcript(seed):
        _, turns = _run(sm_index, seed=seed, navigation_following=0.6, talkativeness="high")
        return [(t.utterance, t.tool_call, t.revealed, t.intent) for _, t in turns]

    assert transcript(7) == transcript(7)
    distinct = {repr(transcript(seed)) for seed in range(6)}
    assert len(distinct) >= 3


def test_reset_rejects_wrong_store_and_factory(sm_index, hf_index):
    user = make_user("rule")
    with pytest.raises(ValueError, match="home_furnishings"):
        user.reset(shopper_home_task(), shopper_profile(), sm_index, np.random.default_rng(0))
    with pytest.raises(ValueError, match="before reset"):
        RuleBasedUser().respond(_obs(sm_index, 1, "hi", []))


def _play(user, shop, script):
    out = []
    for response in script:
        obs = shop.observe(response)
        turn = user.respond(obs)
        out.append(turn)
        shop.apply(turn.utterance, turn.tool_call)
        if shop.cart:
            break
    return out


LAMPS = {"hf_a01": ["hf_a01", "hf_p01", "hf_p02", "hf_p03"]}


def test_substitutes_need_policy_and_willingness(hf_index):
    script = ["Welcome, what can I find for you?"] + [
        "Have a look at the Wicker Rattan Floor Lamp."
    ] * 3
    bought = 0
    for seed in range(20):
        user = _user(hf_index, shopper_home_task(accept_substitutes=False), seed=seed)
        shop = MiniShop(hf_index, LAMPS, "hf_a01")
        turns = _play(user, shop, script)
        assert shop.cart == []
        assert turns[2].intent == "reject" and "Wicker Rattan Floor Lamp" in turns[2].utterance
        user = _user(
            hf_index,
            shopper_home_task(accept_substitutes=True),
            seed=seed,
            substitute_willingness="high",
        )
        shop = MiniShop(hf_index, LAMPS, "hf_a01")
        _play(user, shop, script)
        bought += shop.cart == ["hf_p03"]
    assert bought >= 14  # "high" willingness accepts most near matches (p = 0.9)


@pytest.mark.parametrize(("sensitivity", "buys"), [("high", False), ("medium", True)])
def test_price_sensitive_user_rejects_a_clearly_pricier_fit(hf_index, sensitivity, buys):
    task = shopper_home_task(accept_substitutes=True, explanations_needed=1)
    user = _user(
        hf_index, task, seed=0, price_sensitivity=sensitivity, explanation_seeking="medium"
    )
    shop = MiniShop(hf_index, LAMPS, "hf_a01")
    turns = _play(
        user,
        shop,
        [
            "Hi! What are you looking for?",
            "Have a look at the Wicker Rattan Floor Lamp.",
            "Or the Rattan Globe Floor Lamp?",
            "The Rattan Globe Floor Lamp is ideal for reading because its rattan shade softens light.",
        ],
    )
    names = [t.tool_call["name"] for t in turns]
    assert names[1:3] == ["check_item", "check_item"]
    if buys:
        assert shop.cart == ["hf_p02"]
    else:
        assert shop.cart == [] and turns[3].intent == "reject"
        assert "Wicker Rattan Floor Lamp" in turns[3].utterance  # names the cheaper option


def test_short_product_mention_and_already_rejected(sm_index):
    user = _user(sm_index, seed=4)
    shop = MiniShop(sm_index, SM_PLACES, "sm_f01")
    turns = _play(
        user,
        shop,
        [
            "Hello, what do you need?",
            "The salmon fillets are right there.",  # short form; unique best match
            "What's your budget?",
            "The salmon fillets are right there.",
        ],
    )
    assert turns[1].tool_call["name"] == "pick_up_item"
    assert turns[2].intent == "reject"
    # pointed at the rejected salmon again: says so, and does not pick the salmon up again
    assert "Ocean Prime Wild Salmon Fillets" in turns[3].utterance
    salmon = shop.observe("").view.handle_of("sm_p03")
    assert turns[3].tool_call.get("arguments", {}).get("item") != salmon


def test_approach_wording_and_directions_follow_only_sides_that_exist(sm_index):
    ids = ["sm_f01", "sm_f02", "sm_f03"]
    user = _user(sm_index, seed=0, navigation_following=1.0)
    user.respond(_obs(sm_index, 1, "Hi!", ids))
    turn = user.respond(_obs(sm_index, 2, "Go round to the back of the Breakfast Shelf 1.", ids))
    assert turn.tool_call["arguments"] == {"fixture": "C", "approach": "back"}
    turn = user.respond(_obs(sm_index, 3, "Go to the back of the Upright Freezer 2.", ids))
    assert turn.tool_call["arguments"] == {"fixture": "B", "approach": "nearest"}  # no back side
    turn = user.respond(_obs(sm_index, 4, "Turn right and walk a few steps.", ids))
    assert turn.tool_call == {
        "name": "turn_and_move",
        "arguments": {"direction": "right", "angle": 90.0, "distance": "short"},
    }
    assert turn.intent == "follow" and "turning right" in turn.utterance


def test_does_not_walk_into_the_obstacle_that_just_blocked_it(sm_index):
    from situ_gym.user import UserObservation

    user = _user(sm_index, seed=0, navigation_following=1.0)
    user.respond(_obs(sm_index, 1, "Hi!", ["sm_f01"]))
    free = user.respond(_obs(sm_index, 2, "Walk straight ahead.", ["sm_f01"]))
    assert free.tool_call["name"] == "move_forward" and free.intent == "follow"
    obs = UserObservation(
        turn=3,
        assistant_response="Keep walking straight ahead.",
        view=make_view(sm_index, ["sm_f01"]),
        last_result="blocked by Upright Freezer 2 after 0.00 m",
    )
    turn = user.respond(obs)
    assert turn.tool_call["name"] == "turn" and turn.intent == "ask"
    assert not RuleModerator().should_end(
        [], obs.assistant_response, turn.utterance, turn.tool_call, turn
    )[0]
