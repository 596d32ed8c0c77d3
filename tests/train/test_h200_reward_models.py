"""The reward-model driver's presets: what each one plays, synthesises from and trains."""

from __future__ import annotations

import importlib

import pytest


@pytest.fixture(scope="module")
def script():
    return importlib.import_module("train.scripts.h200_reward_models")


def _episodes(preset) -> int:
    """Episodes the preset plays: its tasks of each store (as eval.rollout selects them) x its runs."""
    from eval.rollout_config import select_tasks, store_of
    from situ_gym.scene.loader import load_task_bank

    tasks = 0
    for env in preset.envs:
        ids = [t.id for t in load_task_bank(store_of(env)).tasks]
        tasks += len(select_tasks(preset.tasks, ids))
    return tasks * len(preset.runs)


def test_gpu_preset_synthesises_from_200_plus_episodes_of_several_assistants(script):
    h200 = script.PRESETS["h200"]
    assert set(h200.dims) == set(script.ALL_DIMS) and len(h200.envs) == 2
    assert _episodes(h200) >= 200
    assert len({agent for agent, _ in h200.runs}) >= 3  # heuristic, plain, random


def test_the_command_line_picks_a_preset_and_defaults_to_smollm2(script):
    args = script.parse_args(["--preset", "cpu", "--out", "x"])
    assert args.preset == "cpu" and args.model == "gguf:smollm2"
    assert script.parse_args(["--tiny", "--out", "x"]).preset == "tiny"
    with pytest.raises(SystemExit):
        script.parse_args(["--preset", "gpu", "--out", "x"])


@pytest.mark.slow
def test_tiny_preset_runs_the_whole_gpu_path_on_cpu(script, tmp_path, capsys):
    """The dry run: rollouts, synthesis, five trainings and both evaluations (~25 s on an idle CPU)."""
    import json

    assert script.main(["--preset", "tiny", "--out", str(tmp_path)]) == 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert set(summary["rule"]) == set(summary["model"]) == set(script.ALL_DIMS)
    for dim in script.ALL_DIMS:  # the learned rows come from the folders this run trained
        assert summary["model"][dim]["scorer"] == f"model:{tmp_path / 'models' / dim}"
        assert summary["model"][dim]["n"] == summary["rule"][dim]["n"] > 0  # the same held-out records
    assert summary["counts"]["ranking"]["test/lists"] > 0 and summary["counts"]["relevance"]["train/score_2"] > 0
    table = capsys.readouterr().out
    assert f"| ranking | model:{tmp_path / 'models' / 'ranking'} |" in table and "| ranking | rule |" in table
