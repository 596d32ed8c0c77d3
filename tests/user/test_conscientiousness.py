"""Conscientiousness in the rule shopper: careful checking and consistent following (Persona)."""

from __future__ import annotations

import numpy as np
import pytest

from situ_gym.user import RuleBasedUser
from situ_gym.user.llm_user import shopper_system_prompt
from situ_gym.user.rule.persona import Persona
from tests.world import shopper_market_task, shopper_profile

from .conftest import MiniShop

SM_PLACES = {
    "start": ["sm_f01", "sm_f02", "sm_f03"],
    "sm_f01": ["sm_f01", "sm_p01", "sm_p02", "sm_p03", "sm_p04", "sm_f03"],
    "sm_f02": ["sm_f02", "sm_p05", "sm_f01"],
    "sm_f03": ["sm_f03", "sm_f02"],
}
PITCH = "I recommend the Harbor Catch Plain Cod Fillets: plain fillets, ideal for a quick dinner."


def _profile(conscientiousness: float, **interaction):
    profile = shopper_profile(**interaction)
    return profile.model_copy(update={"big_five": {**profile.big_five, "conscientiousness": conscientiousness}})


def test_persona_numbers_come_from_conscientiousness():
    task = shopper_market_task()
    careful, middling, careless = (Persona.of(_profile(c, navigation_following=0.7), task) for c in (0.9, 0.5, 0.1))
    assert careful.checks_details and not middling.checks_details and not careless.checks_details
    assert Persona.of(_profile(0.6), task).checks_details  # the threshold is inclusive
    assert careful.navigation_following == pytest.approx(0.78)
    assert middling.navigation_following == pytest.approx(0.7)  # 0.5 leaves the profile's setting
    assert careless.navigation_following == pytest.approx(0.62)
    # Clipped to a probability.
    assert Persona.of(_profile(1.0, navigation_following=1.0), task).navigation_following == 1.0
    assert Persona.of(_profile(0.0, navigation_following=0.0), task).navigation_following == 0.0


def _turns(index, conscientiousness: float, seed: int) -> list[str]:
    """Tool calls of a shopper told about the cod it stands at, by a task that needs no inspection."""
    task = shopper_market_task(inspect_before_buying=False)
    user = RuleBasedUser()
    user.reset(task, _profile(conscientiousness), index, np.random.default_rng(seed))
    shop = MiniShop(index, SM_PLACES, "sm_f01")
    shop.apply("", {"name": "idle", "arguments": {}})
    names = []
    for response in ["Hello! What do you need?", PITCH, PITCH]:
        turn = user.respond(shop.observe(response))
        names.append(turn.tool_call["name"])
        shop.apply(turn.utterance, turn.tool_call)
        if shop.cart:
            break
    return names


@pytest.mark.parametrize("seed", range(4))
def test_a_conscientious_shopper_inspects_before_buying_even_when_the_task_does_not_ask(sm_index, seed):
    careless, careful = _turns(sm_index, 0.2, seed), _turns(sm_index, 0.8, seed)
    assert "add_to_cart" in careless and "pick_up_item" not in careless  # bought on the assistant's word
    assert careful[careful.index("pick_up_item") + 1:] == ["add_to_cart"]  # checked the label first


def test_conscientiousness_shifts_how_often_guidance_is_followed(sm_index):
    # The Navigator draws once per instruction against Persona.navigation_following.
    task = shopper_market_task()
    followed = {}
    for c in (0.0, 1.0):
        user = RuleBasedUser()
        user.reset(task, _profile(c, navigation_following=0.5), sm_index, np.random.default_rng(0))
        assert user.navigator.following == user.persona.navigation_following
        followed[c] = user.navigator.following
    assert followed[0.0] == pytest.approx(0.4) and followed[1.0] == pytest.approx(0.6)


def test_the_llm_shoppers_prompt_describes_conscientiousness_in_words():
    task = shopper_market_task()
    careful = shopper_system_prompt(task, _profile(0.9))
    careless = shopper_system_prompt(task, _profile(0.1))
    assert "conscientiousness 0.90" in careful  # the number stays
    assert "check a product's details yourself" in careful
    assert "rely on what the assistant tells you" in careless
