"""The paper's per-environment figures (Fig. 3 dialogue ratings, Fig. 10 suggested actions
within Navigate responses, Fig. 11 termination reasons): written, sized to be read, drawn
from the right figures."""

from __future__ import annotations

import cv2
import matplotlib
import pytest

from eval.aggregate import summarize_groups
from eval.judge import DIMENSIONS
from eval.plots import plot_dialogue_ratings, plot_navigate_actions, plot_terminations, write_plots
from tests.eval.builders import call, episode, turn


def _episodes():
    """Two agents in the Supermarket, one in Home Furnishings. Supermarket heuristic: 3
    Navigate events, move_to_fixture 2 (1 followed), turn 1 (followed)."""
    fixture, left = call("move_to_fixture", "fx1", fixture="7"), call("turn", direction="left")
    area = call("move_to_area", "ar1", area="1a")
    heur = [episode([turn(1, expected=fixture, actual=fixture), turn(2, expected=fixture, actual=left),
                     turn(3, expected=left, actual=left)], task_id="t0", agent="heuristic")]
    rand = [episode([turn(1, expected=left, actual=None)], task_id=f"t{k}", agent="random",
                    termination="moderator_end") for k in range(3)]
    home = [episode([turn(1, expected=area, actual=area)], store="home_furnishings", task_id="h1", agent="heuristic",
                    termination="motion_stall")]
    return heur + rand + home


def _ratings(eps):
    return [{d: 1.0 + (i % 4) for d in DIMENSIONS} | {"judge": "rule-based"} for i, _ in enumerate(eps)]


def _figure(monkeypatch, plot, groups, tmp_path):
    """The figure a plot function drew, kept open."""
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    kept = []
    monkeypatch.setattr(plt, "close", lambda fig=None: kept.append(fig))
    plot(groups, tmp_path / "p.png")
    return kept[-1]


def test_write_plots_writes_every_figure_at_a_readable_size(tmp_path):
    eps = _episodes()
    paths = write_plots(tmp_path, summarize_groups(eps, ratings=_ratings(eps)))
    names = {p.name for p in paths}
    assert names == {"sr_by_turn.png", "cgv_gain.png", "action_shares.png", "navigate_actions.png",
                     "dialogue_ratings.png", "terminations.png"}
    for p in paths:
        img = cv2.imread(str(p))
        assert img is not None, p.name
        h, w = img.shape[:2]
        assert 400 <= w <= 700, (p.name, w)  # the viewer shows ~640 px: no downscaling of the text
        assert h >= 250, (p.name, h)  # two panels, or one, each with room for its rows


def test_no_ratings_no_ratings_figure_and_an_old_one_is_removed(tmp_path):
    (tmp_path / "dialogue_ratings.png").write_bytes(b"old")
    paths = write_plots(tmp_path, summarize_groups(_episodes()))
    assert "dialogue_ratings.png" not in {p.name for p in paths}
    assert not (tmp_path / "dialogue_ratings.png").exists()
    assert plot_dialogue_ratings(summarize_groups(_episodes()), tmp_path / "x.png") is None


def test_navigate_bubbles_area_share_colour_same_rate_grey_zero_use(monkeypatch, tmp_path):
    fig = _figure(monkeypatch, plot_navigate_actions, summarize_groups(_episodes()), tmp_path)
    panels = [ax for ax in fig.axes if ax.get_title()]
    assert [ax.get_title() for ax in panels] == ["SituRec-HomeFurnishings-v0", "SituRec-Supermarket-v0"]
    market = panels[1]
    assert [t.get_text() for t in market.get_yticklabels()] == ["heuristic", "random"]
    ticks = [t.get_text() for t in market.get_xticklabels()]
    assert "move_to_fixture" in ticks and "move_to_store" not in ticks
    bubbles = {}  # (x, y) -> (area, rgba) of the used actions; grey dots for the others
    grey = 0
    for coll in market.collections:
        (x, y), = coll.get_offsets()
        colour = tuple(coll.get_facecolor()[0])
        if colour[:3] == pytest.approx((0.75, 0.75, 0.75)):
            grey += 1
        else:
            bubbles[(int(x), int(y))] = (coll.get_sizes()[0], colour)
    fx, tu = ticks.index("move_to_fixture"), ticks.index("turn")
    assert set(bubbles) == {(fx, 0), (tu, 0), (tu, 1)}
    assert grey == 2 * len(ticks) - 3
    # area proportional to share: move_to_fixture 2 of 3 events, turn 1 of 3
    assert bubbles[(fx, 0)][0] == pytest.approx(2 * bubbles[(tu, 0)][0])
    cmap = matplotlib.colormaps["viridis"]
    assert bubbles[(fx, 0)][1] == pytest.approx(cmap(0.5))  # followed 1 of 2
    assert bubbles[(tu, 0)][1] == pytest.approx(cmap(1.0))  # followed 1 of 1
    assert bubbles[(tu, 1)][1] == pytest.approx(cmap(0.0))  # random: never followed
    assert {t.get_text() for t in market.texts} >= {"67%", "33%", "n=3"}
    bar = [ax for ax in fig.axes if ax.get_ylabel() == "same-action rate (%)"]
    assert len(bar) == 1  # one colour bar for both panels


def test_termination_bars_share_of_episodes_labelled_with_counts(monkeypatch, tmp_path):
    fig = _figure(monkeypatch, plot_terminations, summarize_groups(_episodes()), tmp_path)
    panels = [ax for ax in fig.axes if ax.get_title()]
    assert [ax.get_title() for ax in panels] == ["SituRec-HomeFurnishings-v0", "SituRec-Supermarket-v0"]
    market = panels[1]
    assert [t.get_text() for t in market.get_yticklabels()] == ["heuristic (n=1)", "random (n=3)"]
    widths = {}  # (reason, row) -> % of the row's episodes
    for bars in market.containers:
        for p in bars.patches:
            widths[(bars.get_label(), round(p.get_y() + p.get_height() / 2))] = p.get_width()
    assert widths[("Turn limit", 0)] == pytest.approx(100.0)
    assert widths[("Moderator end", 1)] == pytest.approx(100.0)
    assert {t.get_text() for t in market.texts} >= {"1", "3"}  # counts on the segments
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend == ["Turn limit", "Moderator end", "Motion stall"]  # App. B.3's order, names as in Fig. 11


def test_dialogue_ratings_bars_per_agent_over_the_seven_dimensions(monkeypatch, tmp_path):
    eps = _episodes()
    groups = summarize_groups(eps, ratings=_ratings(eps))
    fig = _figure(monkeypatch, plot_dialogue_ratings, groups, tmp_path)
    panels = [ax for ax in fig.axes if ax.get_title()]
    assert len(panels) == 2 and panels[1].get_ylim() == (1.0, 5.3)
    market = panels[1]
    assert len(market.get_xticklabels()) == len(DIMENSIONS)
    heights = {c.get_label(): [p.get_height() for p in c.patches] for c in market.containers}
    # ratings by position: Supermarket heuristic is episode 0 (1.0), random episodes 1-3 (2, 3, 4)
    assert heights["heuristic"] == pytest.approx([1.0] * 7)
    assert heights["random"] == pytest.approx([3.0] * 7)
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["heuristic", "random"]
