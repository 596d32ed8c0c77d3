"""Turns that recommend nothing are scored for what they do (recrm.dialogue), and naming a
product in one makes it a recommendation attempt the label must own."""

import pytest

from recrm.composite import RecRMComposite
from recrm.context import TurnContext
from situ_gym.records import ToolCall
from tests.recrm.turns import opening_history, turn

GO_SHELF = ToolCall(name="move_to_fixture", arguments={"fixture": "2"}, target_id="sm_f02")
GO_STAND = ToolCall(name="move_to_fixture", arguments={"fixture": "3"}, target_id="sm_f03")
TURN_LEFT = ToolCall(name="turn", arguments={"direction": "left", "angle": 90})


def score(index, task, rec, history=None):
    history = opening_history() if history is None else history
    return RecRMComposite().score(TurnContext.from_record(rec, None, task, index, history))


@pytest.mark.parametrize(
    "text, eua, goal, value",
    [
        ("Let's walk over to Cereal Shelf 1.", GO_SHELF, "sm_f02", 1.0),  # words, goal and action agree
        ("Let's walk over to Cereal Shelf 1.", GO_STAND, "sm_f03", 0.25),  # the action goes elsewhere
        ("Turn left here, please.", TURN_LEFT, None, 1.0),
        ("Turn right here, please.", TURN_LEFT, None, 0.25),  # said right, expects left
        ("Okay, one moment.", GO_SHELF, "sm_f02", 0.25),  # labelled Navigate, guides nowhere
    ],
)
def test_guidance_is_paid_when_its_action_can_follow_the_words(index, task, text, eua, goal, value):
    rec = turn(text, "Navigate", n=3, eua=eua, action={"navigation_goal": "2", "reason": "cereal"},
               visible=["sm_f02", "sm_f03"])
    rec = rec.model_copy(update={"navigation_goal_id": goal})
    r = score(index, task, rec)
    assert r.judged_item is None
    assert r.details["dialogue"]["value"] == value, r.details["dialogue"]
    assert r.total == pytest.approx(0.2 * value)


def test_questions_are_paid_for_open_slots_only(index, task):
    # opening_history revealed category and budget; avoid and need are still open
    open_q = score(index, task, turn("Anything you need to avoid, like nuts?", n=3))
    known_q = score(index, task, turn("And what's your budget?", n=3))
    generic = score(index, task, turn("Anything else I should know?", n=3))
    assert open_q.total == pytest.approx(0.2)
    assert known_q.total == 0.0 and "known" in known_q.details["dialogue"]["reason"]
    assert generic.total == pytest.approx(0.1)


def test_opening_greeting_is_paid_only_on_the_first_turn(index, task):
    first = score(index, task, turn("Hello and welcome!", "Greet", n=1), history=[])
    later = score(index, task, turn("Hello and welcome!", "Greet", n=3))
    assert first.total == pytest.approx(0.2)
    assert later.total == pytest.approx(0.1)


def test_name_dropping_in_a_guidance_turn_is_an_unlabelled_recommendation(index, task):
    honest = turn("Let's walk over to Cereal Shelf 1.", "Navigate", n=3, eua=GO_SHELF,
                  action={"navigation_goal": "2", "reason": "cereal"}, ranking=["sm_p004"])
    honest = honest.model_copy(update={"navigation_goal_id": "sm_f02"})
    dropped = honest.model_copy(update={
        "response": honest.response + " By the way, the Sunny Fields Gluten-Free Oat Cereal is great."
    })
    h, d = score(index, task, honest), score(index, task, dropped)
    ctx = TurnContext.from_record(dropped, None, task, index, opening_history())
    assert ctx.attempt.new == ("sm_p004",) and ctx.attempt.count == 1
    assert d.gates["instruction"] == 0.0
    assert d.total < h.total


def test_a_product_the_shopper_raised_is_no_new_attempt(index, task):
    history = opening_history()
    history[-1] = history[-1].model_copy(update={"user_utterance": "Is the Sunny Fields Gluten-Free Oat Cereal any good?"})
    rec = turn("Yes, and you will find the Sunny Fields Gluten-Free Oat Cereal on Cereal Shelf 1, at the front,"
               " right next to the corn flakes.", "AnswerQuestion", n=3)
    ctx = TurnContext.from_record(rec, None, task, index, history)
    assert ctx.attempt.put_forward == ("sm_p004",) and ctx.attempt.new == ()
    assert score(index, task, rec, history).gates["instruction"] == 1.0


TURN_RIGHT = ToolCall(name="turn", arguments={"direction": "right", "angle": 90})


@pytest.mark.parametrize("eua, value", [(TURN_LEFT, 1.0), (TURN_RIGHT, 0.25)])
def test_a_turn_toward_a_place_named_is_judged_by_its_direction(index, task, eua, value):
    # A turn has no target: "Cereal Shelf 1 is that way" cannot disagree with it, the direction can.
    rec = turn("Turn left about 90 degrees; Cereal Shelf 1 is in that direction.", "Navigate", n=3, eua=eua)
    r = score(index, task, rec)
    assert r.details["dialogue"]["value"] == value, r.details["dialogue"]


@pytest.mark.parametrize(
    "text, action_type",
    [
        ("Let me help you with that.", "Compare"),  # says it compares, compares nothing
        ("Let me help you with that.", "Recommend"),
        ("Add it to your cart!", "ConfirmPurchase"),  # nothing was ever put forward
        ("Add it to your cart!", "Navigate"),
    ],
)
def test_an_act_its_words_do_not_carry_out_earns_nothing(index, task, text, action_type):
    # best-of-N played these over followable guidance while "anything else" earned 0.5
    r = score(index, task, turn(text, action_type, n=3))
    assert r.judged_item is None
    assert r.details["dialogue"]["value"] == 0.0 and r.total == 0.0, r.details["dialogue"]
    ack = score(index, task, turn("Sure, take your time.", "AnswerQuestion", n=3))
    assert ack.details["dialogue"]["value"] == 0.5


def test_what_kind_of_product_stays_open_until_the_kind_is_named(index, task):
    # hf_u03_t4: the shopper said what the room is for; asking the kind again earned 0 (its
    # task, like many, lists no category among the details to disclose)
    task = task.model_copy(update={"disclosure": [d for d in task.disclosure if d.kind != "category"]})
    said_use = [turn("Hi! What brings you in today?", "Greet", n=1, user="I'm setting up my kitchen.",
                     revealed=["use"])]
    r = score(index, task, turn("What sort of item are you looking for?", n=2), history=said_use)
    assert r.details["dialogue"]["value"] == 1.0, r.details["dialogue"]
    known = score(index, task, turn("What sort of item are you looking for?", n=3))  # category revealed
    assert known.details["dialogue"]["value"] == 0.0


def test_the_shoppers_own_question_said_back_is_no_elicitation(index, task):
    # best-of-N played probe-echo's copy of "Where can I find the X?" at 0.2
    history = opening_history()
    history[-1] = history[-1].model_copy(update={"user_utterance": "Okay. Where can I find the gluten-free cereal?"})
    echo = score(index, task, turn("Okay. Where can I find the gluten-free cereal?", "ClarifyNeed", n=3), history)
    own = score(index, task, turn("Where are you standing right now?", "ClarifyNeed", n=3),
                history)
    assert echo.details["dialogue"]["value"] == 0.0, echo.details["dialogue"]
    assert own.details["dialogue"]["value"] == 1.0, own.details["dialogue"]


def test_where_are_you_is_open_once_in_a_row(index, task):
    asked = [*opening_history(), turn("Where are you standing right now?", "ClarifyNeed", n=3,
                                      user="I'm next to the dairy cooler.")]
    again = score(index, task, turn("Where are you standing right now?", "ClarifyNeed", n=4), asked)
    first = score(index, task, turn("Where are you standing right now?", "ClarifyNeed", n=3))
    assert first.details["dialogue"]["value"] == 1.0
    assert again.details["dialogue"]["value"] == 0.0, again.details["dialogue"]
