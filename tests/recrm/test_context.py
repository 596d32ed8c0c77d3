import pytest

from recrm.context import TurnContext
from tests.recrm.turns import honest_recommend, opening_history, reward_episode, turn
from tests.world import reward_task


def test_revealed_counts_only_earlier_turns(index, task):
    history = opening_history()
    rec = honest_recommend(n=3)
    rec = rec.model_copy(update={"revealed": ["avoid"]})  # disclosed *after* this turn's output
    ctx = TurnContext.from_record(rec, None, task, index, history)
    assert ctx.revealed == {"category": 1, "budget": 1}
    assert [d.kind for d in ctx.revealed_items] == ["category", "budget"]
    assert ctx.revealed_items[1].value == 6.0


def test_history_after_the_turn_is_ignored(index, task):
    history = opening_history() + [turn("later", n=5, revealed=["need"])]
    ctx = TurnContext.from_record(honest_recommend(n=3), None, task, index, history)
    assert [t.turn for t in ctx.history] == [1, 2]
    assert "need" not in ctx.revealed


def test_user_state_is_what_the_assistant_saw(index, task):
    history = [turn("Hi", "Greet", n=1, user="cereal please", held="sm_p005", cart=["sm_p007"])]
    ctx = TurnContext.from_record(turn("ok", n=2), None, task, index, history)
    assert ctx.held_item == "sm_p005"
    assert ctx.cart == ("sm_p007",)
    assert ctx.dialogue == [("assistant", "Hi"), ("user", "cereal please")]
    assert ctx.last_user_utterance == "cereal please"


def test_judged_item_is_what_the_words_propose_or_point_at(index, task):
    rec = turn("Try this", "Recommend", recommended_id="sm_p008", ranking=["nope", "sm_p005"])
    assert TurnContext.from_record(rec, None, task, index).judged_item == "sm_p008"  # "this" = the annotated one
    named = turn("Try the Morning Mill Almond Granola.", "Explain", ranking=["sm_p005"])
    assert TurnContext.from_record(named, None, task, index).judged_item == "sm_p006"  # the words, not the label
    rec = turn("Which one?", "AskPreference", ranking=["nope", "sm_p005"])
    assert TurnContext.from_record(rec, None, task, index).judged_item is None  # a ranking alone judges nothing
    assert TurnContext.from_record(turn("Hi", "Greet"), None, task, index).judged_item is None


def test_mismatched_task_is_rejected(index, task):
    ep = reward_episode(task_id="other")
    with pytest.raises(ValueError, match="other"):
        TurnContext.from_record(turn("x"), ep, task, index)
    with pytest.raises(ValueError, match="home_furnishings"):
        TurnContext.from_record(turn("x"), None, reward_task(store="home_furnishings"), index)
