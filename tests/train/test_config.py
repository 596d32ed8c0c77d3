"""Training configuration: TRL's dataclasses from YAML + flags, our cross-field checks, the task split."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from train.config import SituRecArguments, TeacherDataArguments, parse_args
from train.rollout import gate_floor_at
from train.tasks import gspo_rows, parse_prompt_key, prompt_key, split_by_profile

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = ROOT / "train" / "configs"
# GPU configs say bf16: true, which TrainingArguments refuses on a CPU-only machine unless use_cpu.
CPU = ["--use_cpu", "true"]


def gspo(*flags: str, config: str = "gspo_tiny.yaml"):
    return parse_args("gspo", ["--config", str(CONFIGS / config), "--model_name_or_path", "m", *flags])


def test_gspo_settings_come_from_the_yaml_into_grpo_config():
    _, args, _ = gspo(*CPU, config="gspo_supermarket.yaml")
    assert args.importance_sampling_level == "sequence" and args.loss_type == "grpo"
    assert (args.epsilon, args.epsilon_high, args.beta) == (3e-4, 4e-4, 0.0)
    assert args.steps_per_generation == 4 * args.gradient_accumulation_steps
    assert args.generation_batch_size == 64 and args.num_generations == 8
    assert args.remove_unused_columns is False


def test_every_trl_option_is_reachable_from_the_command_line():
    script, args, model = gspo("--lr_scheduler_type", "cosine", "--warmup_steps", "3", "--max_grad_norm", "0.25",
                               "--use_peft", "true", "--lora_r", "4", "--lora_target_modules", "all-linear",
                               "--max_turns", "3")
    assert (args.lr_scheduler_type.value, args.warmup_steps, args.max_grad_norm) == ("cosine", 3, 0.25)
    assert script.max_turns == 3
    from trl import get_peft_config

    peft = get_peft_config(model)
    assert peft.r == 4 and peft.target_modules == "all-linear"
    assert get_peft_config(gspo()[2]) is None


def test_yaml_config_with_command_line_override():
    script, args, model = gspo("--max_steps", "7", "--model_name_or_path", "some/dir", "--gate_floor", "0.2")
    assert args.max_steps == 7 and model.model_name_or_path == "some/dir" and script.gate_floor == 0.2
    assert args.num_generations == 4 and args.steps_per_generation == 2  # from the YAML


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--epsilon_high", "-5"], "epsilon and epsilon_high must be positive, got 0.0003, -5"),
        (["--epsilon", "0"], "epsilon and epsilon_high must be positive, got 0.0, 0.0004"),
        (["--steps_per_generation", "1"], "steps_per_generation 1 x num_iterations 1 must exceed"),
        (["--loss_type", "dapo"], "needs loss_type 'grpo', got 'dapo'"),
        (["--remove_unused_columns", "true"], "remove_unused_columns must be false"),
        (["--max_new_tokens", "9000"], "max_new_tokens 9000 exceeds max_completion_length 2048"),
        (["--per_device_train_batch_size", "3"], "must be divisible by num_generations"),  # TRL's own check
        (["--reward_variant", "R9"], "'R9'"),
        (["--gate_warmup_steps", "0"], "needs gate_warmup_steps"),
        (["--stores", "mall"], "'mall'"),
        (["--eval_profile_fraction", "1.0"], "eval_profile_fraction"),
        (["--model_name_or_path", ""], "model_name_or_path is required"),
        (["--interface", "environment_factory"], "gate_floor 0.5 needs interface rollout_func"),
    ],
)
def test_gspo_rejects_inconsistent_settings_with_the_numbers(flags, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        gspo(*flags)


def test_sft_needs_a_source_and_completion_only_loss():
    with pytest.raises(ValueError, match="trajectories"):
        TeacherDataArguments()
    base = ["--config", str(CONFIGS / "sft_tiny.yaml"), "--model_name_or_path", "m"]
    script, args, _ = parse_args("sft", base)
    assert script.teacher == "heuristic" and args.completion_only_loss is True and args.max_length == 32768
    with pytest.raises(ValueError, match="completion_only_loss must be true"):
        parse_args("sft", [*base, "--completion_only_loss", "false"])


@pytest.mark.parametrize("name", sorted(p.name for p in CONFIGS.glob("*.yaml")))
def test_every_shipped_config_parses(name):
    stage = "sft" if name.startswith("sft") else "gspo"
    script, args, model = parse_args(stage, ["--config", str(CONFIGS / name), "--model_name_or_path", "m", *CPU])
    assert model.model_name_or_path == "m"
    if stage == "gspo":  # every GSPO config trains GSPO as the paper sets it
        assert (args.importance_sampling_level, args.loss_type, args.beta) == ("sequence", "grpo", 0.0)
        assert args.steps_per_generation > args.gradient_accumulation_steps


def test_vllm_server_config_selects_server_mode():
    _, args, _ = gspo(*CPU, config="gspo_supermarket_vllm_server.yaml")
    assert args.use_vllm is True and args.vllm_mode == "server"
    assert (args.vllm_server_host, args.vllm_server_port) == ("127.0.0.1", 8000)


def test_scorers_come_from_yaml(tmp_path):
    base = (CONFIGS / "gspo_tiny.yaml").read_text()
    good = tmp_path / "good.yaml"
    good.write_text(base + "\nrecrm_scorers:\n  relevance: model:runs/rm/relevance\n")
    script, _, _ = parse_args("gspo", ["--config", str(good), "--model_name_or_path", "m"])
    assert script.recrm_scorers == {"relevance": "model:runs/rm/relevance"}
    assert script.recrm_kwargs()["scorers"] == {"relevance": "model:runs/rm/relevance"}
    judge = tmp_path / "judge.yaml"
    judge.write_text(base + "\nrecrm_scorers:\n  consistency: llm:hf:gguf:smollm2\n")
    script, _, _ = parse_args("gspo", ["--config", str(judge), "--model_name_or_path", "m"])
    assert script.recrm_kwargs()["scorers"] == {"consistency": "llm:hf:gguf:smollm2"}  # a zero-shot judge
    for value in ("gpt", "llm:", "model:"):
        bad = tmp_path / "bad.yaml"
        bad.write_text(base + f"\nrecrm_scorers:\n  relevance: '{value}'\n")
        with pytest.raises(ValueError, match="'rule', 'model:PATH' or 'llm:SPEC'"):
            parse_args("gspo", ["--config", str(bad), "--model_name_or_path", "m"])


def test_script_reports_a_bad_setting_in_one_line():
    proc = subprocess.run(
        [sys.executable, str(ROOT / "train" / "gspo.py"), "--config", str(CONFIGS / "gspo_tiny.yaml"),
         "--model_name_or_path", "m", "--epsilon_high", "-5"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines()[-1] == "error: epsilon and epsilon_high must be positive, got 0.0003, -5.0"
    assert "Traceback" not in proc.stderr


def test_gate_floor_anneals_linearly_to_zero():
    assert [gate_floor_at(s, 0.4, 4) for s in (0, 1, 4, 10)] == pytest.approx([0.4, 0.3, 0.0, 0.0])
    assert gate_floor_at(0, 0.0, 0) == 0.0
    assert SituRecArguments(gate_floor=0.4, gate_warmup_steps=4).gate_floor == 0.4


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
