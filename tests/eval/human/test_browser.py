"""The study in a real browser: Debian's Chromium driven by Playwright against a served app."""

import json
import os
from pathlib import Path

import pytest

from eval.human.browser import (
    chromium,
    first_option,
    free_port,
    join,
    play_turn,
    rate,
    serve,
    start,
)
from eval.io import read_episodes
from eval.judge import DIMENSIONS

CHROMIUM = "/usr/bin/chromium"
pytestmark = [
    pytest.mark.slow,
    # CI installs Chromium (.ci/run), so there a missing browser fails instead of skipping.
    pytest.mark.skipif(not Path(CHROMIUM).exists() and not os.environ.get("CI"),
                       reason="needs Debian's chromium (apt-get install chromium)"),
]
ONE_TASK = ("--tasks-per-participant", "1", "--max-turns", "8")


def _dialogue(page):
    return page.locator("#dialogue li").all_text_contents()


def test_play_an_episode_fill_the_questionnaire_and_save_both(tmp_path):
    out = tmp_path / "study"
    scores = dict(zip(DIMENSIONS, [1, 2, 3, 4, 5, 4, 3], strict=True))
    with serve(out, "heuristic", *ONE_TASK) as url, chromium(CHROMIUM) as page:
        join(page, url)
        assert "Budget" in page.text_content("#page-briefing")
        start(page)
        assert page.text_content("#dialogue").startswith("Assistant A:")
        play_turn(page, "Hi, I'm looking for some milk.", "turn", {"direction": "left", "angle": 30})
        lines = _dialogue(page)
        play_turn(page, "Let me put this back.", "drop_item")  # nothing is held
        assert "hands are empty" in page.text_content("#error") and _dialogue(page) == lines
        play_turn(page, "Take me there.", "move_to_fixture",
                  {"fixture": first_option(page, "fixture"), "approach": "nearest"})
        assert page.is_hidden("#error")
        item = first_option(page, "item")
        play_turn(page, "I'll take this one.", "add_to_cart", {"item": item})
        assert page.evaluate("document.body.dataset.page") == "rating"
        rate(page, scores)
        assert page.evaluate("document.body.dataset.page") == "done"
        assert page.external_requests == []  # everything is served locally
    run = out / "runs" / "heuristic"
    (ep,) = read_episodes(run / "trajectories.jsonl")
    assert ep.user == "human" and ep.agent == "heuristic" and ep.termination == "success_cart_added"
    assert [t.user_utterance for t in ep.turns] == ["Hi, I'm looking for some milk.", "Take me there.",
                                                    "I'll take this one."]
    assert [t.user_action.name for t in ep.turns] == ["turn", "move_to_fixture", "add_to_cart"]
    assert ep.cart == [ep.turns[-1].user_action.target_id]
    (line,) = (run / "ratings.jsonl").read_text().splitlines()
    assert json.loads(line) == {"episode_id": ep.episode_id, "ratings": scores}


def test_a_server_restart_mid_conversation_resumes_where_it_stopped(tmp_path):
    out, port = tmp_path / "study", free_port()
    with chromium(CHROMIUM) as page:
        with serve(out, "heuristic", *ONE_TASK, port=port) as url:
            code = join(page, url)
            start(page)
            play_turn(page, "Hello, I need milk.", "turn", {"direction": "right", "angle": 45})
            before = _dialogue(page)
            view = page.get_attribute("#view", "src")
        with serve(out, "heuristic", *ONE_TASK, port=port) as url:  # a new process, same files
            page.reload()
            page.wait_for_selector("body[data-page='chat']")
            assert _dialogue(page) == before and page.get_attribute("#view", "src") == view
            assert page.text_content("#resume-code") == code and page.text_content("#turn") == "2"
            play_turn(page, "No thanks, I'll leave it.", "idle", gave_up=True)
            rate(page, {d: 3 for d in DIMENSIONS})
    (ep,) = read_episodes(out / "runs" / "heuristic" / "trajectories.jsonl")
    assert [t.user_utterance for t in ep.turns] == ["Hello, I need milk.", "No thanks, I'll leave it."]
    assert ep.termination == "moderator_end"
