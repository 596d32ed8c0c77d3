"""The GPU benchmark script, run with --tiny on CPU: SFT -> GSPO -> before/after figures."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_tiny_run_prints_and_saves_before_after_and_timing(tmp_path):
    env = dict(os.environ, TRL_EXPERIMENTAL_SILENCE="1", TOKENIZERS_PARALLELISM="false")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    proc = subprocess.run([sys.executable, str(ROOT / "train" / "scripts" / "h200_sft_gspo.py"), "--tiny",
                           "--out", str(tmp_path), "--eval-tasks", "1"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-5000:]
    summary = json.loads((tmp_path / "summary.json").read_text())
    for phase in ("before", "after"):
        result = summary[phase]
        assert result["episodes"] == 1 and 0.0 <= result["success_rate"] <= 1.0
        assert result["generated_tokens"] > 0 and result["tokens_per_s"] > 0
        assert result["mean_r_total"] == result["mean_r_total"]  # scored by RecRM (not NaN)
    timing = summary["gspo_timing"]
    assert timing["generation_s"] > 0 and timing["env_reward_s"] > 0
    parts = timing["generation_s"] + timing["env_reward_s"] + timing["optimisation_and_rest_s"]
    assert parts == pytest.approx(timing["total_s"])
    from train.tasks import split_tasks

    held = set(summary["held_out_tasks"])
    assert held and not held & set(split_tasks("supermarket", 0.2, 0)[0])  # evaluated on unseen profiles
    assert "before" in proc.stdout and "after" in proc.stdout and "GSPO:" in proc.stdout
