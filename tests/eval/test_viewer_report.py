"""What a reader of a run sees: index.html summary and order, episode pages with map, frames
and their mark legends, plots readable as shown, report glossary, console tables."""

from __future__ import annotations

import json
import random
import re

import cv2
import matplotlib
import numpy as np
import pytest

from eval.aggregate import summarize_groups
from eval.io import append_episode, read_episodes, task_order
from eval.plots import plot_action_shares, plot_cgv_gain
from eval.report import GLOSSARY, format_console, format_markdown
from eval.rollout import finalize
from eval.viewer import MAP_WIDTH, frame_name, map_name, marks_name, safe_name, write_viewer
from situ_gym.scene.index import SceneIndex
from situ_gym.scene.loader import load_scene
from tests.eval.builders import call, episode, turn


@pytest.fixture(scope="module")
def index():
    return SceneIndex(load_scene("supermarket"))


def _episodes(n=12, reward=False):
    eps = []
    for k in range(n):
        follow = call("turn", direction="left", angle=10)
        turns = [turn(t, ranking=["sm_p001"], expected=follow, actual=follow, pose_after=(3.0 + t, 2.0, 90.0),
                      reward={"recrm/total": 0.5} if reward else {}) for t in (1, 2)]
        eps.append(episode(turns, cart=["sm_p001"] if k % 3 else [], subset=k % 4, task_id=f"sm_u01_t{k}",
                           reference_set=["sm_p001"]))
    return eps


def _write(run, eps):
    run.mkdir(parents=True, exist_ok=True)
    for ep in eps:
        append_episode(run / "trajectories.jsonl", ep)


def test_index_has_a_summary_task_order_and_the_judge_named(tmp_path):
    eps = _episodes()
    shuffled = eps[:]
    random.Random(0).shuffle(shuffled)  # as several workers would append them
    _write(tmp_path / "run", shuffled)
    finalize(tmp_path / "run")
    html = (tmp_path / "run" / "index.html").read_text()
    summary = html[html.index("<h2>Summary</h2>"):html.index("Episodes (task order)")]
    assert "<td>12</td>" in summary and "8 (66.7%)" in summary  # episodes, purchases (SR)
    assert "success_cart_added 8, turn_limit 4" in summary
    assert "rule-based</b> judge" in summary and "overall (rule-based judge)" in html
    order = re.findall(r'href="episodes/(sm_u01_t\d+)_r0\.html"', html)
    assert order == [f"sm_u01_t{k}" for k in range(12)]  # t2 before t10, whatever the file order
    assert "--save-frames" in html and "--reward recrm" in html  # why there are no frames or rewards


def test_no_notes_when_frames_and_rewards_are_there(tmp_path, index):
    run = tmp_path / "run"
    eps = _episodes(2, reward=True)
    rel = frame_name(eps[0].episode_id, 1, "assistant")
    (run / rel).parent.mkdir(parents=True)
    cv2.imwrite(str(run / rel), np.zeros((48, 64, 3), np.uint8))
    eps[0] = eps[0].model_copy(update={"frames": [rel]})
    write_viewer(run, eps, {"supermarket": index})
    html = (run / "index.html").read_text()
    assert "--save-frames" not in html and "--reward recrm" not in html


def test_episode_page_shows_map_frames_legend_and_view_timing(tmp_path, index):
    run = tmp_path / "run"
    ep = _episodes(1)[0]
    frames = []
    for role in ("assistant", "user", "map"):
        rel = frame_name(ep.episode_id, 1, role)
        (run / rel).parent.mkdir(parents=True, exist_ok=True)
        cv2.imwrite(str(run / rel), np.full((48, 64, 3), 200, np.uint8))
        frames.append(rel)
    (run / marks_name(frames[0])).write_text(json.dumps([["a", "sm_p001"], ["3", "sm_shelf_03"]]))
    ep = ep.model_copy(update={"frames": frames})
    write_viewer(run, [ep], {"supermarket": index})
    page = (run / "episodes" / f"{safe_name(ep.episode_id)}.html").read_text()
    # thumbnails that open the full-size frame
    src = f"../{frames[0]}"
    assert f'<a href="{src}" target="_blank"><img src="{src}"' in page
    assert "assistant&#x27;s view as turn 1 began (before the shopper acts)" in page
    # the legend names the marks of that frame
    legend = re.search(r"<p class=legend><b>Marks in the assistant's view:</b>(.*?)</p>", page).group(1)
    assert f"<b>a</b> {index.name('sm_p001')} (sm_p001)" in legend
    assert f"<b>3</b> {index.name('sm_shelf_03')} (sm_shelf_03)" in legend
    # the episode map with the path, and the pose of each turn
    assert f'src="../{map_name(ep.episode_id)}"' in page
    assert "x 4.00 m, y 2.00 m, yaw 90°" in page and "(point 1 on the map)" in page
    drawn = cv2.imread(str(run / map_name(ep.episode_id)))
    assert drawn is not None and drawn.shape[1] == MAP_WIDTH
    # the path is drawn in its own colour (BGR 40, 40, 200) where the plain minimap has none
    assert np.count_nonzero(np.all(np.abs(drawn.astype(int) - (40, 40, 200)) < 30, axis=2)) > 20


def _figure_of(monkeypatch, plot, groups, tmp_path):
    """Run a plot function and keep its figure instead of closing it."""
    import matplotlib.pyplot as plt

    kept = []
    monkeypatch.setattr(plt, "close", lambda fig=None: kept.append(fig))
    plot(groups, tmp_path / "p.png")
    return kept[-1]


def test_plots_are_readable(monkeypatch, tmp_path):
    matplotlib.use("Agg", force=True)
    groups = summarize_groups(_episodes())
    groups["SituRec-Supermarket-v0 / test"]["cgv"].update(
        {"delta_1": 12.5, "delta_2": 20.0, "delta_3": 25.0, "delta_4": 25.0, "delta_5": 30.0, "delta_End": 40.0,
         "events": 8})
    fig = _figure_of(monkeypatch, plot_cgv_gain, groups, tmp_path)
    ax = fig.axes[0]
    assert ax.get_ylim()[0] == 0.0  # the gain axis starts at 0
    assert {t.get_text() for t in ax.texts} >= {"12.5", "20.0", "40.0"}  # values on the points
    fig = _figure_of(monkeypatch, plot_action_shares, groups, tmp_path)
    ax = fig.axes[0]
    legend = ax.get_legend()
    assert [t.get_text() for t in legend.get_texts()][:2] == ["Greet", "AskPreference"]
    assert min(t.get_fontsize() for t in legend.get_texts()) >= 9
    labels = {t.get_text() for t in ax.texts if t.get_text()}
    assert "100" in labels  # every turn here is a Navigate: its bar segment says so
    width_px = fig.get_size_inches()[0] * fig.dpi
    assert width_px <= 700  # shown at ~640 px in index.html: no downscaling that shrinks the text


def test_plots_log_nothing_at_info(caplog, tmp_path):
    """A run's log shows the run: matplotlib's notes (e.g. "categorical units") stay out of it."""
    import logging

    from eval.plots import write_plots

    eps = _episodes() + [ep.model_copy(update={"agent": "other"}) for ep in _episodes(4)]
    with caplog.at_level(logging.INFO):
        write_plots(tmp_path, summarize_groups(eps))
    assert [r.getMessage() for r in caplog.records if r.name.startswith("matplotlib")] == []


def test_report_has_a_glossary_of_every_abbreviation(tmp_path):
    text = format_markdown(summarize_groups(_episodes()))
    glossary = text[text.index("## Glossary"):]
    for abbreviation in ("SR", "Turn", "AFR", "LNSR", "R@5", "NDCG@10", "RPR", "RPR\\|Cart", "R-MRR@10",
                         "Catalog %", "ΔCGV", "pass^k"):
        assert abbreviation in glossary, abbreviation
    assert len(GLOSSARY) >= 12


def _pipes(line):
    return len(re.findall(r"(?<!\\)\|", line))


def test_console_tables_escape_pipes_so_columns_line_up():
    eps = [ep.model_copy(update={"agent": "mypkg.agents:Best|Worst"}) for ep in _episodes()]
    text = format_console(summarize_groups(eps))
    for block in text.split("\n\n"):
        rows = [line for line in block.splitlines() if line.startswith("|")]
        if rows:
            assert len({_pipes(r) for r in rows}) == 1, rows
    assert "RPR\\|Cart (%)" in text and "Best\\|Worst" in text


def test_task_order_is_natural_and_by_repeat():
    eps = [episode(task_id=t, repeat=r) for t, r in (("sm_u10_t1", 0), ("sm_u2_t1", 1), ("sm_u2_t1", 0))]
    assert [e.episode_id for e in task_order(eps)] == ["sm_u2_t1#r0", "sm_u2_t1#r1", "sm_u10_t1#r0"]


def test_metrics_json_does_not_depend_on_file_order(tmp_path):
    eps = _episodes()
    for name, order in (("a", eps), ("b", eps[::-1])):
        _write(tmp_path / name, order)
        finalize(tmp_path / name)
    assert (tmp_path / "a" / "metrics.json").read_bytes() == (tmp_path / "b" / "metrics.json").read_bytes()
    assert len(read_episodes(tmp_path / "a" / "trajectories.jsonl")) == 12
