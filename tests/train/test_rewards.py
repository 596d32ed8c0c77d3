"""The trajectory reward part by part (train.rewards): the parts sum to the reward GSPO trains
on, on scripted and real episodes; TRL's multi-objective path gets one function per part;
pass^k and the advantage shares are what their definitions say."""

from __future__ import annotations

import math

import pytest
import torch

from recrm.composite import TERMS
from tests.train.test_rollout import ScriptedEnv, ScriptedGenerate, cfg, rollout_of
from train.rewards import (
    PARTS,
    advantage_shares,
    log_training_metrics,
    part_reward_functions,
    pass_hat_k,
)
from train.tasks import prompt_key
from train.tiny import build_tiny_tokenizer, corpus


class TermsEnv(ScriptedEnv):
    """The scripted env with the composite's terms: relevance 0.4 + ranking 0.1 = ungated 0.5."""

    def step(self, text):
        obs, reward, terminated, truncated, info = super().step(text)
        info["recrm"]["terms"] = {**dict.fromkeys(TERMS, 0.0), "relevance": 0.4, "ranking": 0.1}
        return obs, reward, terminated, truncated, info


@pytest.fixture(scope="module")
def tokenizer():
    return build_tiny_tokenizer(corpus(), vocab_size=500)


def _play(tokenizer, prompts, env_cls=TermsEnv, gate_floor=0.0, **kw):
    c = cfg(**kw)
    rollout = rollout_of(c, lambda store: env_cls(c.max_turns))
    return rollout.play(prompts, tokenizer, ScriptedGenerate(tokenizer), eos_ids=frozenset({tokenizer.eos_token_id}),
                        gate_floor=gate_floor)


@pytest.mark.parametrize("floor", [0.0, 0.5])
def test_parts_sum_to_the_trajectory_reward(tokenizer, floor):
    prompts = [prompt_key("supermarket", t, 0) for t in ("t_buy", "t_buy", "t_gate", "t_gate")]
    out = _play(tokenizer, prompts, gate_floor=floor, outcome_bonus=2.0)
    for i, reward in enumerate(out["traj_reward"]):
        assert sum(out[f"part_{n}"][i] for n in PARTS) == pytest.approx(reward)
    assert out["part_outcome"] == [2.0, 2.0, 0.0, 0.0]
    assert out["part_dialogue"] == [0.0] * 4
    # t_gate fails the instruction gate on turn 1 of 4: relevance keeps 3 (or with the floor 3.5) of 4 turns.
    assert out["part_relevance"][2] == pytest.approx(0.4 * (3 + floor) / 4)
    functions = part_reward_functions()
    assert [f.__name__ for f in functions] == [f"recrm_{n}" for n in PARTS]
    summed = [sum(vals) for vals in zip(*(f(prompts, ["c"] * 4, **out) for f in functions), strict=True)]
    assert summed == pytest.approx(out["traj_reward"])


def test_without_terms_there_are_no_parts_and_parts_mode_says_so(tokenizer):
    out = _play(tokenizer, [prompt_key("supermarket", "t_buy", 0)] * 2, env_cls=ScriptedEnv)
    assert not any(k.startswith("part_") for k in out)
    with pytest.raises(ValueError, match="part_instruction"):
        part_reward_functions()[0](["p"], ["c"], **out)


def test_pass_hat_k_counts_all_k_trials_succeeding():
    groups = [[1, 0, 1, 1], [0, 0, 0, 0]]
    assert pass_hat_k(groups, 1) == pytest.approx((3 / 4 + 0) / 2)
    assert pass_hat_k(groups, 2) == pytest.approx((math.comb(3, 2) / math.comb(4, 2)) / 2)
    assert pass_hat_k(groups, 4) == 0.0 and pass_hat_k(groups, 5) is None


def test_advantage_shares_split_trls_group_advantage():
    """Summed over parts, the per-part advantages are TRL's sum_then_normalize advantage."""
    gen = torch.Generator().manual_seed(0)
    parts = {n: torch.rand(8, generator=gen).tolist() for n in ("relevance", "ranking", "outcome")}
    groups = [[0, 1, 2, 3], [4, 5, 6, 7]]
    rewards = torch.tensor([sum(parts[n][i] for n in parts) for i in range(8)]).view(2, 4)
    advantage = (rewards - rewards.mean(1, keepdim=True)) / (rewards.std(1, keepdim=True) + 1e-4)
    split = {n: torch.tensor(v).view(2, 4) for n, v in parts.items()}
    per_part = {n: (v - v.mean(1, keepdim=True)) / (rewards.std(1, keepdim=True) + 1e-4) for n, v in split.items()}
    assert torch.allclose(sum(per_part.values()), advantage, atol=1e-6)
    shares = advantage_shares(parts, groups)
    size = {n: v.abs().sum().item() for n, v in per_part.items()}
    assert shares == pytest.approx({n: s / sum(size.values()) for n, s in size.items()}, rel=1e-5)
    assert sum(shares.values()) == pytest.approx(1.0)


def test_logged_metrics_hold_parts_shares_and_pass_k(tokenizer):
    prompts = [prompt_key("supermarket", "t_buy", 0)] * 2 + [prompt_key("supermarket", "t_gate", 0)] * 2
    out = _play(tokenizer, prompts)
    out["store"], out["seed"] = ["supermarket"] * 4, [0, 0, 0, 0]
    logged = {}
    log_training_metrics(out, logged.__setitem__)
    assert logged["siturec/pass^1"] == 0.5 and logged["siturec/pass^2"] == 0.5 and "siturec/pass^4" not in logged
    assert logged["recrm/part_outcome/mean"] == pytest.approx(0.5)
    # Within each group the two rollouts are alike: no advantage at all, so no shares either.
    assert all(logged[f"recrm/part_{n}/advantage_share"] == 0.0 for n in PARTS)


@pytest.mark.slow
def test_parts_on_the_real_env_with_a_tiny_model_match_recrm_recomputed(tmp_path):
    """A tiny random policy on the real store: each rollout's parts add up to its trajectory
    reward, and that reward is RecRM recomputed from the episode's turn records."""
    from transformers import AutoModelForCausalLM

    from agents.hf_policy import eos_token_ids, generate_batch, load_tokenizer
    from recrm.outcome import episode_reward
    from train.config import SituRecArguments
    from train.rollout import SituRecRollout, make_recrm_env
    from train.tasks import split_tasks
    from train.tiny import build_tiny_model, store_texts

    path = build_tiny_model(tmp_path / "m", store_texts(("supermarket",), teacher_tasks=1), vocab_size=4096,
                            hidden_size=32, whole_lines=True)
    tok, model = load_tokenizer(str(path)), AutoModelForCausalLM.from_pretrained(path)
    eos = eos_token_ids(model, tok)
    args = SituRecArguments(max_turns=3, max_new_tokens=24, env_image_size=[160, 120], env_text_only=True,
                            reward_parts=True)
    envs = []

    def env_factory(store):
        envs.append(make_recrm_env(args, store))
        return envs[-1]

    task = split_tasks("supermarket", 0.2, 0)[0][0]
    out = SituRecRollout(args, 4096, env_factory=env_factory).play(
        [prompt_key("supermarket", task, 1)] * 2, tok,
        lambda contexts, n: generate_batch(model, contexts, pad_id=tok.pad_token_id, eos_ids=eos, max_new_tokens=n),
        eos_ids=eos)
    assert envs and "som_rgb" not in envs[0].observation_space.spaces  # text-only training envs
    for i, env in enumerate(envs):
        turns = env.unwrapped.turns
        totals = [float(t.reward["recrm/total"]) for t in turns]
        success = out["success"][i] == 1.0
        expected = episode_reward(totals, success, args.outcome_bonus, 1.0)
        if not success:
            assert out["traj_reward"][i] == pytest.approx(expected)
        assert sum(out[f"part_{n}"][i] for n in PARTS) == pytest.approx(out["traj_reward"][i])
        assert out["recrm_total"][i] == pytest.approx(sum(totals) / len(totals))


def test_composite_terms_sum_to_its_ungated_value_on_every_variant():
    from recrm.composite import VARIANTS, RecRMComposite
    from recrm.context import TurnContext
    from tests.recrm.turns import honest_recommend, opening_history
    from tests.world import reward_market, reward_task

    index, task = reward_market(), reward_task()
    ctx = TurnContext.from_record(honest_recommend(), None, task, index, opening_history())
    for name in VARIANTS:
        for normalize in ((None,) if name == "paper" else (True, False)):  # the paper's is never normalised
            result = RecRMComposite(variant=name, normalize=normalize).score(ctx).as_dict()
            assert set(result["terms"]) == set(TERMS)
            assert sum(result["terms"].values()) == pytest.approx(result["ungated"]), (name, normalize)
