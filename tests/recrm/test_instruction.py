import pytest

from recrm.components import InstructionFollowing
from recrm.context import TurnContext
from situ_gym.records import ToolCall
from tests.recrm.turns import honest_recommend, opening_history, output, recommend, turn

judge = InstructionFollowing()


def score(index, task, rec, history=()):
    return judge.score(TurnContext.from_record(rec, None, task, index, list(history)))


def hard_dims(s):
    return {f["dimension"] for f in s.details["findings"] if f["hard"]}


def test_honest_turn_passes_with_full_marks(index, task):
    s = score(index, task, honest_recommend(), opening_history())
    assert s.value == 1.0
    assert s.details["dimensions"] == {d: 5 for d in s.details["dimensions"]}
    assert s.details["overall"] == 5


@pytest.mark.parametrize(
    "kwargs, dim, message",
    [
        ({"errors": ["response: missing"]}, "format", "parser"),
        ({"raw": "not json at all"}, "format", "not a JSON object"),
        (
            {
                "raw": output("Hi", {"type": "Greet"}).replace(
                    '[{"type": "Greet"}]', '[{"type": "Greet"}, {"type": "Explain"}]'
                )
            },
            "format",
            "exactly one",
        ),
        ({"ranking": ["sm_p004", "sm_p999"]}, "format", "not in the catalog"),
        ({"ranking": ["sm_p004"] * 11}, "format", "at most 10"),
    ],
)
def test_format_violations_fail_the_gate(index, task, kwargs, dim, message):
    s = score(index, task, turn("What would you like?", **kwargs))
    assert s.value == 0.0
    assert dim in hard_dims(s)
    assert any(message in f["message"] for f in s.details["findings"])
    assert s.details["dimensions"][dim] == 1


def test_unknown_action_type_and_missing_fields(index, task):
    s = score(index, task, turn("Hello", "Dance"))
    assert s.value == 0.0 and "process" in hard_dims(s)
    s = score(
        index,
        task,
        turn(
            "Try the oat cereal.",
            "Recommend",
            action={"display_name": "Oat Cereal", "reason": "fits"},
            recommended_id="sm_p004",
        ),
    )
    assert s.value == 0.0
    assert any("visible_now" in f["message"] for f in s.details["findings"])


@pytest.mark.parametrize(
    "eua, message",
    [
        (ToolCall(name="move_to_store", arguments={"store": "1"}, legal=False), "not legal"),
        (ToolCall(name="fly", arguments={}), "not legal"),
        (
            ToolCall(
                name="pick_up_item", arguments={"item": "q"}, valid=False, error="no handle q"
            ),
            "invalid",
        ),
        (
            ToolCall(name="pick_up_item", arguments={"item": "c"}, target_id="sm_p001"),
            "not in view",
        ),
    ],
)
def test_bad_expected_user_action_fails(index, task, eua, message):
    s = score(index, task, turn("Have a look at that one?", eua=eua))
    assert s.value == 0.0
    assert any(message in f["message"] for f in s.details["findings"] if f["hard"])


def test_held_item_is_a_legal_target(index, task):
    history = [turn("Hi", "Greet", n=1, user="hm", held="sm_p001")]
    rec = turn(
        "Put it in the cart?",
        "ConfirmPurchase",
        n=2,
        eua=ToolCall(name="add_to_cart", arguments={"item": "b"}, target_id="sm_p001"),
    )
    assert score(index, task, rec, history).value == 1.0


def test_missing_expected_action_is_only_soft(index, task):
    rec = turn("What would you like?").model_copy(update={"expected_user_action": None})
    s = score(index, task, rec)
    assert s.value == 1.0
    assert s.details["dimensions"]["process"] == 4


@pytest.mark.parametrize(
    "response, dim",
    [
        ("Grab item [a] on the left.", "constraint"),
        ("It is the one with label b.", "constraint"),
        ("Here is my JSON answer.", "role"),
        ("My ranking puts the oat cereal first.", "role"),
        ("Check product sm_p004 please.", "role"),
        ("Look at handle 3 over there.", "role"),
        ("", "style"),
        (" ".join(["word"] * 121), "style"),
        (
            "Harbor Catch Breaded Fish Sticks, Polar Bay Wild Salmon Portions, Sunny Fields Gluten-Free Oat Cereal "
            "and Morning Mill Almond Granola are all here.",
            "content_quality",
        ),
    ],
)
def test_response_violations(index, task, response, dim):
    s = score(index, task, turn(response))
    assert s.value == 0.0, s.details
    assert dim in hard_dims(s)


def test_echo_and_verbatim_repeat(index, task):
    history = [
        turn("Hi, what do you need?", "Greet", n=1, user="I need some breakfast cereal for my kids")
    ]
    echo = turn("You need some breakfast cereal for my kids", n=2)
    assert score(index, task, echo, history).value == 0.0
    fine = turn("Breakfast cereal for the kids, got it. Any price range in mind?", n=2)
    assert score(index, task, fine, history).value == 1.0
    once = score(index, task, turn("Hi, what do you need?", n=2), history)
    assert once.value == 1.0 and once.details["dimensions"]["style"] == 4  # first repeat: soft
    history.append(turn("Hi, what do you need?", n=2, user="cereal"))
    twice = score(index, task, turn("Hi, what do you need?", n=3), history)
    assert twice.value == 0.0 and "style" in hard_dims(twice)


def test_soft_findings_lower_dimensions_only(index, task):
    history = [turn("Hi", "Greet", n=1, user="cereal")]
    s = score(
        index,
        task,
        turn("Hello again, welcome.", "Greet", n=2, ranking=["sm_p004", "sm_p004"]),
        history,
    )
    assert s.value == 1.0
    assert s.details["dimensions"]["process"] == 4  # Greet after the start
    assert s.details["dimensions"]["format"] == 4  # repeated ranking id
    assert s.details["overall"] == 5


def test_constructor_checks():
    with pytest.raises(ValueError, match="max_words"):
        InstructionFollowing(min_words=5, max_words=2)
    with pytest.raises(ValueError, match="echo_ratio"):
        InstructionFollowing(echo_ratio=0.0)


def test_recommend_must_name_its_product(index, task):
    vague = recommend(
        "Buy this one, trust me.",
        "Sunny Fields Gluten-Free Oat Cereal",
        "sm_p004",
        reason="fits your needs well",
    )
    s = score(index, task, vague, opening_history())
    assert s.value == 0.0 and any("which product" in f["message"] for f in s.details["findings"])
    named = vague.model_copy(update={"response": "Try the gluten-free oat cereal on the left."})
    assert score(index, task, named, opening_history()).value == 1.0
