"""HFChatBackend on a tiny random Qwen2 built in-process: batched left-padded generation, seeding, limits,
lazy loading, per-row context errors."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest

import situ_gym  # noqa: F401 - registers the envs
from situ_gym.llm import BackendUnavailable, ChatRequest, EpisodeError, clear_backends, make_backend
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


# ---------------------------------------------------------------------- lazy loading, context
def test_the_model_loads_on_the_first_chat_batch_and_a_cached_rerun_loads_none(tiny, tmp_path, monkeypatch):
    import situ_gym.llm.hf_backend as hf_backend

    loads = []
    real = hf_backend.load_causal_lm
    monkeypatch.setattr(hf_backend, "load_causal_lm", lambda *a, **k: loads.append(a) or real(*a, **k))
    clear_backends()
    backend = make_backend(f"hf:{tiny}", cache=tmp_path / "c.sqlite")
    assert loads == [] and backend.inner._net is None  # the constructor only checked the folder
    first = [r.text for r in backend.chat_batch(_reqs(temperature=0.0))]
    assert len(loads) == 1
    clear_backends()
    rerun = make_backend(f"hf:{tiny}", cache=tmp_path / "c.sqlite")
    assert [r.text for r in rerun.chat_batch(_reqs(temperature=0.0))] == first
    assert len(loads) == 1 and rerun.inner._net is None  # served wholly from the cache
    clear_backends()


@pytest.fixture(scope="module")
def short_context(tmp_path_factory):
    # A 96-token context, so that a few sentences overflow it.
    return str(build_tiny_model(tmp_path_factory.mktemp("short") / "model", max_positions=96))


def test_a_prompt_beyond_the_context_fails_alone_and_no_row_generates_past_it(short_context):
    backend = HFChatBackend(short_context)

    def size(text):
        prompt = backend.tokenizer.apply_chat_template([{"role": "user", "content": text}],
                                                       add_generation_prompt=True, tokenize=False)
        return len(backend.tokenizer(prompt, add_special_tokens=False)["input_ids"])

    long = " ".join(["where is the yogurt aisle please"] * 40)
    near = "yogurt"
    while size(near + " yogurt") <= 80 and len(near) < 2000:  # room for 16 tokens or less, not for the 40 asked
        near += " yogurt"
    reqs = [ChatRequest([{"role": "user", "content": t}], max_tokens=40, temperature=0.0, seed=i)
            for i, t in enumerate(["hi", long, near])]
    short, over, edge = backend.chat_batch(reqs)
    assert isinstance(over.error, EpisodeError) and over.error.cause == "context_length"
    assert over.text == "" and over.prompt_tokens > 96 and "96" in str(over.error)
    assert short.error is None and edge.error is None and short.completion_tokens > 0
    assert edge.prompt_tokens + edge.completion_tokens <= 96 < edge.prompt_tokens + 40
    with pytest.raises(EpisodeError):
        over.raise_for_error()


def test_json_mode_without_a_schema_decodes_a_json_object(tiny):
    backend = HFChatBackend(tiny)
    reqs = [ChatRequest([{"role": "user", "content": f"reply {i}"}], max_tokens=200, temperature=1.0, seed=i,
                        json_mode=True) for i in range(6)]
    results = backend.chat_batch(reqs)
    assert all(r.text.startswith("{") and r.extra["constrained"] for r in results)
    finished = [r for r in results if r.completion_tokens < 200]  # a random model's strings may run to the limit
    assert finished and all(isinstance(json.loads(r.text), dict) for r in finished)
