"""App. C.1 metrics on hand-built records; every expected value is worked out in a comment."""

from __future__ import annotations

import math

import pytest

from eval import metrics as M
from tests.eval.builders import call, episode, turn

# ------------------------------------------------------------------ SR, Turn, SR(t)


def test_success_turns_and_sr_by_turn():
    eps = [
        episode([turn(1), turn(2), turn(3)], cart=["a"]),  # C=1, T=3
        episode([turn(i) for i in range(1, 6)]),  # C=0, T=5
        episode([turn(1)], cart=["b"]),  # C=1, T=1
        episode([turn(1), turn(1), turn(2)]),  # duplicate record of turn 1: T = |{1, 2}| = 2
    ]
    assert [M.success(e) for e in eps] == [1, 0, 1, 0]
    assert [M.turn_count(e) for e in eps] == [3, 5, 1, 2]
    sr = M.sr_by_turn(eps)
    assert len(sr) == 20
    # t=1: only the T=1 success -> 100/4 = 25; t=2: same; t=3: both successes -> 50; stays.
    assert sr[0] == pytest.approx(25.0)
    assert sr[1] == pytest.approx(25.0)
    assert sr[2] == pytest.approx(50.0)
    assert sr[19] == pytest.approx(50.0)


# ------------------------------------------------------------------ AFR


def test_afr_excludes_missing_and_illegal_expected_and_scores_absent_actual_zero():
    ep = episode([
        turn(1, expected=call("move_to_fixture", "fx1", fixture="3"),
             actual=call("move_to_fixture", "fx2", fixture="4")),  # same tool, other target: 1
        turn(2, expected=call("turn", direction="left", angle=30),
             actual=call("side_step", direction="left", distance="short")),  # different tool: 0
        turn(3, expected=call("move_to_store", "st1", store="2"),
             actual=call("move_to_store")),  # illegal in the Supermarket: excluded
        turn(4, expected=None, actual=call("idle")),  # missing expected: excluded
        turn(5, expected=call("pick_up_item", "a", item="a"), actual=None),  # absent actual: 0
        turn(6, expected=call("fly_away"), actual=call("fly_away")),  # not a tool: excluded
    ])
    # V_e = {1, 2, 5}; matches = {1} -> AFR_e = 1/3
    assert M.afr_scores(ep) == [1, 0, 0]
    assert M.episode_afr(ep) == pytest.approx(1 / 3)
    # An episode without an eligible event has no AFR (left out of the average).
    assert M.episode_afr(episode([turn(1, expected=call("check_item"))])) is None


def test_afr_uses_the_home_legal_set():
    ep = episode([
        turn(1, expected=call("move_to_store", "st1"), actual=call("move_to_store", "st2")),
        turn(2, expected=call("pick_up_item", "p1"), actual=call("pick_up_item", "p1")),
    ], store="home_furnishings")
    # pick_up_item is not legal in Home Furnishings -> V_e = {1}, matched -> 1.0
    assert M.afr_scores(ep) == [1]


# ------------------------------------------------------------------ LNSR


def test_lnsr_supermarket_rules():
    ep = episode([
        turn(1, expected=call("turn", direction="left", angle=30),
             actual=call("turn", direction="left", angle=90)),  # direction matches, angle ignored: 1
        turn(2, expected=call("turn_and_move", direction="right", angle=10, distance="short"),
             actual=call("turn_and_move", direction="left", angle=10, distance="short")),  # 0
        turn(3, expected=call("side_step", direction="left", distance="short"),
             actual=call("turn", direction="left", angle=10)),  # tool differs: 0
        turn(4, expected=call("move_to_fixture", "fx1", fixture="3", approach="front"),
             actual=call("move_to_fixture", "fx1", fixture="C", approach="back")),  # identity only: 1
        turn(5, expected=call("move_to_fixture", None, fixture="99"),
             actual=call("move_to_fixture", "fx1")),  # unavailable expected target: excluded
        turn(6, expected=call("turn", angle=30), actual=call("turn", direction="left")),  # no dir: excluded
        turn(7, expected=call("move_forward", distance="long"),
             actual=call("move_forward", distance="long")),  # not an LNSR tool: excluded
        turn(8, expected=call("look_up_down", direction="up", angle=10), actual=None),  # absent: 0
        turn(9, expected=call("look_up_down", direction="left", angle=10),
             actual=call("look_up_down", direction="left")),  # impossible direction: excluded
        turn(10, expected=call("move_to_store", "st1"), actual=call("move_to_store", "st1")),  # illegal here
    ])
    # D_e = {1, 2, 3, 4, 8}; matches {1, 4} -> 2/5
    assert M.lnsr_scores(ep) == [1, 0, 0, 1, 0]
    assert M.episode_lnsr(ep) == pytest.approx(0.4)


def test_lnsr_home_store_and_area():
    ep = episode([
        turn(1, expected=call("move_to_store", "st1", store="2", approach="inside_doorway"),
             actual=call("move_to_store", "st1", store="B", approach="outside_doorway")),  # approach: 0
        turn(2, expected=call("move_to_store", "st1", store="2"),
             actual=call("move_to_store", "st1", store="B", approach="outside_doorway")),  # no exp approach: 1
        turn(3, expected=call("move_to_area", "ar1", area="2a"),
             actual=call("move_to_area", "ar2", area="A2")),  # other area: 0
        turn(4, expected=call("move_to_area", "ar1", area="2a"),
             actual=call("move_to_area", "ar1", area="A1")),  # 1
        turn(5, expected=call("move_to_area", None, area="9z"), actual=call("move_to_area", "ar1")),  # excl.
        turn(6, expected=call("move_to_fixture", "fx1"), actual=call("move_to_fixture", "fx1")),  # illegal
    ], store="home_furnishings")
    # D_e = {1, 2, 3, 4} -> 2/4
    assert M.lnsr_scores(ep) == [0, 1, 0, 1]
    assert M.episode_lnsr(ep) == pytest.approx(0.5)


# ------------------------------------------------------------------ R@5, NDCG@10


def test_recall_and_ndcg_single_item_with_duplicates():
    # P = {a}; ranking b, a, a, c: a first at rank 2 -> q = 1, z = (1/log2 3) / 1
    assert M.recall_at_5(["b", "a", "a", "c"], {"a"}) == 1.0
    assert M.ndcg_at_10(["b", "a", "a", "c"], {"a"}) == pytest.approx(1 / math.log2(3))
    # Duplicates do not shift positions: b, b, a -> a is at rank 3 (not 2): z = 1/log2(4) = 0.5
    assert M.ndcg_at_10(["b", "b", "a"], {"a"}) == pytest.approx(0.5)
    # Rank 6 is outside the top 5 but inside the top 10: q = 0, z = 1/log2(7)
    ranking = ["x1", "x2", "x3", "x4", "x5", "a"]
    assert M.recall_at_5(ranking, {"a"}) == 0.0
    assert M.ndcg_at_10(ranking, {"a"}) == pytest.approx(1 / math.log2(7))
    # Rank 11 earns nothing.
    assert M.ndcg_at_10([f"x{i}" for i in range(10)] + ["a"], {"a"}) == 0.0
    # Empty list scores 0.
    assert M.recall_at_5([], {"a"}) == 0.0 and M.ndcg_at_10([], {"a"}) == 0.0


def test_ndcg_ideal_uses_min_10_and_cart_size():
    # P = {a, c}; ranking a, x, c: DCG = 1 + 1/log2(4) = 1.5; IDCG = 1 + 1/log2(3) = 1.6309
    z = M.ndcg_at_10(["a", "x", "c"], {"a", "c"})
    assert z == pytest.approx(1.5 / (1 + 1 / math.log2(3)))
    assert z == pytest.approx(0.91972, abs=1e-5)
    # q = 2/2; with only a in the top five: q = 1/2
    assert M.recall_at_5(["a", "x", "c"], {"a", "c"}) == 1.0
    assert M.recall_at_5(["a", "x1", "x2", "x3", "x4", "c"], {"a", "c"}) == 0.5


def test_episode_ranking_scores_and_saved_lists():
    ep = episode([
        turn(1, ranking=["a", "b"]),  # q = 1, z = 1
        turn(2, ranking=[]),  # saved, empty -> 0
        turn(3, ranking=None),  # no "ranking" key -> not a saved list
        turn(4, raw="not json at all"),  # invalid output without a ranking -> not saved
    ], cart=["a"])
    assert M.saved_rankings(ep) == [["a", "b"], []]
    q, z = M.ranking_scores(ep)
    assert q == pytest.approx(0.5) and z == pytest.approx(0.5)  # (1 + 0) / M_e with M_e = 2
    # Empty cart -> 0 whatever the rankings; no saved list -> 0.
    assert M.ranking_scores(episode([turn(1, ranking=["a"])])) == (0.0, 0.0)
    assert M.ranking_scores(episode([turn(1)], cart=["a"])) == (0.0, 0.0)


# ------------------------------------------------------------------ RPR, R-MRR, Catalog


def test_reference_purchase_rmrr_and_catalog(market_index):
    ref = ["a", "c"]
    bought_ref = episode([turn(1, ranking=["x", "c", "a"]), turn(2, ranking=[])], cart=["a"],
                         reference_set=ref)
    bought_other = episode([turn(1, ranking=["b", "zz"])], cart=["b"], reference_set=ref)
    nothing = episode([turn(1)], reference_set=ref)  # no saved list: excluded from R-MRR
    assert [M.reference_purchase(e) for e in (bought_ref, bought_other, nothing)] == [1, 0, 0]
    # first reference item at rank 2 -> 1/2; empty list -> 0; mean = 0.25
    assert M.episode_rmrr(bought_ref) == pytest.approx(0.25)
    assert M.episode_rmrr(bought_other) == 0.0
    assert M.episode_rmrr(nothing) is None
    catalog = set(market_index.products)
    assert M.catalog_counts(bought_ref, catalog) == (2, 3)  # "x" is not a catalog id
    assert M.catalog_counts(bought_other, catalog) == (1, 2)


# ------------------------------------------------------------------ CGV


def test_cgv_windows_and_end(market_index):
    ep = episode([
        turn(1, navigation_goal_id="fx1", visible_before=[], visible_after=[]),
        turn(2, visible_before=[], visible_after=["fx1"]),  # fx1 seen after turn 2's action
        turn(3, navigation_goal_id="fx2", visible_before=["fx2"], visible_after=[]),
        turn(4, navigation_goal_id="fx3", visible_before=["a"], visible_after=["b"]),  # never
        turn(5, navigation_goal_id="not_a_target", visible_before=[], visible_after=[]),  # unknown
    ])
    # event t1: current view no, after t1 no (j=1), after t2 yes -> j = 2
    # event t3: current view -> j = 0; event t4: never -> None; t5 not checkable (not a target)
    first = M.cgv_events(ep, market_index)
    assert first == [2, 0, None]
    c = M.cgv_curve(first)
    assert c["events"] == 3
    assert c["0"] == pytest.approx(100 / 3) and c["1"] == pytest.approx(100 / 3)
    assert c["2"] == pytest.approx(200 / 3) and c["5"] == pytest.approx(200 / 3)
    assert c["End"] == pytest.approx(200 / 3)
    assert c["delta_1"] == pytest.approx(0.0) and c["delta_2"] == pytest.approx(100 / 3)
    # Without a scene index, the unknown goal counts as an event that is never seen.
    assert M.cgv_events(ep) == [2, 0, None, None]


def test_cgv_end_reaches_beyond_horizon_five():
    turns = [turn(1, navigation_goal_id="fx1")] + [turn(i) for i in range(2, 8)]
    turns[6] = turn(7, visible_after=["fx1"])  # seen after turn 7's action: j = 7
    first = M.cgv_events(episode(turns))
    assert first == [7]
    c = M.cgv_curve(first)
    assert c["5"] == 0.0 and c["End"] == 100.0 and c["delta_End"] == 100.0


def test_cgv_home_product_in_destination_counts(home_index):
    ep = episode([
        turn(1, navigation_goal_id="ar1", visible_before=["p2"], visible_after=["p1"]),  # p1 in ar1
        turn(2, navigation_goal_id="st1", visible_before=["p2"], visible_after=[]),  # p2 in st1
        turn(3, navigation_goal_id="st2", visible_before=["p1"], visible_after=["st2"]),
    ], store="home_furnishings")
    assert M.cgv_events(ep, home_index) == [1, 0, 1]
    # Supermarket products never stand in for their fixture (the rule is Home-only).
    sm = episode([turn(1, navigation_goal_id="fx1", visible_before=["a"])])
    assert M.cgv_events(sm) == [None]


# ------------------------------------------------------------------ pass^k, shares


def test_pass_hat_k():
    eps = []
    for task, outcomes in {"A": [1, 1, 1], "B": [1, 1, 0], "C": [0, 0, 0]}.items():
        eps += [episode([turn(1)], task_id=task, repeat=r, cart=["a"] if s else [])
                for r, s in enumerate(outcomes)]
    p = M.pass_hat_k(eps)
    # k=1: (3/3 + 2/3 + 0) / 3; k=2: (1 + C(2,2)/C(3,2) + 0) / 3 = (1 + 1/3) / 3; k=3: 1/3
    assert p[1] == pytest.approx(100 * (1 + 2 / 3) / 3)
    assert p[2] == pytest.approx(100 * (4 / 3) / 3)
    assert p[3] == pytest.approx(100 / 3)
    assert sorted(p) == [1, 2, 3]


def test_action_shares_and_terminations():
    eps = [
        episode([turn(1, action_type="Greet"), turn(2, action_type="Navigate"),
                 turn(3, action_type="Navigate"), turn(4, action_type=None)]),
        episode([turn(1, action_type="Recommend")], cart=["a"]),
    ]
    s = M.action_shares(eps)
    assert s["shares"]["Navigate"] == pytest.approx(50.0)  # 2 of 4 recognised turns
    assert s["shares"]["Greet"] == pytest.approx(25.0) and s["shares"]["Compare"] == 0.0
    assert s["unrecognised"] == 1 and sum(s["shares"].values()) == pytest.approx(100.0)
    assert M.termination_counts(eps) == {"success_cart_added": 1, "turn_limit": 1}


def _navigate_episodes():
    """Supermarket Navigate events: move_to_fixture 3 (followed once), turn 1 (followed),
    side_step 1 (followed); a Recommend turn, a Navigate without a suggestion and one with
    a tool illegal in the store are no events."""
    fixture, turn_left = call("move_to_fixture", "fx1", fixture="7"), call("turn", direction="left")
    side = call("side_step", direction="right")
    return [
        episode([turn(1, expected=fixture, actual=fixture),
                 turn(2, expected=fixture, actual=turn_left),
                 turn(3, expected=turn_left, actual=turn_left),
                 turn(4, action_type="Recommend", expected=call("pick_up_item"), actual=call("pick_up_item")),
                 turn(5, expected=None, actual=turn_left),
                 turn(6, expected=call("move_to_store", "st1"), actual=turn_left)]),
        episode([turn(1, expected=fixture, actual=None), turn(2, expected=side, actual=side)], task_id="t2"),
    ]


def test_navigate_suggestions_shares_and_same_action_rates_pooled_over_episodes():
    from situ_gym.actions.tools import LEGAL_TOOLS

    nav = M.navigate_suggestions(_navigate_episodes())
    assert nav["actions"] == list(LEGAL_TOOLS["supermarket"])
    assert (nav["events"], nav["navigate_turns"], nav["without_suggestion"]) == (5, 7, 2)
    assert nav["counts"]["move_to_fixture"] == 3 and nav["same"]["move_to_fixture"] == 1
    assert nav["shares"]["move_to_fixture"] == pytest.approx(60.0)
    assert nav["shares"]["turn"] == pytest.approx(20.0) and nav["shares"]["side_step"] == pytest.approx(20.0)
    assert nav["same_rate"]["move_to_fixture"] == pytest.approx(100 / 3)
    assert nav["same_rate"]["turn"] == 100.0 and nav["same_rate"]["side_step"] == 100.0
    # never suggested: share 0, no rate (pick_up_item was suggested by a Recommend turn only)
    assert nav["shares"]["pick_up_item"] == 0.0 and nav["same_rate"]["pick_up_item"] is None
    assert sum(nav["shares"].values()) == pytest.approx(100.0)


def test_navigate_suggestions_use_each_store_legal_tools_and_handle_no_events():
    area = call("move_to_area", "ar1", area="1a")
    home = episode([turn(1, expected=area, actual=call("move_to_area", "ar2", area="2a"))], store="home_furnishings")
    nav = M.navigate_suggestions([home])
    assert nav["actions"][-6:] == ["move_to_store", "move_to_area", "check_item", "add_to_cart",
                                   "do_not_add_to_cart", "idle"]
    # same tool name, other target: still the same action (the name is what Fig. 10 compares)
    assert nav["shares"]["move_to_area"] == 100.0 and nav["same_rate"]["move_to_area"] == 100.0
    empty = M.navigate_suggestions([episode([turn(1, action_type="Greet")])])
    assert empty["events"] == 0 and set(empty["shares"].values()) == {0.0}
    assert set(empty["same_rate"].values()) == {None}
