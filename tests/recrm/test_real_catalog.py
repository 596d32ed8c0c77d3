"""The rule-based judges on the packaged catalogs: no false alarms on true statements."""

import pytest

from recrm.components import FactualConsistency, InstructionFollowing
from recrm.context import TurnContext
from situ_gym.records import ToolCall, TurnRecord
from situ_gym.scene.index import SceneIndex
from situ_gym.scene.loader import load_scene
from tests.world import task as world_task

STORES = ["supermarket", "home_furnishings"]


@pytest.fixture(scope="module", params=STORES)
def world(request):
    index = SceneIndex(load_scene(request.param))
    pid = next(iter(index.products))
    task = world_task(
        "t", request.param, "x", [],
        acceptance={"inspect_before_buying": False, "accept_substitutes": True},
        profile_id="p",
        theme="x",
        category=index.products[pid].category,
        required_tags=[],
        avoided_tags=[],
        target_product_id=pid,
        budget=index.products[pid].price,
        reference_set=[pid],
    )
    return index, task


def describe(index, pid, price=None):
    p = index.products[pid]
    price = p.price if price is None else price
    claims = [
        t.split(":", 1)[1]
        for t in p.tags
        if t.split(":", 1)[0] in ("diet", "material", "style", "flavour", "feature")
    ][:2]
    where = index.name(index.location_of(pid)[-1]).split(":")[0]
    text = f"I'd recommend the {p.name}. It costs ${price:.2f}"
    if claims:
        text += ", and it is " + " and ".join(claims)
    return text + f". You will find it in {where}."


def record(index, pid, response):
    p = index.products[pid]
    return TurnRecord(
        turn=1,
        assistant_raw='{"response": "x", "assistant_actions": [{}], "expected_user_action": {}}',
        assistant_valid=True,
        response=response,
        action_type="Recommend",
        action={
            "type": "Recommend",
            "display_name": p.name,
            "visible_now": False,
            "reason": "fits what you said",
        },
        recommended_id=pid,
        expected_user_action=ToolCall(name="idle"),
        ranking=[pid],
    )


def test_true_descriptions_pass_both_gates(world):
    index, task = world
    cons, inst = FactualConsistency(), InstructionFollowing()
    failures = []
    for pid in index.products:
        ctx = TurnContext.from_record(record(index, pid, describe(index, pid)), None, task, index)
        for judge in (cons, inst):
            s = judge.score(ctx)
            if s.value != 1.0:
                failures.append((pid, judge.name, s.details["findings"]))
    assert failures == []


def test_wrong_prices_and_places_are_caught(world):
    index, task = world
    cons = FactualConsistency()
    places = index.nav_targets
    missed_price, missed_place = [], []
    for pid in index.products:
        wrong = describe(index, pid, price=index.products[pid].price + 3.0)
        ctx = TurnContext.from_record(record(index, pid, wrong), None, task, index)
        if cons.score(ctx).value != 0.0:
            missed_price.append(pid)
        other = next(e for e in places if e not in index.location_of(pid))
        text = f"The {index.products[pid].name} is in {index.name(other).split(':')[0]}."
        ctx = TurnContext.from_record(record(index, pid, text), None, task, index)
        if cons.score(ctx).value != 0.0:
            missed_place.append(pid)
    assert missed_price == []
    assert missed_place == []
