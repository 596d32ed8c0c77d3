"""A person's conversation: validation before stepping, termination, deterministic replay."""

import numpy as np
import pytest

from agents.heuristic import HeuristicAssistant
from eval.human.conversation import MAX_UTTERANCE, Conversation, HumanUser, intent_of
from tests.eval.human.conftest import ENV, ChattyAssistant

TASK = "sm_u01_t1"


def _conv(assistant=None, log=None):
    return Conversation(env_id=ENV, task_id=TASK, seed=42, assistant=assistant or HeuristicAssistant(), log=log)


def test_assistant_speaks_first_and_the_page_shows_the_shoppers_view(turn_left):
    conv = _conv()
    state = conv.view_state()
    assert state["turn"] == 1 and not state["done"]
    assert state["dialogue"][0]["speaker"] == "assistant" and state["dialogue"][0]["text"]
    assert state["view"].startswith("data:image/png;base64,") and state["map"].startswith("data:image/png")
    user_handles = set(conv.core.user_view.handles)
    for kind in ("fixture", "item"):
        for h in state["handles"][kind]:
            assert h["handle"] in user_handles  # the shopper's own labels, never the assistant's
    assert {t["name"] for t in state["tools"]} >= {"move_to_fixture", "pick_up_item", "add_to_cart", "idle"}


@pytest.mark.parametrize(
    "utterance, call, message",
    [
        ("hello", {"name": "fly", "arguments": {}}, "choose one of the actions offered"),
        ("hello", {"name": "add_to_cart", "arguments": {"item": "999"}}, "[999] is not in your view or in your hands"),
        ("hello", {"name": "move_to_fixture", "arguments": {"fixture": "ZZ", "approach": "nearest"}},
         "[ZZ] is not in your view now"),
        ("hello", {"name": "pick_up_item", "arguments": {}}, "please choose which product (pick up item)"),
        ("hello", {"name": "turn", "arguments": {"direction": "left", "angle": 400}}, "from 1 to 180"),
        ("hello", {"name": "drop_item", "arguments": {}}, "your hands are empty"),
        ("   ", {"name": "idle", "arguments": {}}, "type what you say"),
        ("x" * (MAX_UTTERANCE + 1), {"name": "idle", "arguments": {}}, "limit is 500"),
    ],
)
def test_invalid_turns_are_refused_and_change_nothing(utterance, call, message):
    conv = _conv()
    pose, log, image = conv.core.backend.pose(), [dict(e) for e in conv.log], conv.core.user_view.image.copy()
    error = conv.submit(utterance, call)
    assert error is not None and message in error and "\n" not in error
    assert conv.turns == [] and conv.log == log and conv.core.backend.pose() == pose
    assert np.array_equal(conv.core.user_view.image, image)


def test_a_valid_turn_steps_the_env_with_the_participants_words(turn_left):
    conv = _conv()
    yaw = conv.core.backend.pose().yaw
    assert conv.submit("I'd like some yogurt, please.", turn_left) is None
    (turn,) = conv.turns
    assert turn.user_utterance == "I'd like some yogurt, please."
    assert turn.user_action.name == "turn" and turn.user_action.valid and turn.result.ok
    assert conv.core.backend.pose().yaw != yaw
    assert len(conv.log) == 2 and conv.log[0]["user"]["tool_call"] == turn_left and conv.log[1]["user"] is None


def test_giving_up_ends_the_conversation():
    conv = _conv()
    assert conv.submit("No thanks, I'll leave it.", {"name": "idle", "arguments": {}}, gave_up=True) is None
    assert conv.done and conv.termination == "moderator_end"
    assert "over" in conv.submit("hello?", {"name": "idle", "arguments": {}})


def test_replay_rebuilds_the_same_episode(turn_left):
    conv = _conv()
    for utterance, call in [
        ("Hi, I'm after yogurt.", turn_left),
        ("Where should I go?", {"name": "move_forward", "arguments": {"distance": "medium"}}),
        ("Vanilla, please, at most six dollars.", {"name": "idle", "arguments": {}}),
    ]:
        assert conv.submit(utterance, call) is None
    replayed = _conv(log=[dict(e) for e in conv.log])
    assert [t.model_dump() for t in replayed.turns] == [t.model_dump() for t in conv.turns]
    assert replayed.pending_text == conv.pending_text
    assert replayed.view_state() == conv.view_state()


def test_replay_keeps_what_a_nondeterministic_assistant_said(turn_left):
    conv = _conv(ChattyAssistant())
    conv.submit("Hi.", turn_left)
    replayed = _conv(ChattyAssistant(), log=[dict(e) for e in conv.log])
    assert replayed.turns[0].response == conv.turns[0].response
    assert replayed.pending_response() == conv.pending_response()
    assert "Instance" in replayed.pending_response()


def test_a_log_that_does_not_replay_is_an_error():
    log = [{"assistant": "{}", "user": {"utterance": "hi", "tool_call": {"name": "fly"}, "gave_up": False}}]
    with pytest.raises(ValueError, match="does not replay"):
        _conv(log=log)


def test_human_user_needs_a_queued_turn():
    with pytest.raises(RuntimeError, match="no participant turn"):
        HumanUser().respond(None)


@pytest.mark.parametrize(
    "name, utterance, gave_up, intent",
    [("add_to_cart", "I'll take it", False, "buy"), ("pick_up_item", "let me see", False, "inspect"),
     ("idle", "how much is it?", False, "ask"), ("idle", "vanilla", False, "answer"),
     ("move_forward", "ok", False, "explore"), ("idle", "bye", True, "give_up")],
)
def test_intent_follows_the_action(name, utterance, gave_up, intent):
    assert intent_of(name, utterance, gave_up) == intent


def test_home_furnishings_offers_its_own_tools_and_targets():
    conv = Conversation(env_id="SituRec-HomeFurnishings-v0", task_id="hf_u01_t1", seed=42,
                        assistant=HeuristicAssistant())
    state = conv.view_state()
    names = {t["name"] for t in state["tools"]}
    assert {"move_to_store", "move_to_area", "check_item", "do_not_add_to_cart"} <= names
    assert "pick_up_item" not in names
    store = next(iter(state["handles"]["store"] + state["handles"]["area"]), None)
    assert store is not None, "the start view shows a store or an area to walk to"
    call = ({"name": "move_to_store", "arguments": {"store": store["handle"], "approach": "inside_doorway"}}
            if store in state["handles"]["store"] else {"name": "move_to_area", "arguments": {"area": store["handle"]}})
    assert conv.submit("Take me there.", call) is None
    assert conv.turns[0].result.ok and conv.turns[0].result.displacement > 0
