"""Constrained decoding on a tiny random Qwen2: every finished reply parses and validates
against the role's own schema (many seeds), enums hold, batch rows keep their own schemas,
and the HF policy's opt-in constraint."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest

import situ_gym  # noqa: F401 - registers the envs
from situ_gym.llm import ChatRequest
from situ_gym.llm.hf_backend import HFChatBackend
from situ_gym.llm.structured import GrammarConstraint, parse_reply, schema_errors
from tests.llm.scripted import ScriptedBackend
from train.tiny import build_tiny_model

# Room for the longest reply each schema allows (a random model's strings run to their
# maxLength, one or two characters per token), so that no row is cut unfinished.
MAX_TOKENS = 700
SEEDS = 24


@pytest.fixture(scope="module")
def backend(tmp_path_factory):
    return HFChatBackend(str(build_tiny_model(tmp_path_factory.mktemp("tiny") / "model")))


def _shopper_schema(task="sm_u01_t1"):
    from situ_gym.user import LLMUser

    reply = json.dumps({"utterance": "Hi.", "tool_call": {"name": "idle", "arguments": {}}, "revealed": None,
                        "give_up": False})
    scripted = ScriptedBackend(lambda r, i: reply)
    env = gym.make("SituRec-Supermarket-v0", user=LLMUser(scripted))
    env.reset(seed=0, options={"task_id": task})
    env.step(json.dumps({"response": "Hi!", "assistant_actions": [{"type": "Greet"}],
                         "expected_user_action": {"name": "idle", "arguments": {}}, "ranking": []}))
    return scripted.batches[0][0].schema, env.unwrapped


def _schemas():
    from eval.llm_judge import JUDGE_SCHEMA
    from situ_gym.user.llm_moderator import MODERATOR_SCHEMA

    return {"shopper": _shopper_schema()[0], "moderator": MODERATOR_SCHEMA, "judge": JUDGE_SCHEMA}


def _ask(backend, schema, n=SEEDS, temperature=1.0):
    reqs = [ChatRequest([{"role": "user", "content": f"answer {i}"}], max_tokens=MAX_TOKENS,
                        temperature=temperature, seed=i, schema=schema) for i in range(n)]
    return backend.chat_batch(reqs)


@pytest.mark.parametrize("role", ["shopper", "moderator", "judge"])
def test_constrained_replies_always_parse_and_validate(backend, role):
    schema = _schemas()[role]
    for res in _ask(backend, schema) + _ask(backend, schema, n=2, temperature=0.0):
        assert res.completion_tokens < MAX_TOKENS, res.text  # finished
        value, error = parse_reply(res.text, schema)
        assert value is not None, (error, res.text)


def test_the_shoppers_handles_and_tools_stay_in_their_enums(backend):
    from situ_gym.actions import validate_user_call

    schema, u = _shopper_schema()
    tools = {v["properties"]["name"]["const"] for v in schema["properties"]["tool_call"]["anyOf"]}
    for res in _ask(backend, schema):
        call = json.loads(res.text)["tool_call"]
        assert call["name"] in tools
        assert validate_user_call(call, store="supermarket", view=u.user_view, held_item=None, index=u.index)[0]


def test_batch_rows_keep_their_own_schemas_and_a_free_row_stays_free(backend):
    def pick(values):
        return {"type": "object", "properties": {"pick": {"enum": values}}, "required": ["pick"],
                "additionalProperties": False}

    a, b = pick(["apple", "pear"]), pick(["kiwi"])
    reqs = [ChatRequest([{"role": "user", "content": f"row {i}"}], max_tokens=40, temperature=1.0, seed=i,
                        schema=[a, b, None][i % 3]) for i in range(9)]
    out = backend.chat_batch(reqs)
    for i, res in enumerate(out):
        if i % 3 == 0:
            assert json.loads(res.text)["pick"] in ("apple", "pear")
        elif i % 3 == 1:
            assert json.loads(res.text) == {"pick": "kiwi"}
        else:
            assert "constrained" not in res.extra and parse_reply(res.text, a)[0] is None


def test_a_schema_llguidance_cannot_compile_is_a_clear_error(backend):
    constraint = GrammarConstraint(backend.tokenizer, vocab_size=len(backend.tokenizer), eos_ids=[0])
    with pytest.raises(ValueError, match="uniqueItems"):
        constraint.grammar({"type": "array", "items": {"enum": ["a"]}, "uniqueItems": True})


def test_hf_policy_constrained_turns_fit_the_assistant_schema(backend, tmp_path):
    """``constrained=True`` holds each episode of the batch to its own observation's schema;
    the default (GSPO's) stays free."""
    from agents.base import agent_info
    from agents.chat_agent import assistant_schema
    from agents.hf_policy import HFPolicyAssistant

    folder = str(build_tiny_model(tmp_path / "policy"))
    # The compact catalog keeps the tiny model's prompt short.
    envs = [gym.make("SituRec-Supermarket-v0", catalog_view="retrieved") for _ in range(2)]
    resets = [e.reset(seed=0, options={"task_id": t}) for e, t in zip(envs, ["sm_u01_t1", "sm_u02_t1"], strict=True)]
    obs = [o for o, _ in resets]
    policy = HFPolicyAssistant(folder, constrained=True, max_new_tokens=1500, seed=0)
    policy.reset_batch(obs, [agent_info(i) for _, i in resets])
    for text, o in zip(policy.act_batch(obs), obs, strict=True):
        assert schema_errors(json.loads(text), assistant_schema(o, "supermarket")) == [], text
    free = HFPolicyAssistant(folder, max_new_tokens=20, seed=0)
    free.reset_batch(obs, [agent_info(i) for _, i in resets])
    assert not any(t.startswith('{"response"') for t in free.act_batch(obs))
