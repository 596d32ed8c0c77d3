"""The study in a real browser: Debian's Chromium driven by Playwright against a served app."""

import json
import os
from pathlib import Path

import pytest

from eval.human.browser import (
    ask_to_buy,
    chromium,
    confirm_purchase,
    first_option,
    free_port,
    join,
    named_fixture,
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


def _items(page):
    return page.evaluate("window.currentState().handles.item")


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
        assert page.text_content("#error") == "your hands are empty: there is nothing to put back"
        assert _dialogue(page) == lines
        play_turn(page, "", "move_to_fixture", {"fixture": first_option(page, "fixture"), "approach": "nearest"})
        assert page.is_hidden("#error")  # a silent move needs no words
        assert not any(line.startswith("You:") for line in _dialogue(page)[len(lines):])
        # Add to cart: nothing is chosen for the participant, the product is named, and asked.
        page.select_option("#tool", "add_to_cart")
        assert page.locator("#arg-item").input_value() == ""
        assert page.locator("#arg-item option").first.text_content() == "choose a product..."
        page.click("#send")
        assert page.text_content("#error") == "please choose which product to put in your cart"
        items = _items(page)
        assert len(items) >= 2
        chosen = items[1]  # not the first one listed
        text = ask_to_buy(page, chosen["handle"], "I'll take this one.")
        assert text == f"Put {chosen['name']} (${chosen['price']:.2f}) in your cart? This ends the conversation."
        page.click("#confirm-no")  # changed their mind: nothing was sent
        assert page.is_hidden("#confirm") and page.evaluate("document.body.dataset.page") == "chat"
        assert page.evaluate("window.currentState().cart") == []
        ask_to_buy(page, chosen["handle"], "I'll take this one.")
        confirm_purchase(page)
        assert page.evaluate("document.body.dataset.page") == "rating"
        # the questionnaire shows what happened above the questions
        assert page.text_content("#outcome-bought") == f"You bought {chosen['name']}."
        assert "ends the conversation" in page.text_content("#outcome-reason")
        transcript = page.locator("#transcript li").all_text_contents()
        assert transcript[0].startswith("Assistant A:") and "You: I'll take this one." in transcript
        box = page.locator("#page-rating .outcome").bounding_box()
        assert box["y"] < page.locator("#questions").bounding_box()["y"]
        rate(page, scores)
        assert page.evaluate("document.body.dataset.page") == "done"
        assert page.external_requests == []  # everything is served locally
    run = out / "runs" / "heuristic"
    (ep,) = read_episodes(run / "trajectories.jsonl")
    assert ep.user == "human" and ep.agent == "heuristic" and ep.termination == "success_cart_added"
    assert [t.user_utterance for t in ep.turns] == ["Hi, I'm looking for some milk.", "", "I'll take this one."]
    assert [t.user_action.name for t in ep.turns] == ["turn", "move_to_fixture", "add_to_cart"]
    assert ep.cart == [ep.turns[-1].user_action.target_id]
    assert ep.turns[-1].user_action.arguments == {"item": chosen["handle"]}
    (line,) = (run / "ratings.jsonl").read_text().splitlines()
    assert json.loads(line) == {"episode_id": ep.episode_id, "ratings": scores}


def test_the_assistants_places_read_as_the_map_and_products_in_words(tmp_path):
    with serve(tmp_path / "study", "heuristic", *ONE_TASK) as url, chromium(CHROMIUM) as page:
        join(page, url)
        start(page)
        for said in page.evaluate("window.currentState().briefing.details"):
            play_turn(page, said, "idle")
        fixture = named_fixture(page)
        assert fixture is not None, _dialogue(page)
        key = dict(line.split(" ", 1) for line in page.locator("#map-key li").all_text_contents())
        said = [line for line in _dialogue(page) if line.startswith("Assistant A:")][-1]
        name = key[fixture].partition(":")[0]  # "Shelf 9" of "Shelf 9: soda, ..."
        assert f"{name} [{fixture}]" in said  # the words and the map's letter agree
        play_turn(page, "", "move_to_fixture", {"fixture": fixture, "approach": "nearest"})
        play_turn(page, "Let me see.", "pick_up_item", {"item": first_option(page, "item")})
        panel = page.text_content("#inspected")
        assert panel and "[" not in panel and not any(f"{k}:" in panel.replace(": ", " ") for k in ("diet", "allergen"))


def test_a_failing_assistant_apologises_and_the_participant_goes_on(tmp_path):
    out = tmp_path / "study"
    with serve(out, "tests.eval.human.conftest:BrokenAssistant,heuristic", *ONE_TASK) as url, \
            chromium(CHROMIUM) as page:
        code = join(page, url)
        broken_seen = False
        for _ in range(2):
            start(page)
            play_turn(page, "Hi, I need milk.", "turn", {"direction": "left", "angle": 30})
            state = page.evaluate("document.body.dataset.page")
            if state in ("briefing", "done"):  # the broken one: ended with an apology
                broken_seen = True
                notice = page.text_content(f"#notice-{state}")
                assert notice.startswith("We are sorry: Assistant ") and "stopped working" in notice
                assert "Traceback" not in page.content() and "ConnectionError" not in page.content()
                page.reload()  # the resume code keeps working
                page.wait_for_selector(f"body[data-page='{state}']")
                assert page.text_content("#resume-code") == code
            else:
                play_turn(page, "No thanks.", "idle", gave_up=True)
                rate(page, {d: 3 for d in DIMENSIONS})
        assert broken_seen and page.evaluate("document.body.dataset.page") == "done"
        page.goto(url.admin)
        page.wait_for_selector("body[data-loaded='yes']")
        rows = {r.split("\t")[0]: r for r in page.locator("#assistants tbody tr").evaluate_all(
            "rows => rows.map((r) => [...r.cells].map((c) => c.textContent).join('\\t'))")}
        assert rows["heuristic"].split("\t")[1:] == ["1", "0", "1", "0", "1"]
        assert rows["tests.eval.human.conftest:BrokenAssistant"].split("\t")[1:] == ["1", "0", "0", "1", "0"]
        people = page.locator("#participants tbody tr").all_text_contents()
        assert len(people) == 1 and people[0].startswith("P001done")
        page.goto(url + "/admin?token=wrong")
        assert "needs the token" in page.text_content("body")
    (ep,) = read_episodes(out / "runs" / "tests.eval.human.conftest_BrokenAssistant" / "trajectories.jsonl")
    assert ep.termination == "error" and "endpoint went away" in ep.error
    log = url.log.read_text()
    for event in ("conversation 1/2 started", "conversation 1/2 turn 1", "conversation 2/2 ended",
                  "ended: error after 1 turns", "questionnaire saved"):
        assert event in log, event


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
