"""The LLM roles on a scripted backend: schemas per request, growing prompts, re-asks,
fallbacks, errors, usage counts per decision, and the judge's labels."""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path

import gymnasium as gym
import pytest

import situ_gym  # noqa: F401 - registers the envs
from situ_gym.actions import TOOLS, validate_user_call
from situ_gym.llm import METER, ChatResult, EpisodeError
from situ_gym.llm.structured import schema_errors
from situ_gym.user import LLMModerator, LLMUser, make_moderator, make_user
from situ_gym.user.llm_user import FALLBACK_UTTERANCE, tool_call_schema
from tests.llm.scripted import ScriptedBackend

GREET = json.dumps({"response": "Hi! What are you shopping for?", "assistant_actions": [{"type": "Greet"}],
                    "expected_user_action": {"name": "idle", "arguments": {}}, "ranking": []})
_COUNTS = ("calls", "decisions", "used", "fallbacks", "reasks")


def _reply(utterance="Hello.", name="idle", arguments=None, revealed=None, give_up=False):
    return json.dumps({"utterance": utterance, "tool_call": {"name": name, "arguments": arguments or {}},
                       "revealed": revealed, "give_up": give_up})


def _counts(role):
    row = METER.totals.get(role, {})
    return {k: row.get(k, 0) for k in _COUNTS}


def _delta(role, before):
    after = _counts(role)
    return {k: after[k] - before[k] for k in _COUNTS if after[k] != before[k]}


def _play(replies, task="sm_u01_t1", turns=1, **user_kwargs):
    backend = ScriptedBackend(lambda r, i: replies[min(i, len(replies) - 1)])
    user = LLMUser(backend, **user_kwargs)
    env = gym.make("SituRec-Supermarket-v0", user=user)
    env.reset(seed=0, options={"task_id": task})
    infos = [env.step(GREET)[4] for _ in range(turns)]
    return backend, user, env, infos


# ---------------------------------------------------------------------- shopper
def test_valid_reply_becomes_the_turn_and_counts_one_used_decision():
    before = _counts("user")
    reply = _reply("I'm looking for some yogurt.", "turn", {"direction": "left", "angle": 45}, revealed="category")
    backend, user, env, (info,) = _play([reply])
    turn = info["turn"]
    assert turn.user_utterance == "I'm looking for some yogurt."
    assert turn.user_action.name == "turn" and turn.user_action.valid
    assert turn.revealed == ["category"] and turn.result.ok
    assert len(backend.batches) == 1 and backend.batches[0][0].role == "user"
    assert _delta("user", before) == {"calls": 1, "decisions": 1, "used": 1}


def test_a_reply_without_revealed_and_give_up_is_used_with_their_defaults():
    """A model not held to the schema (a server that ignores response_format) often leaves
    out the two fields whose absence means one thing: nothing revealed, not giving up."""
    before = _counts("user")
    reply = json.dumps({"utterance": "Some yogurt, please.", "tool_call": {"name": "idle", "arguments": {}}})
    _backend, _user, _env, (info,) = _play([reply])
    turn = info["turn"]
    assert turn.user_utterance == "Some yogurt, please." and turn.revealed == [] and turn.user_action.valid
    assert _delta("user", before) == {"calls": 1, "decisions": 1, "used": 1}


def test_prompt_holds_profile_goal_policies_and_only_the_shoppers_own_handles():
    backend, user, env, _ = _play([_reply()])
    req = backend.batches[0][0]
    system, message = req.messages[0]["content"], req.messages[1]["content"]
    u = env.unwrapped
    task, profile = u.task, u.profile
    needed = [profile.name, profile.persona, f"conscientiousness {profile.big_five['conscientiousness']:.2f}",
              profile.demographics["occupation"], profile.interaction.behavior_style, task.request,
              f"${task.budget:.2f}", *task.required_tags, *(d.text for d in task.disclosure),
              f"about {task.acceptance.explanations_needed} explanations", "give up", "add_to_cart"]
    for text in needed:
        assert text in system, text
    assert "Hi! What are you shopping for?" in message and "Your tools now" in message
    handles = set(re.findall(r"\[([0-9A-Za-z]{1,3})\]", message))
    assert handles and handles <= set(u.user_view.handles)
    assistant_only = set(u.assistant_view.handles) - set(u.user_view.handles)
    assert not handles & assistant_only
    for hidden in [u.task.target_product_id, *u.task.reference_set]:
        assert hidden not in system + message
    assert req.conversation == f"user:{task.id}:{user._seed}"


def test_the_schema_offers_exactly_the_calls_the_validator_accepts():
    backend, user, env, _ = _play([_reply()])
    u = env.unwrapped
    req = backend.batches[0][0]
    view, held = u.user_view, None
    tools = req.schema["properties"]["tool_call"]["anyOf"]
    offered = {}
    for variant in tools:
        name = variant["properties"]["name"]["const"]
        args = variant["properties"]["arguments"]["properties"]
        for arg, sub in args.items():
            if TOOLS[name].arguments[arg] == "handle":
                offered.setdefault(name, set()).update(
                    (h, a) for h in sub["enum"] for a in args.get("approach", {"enum": [None]})["enum"])
    assert "move_to_fixture" in offered  # the first view shows fixtures
    for name, pairs in offered.items():
        target = next(a for a, k in TOOLS[name].arguments.items() if k == "handle")
        for handle in view.handles:
            for approach in ("nearest", "front", "back") if "approach" in TOOLS[name].arguments else (None,):
                arguments = {target: handle} | ({"approach": approach} if approach else {})
                ok = validate_user_call({"name": name, "arguments": arguments}, store="supermarket", view=view,
                                        held_item=held, index=u.index)[0] is not None
                assert ok == ((handle, approach) in pairs), (name, handle, approach)
    names = [v["properties"]["name"]["const"] for v in tools]
    assert "drop_item" not in names  # empty hands
    assert req.schema["properties"]["revealed"]["enum"][0] is None
    assert req.schema["properties"]["utterance"]["maxLength"] > 0


def test_tool_call_schema_is_valid_json_schema_for_both_stores():
    for store, handles in (("supermarket", {"item": ["1"], "fixture": ["A", "B"]}),
                           ("home_furnishings", {"item": ["2"], "store": ["C"], "area": ["A1"]})):
        schema = tool_call_schema(store, handles)
        assert not schema_errors({"name": "idle", "arguments": {}}, schema)
        assert schema_errors({"name": "idle", "arguments": {"x": 1}}, schema)
        assert schema_errors({"name": "fly", "arguments": {}}, schema)
    sm = tool_call_schema("supermarket", {"item": ["1"], "fixture": ["A"]})
    assert not schema_errors({"name": "move_to_fixture", "arguments": {"fixture": "A", "approach": "front"}}, sm)
    assert schema_errors({"name": "move_to_fixture", "arguments": {"fixture": "Z", "approach": "front"}}, sm)
    assert schema_errors({"name": "turn", "arguments": {"direction": "left", "angle": 500}}, sm)


def test_the_prompt_grows_by_appending_turns_and_the_replies_used():
    replies = [_reply("Hi there.", "turn", {"direction": "left", "angle": 30}), _reply("Let me see.")]
    backend, user, env, _ = _play(replies, turns=2)
    first, second = backend.batches[0][0].messages, backend.batches[1][0].messages
    assert second[: len(first)] == first  # the same system message and first turn, unchanged
    assert second[len(first)] == {"role": "assistant", "content": replies[0]}
    assert [m["role"] for m in second] == ["system", "user", "assistant", "user"]
    assert second[-1]["content"].startswith("Turn 2.")
    assert backend.batches[0][0].conversation == backend.batches[1][0].conversation


def test_a_long_episode_drops_whole_oldest_turns_rarely_and_keeps_the_system_message():
    reply = _reply("Hmm.", "turn", {"direction": "left", "angle": 30})
    backend, user, _, _ = _play([reply], turns=8)
    assert user.chat.dropped == 0
    fourth = backend.batches[3][0].messages  # the budget: what the fourth turn's request holds
    budget = user.chat.estimate([m["content"] for m in fourth])
    backend, user, _, _ = _play([reply], turns=8, budget_tokens=budget)
    sizes = [len(b[0].messages) for b in backend.batches]
    system = backend.batches[0][0].messages[0]
    assert all(b[0].messages[0] == system for b in backend.batches)
    assert all(n % 2 == 0 for n in sizes) and user.chat.dropped > 0
    cuts = sum(1 for a, b in zip(sizes, sizes[1:], strict=False) if b < a)
    assert 1 <= cuts <= 2 and user.chat.dropped >= 2 * cuts, sizes  # a cut takes several turns at once
    assert sizes[:4] == [2, 4, 6, 8]  # within the budget nothing is dropped


def test_bad_reply_is_reasked_once_with_the_validators_error_quoted():
    bad = _reply("I'll grab it", "add_to_cart", {"item": "zz"})
    good = _reply("Let me look around.")
    before = _counts("user")
    backend, user, env, (info,) = _play([bad, good])
    assert [len(b) for b in backend.batches] == [1, 1]
    retry = backend.batches[1][0].messages
    assert retry[-2] == {"role": "assistant", "content": bad}
    assert "invalid tool_call" in retry[-1]["content"] and "zz" in retry[-1]["content"]
    assert info["turn"].user_utterance == "Let me look around."
    assert _delta("user", before) == {"calls": 2, "decisions": 1, "used": 1, "reasks": 1}
    assert user.fallbacks == []
    # The failed exchange is not kept: the next turn continues from the reply used.
    assert user.chat.turns[-1][1] == good


def test_a_reply_outside_the_schema_is_reasked_with_the_schema_error():
    partial = json.dumps({"utterance": "Hi.", "tool_call": {"name": "idle", "arguments": {}}, "revealed": None,
                          "give_up": "no"})  # give_up must be a boolean
    backend, user, env, (info,) = _play([partial, _reply()])
    assert "does not match the schema" in backend.batches[1][0].messages[-1]["content"]
    assert info["turn"].user_utterance == "Hello."


def test_two_bad_replies_fall_back_to_idle_and_the_episode_goes_on():
    before = _counts("user")
    backend, user, env, infos = _play(["not json at all"], turns=2)
    for info in infos:
        assert info["turn"].user_utterance == FALLBACK_UTTERANCE
        assert info["turn"].user_action.name == "idle" and info["turn"].user_action.valid
    assert len(backend.batches) == 4  # ask + re-ask on each turn
    assert [f["turn"] for f in user.fallbacks] == [1, 2]
    assert _delta("user", before) == {"calls": 4, "decisions": 2, "fallbacks": 2, "reasks": 2}
    assert not infos[-1]["termination"]


def test_a_request_the_backend_could_not_answer_raises_instead_of_falling_back():
    class Overflow(ScriptedBackend):
        def chat_batch(self, requests):
            self.batches.append(list(requests))
            return [ChatResult("", error=EpisodeError("context_length", "too long")) for _ in requests]

    before = _counts("user")
    env = gym.make("SituRec-Supermarket-v0", user=LLMUser(Overflow(lambda r, i: "")))
    env.reset(seed=0, options={"task_id": "sm_u01_t1"})
    with pytest.raises(EpisodeError, match="context_length"):
        env.step(GREET)
    assert _delta("user", before) == {"calls": 1}  # no decision: the episode ends with the error


def test_same_seed_gives_the_same_requests():
    a = _play([_reply()])[0].batches[0][0]
    b = _play([_reply()])[0].batches[0][0]
    assert a.messages == b.messages and a.seed == b.seed and a.schema == b.schema


# ---------------------------------------------------------------------- moderator
def _exchange(mod, history, user_text="Great, thanks!", action=None):
    return mod.should_end(history, history[-2][1] if len(history) >= 2 else "", user_text,
                          action or {"name": "add_to_cart", "arguments": {"item": "3"}})


def test_moderator_reads_the_verdict_under_its_schema():
    backend = ScriptedBackend(lambda r, i: '{"end": true, "reason": "purchase confirmed"}')
    mod = make_moderator("llm", model=backend)
    assert isinstance(mod, LLMModerator)
    before = _counts("moderator")
    out = _exchange(mod, [("assistant", "Here it is."), ("user", "Great, thanks!")])
    assert out == (True, "purchase confirmed")
    req = backend.batches[0][0]
    assert "Great, thanks!" in req.messages[1]["content"] and "add_to_cart" in req.messages[1]["content"]
    assert req.schema["properties"]["end"] == {"type": "boolean"} and req.conversation.startswith("moderator:")
    assert _delta("moderator", before) == {"calls": 1, "decisions": 1, "used": 1}


def test_moderator_reasks_a_verdict_outside_the_schema_then_falls_back():
    before = _counts("moderator")
    backend = ScriptedBackend(lambda r, i: '{"end": "no", "reason": "still comparing"}')
    end, reason = LLMModerator(backend).should_end([], "a", "b", None)
    assert end is False and "unusable" in reason and "boolean" in reason
    assert len(backend.batches) == 2
    assert _delta("moderator", before) == {"calls": 2, "decisions": 1, "fallbacks": 1, "reasks": 1}


def test_moderator_chat_grows_per_exchange_and_restarts_with_a_new_episode():
    backend = ScriptedBackend(lambda r, i: '{"end": false, "reason": "ongoing"}')
    mod = LLMModerator(backend)
    h1 = [("assistant", "Hi!"), ("user", "I need yogurt.")]
    h2 = h1 + [("assistant", "Aisle 3."), ("user", "Thanks, walking there.")]
    _exchange(mod, h1, "I need yogurt.")
    _exchange(mod, h2, "Thanks, walking there.")
    first, second = backend.batches[0][0], backend.batches[1][0]
    assert second.messages[: len(first.messages)] == first.messages
    assert second.messages[len(first.messages)]["role"] == "assistant"
    assert first.conversation == second.conversation
    _exchange(mod, [("assistant", "Hello!"), ("user", "Hi.")], "Hi.")  # the next episode
    third = backend.batches[2][0]
    assert len(third.messages) == 2 and third.conversation != first.conversation


def test_two_moderators_on_identical_first_exchanges_keep_their_own_conversations():
    backend = ScriptedBackend(lambda r, i: '{"end": false, "reason": "ongoing"}')
    history = [("assistant", "Hi!"), ("user", "I need yogurt.")]
    for mod in (LLMModerator(backend), LLMModerator(backend)):
        _exchange(mod, history, "I need yogurt.")
    assert backend.batches[0][0].conversation != backend.batches[1][0].conversation


def test_moderator_error_result_raises():
    class Filtered(ScriptedBackend):
        def chat_batch(self, requests):
            return [ChatResult("", error=EpisodeError("content_filter", "x")) for _ in requests]

    with pytest.raises(EpisodeError, match="content_filter"):
        LLMModerator(Filtered(lambda r, i: "")).should_end([], "a", "b", None)


def test_llm_roles_need_a_model():
    with pytest.raises(ValueError, match="--user-model"):
        make_user("llm")
    with pytest.raises(ValueError, match="chat model"):
        make_moderator("llm")


# ---------------------------------------------------------------------- judge
@pytest.fixture(scope="module")
def episode():
    from eval.aggregate import load_indexes, load_tasks
    from eval.io import read_episodes
    from eval.rollout import RolloutConfig, run

    with tempfile.TemporaryDirectory() as tmp:
        run(RolloutConfig(env="SituRec-Supermarket-v0", agent="heuristic", tasks="0", max_turns=3, out=tmp,
                          no_report=True, judge="none"))
        (ep,) = read_episodes(Path(tmp) / "trajectories.jsonl")
    return ep, load_tasks({ep.store}).get(ep.task_id), load_indexes({ep.store}).get(ep.store)


def test_judge_labels_its_own_ratings_with_its_model_and_fallbacks_as_rule(episode):
    from eval.llm_judge import JUDGE_SCHEMA, LLMJudge
    from eval.rule_judge import DIMENSIONS

    good = json.dumps({d: 4 for d in DIMENSIONS})
    backend = ScriptedBackend(lambda r, i: good if i == 0 else '{"Overall": 9}', model="m")
    judge = LLMJudge(backend)
    before = _counts("judge")
    rated, fallen = judge.rate_batch([episode, episode])
    assert rated["judge"] == "llm:m" and rated["Overall"] == 4.0
    assert fallen["judge"].startswith("rule (fallback: ") and "schema" in fallen["judge"]
    assert all(1 <= fallen[d] <= 5 for d in DIMENSIONS)
    assert [len(b) for b in backend.batches] == [2, 1]  # one batch, then one batch of re-asks
    req = backend.batches[0][0]
    assert req.schema == JUDGE_SCHEMA and req.conversation == f"judge:{episode[0].episode_id}"
    assert _delta("judge", before) == {"calls": 3, "decisions": 2, "used": 1, "fallbacks": 1, "reasks": 1}


def test_a_transcript_the_judge_cannot_take_gets_the_labelled_fallback_without_a_reask(episode):
    from eval.llm_judge import LLMJudge
    from eval.rule_judge import DIMENSIONS

    class Overflow(ScriptedBackend):
        def chat_batch(self, requests):
            self.batches.append(list(requests))
            return [ChatResult("", error=EpisodeError("context_length", "too long")) for _ in requests]

    backend = Overflow(lambda r, i: "")
    before = _counts("judge")
    rating = LLMJudge(backend).rate(*episode)
    assert rating["judge"] == "rule (fallback: context_length: too long)"
    assert all(1 <= rating[d] <= 5 for d in DIMENSIONS)
    assert len(backend.batches) == 1  # the same transcript would overflow again: not re-asked
    assert _delta("judge", before)["fallbacks"] == 1


# ---------------------------------------------------------------------- assistant
@pytest.mark.parametrize("env_id", ["SituRec-Supermarket-v0", "SituRec-HomeFurnishings-v0"])
def test_heuristic_turns_fit_the_assistant_schema(env_id):
    """The schema is no narrower than the env's contract: a rule-based assistant's valid turns fit it."""
    from agents.base import agent_info
    from agents.chat_agent import assistant_schema
    from agents.heuristic import HeuristicAssistant

    env = gym.make(env_id, max_turns=6)
    obs, info = env.reset(seed=0)
    agent = HeuristicAssistant()
    agent.reset(obs, agent_info(info), seed=0)
    done = False
    while not done:
        schema = assistant_schema(obs, info["store"])
        text = agent.act(obs)
        assert schema_errors(json.loads(text), schema) == []
        obs, _, terminated, truncated, info = env.step(text)
        assert info["turn"].assistant_valid
        done = terminated or truncated


def test_chat_assistant_sends_its_schema_and_returns_an_error_in_place_of_its_text():
    from agents.base import agent_info
    from agents.chat_agent import ChatAssistant

    backend = ScriptedBackend(lambda r, i: GREET)
    envs = [gym.make("SituRec-Supermarket-v0") for _ in range(2)]
    resets = [e.reset(seed=0, options={"task_id": t}) for e, t in zip(envs, ["sm_u01_t1", "sm_u02_t1"], strict=True)]
    obs = [o for o, _ in resets]
    agent = ChatAssistant(backend)
    agent.reset_batch(obs, [agent_info(i) for _, i in resets], seeds=[0, 1])
    assert agent.act_batch(obs) == [GREET, GREET]
    first, second = backend.batches[0]
    assert first.schema["required"] == ["response", "assistant_actions", "expected_user_action", "ranking"]
    assert first.conversation != second.conversation

    class Half(ScriptedBackend):
        def chat_batch(self, requests):
            return [ChatResult(GREET) if i == 0 else ChatResult("", error=EpisodeError("context_length", "x"))
                    for i, _ in enumerate(requests)]

    agent.backend = Half(lambda r, i: "")
    text, error = agent.act_batch(obs)
    assert text == GREET and isinstance(error, EpisodeError)
