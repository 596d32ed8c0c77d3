"""End to end: the human-evaluation app's run directories fed to ``python -m eval.agreement``.

Participants play through the HTTP app and rate every conversation with ratings chosen
here; simulated-user runs of the same assistants come from ``eval.rollout``. The expected
coefficients are recomputed from those inputs (human: plain mean over conversations;
simulated: mean of the profile-subset means of the judge's ratings), so pooling two
assistants of one kind, pairing the wrong runs or using the wrong mean fails.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from fastapi.testclient import TestClient
from scipy.stats import rankdata

import situ_gym.llm.hf_backend as hf_backend
from eval.aggregate import load_indexes, load_tasks
from eval.agreement import main
from eval.human.app import create_app
from eval.human.storage import run_dir_name
from eval.human.study import Study, StudyConfig
from eval.io import read_episodes
from eval.judge import DIMENSIONS, RuleBasedJudge
from eval.metrics import episode_metrics
from eval.rollout import RolloutConfig, run
from situ_gym.llm import clear_backends
from tests.llm.scripted import ScriptedBackend

# Two assistants of one kind ("fakeapi", told apart only by their model) beside two plain ones.
ASSISTANTS = ("heuristic", "random", "fakeapi:heuristic", "fakeapi:random")
BASE = {"heuristic": 4, "random": 1, "fakeapi:heuristic": 2, "fakeapi:random": 3}
PROFILE = {"age_group": "25-34", "shopping_frequency": "weekly", "note": ""}
LEFT = {"name": "turn", "arguments": {"direction": "left", "angle": 30}}
IDLE = {"name": "idle", "arguments": {}}


def _rating(participant: int, task: int, assistant: str, dim: int) -> int:
    """1-5; the assistants' order turns with the dimension, and the first participant's first
    task gets one more point: the plain mean and the mean of subset means differ."""
    return 1 + (BASE[assistant] - 1 + dim) % 4 + (participant == 0 and task == 0)


@pytest.fixture(scope="module")
def study_and_runs(tmp_path_factory):
    from agents.registry import AGENTS

    mp = pytest.MonkeyPatch()
    mp.setitem(AGENTS, "fakeapi", "tests.eval.human.conftest:NamedModelAssistant")
    root = tmp_path_factory.mktemp("study_agree")
    # Two tasks each, from consecutive starts: the profile subsets of the played tasks are uneven.
    study = Study(StudyConfig(assistants=ASSISTANTS, out=str(root / "study"), tasks_per_participant=2, max_turns=6))
    client = TestClient(create_app(study))
    given: dict[tuple[str, str], list[int]] = {}  # (assistant, dimension) -> ratings as submitted
    for p in range(2):
        auth = {"Authorization": "Bearer " + client.post("/api/participants", json=PROFILE).json()["token"]}
        pid = client.get("/api/state", headers=auth).json()["participant_id"]
        assert pid == f"P00{p + 1}"
        for _ in range(len(ASSISTANTS) * 2):
            client.post("/api/start", headers=auth)
            saved = json.loads((root / "study" / "participants" / f"{pid}.json").read_text())
            planned = saved["plan"][saved["index"]]  # which assistant the participant meets (hidden from them)
            assistant, task = planned["assistant"], study.task_ids.index(planned["task_id"])
            # The participant walks longer with some assistants: the task metrics differ per assistant.
            for _k in range(1 + ASSISTANTS.index(assistant) % 2):
                assert client.post("/api/turn", headers=auth, json={"utterance": "Hi, I need milk.",
                                                                      "action": LEFT}).status_code == 200
            r = client.post("/api/turn", headers=auth, json={"utterance": "Bye.", "action": IDLE, "gave_up": True})
            assert r.json()["stage"] == "rating", r.text
            ratings = {d: _rating(p, task, assistant, i) for i, d in enumerate(DIMENSIONS)}
            for d, v in ratings.items():
                given.setdefault((assistant, d), []).append(v)
            assert client.post("/api/ratings", headers=auth, json={"ratings": ratings}).status_code == 200
    study.close()
    sims = {}
    for name in ASSISTANTS:
        agent, _, model = name.partition(":")
        out = root / f"sim_{run_dir_name(name)}"
        run(RolloutConfig(agent=agent, model=model or None, tasks=",".join(study.task_ids[:3]),
                          seed=42, max_turns=6, out=str(out), no_report=True, judge="none"))
        sims[name] = out
    yield root / "study", sims, given
    mp.undo()


def _store_index():
    return load_indexes({"supermarket"})["supermarket"], load_tasks({"supermarket"})


def _subset_mean(pairs):
    by: dict[int, list[float]] = {}
    for subset, v in pairs:
        by.setdefault(subset, []).append(v)
    return float(np.mean([np.mean(v) for v in by.values()]))


def _coefficients(xs, ys):
    x, y = np.round(np.array(xs), 9), np.round(np.array(ys), 9)
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return None, None
    return float(np.corrcoef(x, y)[0, 1]), float(np.corrcoef(rankdata(x), rankdata(y))[0, 1])


def _check(result, expected_human, expected_sim):
    assert result["users"] == ["human", "rule"] and result["agents"] == sorted(ASSISTANTS)
    checked = 0
    for metric, per_agent in expected_human.items():
        agents = sorted(ASSISTANTS)
        for a in agents:
            assert result["means"]["human"][a][metric] == pytest.approx(per_agent[a]), (metric, a)
            assert result["means"]["rule"][a][metric] == pytest.approx(expected_sim[metric][a]), (metric, a)
        r, rho = _coefficients([per_agent[a] for a in agents], [expected_sim[metric][a] for a in agents])
        got = result["coefficients"][metric]
        assert (got["pearson"] is None) == (r is None) and got["n"] == 4, metric
        if r is not None:
            assert got["pearson"] == pytest.approx(r) and got["spearman"] == pytest.approx(rho), metric
            checked += 1
    return checked


def _human_task_means(study_dir):
    out: dict[str, dict[str, float]] = {"SR": {}, "AFR": {}}
    for name in ASSISTANTS:
        eps = read_episodes(study_dir / "runs" / run_dir_name(name) / "trajectories.jsonl")
        assert len(eps) == 4 and {ep.user for ep in eps} == {"human"}
        ms = [episode_metrics(ep) for ep in eps]
        out["SR"][name] = 100.0 * float(np.mean([m["success"] for m in ms]))
        afr = [m["afr"] for m in ms if m["afr"] is not None]
        out["AFR"][name] = 100.0 * float(np.mean(afr))
    return out


def _sim_task_means(sims):
    out: dict[str, dict[str, float]] = {"SR": {}, "AFR": {}}
    for name, d in sims.items():
        ms = [episode_metrics(ep) for ep in read_episodes(d / "trajectories.jsonl")]
        out["SR"][name] = 100.0 * _subset_mean((m["subset"], m["success"]) for m in ms)
        out["AFR"][name] = 100.0 * _subset_mean((m["subset"], m["afr"]) for m in ms if m["afr"] is not None)
    return out


def _judge_means(dirs, plain: bool):
    """Rule-judge means per assistant and dimension: plain (human runs) or over subset means."""
    index, tasks = _store_index()
    judge = RuleBasedJudge()
    out: dict[str, dict[str, float]] = {d: {} for d in DIMENSIONS}
    for name, d in dirs.items():
        rated = [(ep.subset, judge.rate(ep, tasks[ep.task_id], index)) for ep in read_episodes(d / "trajectories.jsonl")]
        for dim in DIMENSIONS:
            out[dim][name] = float(np.mean([r[dim] for _, r in rated])) if plain else _subset_mean(
                (s, r[dim]) for s, r in rated)
    return out


@pytest.mark.parametrize("ratings", ["judge", "questionnaire"])
def test_human_runs_against_the_rule_judge_give_table_4(study_and_runs, tmp_path, capsys, ratings):
    study_dir, sims, given = study_and_runs
    human_dirs = {a: study_dir / "runs" / run_dir_name(a) for a in ASSISTANTS}
    out_json = tmp_path / "agree.json"
    argv = [*map(str, human_dirs.values()), *map(str, sims.values()), "--ratings", ratings, "--json", str(out_json)]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    result = json.loads(out_json.read_text())

    if ratings == "judge":  # Table 4: the same judge rates the human trajectories
        expected_human = _judge_means(human_dirs, plain=True)
    else:  # the participants' answers, as submitted in the app
        expected_human = {d: {a: float(np.mean(given[(a, d)])) for a in ASSISTANTS} for d in DIMENSIONS}
    expected_sim = _judge_means(sims, plain=False)
    expected_human |= _human_task_means(study_dir)
    expected_sim |= _sim_task_means(sims)
    assert _check(result, expected_human, expected_sim) >= 3  # enough metrics vary to be compared
    lines = printed.splitlines()
    assert lines[0].startswith("Agreement of assistant performance: human vs rule users (4 agents")
    pearson = lines[2].split()
    assert pearson[:2] == ["Pearson", "(r)"] and len(pearson) == 2 + 12
    overall = result["coefficients"]["Overall"]["pearson"]
    assert pearson[2 + 5] == ("-" if overall is None else f"{overall:.3f}")


def _llm_judge_reply(request, _i):
    """A judge that rates by the transcript's length: Overall = assistant messages (1-5), the rest 3."""
    n = len(re.findall(r"^Assistant: ", request.messages[-1]["content"], flags=re.M))
    return json.dumps({d: (min(5, max(1, n)) if d == "Overall" else 3) for d in DIMENSIONS})


class _JudgeModel(ScriptedBackend):
    def __init__(self, spec, **kwargs):
        super().__init__(_llm_judge_reply, model=spec)


def test_human_runs_against_an_llm_judge(study_and_runs, tmp_path, monkeypatch):
    study_dir, sims, given = study_and_runs
    monkeypatch.setattr(hf_backend, "HFChatBackend", _JudgeModel)
    clear_backends()
    human_dirs = {a: study_dir / "runs" / run_dir_name(a) for a in ASSISTANTS}
    out_json = tmp_path / "agree.json"
    try:
        argv = [*map(str, human_dirs.values()), *map(str, sims.values()), "--judge", "llm", "--judge-model",
                "hf:judge", "--json", str(out_json)]
        assert main(argv) == 0
    finally:
        clear_backends()
    result = json.loads(out_json.read_text())

    def overall(ep):
        return min(5, max(1, len(ep.turns)))

    expected_human, expected_sim = {"Overall": {}}, {"Overall": {}}
    for name in ASSISTANTS:
        human = read_episodes(human_dirs[name] / "trajectories.jsonl")
        expected_human["Overall"][name] = float(np.mean([overall(ep) for ep in human]))
        sim = read_episodes(sims[name] / "trajectories.jsonl")
        expected_sim["Overall"][name] = _subset_mean((ep.subset, overall(ep)) for ep in sim)
    _check(result, expected_human, expected_sim)
    assert result["means"]["human"]["random"]["Naturalness"] == result["means"]["rule"]["random"]["Naturalness"] == 3


def test_report_ranks_assistants_by_participants_and_judge(study_and_runs, tmp_path):
    """Fig. 5: per dimension, participants' and the judge's means of the same conversations, correlated."""
    import shutil

    from eval.human.__main__ import main as human_main

    study_dir, _, given = study_and_runs
    study = tmp_path / "study"
    shutil.copytree(study_dir, study)  # the report writes into the run directories
    assert human_main(["report", "--out", str(study)]) == 0
    text = (study / "questionnaire.md").read_text()
    rows = {cells[0]: cells[1:] for line in text.splitlines()[-len(DIMENSIONS):]
            for cells in [[c.strip() for c in line.strip("|").split("|")]]}
    judged = _judge_means({a: study / "runs" / run_dir_name(a) for a in ASSISTANTS}, plain=True)
    agents = sorted(ASSISTANTS)
    compared = 0
    for d in DIMENSIONS:
        r, rho = _coefficients([np.mean(given[(a, d)]) for a in agents], [judged[d][a] for a in agents])
        n, pearson, spearman = rows[d]
        assert n == "4" and (pearson.startswith("- (") if r is None else pearson == f"{r:.3f}"), d
        assert (spearman.startswith("- (") if rho is None else spearman == f"{rho:.3f}"), d
        compared += r is not None
    assert compared >= 3


def test_per_profile_cohort_filters_simulated_runs_only(study_and_runs, tmp_path):
    from eval.agreement import load_run, per_profile_tasks

    study_dir, sims, _ = study_and_runs
    human = load_run(study_dir / "runs" / "heuristic", tasks="per-profile")
    assert len(human["episodes"]) == 4  # the study's tasks, whatever the cohort
    sim = load_run(sims["heuristic"], tasks="per-profile")
    cohort = set(per_profile_tasks(list(load_tasks({"supermarket"}).values())))
    assert {ep.task_id for ep in sim["episodes"]} <= cohort
    assert len(sim["episodes"]) == len([t for t in read_episodes(sims["heuristic"] / "trajectories.jsonl")
                                        if t.task_id in cohort])


def test_report_with_an_llm_judge_rates_each_run_in_one_batch_and_asks_once(study_and_runs, tmp_path, monkeypatch):
    """``eval.human report --judge llm``: each run's conversations in one batch; the questionnaire
    table and a second report are served from the study's judge cache."""
    import shutil

    from eval.human.__main__ import main as human_main

    built = []

    class Counting(_JudgeModel):
        def __init__(self, spec, **kwargs):
            super().__init__(spec, **kwargs)
            built.append(self)

    study_dir, _, _ = study_and_runs
    study = tmp_path / "study"
    shutil.copytree(study_dir, study)
    monkeypatch.setattr(hf_backend, "HFChatBackend", Counting)
    clear_backends()
    assert human_main(["report", "--out", str(study), "--judge", "llm", "--judge-model", "hf:judge"]) == 0
    runs = {a: read_episodes(study / "runs" / run_dir_name(a) / "trajectories.jsonl") for a in ASSISTANTS}
    (backend,) = built
    # A run's conversations go in one batch; the cache answers what another run already asked
    # (assistants that behave alike give the same transcripts) and the questionnaire's pass.
    assert backend.batches and len(backend.batches) <= len(runs)
    assert all(len(b) == len(runs[ASSISTANTS[0]]) for b in backend.batches)
    calls = backend.calls
    assert human_main(["report", "--out", str(study), "--judge", "llm", "--judge-model", "hf:judge"]) == 0
    assert backend.calls == calls  # the second report asked nothing new
    text = (study / "questionnaire.md").read_text()
    col = 3 + DIMENSIONS.index("Overall")
    for name, eps in runs.items():
        (row,) = [c for line in text.splitlines() if "judge (llm:judge)" in line
                  for c in [[x.strip() for x in line.strip("|").split("|")]] if c[0] == name]
        assert row[col] == f"{np.mean([min(5, max(1, len(ep.turns))) for ep in eps]):.2f}"
    assert "llm:judge" in (study / "runs" / run_dir_name(ASSISTANTS[0]) / "report.md").read_text()
