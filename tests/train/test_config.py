"""Script configs: cross-field checks, GSPO settings, YAML + override parsing, task split."""

from __future__ import annotations

from pathlib import Path

import pytest

from train.config import GSPOScriptConfig, SFTScriptConfig, gate_floor_at, parse_config
from train.tasks import gspo_rows, parse_prompt_key, prompt_key, split_by_profile

CONFIGS = Path(__file__).resolve().parents[2] / "train" / "configs"


def gspo(**kw):
    base = dict(model_name_or_path="m", num_generations=4, per_device_train_batch_size=4, steps_per_generation=4,
                gradient_accumulation_steps=1)
    base.update(kw)
    return GSPOScriptConfig(**base)


def test_gspo_config_maps_to_sequence_level_grpo():
    args = gspo(reward_variant="+relevance").to_grpo_config()
    assert args.importance_sampling_level == "sequence"
    assert args.loss_type == "grpo"
    assert (args.epsilon, args.epsilon_high, args.beta) == (3e-4, 4e-4, 0.0)
    assert args.steps_per_generation == 4 > args.gradient_accumulation_steps
    assert args.num_generations == 4


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"steps_per_generation": 2, "gradient_accumulation_steps": 2, "per_device_train_batch_size": 8},
         "steps_per_generation 2 must exceed gradient_accumulation_steps 2"),
        ({"per_device_train_batch_size": 3, "steps_per_generation": 3}, "= 9 is not divisible by num_generations 4"),
        ({"num_generations": 1}, "num_generations must be >= 2"),
        ({"reward_variant": "R9"}, "'R9'"),
        ({"max_new_tokens": 9000}, "max_new_tokens 9000 exceeds max_completion_length 4096"),
        ({"gate_floor": 0.5}, "needs gate_warmup_steps"),
        ({"stores": ["mall"]}, "'mall'"),
        ({"eval_profile_fraction": 1.0}, "eval_profile_fraction"),
    ],
)
def test_gspo_config_rejects_inconsistent_settings_with_the_numbers(kw, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        gspo(**kw)


def test_sft_needs_a_source():
    with pytest.raises(ValueError, match="trajectories"):
        SFTScriptConfig(model_name_or_path="m")
    assert SFTScriptConfig(model_name_or_path="m", teacher="heuristic").to_sft_config().completion_only_loss is True


def test_gate_floor_anneals_linearly_to_zero():
    assert [gate_floor_at(s, 0.4, 4) for s in (0, 1, 4, 10)] == pytest.approx([0.4, 0.3, 0.0, 0.0])
    assert gate_floor_at(0, 0.0, 0) == 0.0


def test_yaml_config_with_command_line_override():
    cfg = parse_config(GSPOScriptConfig, ["--config", str(CONFIGS / "gspo_tiny.yaml"), "--max_steps", "7",
                                          "--model_name_or_path", "some/dir"])
    assert cfg.max_steps == 7 and cfg.model_name_or_path == "some/dir"
    assert cfg.num_generations == 4 and cfg.steps_per_generation == 2  # from the YAML


@pytest.mark.parametrize("name", sorted(p.name for p in CONFIGS.glob("*.yaml")))
def test_every_shipped_config_parses(name):
    cls = SFTScriptConfig if name.startswith("sft") else GSPOScriptConfig
    cfg = parse_config(cls, ["--config", str(CONFIGS / name), "--model_name_or_path", "m"])
    assert cfg.model_name_or_path == "m"


def test_profile_split_is_disjoint_deterministic_and_keeps_order():
    pairs = [(f"t{i}", f"p{i % 10}") for i in range(40)]
    train, held = split_by_profile(pairs, 0.2, seed=3)
    assert split_by_profile(pairs, 0.2, seed=3) == (train, held)
    profile = dict(pairs)
    assert not {profile[t] for t in train} & {profile[t] for t in held}
    assert len({profile[t] for t in held}) == 2 and len(train) + len(held) == 40
    assert train == sorted(train, key=lambda t: int(t[1:]))
    assert split_by_profile(pairs, 0.2, seed=4) != (train, held)


def test_prompt_keys_round_trip_and_rows_repeat_seeds():
    assert parse_prompt_key(prompt_key("home_furnishings", "hf_t010", 12)) == ("home_furnishings", "hf_t010", 12)
    rows = gspo_rows("supermarket", ["a", "b"], 2, seed=5)
    assert [(r["task_id"], r["seed"]) for r in rows] == [("a", 5), ("b", 5), ("a", 6), ("b", 6)]
    with pytest.raises(ValueError, match="task_id='a:b'"):
        prompt_key("supermarket", "a:b", 0)
