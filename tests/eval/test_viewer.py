"""The viewer tells a reader what happened (issue 28): why each episode ended, the recommendation
attempts, the goal in words, the purchase against the reference set, the reward per turn and in
total, a map whose labels never overlap, and an index that sorts and filters."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import cv2
import pytest

from eval.viewer import (
    MAP_WIDTH,
    PURCHASE_CLASSES,
    attempt_turns,
    end_sentence,
    episode_page,
    episode_reward,
    map_name,
    plan_episode_map,
    purchase_kind,
    reward_label,
    safe_name,
    write_viewer,
)
from situ_gym.records import TERMINATION_REASONS, ExecutionResult
from situ_gym.scene.index import SceneIndex
from situ_gym.scene.loader import load_scene, load_task_bank
from tests.eval.builders import call, episode, turn

CHROMIUM = "/usr/bin/chromium"


@pytest.fixture(scope="module")
def market():
    return SceneIndex(load_scene("supermarket"))


@pytest.fixture(scope="module")
def home():
    return SceneIndex(load_scene("home_furnishings"))


def _turns(n, attempts=(), stall=(), reward=None, last_words="I'll leave it."):
    """``n`` turns; the turns in ``attempts`` each put one product forward, those in
    ``stall`` are forward moves that went nowhere."""
    out = []
    for t in range(1, n + 1):
        moved = t in stall
        out.append(turn(
            t, put_forward=["sm_p001"] if t in attempts else [], recommendation_attempts=int(t in attempts),
            actual=call("move_forward", distance=1.0) if moved else call("turn", direction="left", angle=10),
            user_utterance=last_words if t == n else f"reply {t}", pose_after=(3.0 + t, 2.0, 90.0),
            reward={"recrm/instruction": 1.0, "recrm/total": reward} if reward is not None else {},
        ).model_copy(update={"result": ExecutionResult(ok=True, message="ok", displacement=0.01 if moved else 0.0,
                                                       translational=moved)}))
    return out


def _ending(reason):
    """One episode per termination reason, with attempts on turns 3, 5 (and 9)."""
    if reason == "success_cart_added":
        return episode(_turns(6, attempts=(3, 5)), cart=["sm_p001"], reference_set=["sm_p001"],
                       termination=reason)
    if reason == "recommendation_exhausted":
        return episode(_turns(9, attempts=(3, 5, 9)), termination=reason)
    if reason == "motion_stall":
        return episode(_turns(8, attempts=(3,), stall=(5, 7, 8)), termination=reason)
    if reason == "error":
        ep = episode(_turns(4, attempts=(3,)), termination=reason)
        return ep.model_copy(update={"error": "Traceback ...", "error_cause": "crash"})
    return episode(_turns(20 if reason == "turn_limit" else 7, attempts=(3, 5)), termination=reason)


EXPECTED = {
    "success_cart_added": "Ended on turn 6: the shopper put {p} in the cart (a reference item) after 2 "
                          "recommendation attempts (turns 3, 5).",
    "recommendation_exhausted": "Ended on turn 9: the third recommendation attempt went unbought (turns 3, 5, 9).",
    "motion_stall": "Ended on turn 8: the shopper's last 3 moves went nowhere (turns 5, 7, 8), each under 5 cm, "
                    "after 1 recommendation attempt (turn 3).",
    "error": "Ended on turn 4: the episode crashed (crash) after 1 recommendation attempt (turn 3); the traceback "
             "is below.",
    "turn_limit": "Ended on turn 20: the 20-turn limit was reached with nothing bought, after 2 recommendation "
                  "attempts (turns 3, 5).",
    "moderator_end": "Ended on turn 7: the moderator ended the conversation with nothing bought, after 2 "
                     "recommendation attempts (turns 3, 5); the shopper's last words: \u201cI'll leave it.\u201d",
}


@pytest.mark.parametrize("reason", TERMINATION_REASONS)
def test_the_page_says_why_the_episode_ended(reason, market):
    ep = _ending(reason)
    expected = EXPECTED[reason].format(p=f"{market.name('sm_p001')} (sm_p001)")
    assert end_sentence(ep, market) == expected
    page = episode_page(ep, market)
    assert re.search(r"<p class=end>(.*?)</p>", page).group(1) == expected.replace("'", "&#x27;")


def test_a_purchase_of_the_target_says_so_and_an_unknown_reason_is_shown_as_it_is(market):
    ep = episode(_turns(2), cart=["sm_p001"], reference_set=["sm_p001"])
    ep = ep.model_copy(update={"target_id": "sm_p001"})
    assert "(a reference item, the target)" in end_sentence(ep, market)
    assert end_sentence(episode(termination="odd_reason")) == "Ended before the first turn: odd_reason."


def test_recommendation_attempts_are_marked_with_the_products_put_forward(market):
    ep = _ending("recommendation_exhausted")
    assert [t.turn for t in attempt_turns(ep)] == [3, 5, 9]
    page = episode_page(ep, market)
    marked = re.findall(r'<div class="turn attempt" id="t(\d+)">', page)
    assert marked == ["3", "5", "9"]
    assert len(re.findall(r'<div class="turn" id="t\d+">', page)) == 6
    assert "recommendation attempt 3 of 3</span>" in page  # the heading badge of turn 9
    assert f"<b>1 of 3</b>: puts forward {market.name('sm_p001')} (sm_p001)" in page
    glance = page[page.index("<table class=glance>"):]
    glance = glance[:glance.index("</table>")]
    rows = re.findall(r'<tr class="(attempt|plain)">.*?#t(\d+)"', glance)
    assert [n for kind, n in rows if kind == "attempt"] == ["3", "5", "9"]
    assert "<b>attempt 2 of 3</b>" in glance


@pytest.mark.parametrize(("cart", "kind"), [(["sm_p001"], "reference"), (["sm_p002"], "other"), ([], "none")])
def test_the_purchase_is_marked_by_whether_it_is_in_the_reference_set(cart, kind, market, tmp_path):
    ep = episode(_turns(2), cart=cart, reference_set=["sm_p001", "sm_p003"])
    assert purchase_kind(ep) == kind
    page = episode_page(ep, market)
    assert f'<div class="outcome {PURCHASE_CLASSES[kind]}" data-purchase="{kind}">' in page
    assert PURCHASE_CLASSES == {"reference": "buy-reference", "other": "buy-other", "none": "buy-none"}
    if kind == "other":
        assert "(not in the reference set)" in end_sentence(ep, market)
    write_viewer(tmp_path, [ep], {"supermarket": market}, tasks={})
    index = (tmp_path / "index.html").read_text()
    assert f'<tr data-outcome="{kind}"' in index and f"<td class={PURCHASE_CLASSES[kind]} " in index


def test_rewards_have_readable_names_and_the_episode_total_is_shown(market, tmp_path):
    eps = [episode(_turns(3, reward=0.25), task_id="sm_u01_t1"), episode(_turns(2), task_id="sm_u01_t2")]
    assert episode_reward(eps[0]) == pytest.approx(0.75) and episode_reward(eps[1]) is None
    assert reward_label("recrm/instruction") == "instruction gate (C_inst)"
    assert reward_label("recrm/total") == "turn reward (R_total)" and reward_label("x/y") == "x/y"
    page = episode_page(eps[0], market)
    assert '<th title="recrm/instruction">instruction gate (C_inst)</th>' in page
    assert "episode reward <b>0.750</b>" in page
    write_viewer(tmp_path, eps, {"supermarket": market}, tasks={})
    index = (tmp_path / "index.html").read_text()
    assert '<td data-v="0.750000">0.750</td>' in index and '<td data-v="">-</td>' in index
    assert "<th>mean episode reward</th>" in index and "<td>0.750</td>" in index  # summary: the mean over rewarded


def test_the_goal_and_budget_are_in_words(market):
    task = next(t for t in load_task_bank("supermarket").tasks if t.id == "sm_u01_t1")
    ep = episode(_turns(2), task_id=task.id, reference_set=task.reference_set, cart=[task.target_product_id])
    ep = ep.model_copy(update={"target_id": task.target_product_id, "budget": task.budget})
    page = episode_page(ep, market, task=task)
    goal = page[page.index("<div class=goal>"):]
    assert ("Wants <b>yogurt</b>: vanilla (flavour); not strawberry (flavour); at most <b>$6.00</b> (strict "
            "budget); for breakfast preparation.") in goal
    target = f"{market.name(task.target_product_id)} ({task.target_product_id})"
    assert f"<b>Target:</b> {target} <i>(target, bought)</i>" in goal
    for eid in task.reference_set:
        assert market.name(eid) in goal
    # without the task record the budget still reads as money
    assert "Budget: at most <b>$20.00</b>" in episode_page(episode(_turns(1)), market)


def _wander(store, n=18, stand=(4, 5, 6)):
    """Poses along the hall's middle with the shopper standing still on the turns in ``stand``
    (the pose of the turn before them) and going back to the start spot at the end."""
    scene = load_scene(store)
    x0, y0, x1, y1 = scene.layout.bounds
    turns, pose = [], (scene.layout.start.x, scene.layout.start.y, 0.0)
    for t in range(1, n + 1):
        if t not in stand:
            f = t / n
            pose = (x0 + f * (x1 - x0), y0 + (0.3 + 0.4 * (t % 3) / 2) * (y1 - y0), 30.0 * t)
        if t == n:
            pose = (scene.layout.start.x, scene.layout.start.y, 90.0)
        turns.append(turn(t, pose_after=pose))
    return episode(turns, store=store)


@pytest.mark.parametrize("store", ["supermarket", "home_furnishings"])
def test_no_two_map_labels_overlap_and_each_spot_has_one_label(store, market, home, tmp_path):
    index = market if store == "supermarket" else home
    ep = _wander(store)
    plan = plan_episode_map(ep, index)
    assert plan.width == MAP_WIDTH
    for lab in plan.labels:
        x0, y0, x1, y1 = lab.box
        assert 0 <= x0 < x1 <= plan.width and 0 <= y0 < y1 <= plan.height, lab
    for a, b in itertools.combinations(plan.labels, 2):
        overlap = a.box[0] < b.box[2] and b.box[0] < a.box[2] and a.box[1] < b.box[3] and b.box[1] < a.box[3]
        assert not overlap, (a, b)
    places = len(index.scene.fixtures) + len(index.scene.stores) + len(index.scene.areas)
    assert len([lab for lab in plan.labels if lab.kind != "pose"]) == places  # every place keeps its label
    poses = [lab.text for lab in plan.labels if lab.kind == "pose"]
    assert len(poses) == len(plan.spots)
    assert "4-6" not in poses and "3-6" in poses  # turns 4-6 stood where turn 3 had gone: one label
    assert poses[0] == "S, 18"  # back at the start at the end: the start's label names it
    written = write_viewer(tmp_path, [ep], {store: index}, tasks={}).parent / map_name(ep.episode_id)
    assert cv2.imread(str(written)).shape[:2] == (plan.height, plan.width)


def test_the_index_carries_the_filters_data_and_a_script_free_of_run_text(market, tmp_path):
    eps = [episode(_turns(k + 2), cart=["sm_p001"] if k % 2 else [], reference_set=["sm_p001"], subset=k % 3,
                   task_id=f"sm_u01_t{k}", agent="a<b>" if k == 3 else "heuristic") for k in range(6)]
    write_viewer(tmp_path, eps, {"supermarket": market}, tasks={})
    html = (tmp_path / "index.html").read_text()
    rows = re.findall(r'<tr data-outcome="(\w+)" data-termination="(\w+)" data-subset="(\d)" '
                      r'data-agent="([^"]*)" data-turns="(\d+)">', html)
    assert len(rows) == 6 and ("reference", "success_cart_added", "0", "a&lt;b&gt;", "5") in rows
    assert '<option value="a&lt;b&gt;">a&lt;b&gt;</option>' in html
    for key in ("outcome", "termination", "subset", "agent"):
        assert f'<select id="f-{key}">' in html
    assert "id=f-tmin" in html and "id=f-tmax" in html
    assert not re.search(r"<[^>]*\son\w+=", html)  # handlers are attached by the script, never inline


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="needs Debian's chromium (apt-get install chromium)")
def test_the_index_sorts_and_filters_in_a_browser(market, tmp_path):
    from eval.human.browser import chromium

    eps = [episode(_turns(t), cart=["sm_p001"] if t % 2 else [], reference_set=["sm_p001"], subset=t % 2,
                   task_id=f"sm_u01_t{i}", agent="b" if t > 6 else "a") for i, t in enumerate((5, 2, 9, 4, 7))]
    index = write_viewer(tmp_path, eps, {"supermarket": market}, tasks={})
    with chromium(CHROMIUM) as page:
        page.route("file://**", lambda route: route.continue_())
        page.goto(index.as_uri())

        def shown(col=4):
            return [r.locator("td").nth(col).text_content() for r in page.locator("#episodes tbody tr").all()
                    if r.is_visible()]

        assert shown() == ["5", "2", "4", "9", "7"]  # task order (agent a's, then b's)
        page.click("#episodes th:has-text('turns')")
        assert shown() == ["2", "4", "5", "7", "9"]
        page.click("#episodes th:has-text('turns')")
        assert shown() == ["9", "7", "5", "4", "2"]
        page.select_option("#f-outcome", "reference")
        assert shown() == ["9", "7", "5"]
        page.select_option("#f-agent", "b")
        assert shown() == ["9", "7"]
        page.fill("#f-tmax", "8")
        assert shown() == ["7"] and page.text_content("#shown") == "1 of 5 episodes shown"
        page.select_option("#f-agent", "")
        page.fill("#f-tmin", "6")
        page.select_option("#f-outcome", "")
        assert shown() == ["7"]
        page.fill("#f-tmin", "")
        page.fill("#f-tmax", "")
        page.click("#episodes th:has-text('episode reward')")  # no rewards: ties keep the task order
        assert shown(0) == [f"sm_u01_t{i}#r0" for i in (0, 1, 3, 2, 4)]
        assert page.external_requests == []


def test_episode_pages_link_their_turns_on_the_page_itself(market):
    ep = _ending("turn_limit")
    page = episode_page(ep, market)
    assert f'<a href="{safe_name(ep.episode_id)}.html#t3">3</a>' in page and 'id="t3"' in page


def test_a_crash_before_the_first_turn_still_reads(market):
    ep = episode(termination="error").model_copy(update={"error": "boom", "error_cause": "crash"})
    assert end_sentence(ep) == ("Ended before the first turn: the episode crashed (crash) after no recommendation "
                                "attempt; the traceback is below.")
