"""What the participant and the researcher read: place labels, product labels, outcomes, empty cells."""

import pytest

from agents.heuristic import HeuristicAssistant
from eval.human.conversation import Conversation
from eval.human.report import _format_agreement, ranking_agreement, why_empty
from eval.human.wording import mark_places, outcome_text, product_details
from eval.judge import DIMENSIONS
from situ_gym.som.labels import fixed_handles_by_id
from tests.eval.human.conftest import ENV


@pytest.fixture(scope="module")
def conv():
    return Conversation(env_id=ENV, task_id="sm_u01_t1", seed=42, assistant=HeuristicAssistant())


def test_places_the_assistant_names_carry_the_participants_map_label(conv):
    index = conv.core.index
    handles = fixed_handles_by_id(index, "user")
    shelf, cooler = handles["sm_shelf_09"], handles["sm_open_cooler_02"]
    text = "Walk over to the nearest side of Shelf 9; Open Cooler 2 is beyond it."
    assert mark_places(text, index, handles) == (
        f"Walk over to the nearest side of Shelf 9 [{shelf}]; Open Cooler 2 [{cooler}] is beyond it.")
    marked = mark_places(text, index, handles)
    assert mark_places(marked, index, handles) == marked  # a label already there is not doubled
    assert mark_places("What would you like?", index, handles) == "What would you like?"
    key = {k["handle"]: k["name"] for k in conv.map_key()}
    assert key[shelf] == index.name("sm_shelf_09")  # the map key names it as the dialogue does


def test_the_product_panel_reads_labels_as_words(conv):
    p = conv.core.index.products["sm_p207"]
    details = product_details(p)
    assert "diet: gluten-free, high protein" in details["details"]
    assert "allergens: milk" in details["details"]
    text = " ".join(details["details"] + details["labels"])
    assert ":" not in text.replace(": ", "") and "diet:gluten-free" not in text and "[" not in text


def test_the_inspected_product_is_shown_in_words(turn_left):
    conv = Conversation(env_id=ENV, task_id="sm_u01_t1", seed=42, assistant=HeuristicAssistant())
    item = conv.view_state()["handles"]["item"][0]["handle"]
    assert conv.submit("", {"name": "pick_up_item", "arguments": {"item": item}}, silent=True) is None
    (seen,) = conv.view_state()["inspected"]
    assert set(seen) == {"name", "price", "details", "labels"}
    assert all(":" not in label for label in seen["labels"])


@pytest.mark.parametrize("termination, bought, gave_up, expected", [
    ("success_cart_added", ["Plain Yogurt"], False, ("You bought Plain Yogurt.", "You put a product in your cart")),
    ("moderator_end", [], True, ("You did not buy anything.", "You ended the conversation yourself.")),
    ("turn_limit", [], False, ("You did not buy anything.", "limit of 8 turns")),
    ("recommendation_exhausted", [], False, ("You did not buy anything.", "three recommendations")),
    ("motion_stall", [], False, ("You did not buy anything.", "without getting anywhere")),
])
def test_the_outcome_is_said_in_words(termination, bought, gave_up, expected):
    out = outcome_text(termination, bought=bought, gave_up=gave_up, max_turns=8)
    assert out["bought"] == expected[0] and expected[1] in out["reason"]
    assert termination not in out["reason"]


def _row(human, judge):
    return {"agent": "a", "episodes": 1, "rated": 1, "judge_name": "rule",
            "human": dict.fromkeys(DIMENSIONS, human), "judge": dict.fromkeys(DIMENSIONS, judge)}


def test_an_empty_correlation_cell_says_why():
    two = [_row(2.0, 3.0), _row(4.0, 4.0)]
    table = _format_agreement(ranking_agreement(two), two)
    assert "- (needs at least 3 assistants rated by both (n=2))" in table
    flat = [_row(3.0, 1.0), _row(3.0, 2.0), _row(3.0, 4.0)]
    assert why_empty(flat, "Overall") == "participants gave every assistant the same mean: no ranking to compare"
    unrated = [_row(None, 1.0), _row(2.0, 2.0), _row(4.0, 4.0)]
    assert why_empty(unrated, "Overall").endswith("(n=2)")
    good = [_row(1.0, 1.0), _row(2.0, 3.0), _row(4.0, 4.0)]
    table = _format_agreement(ranking_agreement(good), good)
    assert "- (" not in table and "| 3 | 0.9" in table


def test_a_replayed_log_with_an_assistant_failure_ends_in_error():
    log = [{"assistant": None, "user": None, "error": "ConnectionError: gone", "error_cause": "backend_unavailable"}]
    conv = Conversation(env_id=ENV, task_id="sm_u01_t1", seed=42, assistant=HeuristicAssistant(), log=log)
    assert conv.done and conv.termination == "error" and conv.error_cause == "backend_unavailable"
    assert conv.transcript() == [] and conv.log == log


def test_an_assistant_that_fails_in_act_ends_the_conversation_cleanly(turn_left):
    from tests.eval.human.conftest import BrokenAssistant

    conv = Conversation(env_id=ENV, task_id="sm_u01_t1", seed=42, assistant=BrokenAssistant())
    assert conv.submit("Hi.", turn_left) is None
    assert conv.done and conv.termination == "error" and conv.error_cause == "crash"
    assert conv.error.startswith("Traceback") and conv.error_line == "ConnectionError: endpoint went away"
    assert len(conv.turns) == 1 and conv.log[-1]["error"] == conv.error_line
    assert "over" in conv.submit("hello?", {"name": "idle", "arguments": {}})
