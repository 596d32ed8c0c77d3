"""Subset mean +- sample SD (ddof = 1), eligibility of navigation metrics, the summary dict."""

from __future__ import annotations

import math

import pytest

from eval.aggregate import (
    by_environment,
    mean_sd,
    reward_summary,
    subset_stat,
    summarize,
    summarize_groups,
)
from tests.eval.builders import call, episode, turn


def test_mean_sd_is_sample_sd_of_subset_means():
    mu, sd = mean_sd([10, 20, 30, 40])
    # deviations -15, -5, 5, 15 -> (225 + 25 + 25 + 225) / 3 = 500/3
    assert mu == 25.0 and sd == pytest.approx(math.sqrt(500 / 3))
    assert mean_sd([7.0]) == (7.0, None)
    assert mean_sd([]) == (None, None)


def test_subset_stat_skips_ineligible_values_and_empty_subsets():
    s = subset_stat([(0, 1.0), (0, 3.0), (1, None), (2, 5.0), (3, None)])
    # subset means {0: 2, 2: 5}; subset 1 and 3 have no eligible value
    assert s["subsets"] == {"0": 2.0, "2": 5.0}
    assert s["mean"] == pytest.approx(3.5)
    assert s["sd"] == pytest.approx(math.sqrt(((2 - 3.5) ** 2 + (5 - 3.5) ** 2) / 1))
    assert s["cohort"] == pytest.approx(3.0) and s["n"] == 3


def _cohort():
    follow = call("turn", direction="left", angle=10)
    eps = [
        # subset 0: one success of two -> SR 50; AFR events: ep1 1/1, ep2 0/1 -> 50
        episode([turn(1, expected=follow, actual=follow)], cart=["a"], subset=0, task_id="t0"),
        episode([turn(1, expected=follow, actual=None), turn(2)], subset=0, task_id="t1"),
        # subset 1: success -> 100; no navigation event -> not in AFR
        episode([turn(1), turn(2), turn(3)], cart=["a"], subset=1, task_id="t2"),
        # subset 2: failure -> 0; AFR 1/2
        episode([turn(1, expected=follow, actual=follow),
                 turn(2, expected=follow, actual=call("idle"))], subset=2, task_id="t3"),
        # subset 3: two successes -> 100
        episode([turn(1)], cart=["b"], subset=3, task_id="t4"),
        episode([turn(1)], cart=["a"], subset=3, task_id="t5"),
    ]
    return eps


def test_summarize_sr_turn_and_navigation_eligibility():
    s = summarize(_cohort())
    sr = s["metrics"]["SR"]
    # subset SR means 50, 100, 0, 100 -> mean 62.5; deviations -12.5, 37.5, -62.5, 37.5
    # -> SD = sqrt((156.25 + 1406.25 + 3906.25 + 1406.25) / 3) = sqrt(6875/3) = 47.87
    assert sr["mean"] == pytest.approx(62.5)
    assert sr["sd"] == pytest.approx(math.sqrt(6875 / 3))
    assert sr["cohort"] == pytest.approx(400 / 6)
    # Turn subset means 1.5, 3, 2, 1 -> 1.875
    assert s["metrics"]["Turn"]["mean"] == pytest.approx(1.875)
    afr = s["metrics"]["AFR"]
    # eligible episodes: subset 0 -> (100 + 0)/2 = 50; subset 2 -> 50; subsets 1, 3 absent
    assert afr["subsets"] == {"0": 50.0, "2": 50.0}
    assert afr["mean"] == pytest.approx(50.0) and afr["sd"] == pytest.approx(0.0)
    assert afr["n"] == 3
    assert s["episodes"] == 6 and s["termination"]["success_cart_added"] == 4
    assert len(s["sr_by_turn"]) == 20 and s["sr_by_turn"][0] == pytest.approx(300 / 6)
    assert s["pass_hat_k"] == {"1": pytest.approx(400 / 6)}


def test_summarize_table8_and_catalog(market_index):
    eps = [
        episode([turn(1, ranking=["a", "zz"])], cart=["a"], reference_set=["a"], subset=0),
        episode([turn(1, ranking=["b"])], cart=["b"], reference_set=["a"], subset=1),
        episode([turn(1, ranking=["c", "a"])], reference_set=["a"], subset=1),
    ]
    s = summarize(eps, indexes={"supermarket": market_index})
    m = s["metrics"]
    # RPR over all episodes: subset 0 -> 100, subset 1 -> 0 -> mean 50; cohort 1/3
    assert m["RPR"]["mean"] == pytest.approx(50.0)
    assert m["RPR"]["cohort"] == pytest.approx(100 / 3)
    # RPR|Cart: among purchases: subset 0 -> 100, subset 1 -> 0 (ep3 has no purchase)
    assert m["RPR|Cart"]["cohort"] == pytest.approx(50.0) and m["RPR|Cart"]["n"] == 2
    # R-MRR@10: ep1 1, ep2 0, ep3 1/2 -> subsets 100, 25 -> 62.5
    assert m["R-MRR@10"]["mean"] == pytest.approx(62.5)
    # Catalog %: subset 0: 1 of 2 -> 50; subset 1: 3 of 3 -> 100; pooled 4/5 = 80
    assert m["Catalog %"]["subsets"] == {"0": 50.0, "1": 100.0}
    assert m["Catalog %"]["cohort"] == pytest.approx(80.0)
    # Without a scene there is no catalog to check against.
    assert summarize(eps)["metrics"]["Catalog %"]["cohort"] is None


def test_reward_summary_reads_any_keys():
    t1 = turn(1, reward={"recrm/total": 0.5, "recrm/instruction": 1.0, "recrm/consistency": 0.0,
                         "recrm/relevance": None})
    t2 = turn(2, reward={"recrm/total": 0.0, "recrm/instruction": 0.0, "recrm/consistency": 1.0,
                         "recrm/relevance": 0.8})
    t3 = turn(3, reward={"recrm/total": 0.5, "recrm/instruction": 1.0, "recrm/consistency": 1.0,
                         "recrm/relevance": 0.2})
    r = reward_summary([episode([t1, t2, t3])])
    assert r["mean"]["recrm/total"] == pytest.approx(1 / 3)
    # None is skipped: relevance mean over 2 turns = (0.8 + 0.2) / 2
    assert r["mean"]["recrm/relevance"] == pytest.approx(0.5) and r["turns"]["recrm/relevance"] == 2
    # gates: instruction passes 2 of 3, consistency 2 of 3; relevance is not a gate
    assert r["gate_pass_rate"] == {"recrm/instruction": pytest.approx(200 / 3),
                                   "recrm/consistency": pytest.approx(200 / 3)}
    assert reward_summary([episode([turn(1)])]) == {}


def test_summarize_groups_by_env_and_agent():
    eps = [episode([turn(1)], agent="x"), episode([turn(1)], cart=["a"], agent="y")]
    g = summarize_groups(eps)
    assert sorted(g) == ["SituRec-Supermarket-v0 / x", "SituRec-Supermarket-v0 / y"]
    assert g["SituRec-Supermarket-v0 / y"]["metrics"]["SR"]["cohort"] == 100.0


def test_summary_has_the_navigate_suggestions_and_cohorts_split_by_environment():
    fixture = call("move_to_fixture", "fx1", fixture="7")
    eps = [episode([turn(1, expected=fixture, actual=fixture), turn(2, expected=fixture, actual=None)], agent="x"),
           episode([turn(1)], agent="y", store="home_furnishings")]
    g = summarize_groups(eps)
    nav = g["SituRec-Supermarket-v0 / x"]["navigate_actions"]
    assert nav["shares"]["move_to_fixture"] == 100.0 and nav["same_rate"]["move_to_fixture"] == 50.0
    envs = by_environment(g)
    assert list(envs) == ["SituRec-HomeFurnishings-v0", "SituRec-Supermarket-v0"]
    assert [agent for agent, _ in envs["SituRec-Supermarket-v0"]] == ["x"]
