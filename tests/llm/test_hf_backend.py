"""HFChatBackend on a tiny random Qwen2 built in-process: batched left-padded generation, seeding, limits."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest

import situ_gym  # noqa: F401 - registers the envs
from situ_gym.llm import BackendUnavailable, ChatRequest, clear_backends, make_backend
from situ_gym.llm.hf_backend import HFChatBackend
from train.tiny import build_tiny_model


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return str(build_tiny_model(tmp_path_factory.mktemp("tiny") / "model"))


def _reqs(temperature=1.0):
    texts = ["hi", "where is the yogurt aisle please", "budget"]
    return [ChatRequest([{"role": "user", "content": t}], max_tokens=4 + i, temperature=temperature, seed=i)
            for i, t in enumerate(texts)]


def test_batch_is_one_generate_with_per_request_limits_and_same_seeds_same_text(tiny):
    backend = HFChatBackend(tiny)
    a = backend.chat_batch(_reqs())
    assert [r.completion_tokens <= 4 + i for i, r in enumerate(a)] == [True] * 3
    assert a[0].prompt_tokens < a[1].prompt_tokens  # each row's own prompt length, padding excluded
    assert [r.text for r in backend.chat_batch(_reqs())] == [r.text for r in a]
    greedy = [r.text for r in backend.chat_batch(_reqs(temperature=0.0))]
    assert greedy == [r.text for r in backend.chat_batch(_reqs(temperature=0.0))]


def test_mixed_sampling_settings_are_split_but_keep_order(tiny):
    backend = HFChatBackend(tiny)
    reqs = _reqs()
    reqs[1] = ChatRequest(reqs[1].messages, max_tokens=3, temperature=0.0)
    out = backend.chat_batch(reqs)
    assert len(out) == 3 and out[1].completion_tokens <= 3


@pytest.mark.slow
def test_llm_shopper_on_a_local_model_plays_a_turn(tiny, tmp_path):
    clear_backends()
    user_backend = make_backend(f"hf:{tiny}", cache=tmp_path / "c.sqlite")
    from situ_gym.user import LLMUser

    env = gym.make("SituRec-Supermarket-v0", user=LLMUser(user_backend, max_tokens=8))
    env.reset(seed=0)
    greet = json.dumps({"response": "Hello!", "assistant_actions": [{"type": "Greet"}],
                        "expected_user_action": {"name": "idle", "arguments": {}}, "ranking": []})
    turn = env.step(greet)[4]["turn"]
    assert turn.user_action.valid  # a random model's text is re-asked, then the idle fallback
    clear_backends()


def test_missing_model_is_backend_unavailable(tmp_path):
    with pytest.raises(BackendUnavailable, match="cannot load model"):
        HFChatBackend(str(tmp_path / "nothing"))
