"""The rule-based moderator and the factories."""

from __future__ import annotations

import pytest

from situ_gym.user import RuleModerator, UserTurn, make_moderator, make_user

IDLE = {"name": "idle", "arguments": {}}


@pytest.mark.parametrize(
    "user_text",
    [
        "That's all, thanks. Goodbye!",
        "No thanks, I'll leave it.",
        "Never mind, I'm done here.",
        "I give up.",
    ],
)
def test_yes_when_the_user_closes(user_text):
    ended, reason = RuleModerator().should_end(
        [], "Can I help with anything else?", user_text, IDLE
    )
    assert ended, reason


@pytest.mark.parametrize(
    ("user_text", "action", "intent"),
    [
        (
            "The Harbor Catch Breaded Tilapia is breaded. Do you have something plain?",
            {"name": "drop_item", "arguments": {}},
            "reject",
        ),
        ("I can't find the freezer, where is it?", IDLE, "ask"),
        (
            "Let me pick up the cod and read the label.",
            {"name": "pick_up_item", "arguments": {"item": "41"}},
            "inspect",
        ),
        (
            "Okay, I'll head to the Upright Freezer 2.",
            {"name": "move_to_fixture", "arguments": {"fixture": "B", "approach": "nearest"}},
            "follow",
        ),
        ("How does it compare to the haddock?", IDLE, "ask"),
        ("I'm looking for some frozen fish.", IDLE, "open"),
    ],
)
def test_no_while_the_user_keeps_shopping(user_text, action, intent):
    turn = UserTurn(utterance=user_text, tool_call=action, intent=intent)
    moderator = RuleModerator()
    assert not moderator.should_end([], "Here you go.", user_text, action, turn)[0]
    assert not moderator.should_end([], "Here you go.", user_text, action, None)[0]


def test_yes_after_closing_exchange_and_on_gave_up_flag():
    moderator = RuleModerator()
    ended, _ = moderator.should_end([], "Enjoy your dinner, goodbye!", "Thanks, you too!", IDLE)
    assert ended
    assert not moderator.should_end([], "Enjoy your dinner!", "Hmm, wait.", IDLE)[0]
    turn = UserTurn(utterance="...", tool_call=IDLE, gave_up=True, intent="give_up")
    assert moderator.should_end([], "", "...", IDLE, turn) == (True, "the user gave up")


def test_factories_list_valid_names_and_llm_needs_a_model():
    assert make_user("rule").name == "rule"
    assert make_moderator("rule").name == "rule"
    with pytest.raises(ValueError, match=r"valid names: \['llm', 'rule'\]"):
        make_user("human")
    with pytest.raises(ValueError, match=r"valid names: \['llm', 'rule'\]"):
        make_moderator("oracle")
    with pytest.raises(ValueError, match="chat model"):
        make_user("llm")
    with pytest.raises(ValueError, match="chat model"):
        make_moderator("llm")
