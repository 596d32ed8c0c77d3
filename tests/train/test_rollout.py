"""The multi-turn rollout_func on a scripted env and a scripted generator (no model, no assets)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from train.config import SituRecArguments
from train.rollout import SituRecRollout, soft_gated_total, trajectory_reward
from train.tasks import prompt_key
from train.tiny import build_tiny_tokenizer, corpus

# The scripted env: task "t_buy" ends with a purchase at turn 2, "t_long" runs to the
# turn limit; every turn passes both gates with R_total 0.5, except turn 1 of "t_gate"
# which fails the instruction gate.
ENDS = {"t_buy": 2, "t_long": 99, "t_gate": 99}


class ScriptedEnv:
    def __init__(self, max_turns: int):
        self.max_turns = max_turns
        self.steps: list[str] = []

    def reset(self, *, seed=None, options=None):
        self.task_id = options["task_id"]
        self.seed = seed
        self.turn = 0
        self.history: list[str] = []
        return self._obs(), {"task_id": self.task_id, "store": "supermarket"}

    def _obs(self):
        return {
            "history": "\n".join(self.history),
            "catalog": "Catalog (id | name | category | price | location):\nsm_p001 | Cod | fish | $9.99 | Freezer 2",
            "visible": f"Visible products:\n[a] Cod ({self.seed}.0 m)\nHolding: nothing\nCart: empty",
            "pose": np.array([float(self.turn), 0.0, 0.0], np.float32),
        }

    def step(self, text):
        self.turn += 1
        self.steps.append(text)
        self.history += [f"Assistant: {text[:20]}", f"User: reply {self.turn}", "User action: idle() -> ok"]
        bought = self.turn == ENDS[self.task_id]
        truncated = not bought and self.turn >= self.max_turns
        gate = 0.0 if (self.task_id == "t_gate" and self.turn == 1) else 1.0
        recrm = {
            "total": 0.5 * gate,
            "variant": "full",
            "gates": {"instruction": gate, "consistency": 1.0},
            "components": {"instruction": gate, "consistency": 1.0, "relevance": 1.0, "ranking": 0.0, "behavior": None},
            "dialogue_credit": None,
            "ungated": 0.5,  # (relevance 1 + 0.5 * rank 0) / 2, what the composite reports
        }
        info = {"recrm": recrm, "termination": "success_cart_added" if bought else ("turn_limit" if truncated else None)}
        return self._obs(), float(bought), bought, truncated, info

    def close(self):
        pass


@pytest.fixture(scope="module")
def tokenizer():
    return build_tiny_tokenizer(corpus(), vocab_size=500)


def cfg(**kw):
    return SituRecArguments(**{"max_turns": 4, "max_new_tokens": 6, "outcome_bonus": 1.0, **kw})


def rollout_of(c: SituRecArguments, env_factory, max_completion_length: int = 4000) -> SituRecRollout:
    return SituRecRollout(c, max_completion_length, env_factory=env_factory)


class ScriptedGenerate:
    """Returns 1..max_new model tokens per context (eos last), records every call."""

    def __init__(self, tokenizer):
        self.calls: list[int] = []
        self.tokenizer = tokenizer
        self.given: list[list[int]] = []

    def __call__(self, contexts, max_new):
        self.calls.append(len(contexts))
        out = []
        for i, ctx in enumerate(contexts):
            ids = self.tokenizer("{\"response\": \"hi\"}", add_special_tokens=False)["input_ids"][: max_new - 1]
            ids = ids[: 1 + (len(ctx) + i) % max(1, len(ids))] + [self.tokenizer.eos_token_id]
            out.append(ids)
            self.given.append(ids)
        return out


def play(tokenizer, prompts, max_completion_length=4000, **kw):
    c = cfg(**kw)
    rollout = rollout_of(c, lambda store: ScriptedEnv(c.max_turns), max_completion_length)
    gen = ScriptedGenerate(tokenizer)
    out = rollout.play(prompts, tokenizer, gen, eos_ids=frozenset({tokenizer.eos_token_id}))
    return out, gen, rollout


def test_one_generate_per_turn_for_all_active_episodes(tokenizer):
    prompts = [prompt_key("supermarket", "t_buy", 3)] * 2 + [prompt_key("supermarket", "t_long", 4)] * 2
    out, gen, _ = play(tokenizer, prompts)
    # Turns 1-2: all four episodes; turns 3-4: only the two t_long episodes.
    assert gen.calls == [4, 4, 2, 2]
    assert out["num_turns"] == [2, 2, 4, 4]
    assert out["termination"] == ["success_cart_added"] * 2 + ["turn_limit"] * 2
    assert len(out["prompt_ids"]) == len(prompts)  # one rollout per prompt received (no re-expansion)


def test_env_mask_is_zero_exactly_on_env_tokens(tokenizer):
    prompts = [prompt_key("supermarket", "t_long", 1)] * 2
    out, gen, _ = play(tokenizer, prompts)
    for row, (ids, mask) in enumerate(zip(out["completion_ids"], out["env_mask"], strict=True)):
        assert len(ids) == len(mask)
        model_tokens = [t for t, m in zip(ids, mask, strict=True) if m == 1]
        # The model tokens are exactly what the generator gave this episode, in order.
        assert model_tokens == [t for turn in gen.given[row::2] for t in turn]
        # Every maximal run of env tokens is a rendered user turn carrying the shopper's reply.
        runs, current = [], []
        for t, m in zip(ids, mask, strict=True):
            if m == 0:
                current.append(t)
            elif current:
                runs.append(current)
                current = []
        assert len(runs) == 3  # turns 2..4 (the final observation is not appended)
        for k, run in enumerate(runs, start=1):
            text = tokenizer.decode(run)
            assert text.startswith("\n<|im_start|>user\n") and text.endswith("<|im_start|>assistant\n")
            assert f"User: reply {k}" in text


def test_group_shares_task_seed_and_first_prompt(tokenizer):
    prompts = [prompt_key("supermarket", "t_buy", 7)] * 2 + [prompt_key("supermarket", "t_long", 8)] * 2
    out, _, rollout = play(tokenizer, prompts)
    assert out["task_id"] == ["t_buy", "t_buy", "t_long", "t_long"]
    assert out["prompt_ids"][0] == out["prompt_ids"][1] != out["prompt_ids"][2]
    envs = rollout._pools["supermarket"]
    assert [e.seed for e in envs] == [7, 7, 8, 8]


def test_trajectory_reward_is_mean_turn_total_plus_outcome_bonus(tokenizer):
    prompts = [prompt_key("supermarket", "t_buy", 0)] * 2 + [prompt_key("supermarket", "t_gate", 0)] * 2
    out, _, _ = play(tokenizer, prompts, outcome_bonus=2.0)
    assert out["traj_reward"][:2] == [0.5 + 2.0] * 2
    assert out["traj_reward"][2] == pytest.approx((0.0 + 0.5 * 3) / 4)
    assert out["gate_instruction"][2] == pytest.approx(0.75)
    assert out["success"] == [1.0, 1.0, 0.0, 0.0]
    assert math.isnan(out["recrm_behavior"][0])  # never applicable -> NaN, skipped in logging


def test_soft_gate_lets_gated_turns_score_during_warmup(tokenizer):
    prompts = [prompt_key("supermarket", "t_gate", 0)] * 2
    c = cfg()
    rollout = rollout_of(c, lambda store: ScriptedEnv(c.max_turns))
    out = rollout.play(prompts, tokenizer, ScriptedGenerate(tokenizer), eos_ids=frozenset({tokenizer.eos_token_id}),
                       gate_floor=0.5)
    # Turn 1 failed C_inst: max(0, 0.5) * ungated bracket (relevance 1, rank 0: (1 + 0.5*0)/2 = 0.5) = 0.25.
    assert out["traj_reward"][0] == pytest.approx((0.25 + 0.5 * 3) / 4)


def test_completion_is_truncated_to_max_completion_length(tokenizer):
    prompts = [prompt_key("supermarket", "t_long", 0)] * 2
    out, gen, _ = play(tokenizer, prompts, max_completion_length=60, max_new_tokens=6)
    for ids, mask in zip(out["completion_ids"], out["env_mask"], strict=True):
        assert len(ids) == len(mask) <= 60
    assert len(gen.calls) < 4  # the length budget stopped the episodes early
    assert set(out["termination"]) == {"length_limit"}


def test_missing_recrm_info_is_a_clear_error(tokenizer):
    class Bare(ScriptedEnv):
        def step(self, text):
            obs, r, term, trunc, info = super().step(text)
            info.pop("recrm")
            return obs, r, term, trunc, info

    rollout = rollout_of(cfg(), lambda store: Bare(4))
    with pytest.raises(RuntimeError, match="RecRMReward"):
        rollout.play([prompt_key("supermarket", "t_long", 0)] * 2, tokenizer, ScriptedGenerate(tokenizer),
                     eos_ids=frozenset({tokenizer.eos_token_id}))


def test_bad_prompt_key_names_the_value(tokenizer):
    rollout = rollout_of(cfg(), lambda store: ScriptedEnv(4))
    with pytest.raises(ValueError, match="'hello'"):
        rollout.play(["hello"], tokenizer, ScriptedGenerate(tokenizer), eos_ids=frozenset())


def test_soft_gated_total_cases():
    passed = {"total": 0.6, "gates": {"instruction": 1.0, "consistency": 1.0}, "ungated": 0.6}
    assert soft_gated_total(passed, 0.5) == pytest.approx(0.6)
    gated = {"total": 0.0, "gates": {"instruction": 1.0, "consistency": 0.0}, "ungated": 1.0}
    assert soft_gated_total(gated, 0.0) == 0.0
    assert soft_gated_total(gated, 0.4) == pytest.approx(0.4)
    both = {"total": 0.0, "gates": {"instruction": 0.0, "consistency": 0.0}, "ungated": 0.5}
    assert soft_gated_total(both, 0.3) == pytest.approx(0.3 * 0.3 * 0.5)


def test_soft_gate_agrees_with_the_composite_on_every_variant():
    """The composite's ``ungated`` is what its total divides into: total = gates x ungated."""
    from recrm.composite import VARIANTS, RecRMComposite
    from recrm.context import TurnContext
    from tests.recrm.turns import honest_recommend, opening_history
    from tests.world import reward_market, reward_task

    index, task = reward_market(), reward_task()
    ctx = TurnContext.from_record(honest_recommend(), None, task, index, opening_history())
    for name in VARIANTS:
        result = RecRMComposite(variant=name).score(ctx).as_dict()
        g = result["gates"]
        assert result["total"] == pytest.approx(g["instruction"] * g["consistency"] * result["ungated"])
        assert soft_gated_total(result, 1.0) == pytest.approx(result["ungated"])


def test_reward_function_logs_components_gates_and_success():
    logged = {}
    rewards = trajectory_reward(
        ["p"] * 2, ["c"] * 2, traj_reward=[0.2, 1.4], success=[0.0, 1.0], recrm_total=[0.2, 0.4],
        recrm_relevance=[1.0, float("nan")], gate_instruction=[1.0, 0.5], num_turns=[3, 5],
        log_metric=logged.__setitem__,
    )
    assert rewards == [0.2, 1.4]
    assert logged["siturec/success_rate"] == 0.5
    assert logged["recrm/total/mean"] == pytest.approx(0.3)
    assert logged["recrm/relevance/mean"] == 1.0
    assert logged["recrm/gate_instruction/pass_rate"] == 0.75
    with pytest.raises(ValueError, match="traj_reward"):
        trajectory_reward(["p"], ["c"])
