"""report.md / metrics.json / plots / viewer from a hand-built run directory."""

from __future__ import annotations

import json

import cv2
import numpy as np
import pytest

from eval.io import append_episode
from eval.report import fmt_stat
from eval.rollout import finalize
from eval.viewer import frame_name, safe_name
from tests.eval.builders import call, episode, turn


@pytest.fixture
def run_dir(tmp_path):
    run = tmp_path / "run1"
    run.mkdir()
    follow = call("turn", direction="left", angle=10)
    eps = [
        episode([turn(1, response="<script>alert(1)</script> Cod Fillets $9.99", ranking=["a", "b"],
                      expected=follow, actual=follow, navigation_goal_id="fx1", visible_after=["fx1"],
                      reward={"recrm/total": 0.5, "recrm/instruction": 1.0})],
                cart=["a"], subset=s % 4, task_id=f"t{s}", reference_set=["a"])
        if s % 2 == 0 else
        episode([turn(1, ranking=["b"], expected=follow, actual=None,
                      reward={"recrm/total": 0.0, "recrm/instruction": 0.0}), turn(2, ranking=[])],
                subset=s % 4, task_id=f"t{s}", reference_set=["a"])
        for s in range(8)
    ]
    # a frame for the first episode's first turn, as the runner would save it
    rel = frame_name(eps[0].episode_id, 1, "assistant")
    (run / rel).parent.mkdir(parents=True)
    cv2.imwrite(str(run / rel), np.zeros((8, 8, 3), np.uint8))
    eps[0] = eps[0].model_copy(update={"frames": [rel]})
    for ep in eps:
        append_episode(run / "trajectories.jsonl", ep)
    return run


def test_fmt_stat():
    assert fmt_stat({"mean": 62.5, "sd": 47.87, "cohort": 60.0}) == "62.5±47.9"
    assert fmt_stat({"mean": 3.0, "sd": None}) == "3.0"
    assert fmt_stat({"mean": None, "sd": None, "cohort": None}) == "-"
    assert fmt_stat({"mean": 50.0, "sd": 2.0}, sd=False) == "50.0"


def test_finalize_writes_report_metrics_plots_viewer(run_dir):
    groups = finalize(run_dir)
    s = groups["SituRec-Supermarket-v0 / test"]
    # subsets 0 and 2 hold the successes (t0, t4 / t2, t6), 1 and 3 the failures:
    # SR subset means 100, 0, 100, 0 -> 50 ± sqrt(4 * 50^2 / 3) = 57.7
    assert s["metrics"]["SR"]["mean"] == pytest.approx(50.0)
    assert s["metrics"]["SR"]["sd"] == pytest.approx(57.735, abs=1e-3)
    report = (run_dir / "report.md").read_text()
    assert "| SR (%) | Turn | AFR (%) | LNSR (%) | R@5 (%) | NDCG@10 (%) |" in report
    assert "50.0±57.7" in report
    assert "judge: rule-based" in report
    assert "mean R_total: 0.2500" in report and "gate pass rate recrm/instruction: 50.0%" in report
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert metrics["groups"]["SituRec-Supermarket-v0 / test"]["metrics"]["SR"]["mean"] == 50.0
    assert metrics["judge"] == "rule-based"
    for png in ("sr_by_turn.png", "cgv_gain.png", "action_shares.png", "navigate_actions.png",
                "dialogue_ratings.png", "terminations.png"):
        img = cv2.imread(str(run_dir / png))
        assert img is not None and img.shape[0] > 100
    index = (run_dir / "index.html").read_text()
    page_rel = f"episodes/{safe_name('t0#r0')}.html"
    assert page_rel in index
    page = (run_dir / page_rel).read_text()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "<script>" not in page
    assert f'src="../{frame_name("t0#r0", 1, "assistant")}"' in page  # the saved frame is shown
    assert "followed" in page
    assert f'href="{safe_name("t1#r0")}.html">next: t1#r0' in page  # neighbour links


def _nav_episodes(agent, store="supermarket", n=2):
    """Per episode two Navigate turns suggesting move_to_fixture (followed once) and one
    suggesting turn (followed), then a Recommend turn."""
    fixture, left = call("move_to_fixture", "fx1", fixture="7"), call("turn", direction="left")
    return [episode([turn(1, expected=fixture, actual=fixture), turn(2, expected=fixture, actual=left),
                     turn(3, expected=left, actual=left), turn(4, action_type="Recommend")],
                    cart=["a"] if k == 0 else [], termination=None if k == 0 else "recommendation_exhausted",
                    task_id=f"t{k}", agent=agent, store=store)
            for k in range(n)]


def test_report_has_the_navigate_table_per_environment_and_terminations_in_order():
    from eval.aggregate import summarize_groups
    from eval.report import format_markdown

    eps = _nav_episodes("heuristic") + _nav_episodes("random") + _nav_episodes("heuristic", "home_furnishings")
    text = format_markdown(summarize_groups(eps))
    section = text[text.index("## Suggested actions within Navigate responses"):text.index("## Reward")
                   if "## Reward" in text else text.index("## Glossary")]
    market = section[section.index("### SituRec-Supermarket-v0"):]
    header = next(line for line in market.splitlines() if line.startswith("| Agent"))
    assert header.startswith("| Agent | events | no suggestion | move_forward | move_backward |")  # '_' in words kept
    assert "move_to_fixture" in header and "move_to_store" not in header
    # 6 events: move_to_fixture 4 (2 followed) -> 66.7 (50.0); turn 2 (2 followed) -> 33.3 (100.0)
    row = next(line for line in market.splitlines() if line.startswith("| heuristic"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    cols = [c.strip() for c in header.strip("|").split("|")]
    assert cells[1:3] == ["6", "0"]
    assert cells[cols.index("move_to_fixture")] == "66.7 (50.0)"
    assert cells[cols.index("turn")] == "33.3 (100.0)"
    assert cells[cols.index("idle")] == "-"
    assert "### SituRec-HomeFurnishings-v0" in section and "move_to_area" in section
    # termination reasons in App. B.3's order with counts and shares
    assert "| Environment | Agent | success_cart_added | recommendation_exhausted |" in text
    assert "| SituRec-Supermarket-v0 | random | 1 (50.0%) | 1 (50.0%) |" in text


def _run(path, episodes):
    path.mkdir()
    for ep in episodes:
        append_episode(path / "trajectories.jsonl", ep)
    return path


def test_multi_run_report_has_every_cohort_and_its_figures(tmp_path, capsys):
    from eval.report import main

    a = _run(tmp_path / "a", _nav_episodes("heuristic"))
    b = _run(tmp_path / "b", _nav_episodes("random", "home_furnishings"))
    assert main([str(a), str(b / "trajectories.jsonl"), "--out", str(tmp_path / "all")]) == 0
    out = tmp_path / "all"
    metrics = json.loads((out / "metrics.json").read_text())
    assert sorted(metrics["groups"]) == ["SituRec-HomeFurnishings-v0 / random", "SituRec-Supermarket-v0 / heuristic"]
    assert metrics["runs"] == [str(a), str(b / "trajectories.jsonl")] and metrics["judge"] == "rule-based"
    report = (out / "report.md").read_text()
    assert "| SituRec-Supermarket-v0 | heuristic |" in report and "| SituRec-HomeFurnishings-v0 | random |" in report
    for png in ("sr_by_turn.png", "cgv_gain.png", "action_shares.png", "navigate_actions.png",
                "dialogue_ratings.png", "terminations.png"):
        img = cv2.imread(str(out / png))
        assert img is not None and img.shape[0] > 200, png
    assert "Suggested actions within Navigate responses" in capsys.readouterr().out


def test_multi_run_report_refuses_the_same_episode_twice(tmp_path, capsys):
    from eval.report import main

    a = _run(tmp_path / "a", _nav_episodes("heuristic"))
    with pytest.raises(SystemExit):
        main([str(a), str(a), "--out", str(tmp_path / "all")])
    assert "both hold episode t0#r0 of SituRec-Supermarket-v0 / heuristic" in capsys.readouterr().err
    assert not (tmp_path / "all").exists()
