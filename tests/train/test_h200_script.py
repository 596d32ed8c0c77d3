"""The GPU driver: its YAML configs parse through the stages' parser into the paper's GSPO; a --tiny CPU run."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "train" / "scripts" / "h200_sft_gspo.py"


@pytest.fixture(scope="module")
def driver():
    return importlib.import_module("train.scripts.h200_sft_gspo")


def _args(driver, *flags):
    return driver.parse_driver_args(list(flags))


def test_gpu_configs_give_the_paper_gspo_and_chain_the_stages(driver, tmp_path):
    args = _args(driver, "--model", "base/model", "--out", str(tmp_path), "--store", "home_furnishings",
                 "--seed", "3", "--sft_args", "--use_cpu true", "--gspo_args", "--use_cpu true")
    (sft_script, sft, sft_model), (env, gspo, gspo_model) = driver.stage_args(args, "base/model")
    # GSPO (Zheng et al. 2025) as the RecRM paper trains it: sequence-level ratio, tiny clip, no KL, off-policy steps.
    assert (gspo.importance_sampling_level, gspo.loss_type, gspo.beta) == ("sequence", "grpo", 0.0)
    assert (gspo.epsilon, gspo.epsilon_high) == (3e-4, 4e-4)
    assert gspo.steps_per_generation == 4 * gspo.gradient_accumulation_steps
    assert gspo.generation_batch_size % gspo.num_generations == 0 and env.reward_variant == "full"
    assert (sft.max_steps, gspo.max_steps, sft.completion_only_loss) == (200, 30, True)
    assert sft.bf16 and gspo.bf16 and sft_model.dtype == gspo_model.dtype == "bfloat16"
    # The driver's paths, store and seed reach both stages; GSPO starts from what SFT writes.
    assert sft_model.model_name_or_path == "base/model"
    assert gspo_model.model_name_or_path == str(tmp_path / "sft" / "final")
    assert (sft.output_dir, gspo.output_dir) == (str(tmp_path / "sft"), str(tmp_path / "gspo"))
    assert sft_script.stores == env.stores == ["home_furnishings"] and sft.seed == gspo.seed == 3


def test_tiny_configs_and_overrides_reach_trl(driver, tmp_path):
    args = _args(driver, "--tiny", "--out", str(tmp_path), "--gspo_args", "--max_steps 1 --warmup_steps 2")
    (_, sft, _), (env, gspo, _) = driver.stage_args(args, "tiny")
    assert (sft.max_steps, gspo.max_steps, gspo.warmup_steps) == (8, 1, 2)
    assert gspo.importance_sampling_level == "sequence" and not gspo.bf16 and env.max_turns == 2
    assert args.eval_tasks == 2


def test_vllm_server_is_launched_only_for_a_server_config(driver, tmp_path):
    server = str(ROOT / "train" / "configs" / "gspo_supermarket_vllm_server.yaml")
    args = _args(driver, "--model", "m", "--out", str(tmp_path), "--gspo_config", server,
                 "--sft_args", "--use_cpu true", "--gspo_args", "--use_cpu true --vllm_server_port 8123")
    _, (_, gspo, model) = driver.stage_args(args, "m")
    assert driver.vllm_server_command(gspo, model.model_name_or_path) == [
        "trl", "vllm-serve", "--model", str(tmp_path / "sft" / "final"), "--host", "127.0.0.1", "--port", "8123"]
    _, (_, colocated, _) = driver.stage_args(_args(driver, "--tiny", "--out", str(tmp_path)), "m")
    assert driver.vllm_server_command(colocated, "m") is None


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--out", "x"], "exactly one of --model PATH, --random_init, --tiny"),
        (["--tiny", "--model", "m", "--out", "x"], "exactly one of"),
        (["--tiny", "--out", "x", "--gspo_args", "--epsilon_high -5"], "epsilon and epsilon_high must be positive"),
        (["--tiny", "--out", "x", "--vllm_server_gpus", "0"], "--vllm_server_gpus needs a GSPO config with use_vllm"),
        (["--tiny", "--out", "x", "--gspo_config", "missing.yaml"], "missing.yaml"),
    ],
)
def test_bad_driver_input_is_one_line(driver, flags, message):
    with pytest.raises(SystemExit) as exc:
        _args(driver, *flags)
    assert message in str(exc.value) and "\n" not in str(exc.value)


@pytest.mark.slow
def test_tiny_run_prints_and_saves_before_after_and_timing(tmp_path):
    env = dict(os.environ, TRL_EXPERIMENTAL_SILENCE="1", TOKENIZERS_PARALLELISM="false")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    proc = subprocess.run([sys.executable, str(SCRIPT), "--tiny", "--out", str(tmp_path), "--eval_tasks", "1"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-5000:]
    summary = json.loads((tmp_path / "summary.json").read_text())
    for phase in ("before", "after"):
        result = summary[phase]
        assert result["episodes"] == 1 and 0.0 <= result["success_rate"] <= 1.0
        assert result["generated_tokens"] > 0 and result["tokens_per_s"] > 0
        assert result["mean_r_total"] == result["mean_r_total"]  # scored by RecRM (not NaN)
    timing = summary["gspo_timing"]
    # The rollout's own clocks were logged by the trainer and fit inside the stage's wall time.
    assert 0 < timing["generation_s"] and 0 < timing["env_reward_s"]
    assert timing["generation_s"] + timing["env_reward_s"] < timing["total_s"]
    history = json.loads((tmp_path / "gspo" / "log_history.json").read_text())
    assert [h["step"] for h in history if "loss" in h] == [1, 2]  # gspo_tiny.yaml's max_steps
    from train.tasks import split_tasks

    held = set(summary["held_out_tasks"])
    assert held and not held & set(split_tasks("supermarket", 0.2, 0)[0])  # evaluated on unseen profiles
    assert "before" in proc.stdout and "after" in proc.stdout and "GSPO: " in proc.stdout
