"""eval.agreement: pairing runs by agent across user types, ratings.jsonl overrides, Table 4 output."""

from __future__ import annotations

import json
import shutil

import pytest

from eval.aggregate import load_indexes, load_tasks
from eval.agreement import main, per_profile_tasks
from eval.io import read_episodes
from eval.judge import RuleBasedJudge
from eval.rollout import RolloutConfig, run
from situ_gym.scene.loader import load_task_bank

AGENTS = ("heuristic", "random", "agents.random_agent:RandomAssistant")


@pytest.fixture(scope="module")
def sim_runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("agree")
    dirs = {}
    for k, agent in enumerate(AGENTS):
        out = root / f"rule_{k}"
        run(RolloutConfig(agent=agent, tasks="0-3", seed=k, out=str(out), no_report=True, judge="none"))
        dirs[agent] = out
    return root, dirs


def _relabel(dest, dirs, ratings_of, user="human"):
    """Copies of the simulated runs labelled as ``user`` runs, with ratings.jsonl from ``ratings_of``."""
    out = []
    for k, (agent, d) in enumerate(dirs.items()):
        h = dest / f"{user}_{k}"
        shutil.copytree(d, h)
        cfg = json.loads((h / "config.json").read_text())
        cfg["config"]["user"] = user
        (h / "config.json").write_text(json.dumps(cfg))
        ids = [json.loads(line)["episode_id"] for line in (h / "trajectories.jsonl").read_text().splitlines()]
        (h / "ratings.jsonl").write_text("".join(
            json.dumps({"episode_id": i, "ratings": ratings_of(user, agent)}) + "\n" for i in ids))
        out.append(h)
    return out


def test_identical_runs_agree_and_ratings_override_the_judge(sim_runs, tmp_path, capsys):
    root, dirs = sim_runs
    overall = {"heuristic": (1, 2), "random": (2, 4), AGENTS[2]: (3, 5)}
    inform = {"heuristic": (3, 1), "random": (2, 2), AGENTS[2]: (1, 3)}

    def ratings_of(user, agent):
        k = 0 if user == "human" else 1
        return {"Overall": overall[agent][k], "Informativeness": inform[agent][k]}

    humans = _relabel(tmp_path, dirs, ratings_of)
    sims = _relabel(tmp_path, dirs, ratings_of, user="rule")
    out_json = tmp_path / "agree.json"
    assert main([*map(str, humans), *map(str, sims), "--judge", "none", "--ratings", "questionnaire",
                 "--json", str(out_json)]) == 0
    printed = capsys.readouterr().out
    assert "Pearson (r)" in printed and "Spearman (rho)" in printed and "Nonrep." in printed
    result = json.loads(out_json.read_text())
    assert result["users"] == ["human", "rule"] and result["agents"] == sorted(AGENTS)
    c = result["coefficients"]
    # Same trajectories on both sides: every task metric that varies agrees perfectly.
    assert c["SR"]["pearson"] == pytest.approx(1.0) and c["SR"]["spearman"] == pytest.approx(1.0)
    assert c["R@5"]["pearson"] == pytest.approx(1.0)
    # Overall (1,2,3) vs (2,4,5): r = 9 / sqrt(84); ranks agree. Informativeness reversed.
    assert c["Overall"]["pearson"] == pytest.approx(9 / 84**0.5)
    assert c["Overall"]["spearman"] == pytest.approx(1.0)
    assert c["Informativeness"]["pearson"] == pytest.approx(-1.0)
    assert c["Naturalness"]["pearson"] is None  # no ratings at all without a judge
    assert result["means"]["human"]["heuristic"]["Overall"] == 1.0


def test_rule_judge_rates_episodes_without_override(sim_runs, tmp_path):
    root, dirs = sim_runs
    humans = _relabel(tmp_path, dirs, lambda u, a: {"Overall": 3})
    out_json = tmp_path / "a.json"
    assert main([*map(str, humans), *map(str, dirs.values()), "--ratings", "questionnaire", "--json", str(out_json)]) == 0
    means = json.loads(out_json.read_text())["means"]
    assert means["human"]["heuristic"]["Overall"] == 3.0
    assert 1.0 <= means["human"]["heuristic"]["Naturalness"] <= 5.0  # rule judge filled it in
    # By default the judge rates both groups (Table 4): the same trajectories get the same means.
    assert main([*map(str, humans), *map(str, dirs.values()), "--json", str(out_json)]) == 0
    human = json.loads(out_json.read_text())["means"]["human"]["heuristic"]
    eps = read_episodes(dirs["heuristic"] / "trajectories.jsonl")
    judge, index, tasks = RuleBasedJudge(), load_indexes({"supermarket"})["supermarket"], load_tasks({"supermarket"})
    rated = [judge.rate(ep, tasks[ep.task_id], index) for ep in eps]
    for m in ("Overall", "Naturalness"):  # human runs: the plain mean of the judge's ratings
        assert human[m] == pytest.approx(sum(r[m] for r in rated) / len(rated))


def _fails(argv, capsys) -> str:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "usage:" not in err and len(err.strip().splitlines()) == 1
    assert err.startswith("python -m eval.agreement: error: ")
    return err.strip().splitlines()[-1]


def test_bad_inputs_give_one_line_errors(sim_runs, tmp_path, capsys):
    _, dirs = sim_runs
    assert "no trajectories.jsonl" in _fails([str(tmp_path)], capsys)
    assert "exactly two user types" in _fails([str(d) for d in dirs.values()], capsys)
    bad = tmp_path / "bad"
    shutil.copytree(next(iter(dirs.values())), bad)
    (bad / "ratings.jsonl").write_text('{"episode_id": "x", "ratings": {"Overall": 9}}\n')
    argv = [str(bad), str(bad), "--users", "rule,human", "--ratings", "questionnaire"]
    assert "must be a number from 1 to 5, got 9" in _fails(argv, capsys)


def test_per_profile_cohort_is_one_task_per_profile_and_fixed():
    bank = load_task_bank("supermarket")
    ids = per_profile_tasks(bank.tasks)
    profiles = [t.profile_id for t in bank.tasks if t.id in ids]
    assert len(ids) == len(set(profiles)) == len({t.profile_id for t in bank.tasks}) == 25
    assert ids == per_profile_tasks(bank.tasks, seed=42)
    assert ids != per_profile_tasks(bank.tasks, seed=0)
