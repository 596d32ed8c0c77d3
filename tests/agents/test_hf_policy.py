"""HFPolicyAssistant on a tiny random Qwen2 built in-process (no download)."""

from __future__ import annotations

import numpy as np
import pytest

from agents.hf_policy import HFPolicyAssistant, generate_batch
from train.tiny import build_tiny_model

INFO = {"store": "supermarket", "task_id": "sm_t001", "profile_id": "p1"}


def obs(visible: str, history: str = ""):
    return {
        "history": history,
        "catalog": "Catalog (id | name | category | price | location):\nsm_p001 | Cod | frozen fish | $9.99 | Freezer 2",
        "visible": visible,
        "pose": np.array([0.0, 0.0, 0.0], np.float32),
        "som_rgb": np.zeros((4, 4, 3), np.uint8),
    }


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return str(build_tiny_model(tmp_path_factory.mktemp("tiny") / "model"))


def test_missing_model_path_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        HFPolicyAssistant(str(tmp_path / "nope"))
    with pytest.raises(ValueError, match="adapter path does not exist"):
        HFPolicyAssistant(str(tmp_path), adapter=str(tmp_path / "none"))


def test_bad_generation_settings_are_rejected(tiny):
    with pytest.raises(ValueError, match="top_p"):
        HFPolicyAssistant(tiny, top_p=0.0)
    with pytest.raises(ValueError, match="max_new_tokens"):
        HFPolicyAssistant(tiny, max_new_tokens=0)


def test_same_seed_same_text_and_other_seed_differs(tiny):
    agent = HFPolicyAssistant(tiny, max_new_tokens=16, temperature=1.0, top_p=1.0)
    o = obs("Visible products:\n[a] Cod (2.3 m)")
    runs = []
    for seed in (5, 5, 6):
        agent.reset(o, INFO, seed=seed)
        runs.append([agent.act(o), agent.act(obs("Visible products:\nnone", "User: hm"))])
    assert runs[0] == runs[1]
    assert runs[0] != runs[2]


def test_act_batch_is_one_padded_generate_equal_to_single_episodes(tiny, monkeypatch):
    agent = HFPolicyAssistant(tiny, max_new_tokens=10, do_sample=False)
    short, long = obs("Visible products:\n[a] Cod (2.3 m)"), obs("Visible products:\n[a] Cod (2.3 m)\n[b] Haddock fillets, 2 lb (4.1 m)\nHolding: nothing")
    singles = []
    for o in (short, long):
        agent.reset(o, INFO)
        singles.append(agent.act(o))
    calls = []
    original = agent.model.generate
    monkeypatch.setattr(agent.model, "generate", lambda **kw: calls.append(kw["input_ids"].shape) or original(**kw))
    agent.reset_batch([short, long], [INFO, INFO])
    assert agent.act_batch([short, long]) == singles
    assert len(calls) == 1 and calls[0][0] == 2
    with pytest.raises(ValueError, match="3 observations for 2 open episodes"):
        agent.act_batch([short, long, short])


def test_generate_batch_cuts_each_row_after_its_first_eos(tiny):
    agent = HFPolicyAssistant(tiny, max_new_tokens=8, do_sample=False)
    outs = generate_batch(agent.model, [[5, 6, 7], [8]], pad_id=agent.tokenizer.pad_token_id,
                          eos_ids=agent.eos_ids, max_new_tokens=8, do_sample=False)
    assert len(outs) == 2
    for row in outs:
        assert 1 <= len(row) <= 8
        assert all(t not in agent.eos_ids for t in row[:-1])


def test_lora_adapter_loads_from_its_own_directory(tiny, tmp_path):
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    base = AutoModelForCausalLM.from_pretrained(tiny)
    peft_model = get_peft_model(base, LoraConfig(r=4, target_modules=["q_proj", "v_proj"], init_lora_weights=False))
    peft_model.save_pretrained(tmp_path / "adapter")
    o = obs("Visible products:\n[a] Cod (2.3 m)")
    plain = HFPolicyAssistant(tiny, max_new_tokens=12, do_sample=False)
    adapted = HFPolicyAssistant(str(tmp_path / "adapter"), max_new_tokens=12, do_sample=False)
    explicit = HFPolicyAssistant(tiny, adapter=str(tmp_path / "adapter"), max_new_tokens=12, do_sample=False)
    texts = []
    for agent in (plain, adapted, explicit):
        agent.reset(o, INFO)
        texts.append(agent.act(o))
    assert texts[1] == texts[2]
    assert texts[0] != texts[1]  # the random LoRA weights change the greedy output
    assert any(isinstance(m, torch.nn.Module) and "lora" in n for n, m in adapted.model.named_modules())


def test_act_batch_continues_only_the_named_episodes(tiny):
    agent = HFPolicyAssistant(tiny, max_new_tokens=6, do_sample=False)
    a, b = obs("Visible products:\n[a] Cod (2.3 m)"), obs("Visible products:\nnone")
    agent.reset_batch([a, b], [INFO, INFO], seeds=[1, 2])
    agent.act_batch([a, b])
    tokens = agent.generated_tokens
    agent.act_batch([obs("Visible products:\nnone", "User: ok")], episodes=[1])  # episode 0 has finished
    assert agent._slots[0]["turn"] == 1 and agent._slots[1]["turn"] == 2
    assert agent.generated_tokens > tokens and agent.generate_seconds > 0
    with pytest.raises(ValueError, match="out of range"):
        agent.act_batch([a], episodes=[5])
    with pytest.raises(ValueError, match="distinct"):
        agent.act_batch([a, a], episodes=[0, 0])


def test_relative_run_directory_that_does_not_exist_is_not_taken_for_a_hub_id(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "runs").mkdir()
    with pytest.raises(ValueError, match="does not exist: 'runs/gspo'"):
        HFPolicyAssistant("runs/gspo")


def test_generation_stops_at_the_models_context_and_then_fails_clearly(tiny):
    from agents.hf_policy import ContextLengthError
    from agents.prompting import Conversation

    agent = HFPolicyAssistant(tiny, max_new_tokens=64, do_sample=False)
    assert agent.context_tokens == agent.model.config.max_position_embeddings
    o = obs("Visible products:\n[a] Cod (2.3 m)")
    opening = len(Conversation(agent.tokenizer, "supermarket", o).ids)
    # A context that leaves room for 5 new tokens on the first turn: the output is cut at 5.
    agent.reset(o, INFO)
    agent.context_tokens = opening + 5
    agent.act(o)
    conv = agent._slots[0]["conv"]
    assert len(conv.ids) <= opening + 5 and sum(conv.env_mask) <= 5
    with pytest.raises(ContextLengthError, match="context is"):
        agent.act(obs("Visible products:\nnone", "User: hm"))


def test_a_full_context_ends_only_its_own_episode_of_the_batch(tiny):
    from agents.hf_policy import ContextLengthError
    from agents.prompting import Conversation

    agent = HFPolicyAssistant(tiny, max_new_tokens=8, do_sample=False)
    short, long = obs("Visible products:\n[a] Cod (2.3 m)"), obs("Visible products:\n" + "[a] Cod (2.3 m)\n" * 40)
    opening = len(Conversation(agent.tokenizer, "supermarket", short).ids)
    agent.reset_batch([short, long], [INFO, INFO], seeds=[0, 0])
    agent.context_tokens = opening + 8  # room for the short episode only
    texts = agent.act_batch([short, long])
    assert isinstance(texts[1], ContextLengthError) and texts[1].cause == "context_length"
    assert isinstance(texts[0], str)
    # The same check before any episode: the long first prompt does not fit, the short one does.
    agent.reset(long, INFO)
    with pytest.raises(ContextLengthError, match="first prompt holds"):
        agent.check_first_prompt(long)
    agent.reset(short, INFO)
    agent.check_first_prompt(short)
