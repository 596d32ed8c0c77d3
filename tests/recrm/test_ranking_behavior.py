import math

import pytest

from recrm.components import BehaviorPrediction, ItemRanking, ndcg_at_k
from recrm.context import TurnContext
from tests.recrm.turns import turn
from tests.world import reward_task

L2, L3, L4 = 1.0, 1 / math.log2(3), 1 / math.log2(4)  # position discounts 1, 2, 3


def ctx_for(index, task, ranking):
    return TurnContext.from_record(turn("Which do you prefer?", ranking=ranking), None, task, index)


@pytest.mark.parametrize(
    "ranking, expected",
    [
        (["sm_p004", "sm_p008"], 1.0),
        (["sm_p008", "sm_p004"], 1.0),
        (["sm_p005", "sm_p004"], L3 / (L2 + L3)),
        (["sm_p005", "sm_p006", "sm_p008"], L4 / (L2 + L3)),
        (
            ["sm_p004", "sm_p004", "sm_p008"],
            (L2 + L4) / (L2 + L3),
        ),  # repeats earn nothing, keep positions
        (["sm_p001", "sm_p002"], 0.0),
        ([f"x{i}" for i in range(10)] + ["sm_p004"], 0.0),  # beyond the top 10
    ],
)
def test_ndcg_by_hand(index, task, ranking, expected):
    s = ItemRanking().score(ctx_for(index, task, ranking))
    assert s.value == pytest.approx(expected)


def test_no_ranking_is_not_applicable(index, task):
    assert ItemRanking().score(ctx_for(index, task, [])).value is None
    assert BehaviorPrediction().score(ctx_for(index, task, [])).value is None


def test_ndcg_function():
    assert ndcg_at_k(["a"], set()) == 0.0
    assert ndcg_at_k(["b", "a"], {"a"}) == pytest.approx(L3)


def test_behavior_target_and_substitutes(index):
    strict = reward_task(accept_substitutes=False)
    loose = reward_task(accept_substitutes=True)
    beh = BehaviorPrediction()
    assert beh.score(ctx_for(index, strict, ["sm_p005", "sm_p004"])).value == 1.0
    assert beh.score(ctx_for(index, strict, ["sm_p008"])).value == 0.0
    assert beh.score(ctx_for(index, loose, ["sm_p008"])).value == 1.0
    assert beh.score(ctx_for(index, loose, ["sm_p005", "sm_p006"])).value == 0.0
