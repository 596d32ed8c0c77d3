"""Prompt rendering: content rules, determinism, and token identity of the growing conversation."""

from __future__ import annotations

import json

import numpy as np
import pytest

from agents.prompting import (
    Conversation,
    chat_joiners,
    new_history,
    render_messages,
    render_prompt,
    system_prompt,
    turn_text,
)
from situ_gym.actions.assistant import ACTION_TYPES
from situ_gym.actions.tools import LEGAL_TOOLS
from train.tiny import build_tiny_tokenizer, corpus

CATALOG = (
    "Catalog (id | name | category | price | location):\n"
    "sm_p001 | Harbor Catch Plain Frozen Cod Fillets, 1 lb | frozen fish | $9.99 | Upright Freezer 2\n"
    "Navigation targets (fixed handles):\n[3] Upright Freezer 2 (approach: nearest, front)"
)


def obs(history: str = "", visible: str = "Visible products:\n[a] Harbor Catch Cod (2.3 m)\nHolding: nothing\nCart: empty"):
    return {
        "history": history,
        "catalog": CATALOG,
        "visible": visible,
        "pose": np.array([1.25, -3.5, 90.0], np.float32),
        "som_rgb": np.zeros((4, 4, 3), np.uint8),
    }


@pytest.fixture(scope="module")
def tokenizer():
    return build_tiny_tokenizer(corpus([CATALOG]), vocab_size=600)


@pytest.mark.parametrize("store", ["supermarket", "home_furnishings"])
def test_system_prompt_lists_actions_tools_schema_and_catalog_once(store):
    text = system_prompt(store, CATALOG)
    for action in ACTION_TYPES:
        assert f"- {action}" in text
    for tool in LEGAL_TOOLS[store]:
        assert f"- {tool}(" in text
    other = "home_furnishings" if store == "supermarket" else "supermarket"
    illegal = set(LEGAL_TOOLS[other]) - set(LEGAL_TOOLS[store])
    assert not any(f"- {tool}(" in text for tool in illegal)
    assert text.count("sm_p001 | Harbor Catch") == 1
    assert ("next_waypoint" in text) == (store == "home_furnishings")
    example = json.loads(text.split("Example:\n", 1)[1].split("\n\n", 1)[0])
    assert set(example) == {"response", "assistant_actions", "expected_user_action", "ranking"}
    assert "Never say a handle" in text


def test_unknown_store_is_rejected_with_the_value():
    with pytest.raises(ValueError, match="'mall'"):
        system_prompt("mall", CATALOG)


def test_first_turn_messages_are_deterministic_and_hold_pose_and_caption():
    a = render_messages(obs(), "supermarket")
    b = render_messages(obs(), "supermarket")
    assert a == b
    assert [m["role"] for m in a] == ["system", "user"]
    user = a[1]["content"]
    assert "x=1.25 m, y=-3.50 m, facing 90 deg" in user
    assert "[a] Harbor Catch Cod (2.3 m)" in user
    assert "you speak first" in user
    assert CATALOG not in user  # the catalog lives in the system message only


def test_image_messages_put_an_image_part_before_the_text():
    content = render_messages(obs(), "supermarket", image=True)[1]["content"]
    assert content[0] == {"type": "image"}
    assert content[1]["type"] == "text" and "Current view" in content[1]["text"]


def test_turn_text_carries_only_new_history_lines():
    first = "Assistant: Hi!\nUser: I need fish.\nUser action: idle() -> nothing happened"
    second = first + "\nAssistant: This way.\nUser: ok\nUser action: turn(direction=left, angle=30) -> turned"
    assert new_history(second, first) == "Assistant: This way.\nUser: ok\nUser action: turn(direction=left, angle=30) -> turned"
    text = turn_text(obs(second), first)
    assert "I need fish" not in text and "This way." in text
    # A history that does not extend the seen one (clipped) is given whole.
    assert new_history("User: x", "User: y") == "User: x"


def test_joiners_split_chatml_around_the_user_message(tokenizer):
    close, opening = chat_joiners(tokenizer)
    assert close == "<|im_end|>\n"
    assert opening == "<|im_start|>user\n\x00USER\x00<|im_end|>\n<|im_start|>assistant\n"


def test_conversation_ids_equal_the_chat_template_of_the_whole_dialogue(tokenizer):
    """The growing conversation is exactly what apply_chat_template renders (train == eval)."""
    o1 = obs()
    o2 = obs("Assistant: Hello\nUser: I want cod\nUser action: idle() -> nothing happened")
    o3 = obs(o2["history"] + "\nAssistant: Here\nUser: thanks\nUser action: idle() -> ok", visible="Visible products:\nnone")
    reply1 = '{"response": "Hello", "assistant_actions": [{"type": "Greet"}]}'
    reply2 = '{"response": "Here", "assistant_actions": [{"type": "Explain"}]}'
    eos = {tokenizer.eos_token_id}
    conv = Conversation(tokenizer, "supermarket", o1)
    assert conv.prompt_ids == tokenizer(render_prompt(tokenizer, render_messages(o1, "supermarket")), add_special_tokens=False)["input_ids"]
    model1 = tokenizer(reply1, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
    conv.add_model_tokens(model1, eos_ids=eos)
    env2 = conv.add_observation(o2)
    model2 = tokenizer(reply2, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
    conv.add_model_tokens(model2, eos_ids=eos)
    env3 = conv.add_observation(o3)

    messages = render_messages(o1, "supermarket") + [
        {"role": "assistant", "content": reply1},
        {"role": "user", "content": turn_text(o2, o1["history"])},
        {"role": "assistant", "content": reply2},
        {"role": "user", "content": turn_text(o3, o2["history"])},
    ]
    expected = tokenizer(render_prompt(tokenizer, messages), add_special_tokens=False)["input_ids"]
    assert conv.ids == expected
    # env_mask: ones exactly on the model's tokens, zeros exactly on the env's.
    mask = conv.env_mask
    assert len(mask) == len(conv.completion_ids) == len(model1) + len(env2) + len(model2) + len(env3)
    assert mask == [1] * len(model1) + [0] * len(env2) + [1] * len(model2) + [0] * len(env3)
    assert conv.turn_spans == [(0, len(model1)), (len(model1) + len(env2), len(model1) + len(env2) + len(model2))]
    assert "I want cod" in tokenizer.decode(env2) and "sm_p001" not in tokenizer.decode(env2)


def test_a_turn_cut_before_eos_is_closed_by_the_env_text(tokenizer):
    conv = Conversation(tokenizer, "supermarket", obs())
    conv.add_model_tokens(tokenizer("{\"resp", add_special_tokens=False)["input_ids"], eos_ids={tokenizer.eos_token_id})
    text = conv.env_text(obs("User: hm"))
    assert text.startswith("<|im_end|>\n<|im_start|>user\n")
