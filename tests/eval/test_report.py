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
    for png in ("sr_by_turn.png", "cgv_gain.png", "action_shares.png"):
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
