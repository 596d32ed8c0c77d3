"""``python -m MODULE --help`` of every entry point the README names exits 0 at once and
lists its options (and, for eval.rollout and recrm.train, every choice of their main flag)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_readme import readme_modules

ROOT = Path(__file__).resolve().parents[1]


def _help(module: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "3000"}  # one line per option: names are not cut at their hyphens
    return subprocess.run([sys.executable, "-m", module, "--help"], cwd=ROOT, capture_output=True, text=True,
                          env=env, timeout=120)


@pytest.mark.parametrize("module", readme_modules())
def test_help_exits_0_and_lists_the_options(module):
    proc = _help(module)
    assert proc.returncode == 0, f"python -m {module} --help: exit {proc.returncode}\n{proc.stderr[-2000:]}"
    assert proc.stdout.startswith("usage: "), proc.stdout[:500]
    assert "-h, --help" in proc.stdout
    assert re.search(r"^\s+(--\w|\{|[a-z]\w*\s)", proc.stdout, re.M), f"no options listed:\n{proc.stdout[:1000]}"
    assert "Traceback" not in proc.stderr


def test_rollout_help_lists_every_registered_agent():
    from agents.registry import AGENTS

    out = _help("eval.rollout").stdout
    missing = [name for name in AGENTS if not re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", out)]
    assert not missing, f"eval.rollout --help does not name {missing}"
    assert "--verbose" in out and "SituRec-HomeFurnishings-v0" in out


def test_recrm_train_help_lists_the_dimensions_and_flags():
    from recrm.train import TASKS

    out = _help("recrm.train").stdout
    assert all(task in out for task in TASKS) and "--data" in out and "--learning_rate" in out


def test_benchmark_parse_help_does_not_run_the_benchmark():
    proc = _help("benchmarks.parse")
    assert proc.returncode == 0 and "--fuzz" in proc.stdout and "us per call" not in proc.stdout
