"""LLM shopper and moderator with a scripted backend: prompt contents, parsing, re-ask, fallback."""

from __future__ import annotations

import json
import re

import gymnasium as gym
import pytest

import situ_gym  # noqa: F401 - registers the envs
from situ_gym.llm import METER
from situ_gym.user import LLMModerator, LLMUser, make_moderator, make_user
from situ_gym.user.llm_user import FALLBACK_UTTERANCE
from tests.llm.scripted import ScriptedBackend

GREET = json.dumps({"response": "Hi! What are you shopping for?", "assistant_actions": [{"type": "Greet"}],
                    "expected_user_action": {"name": "idle", "arguments": {}}, "ranking": []})


def _play(replies, task="sm_u01_t1", turns=1):
    backend = ScriptedBackend(lambda r, i: replies[min(i, len(replies) - 1)])
    user = LLMUser(backend)
    env = gym.make("SituRec-Supermarket-v0", user=user)
    env.reset(seed=0, options={"task_id": task})
    infos = [env.step(GREET)[4] for _ in range(turns)]
    return backend, user, env, infos


def test_valid_reply_becomes_the_turn_and_the_executed_action():
    reply = json.dumps({"utterance": "I'm looking for some yogurt.", "tool_call": {"name": "turn", "arguments":
                        {"direction": "left", "angle": 45}}, "revealed": "category", "give_up": False})
    backend, user, env, (info,) = _play([reply])
    turn = info["turn"]
    assert turn.user_utterance == "I'm looking for some yogurt."
    assert turn.user_action.name == "turn" and turn.user_action.valid
    assert turn.revealed == ["category"]
    assert turn.result.ok
    assert len(backend.batches) == 1 and backend.batches[0][0].role == "user"


def test_prompt_holds_profile_goal_policies_and_only_the_shoppers_own_handles():
    reply = json.dumps({"utterance": "Hello.", "tool_call": {"name": "idle", "arguments": {}}})
    backend, user, env, _ = _play([reply])
    req = backend.batches[0][0]
    system, message = req.messages[0]["content"], req.messages[1]["content"]
    u = env.unwrapped
    task, profile = u.task, u.profile
    needed = [profile.name, profile.persona, f"conscientiousness {profile.big_five['conscientiousness']:.2f}",
              profile.demographics["occupation"], profile.interaction.behavior_style, task.request,
              f"${task.budget:.2f}", *task.required_tags, *(d.text for d in task.disclosure),
              f"about {task.acceptance.explanations_needed} explanations", "give up"]
    for text in needed:
        assert text in system, text
    assert "Hi! What are you shopping for?" in message
    assert "add_to_cart" in message
    handles = set(re.findall(r"\[([0-9A-Za-z]{1,3})\]", message))
    assert handles and handles <= set(u.user_view.handles)
    assistant_only = set(u.assistant_view.handles) - set(u.user_view.handles)
    assert not handles & assistant_only
    for hidden in [u.task.target_product_id, *u.task.reference_set]:
        assert hidden not in system + message


def test_bad_reply_is_reasked_once_with_the_error_quoted():
    bad = json.dumps({"utterance": "I'll grab it", "tool_call": {"name": "add_to_cart", "arguments": {"item": "zz"}}})
    good = json.dumps({"utterance": "Let me look around.", "tool_call": {"name": "idle", "arguments": {}}})
    before = METER.totals.get("user", {}).get("reasks", 0)
    backend, user, env, (info,) = _play([bad, good])
    assert [len(b) for b in backend.batches] == [1, 1]
    retry = backend.batches[1][0].messages
    assert retry[-2] == {"role": "assistant", "content": bad}
    assert "invalid tool_call" in retry[-1]["content"] and "zz" in retry[-1]["content"]
    assert info["turn"].user_utterance == "Let me look around."
    assert METER.totals["user"]["reasks"] == before + 1
    assert user.fallbacks == []


def test_two_bad_replies_fall_back_to_idle_and_the_episode_goes_on():
    before = METER.totals.get("user", {}).get("fallbacks", 0)
    backend, user, env, infos = _play(["not json at all"], turns=2)
    for info in infos:
        assert info["turn"].user_utterance == FALLBACK_UTTERANCE
        assert info["turn"].user_action.name == "idle" and info["turn"].user_action.valid
    assert len(backend.batches) == 4  # ask + re-ask on each turn
    assert [f["turn"] for f in user.fallbacks] == [1, 2]
    assert METER.totals["user"]["fallbacks"] == before + 2
    assert not infos[-1]["termination"]


def test_same_seed_gives_the_same_requests():
    reply = json.dumps({"utterance": "Hi.", "tool_call": {"name": "idle", "arguments": {}}})
    a = _play([reply])[0].batches[0][0]
    b = _play([reply])[0].batches[0][0]
    assert a.messages == b.messages and a.seed == b.seed


@pytest.mark.parametrize(
    "reply, expected",
    [('{"end": true, "reason": "purchase confirmed"}', (True, "purchase confirmed")),
     ('Answer: {"end": "no", "reason": "still comparing"}', (False, "still comparing"))],
)
def test_moderator_reads_the_verdict(reply, expected):
    backend = ScriptedBackend(lambda r, i: reply)
    mod = make_moderator("llm", model=backend)
    assert isinstance(mod, LLMModerator)
    out = mod.should_end([("assistant", "Here it is."), ("user", "Great, thanks!")], "Here it is.",
                         "Great, thanks!", {"name": "add_to_cart", "arguments": {"item": "3"}})
    assert out == expected
    text = backend.batches[0][0].messages[1]["content"]
    assert "Great, thanks!" in text and "add_to_cart" in text


def test_moderator_fallback_keeps_the_dialogue_going():
    backend = ScriptedBackend(lambda r, i: "maybe?")
    end, reason = LLMModerator(backend).should_end([], "a", "b", None)
    assert end is False and "unusable" in reason
    assert len(backend.batches) == 2


def test_llm_roles_need_a_model():
    with pytest.raises(ValueError, match="--user-model"):
        make_user("llm")
    with pytest.raises(ValueError, match="chat model"):
        make_moderator("llm")
