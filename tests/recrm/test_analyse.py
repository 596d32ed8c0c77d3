"""recrm.analyse on small constructed runs whose AUC, correlations and pass rates are known."""

from __future__ import annotations

import json

import pytest

from recrm.analyse import analyse, analyse_run, auc, correlations, main
from situ_gym.records import EpisodeRecord, TurnRecord

ENV = "SituRec-Supermarket-v0"


def _turn(n: int, total: float, *, instruction: float = 1.0, relevance: float | None = None) -> TurnRecord:
    reward = {
        "recrm/instruction": instruction,
        "recrm/consistency": 1.0,
        "recrm/relevance": relevance,
        "recrm/ranking": None,
        "recrm/behavior": 0.0,
        "recrm/total": total,
    }
    return TurnRecord(turn=n, assistant_raw="{}", assistant_valid=True, response="", reward=reward)


def _episode(i: int, totals: list[float], won: bool, agent: str = "a", env: str = ENV, **kw) -> EpisodeRecord:
    return EpisodeRecord(
        episode_id=f"t{i}#r0", env_id=env, store="supermarket", task_id=f"t{i}", profile_id="p", subset=0,
        seed=0, agent=agent, user="rule", target_id="x", reference_set=["x"], budget=1.0,
        turns=[_turn(n + 1, v, **kw) for n, v in enumerate(totals)], cart=["x"] if won else [],
        termination="success_cart_added" if won else "turn_limit",
    )


def test_auc_matches_the_pair_count():
    # positives {3, 1}, negatives {2, 0}: pairs won 3 of 4 -> 0.75; a tie counts one half
    assert auc([3.0, 1.0], [2.0, 0.0]) == pytest.approx(0.75)
    assert auc([1.0], [1.0, 0.0]) == pytest.approx(0.75)
    assert auc([], [1.0]) is None


def test_run_figures_are_the_constructed_ones():
    episodes = [
        _episode(0, [0.9, 0.8], True, relevance=1.0),
        _episode(1, [0.7], True, instruction=0.0, relevance=0.5),
        _episode(2, [0.1, 0.75], False),
        _episode(3, [0.2], False, relevance=0.0),
    ]
    r = analyse_run(episodes)
    # success turns {0.9, 0.8, 0.7} vs failed {0.1, 0.75, 0.2}: 8 of 9 pairs won
    assert r["auc"]["total"] == pytest.approx(8 / 9)
    assert r["auc"]["consistency"] == pytest.approx(0.5)  # constant: no signal
    assert r["auc"]["ranking"] is None  # never applicable
    assert r["auc_turns"]["relevance"] == [3, 1]  # None relevance turns are left out
    assert r["sr"] == 0.5
    assert r["mean_episode_reward"] == pytest.approx((0.85 + 0.7 + 0.425 + 0.2) / 4)
    assert r["gate_pass"]["instruction"] == pytest.approx(5 / 6)
    assert r["gate_pass"]["consistency"] == 1.0
    assert r["gate_pass"]["relevance"] == pytest.approx(2 / 4)  # the two 1.0 turns; 0.5 is not > tau


def test_correlations_across_assistants():
    assert correlations([0.1, 0.2, 0.3], [0.2, 0.4, 0.6]) == {"pearson": pytest.approx(1.0),
                                                             "spearman": pytest.approx(1.0), "n": 3}
    # monotone but not linear: Spearman 1, Pearson below 1
    c = correlations([1.0, 2.0, 3.0, 4.0], [0.0, 0.1, 0.2, 0.9])
    assert c["spearman"] == pytest.approx(1.0) and 0.8 < c["pearson"] < 0.99
    assert correlations([0.1, 0.2], [0.3, 0.4])["pearson"] is None


def _run(agent: str, wins: int, reward: float) -> tuple[str, str, list[EpisodeRecord]]:
    return agent, ENV, [_episode(i, [reward], i < wins, agent=agent) for i in range(4)]


def test_analyse_correlates_mean_reward_with_sr_and_pools_auc():
    runs = [_run("good", 4, 0.9), _run("mid", 2, 0.5), _run("bad", 0, 0.1)]
    result = analyse(runs)
    group = result["groups"][ENV]
    assert group["reward_vs_sr"]["pearson"] == pytest.approx(1.0)
    assert group["reward_vs_sr"]["spearman"] == pytest.approx(1.0)
    # pooled: success turns {0.9 x4, 0.5 x2}, failed {0.5 x2, 0.1 x4}: only the 0.5-0.5 pairs tie
    assert group["auc"]["total"] == pytest.approx(1 - 0.5 * 4 / 36)
    assert [r["agent"] for r in result["runs"]] == ["good", "mid", "bad"]


def test_cli_prints_and_writes_json(tmp_path, capsys):
    paths = []
    for agent, wins, reward in (("good", 4, 0.9), ("bad", 1, 0.1)):
        d = tmp_path / agent
        d.mkdir()
        _, _, episodes = _run(agent, wins, reward)
        (d / "trajectories.jsonl").write_text("".join(ep.model_dump_json() + "\n" for ep in episodes))
        paths.append(str(d))
    out = tmp_path / "a.json"
    assert main([*paths, "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "good" in printed and "AUC:total" in printed
    data = json.loads(out.read_text())
    assert data["runs"][0]["sr"] == 1.0 and data["runs"][1]["sr"] == 0.25
    assert main([*paths, "--markdown"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith(f"| {ENV} | ")][:2]
    assert [row.split(" | ")[1:3] for row in rows] == [["good", "100"], ["bad", "25"]]


def test_cli_errors_are_one_line(tmp_path, capsys):
    assert main([str(tmp_path / "missing")]) == 2
    assert capsys.readouterr().err.count("\n") == 1
    d = tmp_path / "norecrm"
    d.mkdir()
    ep = _episode(0, [0.5], True)
    for t in ep.turns:
        t.reward = {}
    (d / "trajectories.jsonl").write_text(ep.model_dump_json() + "\n")
    assert main([str(d)]) == 2
    assert "--reward recrm" in capsys.readouterr().err


def test_doctests():
    import doctest

    import recrm.analyse

    result = doctest.testmod(recrm.analyse)
    assert result.attempted > 0 and result.failed == 0
