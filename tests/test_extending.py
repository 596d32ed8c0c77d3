"""The README's "Extending" recipes, followed step by step (a new assistant, a new store).
The reward-component recipe is followed in tests/recrm/test_dimensions.py."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

AGENT_MODULE = '''
from agents.base import Assistant
from agents.heuristic import HeuristicAssistant


class PoliteHeuristic(Assistant):
    """The heuristic, with "Thank you for waiting." before every reply."""

    name = "polite-heuristic"

    def __init__(self):
        self.inner = HeuristicAssistant()

    def reset(self, observation, info, *, seed=None):
        self.inner.reset(observation, info, seed=seed)

    def act(self, observation):
        import json
        out = json.loads(self.inner.act(observation))
        out["response"] = "Thank you for waiting. " + out["response"]
        return json.dumps(out)
'''


def _rollout(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = {"PYTHONPATH": f"{tmp_path}:{ROOT}", "PATH": "/usr/bin:/bin"}
    return subprocess.run([sys.executable, "-m", "eval.rollout", *args, "--no_report"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)


def test_a_new_assistant_is_a_class_path_for_the_rollout(tmp_path):
    # Recipe "New assistant": subclass agents.base.Assistant in any importable module, pass
    # --agent module:Class.
    (tmp_path / "my_agents.py").write_text(AGENT_MODULE, encoding="utf-8")
    out = tmp_path / "run"
    done = _rollout(tmp_path, "--env", "SituRec-Supermarket-v0", "--agent", "my_agents:PoliteHeuristic",
                    "--tasks", "0", "--out", str(out))
    assert done.returncode == 0, done.stderr[-2000:]
    episode = json.loads((out / "trajectories.jsonl").read_text().splitlines()[0])
    assert episode["agent"] == "my_agents:PoliteHeuristic"
    assert all(json.loads(t["assistant_raw"])["response"].startswith("Thank you for waiting.")
               for t in episode["turns"])


def test_a_class_path_that_is_not_an_assistant_is_one_line(tmp_path):
    (tmp_path / "not_agents.py").write_text("class Thing:\n    pass\n", encoding="utf-8")
    done = _rollout(tmp_path, "--agent", "not_agents:Thing", "--tasks", "0", "--out", str(tmp_path / "run"))
    assert done.returncode == 2
    assert "is not an agents.base.Assistant subclass" in done.stderr
    assert not (tmp_path / "run" / "trajectories.jsonl").exists()


@pytest.mark.slow
def test_a_new_store_is_a_folder_played_through_the_rollout(tmp_path):
    # Recipe "New store": a folder with store.json (+ layout.json, catalog.json, people.json for
    # the generic builder), `python -m situ_gym.assets build`, `validate`, then SituRec-Custom-v0.
    import shutil

    folder = tmp_path / "pharmacy"
    shutil.copytree(ROOT / "stores" / "pharmacy", folder, ignore=shutil.ignore_patterns("scene.json", "tasks.json"))
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    for command in (["build", str(folder)], ["validate", str(folder)]):
        done = subprocess.run([sys.executable, "-m", "situ_gym.assets", *command], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-2000:]
    for name in ("scene.json", "tasks.json"):  # the build is the committed data, byte for byte
        assert (folder / name).read_bytes() == (ROOT / "stores" / "pharmacy" / name).read_bytes()
    out = tmp_path / "run"
    done = _rollout(tmp_path, "--env", "SituRec-Custom-v0", "--env_kwargs", json.dumps({"store": str(folder)}),
                    "--agent", "heuristic", "--tasks", "0-1", "--out", str(out))
    assert done.returncode == 0, done.stderr[-2000:]
    episodes = [json.loads(line) for line in (out / "trajectories.jsonl").read_text().splitlines()]
    assert [e["store"] for e in episodes] == ["pharmacy", "pharmacy"]
    assert all(e["turns"] for e in episodes)
    # Its metrics in another process: the run's config.json names the folder (no SITUREC_STORES).
    done = subprocess.run([sys.executable, "-m", "eval.metrics", str(out)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "SR" in done.stdout and "SituRec-Custom-v0" in done.stdout


def test_a_new_metric_is_computed_aggregated_and_reported(monkeypatch, tmp_path):
    # Recipe "New metric": a per-episode value in eval.metrics.episode_metrics, its subset
    # statistic in eval.aggregate._EPISODE_VALUE, its column in TABLE8 (unit in eval.report._UNITS).
    import eval.aggregate as aggregate
    import eval.metrics as M
    import eval.report as report
    from eval.io import read_episodes

    base = M.episode_metrics

    def with_greets(ep, index=None):
        return {**base(ep, index), "greets": sum(t.action_type == "Greet" for t in ep.turns)}

    monkeypatch.setattr(M, "episode_metrics", with_greets)
    monkeypatch.setitem(aggregate._EPISODE_VALUE, "Greets", lambda m: float(m["greets"]))
    monkeypatch.setattr(report, "TABLE8", (*report.TABLE8, "Greets"))
    monkeypatch.setitem(report._UNITS, "Greets", "Greets/ep")
    done = _rollout(tmp_path, "--agent", "heuristic", "--tasks", "0-1", "--out", str(tmp_path / "run"))
    assert done.returncode == 0, done.stderr[-2000:]
    episodes = list(read_episodes(tmp_path / "run" / "trajectories.jsonl"))
    groups = {"SituRec-Supermarket-v0 / heuristic": aggregate.summarize(episodes)}
    greets = [sum(t.action_type == "Greet" for t in ep.turns) for ep in episodes]
    assert groups["SituRec-Supermarket-v0 / heuristic"]["metrics"]["Greets"]["mean"] == pytest.approx(
        sum(greets) / len(greets))
    table8 = report.format_markdown(groups).split("Table 8 layout")[1]
    assert "Greets/ep" in table8.splitlines()[2]
