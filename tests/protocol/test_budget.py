"""Budget and needs: the default shopper may buy a small trade-off it was talked into; the paper's never."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import situ_gym  # noqa: F401 - registers the envs
from agents.heuristic import HeuristicAssistant
from situ_gym.user.rule.decision import Decision, assess
from situ_gym.user.rule.persona import Persona
from situ_gym.user.rule.state import EpisodeState
from tests.episodes import play
from tests.world import shopper_market_task, shopper_profile

# Budget $10, needs plain and high-protein; 5% over budget and every need met.
TASK = shopper_market_task(accept_substitutes=True).model_copy(update={"required_tags": ["prep:plain", "diet:high_protein"]})
OVER = {"price": 10.5, "tags": ["prep:plain", "diet:high_protein"], "category": "frozen fish"}
MISSES_SECOND_NEED = {"price": 9.0, "tags": ["prep:plain"], "category": "frozen fish"}


def _persona(protocol: str) -> Persona:
    # Open (soft needs), agreeable (tradeoff_p 0.7), medium price sensitivity (5% slack).
    profile = shopper_profile(price_sensitivity="medium")
    profile = profile.model_copy(update={"big_five": {**profile.big_five, "openness": 0.9, "agreeableness": 1.0}})
    return Persona.of(profile, TASK, protocol=protocol)


def _outcomes(protocol: str, details: dict, cited: set[str], seeds=range(40)) -> set[str]:
    """What the shopper decides about ``details`` once an explanation citing ``cited`` was heard."""
    outcomes = set()
    for seed in seeds:
        state = EpisodeState(explained={"sm_p09": set(cited)})
        decision = Decision(TASK, _persona(protocol), state, np.random.default_rng(seed))
        outcomes.add(decision.decide("sm_p09", {"sm_p09": details})[0])
    return outcomes


def test_default_buys_five_percent_over_budget_after_an_explained_tradeoff():
    persona = _persona("default")
    assert persona.budget_slack == 0.05 and "diet:high_protein" in persona.soft_needs
    assert assess(OVER, TASK, persona).kind == "soft"
    assert "buy_tradeoff" in _outcomes("default", OVER, {"price", "budget"})
    assert "buy_tradeoff" in _outcomes("default", MISSES_SECOND_NEED, {"diet:high_protein"})


def test_paper_never_buys_over_budget_or_missing_a_need_whatever_it_is_told():
    persona = _persona("paper")
    assert persona.budget_slack == 0.0 and persona.soft_needs == frozenset()
    assert assess(OVER, TASK, persona).kind == "budget"
    assert assess(MISSES_SECOND_NEED, TASK, persona).kind == "need"
    assert _outcomes("paper", OVER, {"price", "budget"}) == {"reject"}
    assert _outcomes("paper", MISSES_SECOND_NEED, {"diet:high_protein"}) == {"reject"}
    # A product within the budget with every need still sells.
    fit = {**OVER, "price": 9.99}
    assert "buy" in _outcomes("paper", fit, set())


@pytest.mark.parametrize("protocol", ["default", "paper"])
def test_the_env_shopper_plays_its_protocols_budget_rule(protocol):
    env = gym.make("SituRec-Supermarket-v0", protocol=protocol, image_size=(160, 120))
    env.reset(seed=0)
    user = env.unwrapped.user
    slack = {"low": 0.10, "medium": 0.05, "high": 0.0}[env.unwrapped.profile.interaction.price_sensitivity]
    assert user.persona.budget_slack == (0.0 if protocol == "paper" else slack)
    if protocol == "paper":
        assert user.persona.soft_needs == frozenset()


@pytest.mark.parametrize("env_id", ["SituRec-Supermarket-v0", "SituRec-HomeFurnishings-v0"])
def test_paper_heuristic_carts_are_within_budget_with_every_required_tag(env_id):
    env = gym.make(env_id, protocol="paper", image_size=(160, 120))
    u = env.unwrapped
    bought = 0
    for task_id in u.task_ids[:20]:
        _, info = play(env, HeuristicAssistant(), task_id, seed=0)
        for pid in u.backend.cart:
            product = u.index.products[pid]
            assert product.price <= u.task.budget + 1e-9, (task_id, pid, product.price, u.task.budget)
            assert set(u.task.required_tags) <= set(product.tags), (task_id, pid)
            assert not set(u.task.avoided_tags) & set(product.tags), (task_id, pid)
            bought += 1
    assert bought >= 10  # the honest heuristic still succeeds under the strict rule
