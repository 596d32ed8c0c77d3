"""RecRM's composite: the default shapes it (normalised, dialogue credit, first-turn cap); the paper's
variant is RecRM-Bench 4.5's formula as written, and RecRMReward picks it under protocol="paper"."""

from __future__ import annotations

import gymnasium as gym
import pytest

import situ_gym  # noqa: F401 - registers the envs
from agents.heuristic import HeuristicAssistant
from recrm.composite import RecRMComposite
from recrm.context import TurnContext
from recrm.wrapper import RecRMReward, RecRMVectorReward
from tests.recrm.turns import opening_history, recommend, turn
from tests.world import reward_market, reward_task

ENV_ID = "SituRec-Supermarket-v0"
ENV_KW = dict(image_size=(96, 72), max_turns=8)  # small frames: the reward reads no pixels
OAT = "Sunny Fields Gluten-Free Oat Cereal"  # sm_p004, the reward task's target


@pytest.fixture(scope="module")
def world():
    return reward_market(), reward_task()


def _ctx(world, rec, history):
    index, task = world
    return TurnContext.from_record(rec, None, task, index, history)


def _first_turn_guess():
    """A right-category product put forward on the first turn, before the shopper said anything."""
    return recommend(f"Would the {OAT} work for you? It is $4.99.", OAT, "sm_p004", n=1,
                     ranking=["sm_p004"])


def test_paper_formula_on_hand_values():
    paper = RecRMComposite(variant="paper")
    assert (paper.alpha, paper.beta, paper.tau, paper.normalize) == (1.0, 0.5, 0.5, False)
    assert paper.combine(1, 1, 1.0, 1.0, 1.0) == pytest.approx(2.0)  # alpha + 2 beta, unnormalised
    assert paper.combine(1, 1, 1.0, 0.5, 1.0) == pytest.approx(1.0 + 0.5 * 1.5)
    assert paper.combine(1, 1, 0.5, 1.0, 1.0) == pytest.approx(0.5)  # weak: 0.5 is not > tau, no behaviour term
    assert paper.combine(1, 1, 0.0, 1.0, 1.0) == 0.0
    assert paper.combine(0, 1, 1.0, 1.0, 1.0) == paper.combine(1, 0, 1.0, 1.0, 1.0) == 0.0
    assert paper.combine(1, 1, None, 1.0, 1.0) == 0.0  # R_relev undefined
    own = RecRMComposite(variant="paper", alpha=2.0, beta=1.0, tau=0.4)
    assert own.combine(1, 1, 0.5, 1.0, 0.0) == pytest.approx(2.0 * 0.5 + 1.0 * 1.0)


def test_default_formula_is_normalised_and_paper_refuses_normalisation():
    full = RecRMComposite()
    assert full.variant.name == "full" and full.normalize
    assert full.combine(1, 1, 1.0, 1.0, 1.0) == pytest.approx(1.0)
    assert full.combine(1, 1, 0.5, 1.0, 1.0) == pytest.approx(0.25)
    with pytest.raises(ValueError, match="not normalised"):
        RecRMComposite(variant="paper", normalize=True)


def test_dialogue_only_turn_default_credit_paper_zero(world):
    ask = turn("Is there a price you'd like to stay under?", "AskPreference", n=2)
    history = opening_history()[:1]
    default = RecRMComposite().score(_ctx(world, ask, history))
    paper = RecRMComposite(variant="paper").score(_ctx(world, ask, history))
    assert default.judged_item is None and default.total > 0 and default.dialogue_credit == default.total
    assert paper.judged_item is None and paper.components["relevance"] is None
    assert paper.total == 0.0 and paper.ungated == 0.0 and paper.dialogue_credit is None
    assert paper.gates == default.gates == {"instruction": 1.0, "consistency": 1.0}
    assert "undefined" in paper.details["dialogue"]["reason"]  # reported as no R_relev, not as a bad turn


def test_first_turn_guess_default_weak_paper_fully_relevant(world):
    rec = _first_turn_guess()
    default = RecRMComposite().score(_ctx(world, rec, []))
    paper = RecRMComposite(variant="paper").score(_ctx(world, rec, []))
    assert default.gates == paper.gates == {"instruction": 1.0, "consistency": 1.0}, default.details
    # one relevance judgement; the default applies its cap, the paper does not
    assert default.details["relevance"]["first_turn_cap"] == 0.5
    assert default.components["relevance"] == 0.5 and not default.indicator
    assert default.total == pytest.approx(0.5 / 2.0)  # alpha * 0.5 / (alpha + 2 beta)
    assert paper.components["relevance"] == 1.0 and paper.indicator
    r_rank, r_beh = paper.components["ranking"], paper.components["behavior"]
    assert paper.total == pytest.approx(1.0 + 0.5 * (r_rank + r_beh)) and paper.total > 1.0


def test_after_a_disclosure_paper_is_the_default_times_alpha_plus_two_beta(world):
    rec = recommend(f"The {OAT} is $4.99, within your budget.", OAT, "sm_p004", n=3,
                    ranking=["sm_p004", "sm_p008"])
    default = RecRMComposite().score(_ctx(world, rec, opening_history()))
    paper = RecRMComposite(variant="paper").score(_ctx(world, rec, opening_history()))
    assert default.components == paper.components
    assert default.total > 0 and paper.total == pytest.approx(default.total * 2.0)


def test_wrapper_default_protocol_picks_full_paper_protocol_picks_paper():
    assert RecRMReward(gym.make(ENV_ID, **ENV_KW)).composite.variant.name == "full"
    paper = RecRMReward(gym.make(ENV_ID, protocol="paper", **ENV_KW))
    assert paper.composite.variant.name == "paper" and not paper.composite.normalize
    # an explicit variant wins over the protocol, either way
    assert RecRMReward(gym.make(ENV_ID, protocol="paper", **ENV_KW), variant="full").composite.variant.name == "full"
    assert RecRMReward(gym.make(ENV_ID, **ENV_KW), variant="paper").composite.variant.name == "paper"
    vec = RecRMVectorReward(gym.make_vec(ENV_ID, num_envs=2, vectorization_mode="sync", protocol="paper", **ENV_KW))
    assert vec.composite.variant.name == "paper"


def _heuristic_episode(protocol: str, seed: int = 0):
    """A heuristic episode in a RecRMReward env of ``protocol``: (env, rewards, info["recrm"] per turn).

    Seed 0 asks, guides and then recommends (about ten turns), so both kinds of turn are scored.
    """
    env = RecRMReward(gym.make(ENV_ID, protocol=protocol, image_size=(96, 72)))
    obs, info = env.reset(seed=seed)
    agent = HeuristicAssistant()
    agent.reset(obs, info, seed=seed)
    rewards, results = [], []
    while True:
        obs, reward, terminated, truncated, info = env.step(agent.act(obs))
        rewards.append(reward)
        results.append(info["recrm"])
        if terminated or truncated:
            return env, rewards, results


@pytest.mark.parametrize("protocol", ["default", "paper"])
def test_heuristic_episode_under_default_and_paper(protocol):
    """The wrapper pays the protocol's variant and records it; re-scoring the same turns with the
    other variant differs as the departure says: dialogue turns 0 under the paper, recommending
    turns after a disclosure twice the default (alpha + 2 beta = 2), first-turn guesses uncapped."""
    env, rewards, results = _heuristic_episode(protocol)
    mine = "full" if protocol == "default" else "paper"
    assert {r["variant"] for r in results} == {mine}
    turns = env.unwrapped.turns
    assert [t.reward["recrm/total"] for t in turns] == pytest.approx(rewards)  # recorded as paid
    task, index = env.unwrapped.task, env.unwrapped.index
    other = RecRMComposite(variant="paper" if mine == "full" else "full")
    dialogue_full, judged = [], 0
    for i, (r, rec) in enumerate(zip(results, turns, strict=True)):
        assert 0.0 <= r["total"] <= (1.0 if mine == "full" else 2.0)
        theirs = other.score(TurnContext.from_record(rec, None, task, index, turns[:i])).total
        paper, full = (theirs, r["total"]) if mine == "full" else (r["total"], theirs)
        if r["judged_item"] is None:
            assert paper == 0.0
            dialogue_full.append(full)
        elif "first_turn_cap" in r["details"].get("relevance", {}):
            assert paper >= full
        else:
            judged += 1
            assert paper == pytest.approx(2.0 * full)
    assert judged and dialogue_full and sum(dialogue_full) > 0  # both kinds of turn were played
    env.close()


def test_gspo_reward_variant_paper_builds_the_paper_reward():
    """GSPO's reward (train.rollout.make_recrm_env) takes the variant from the training config."""
    from train.config import SituRecArguments
    from train.rollout import make_recrm_env

    cfg = SituRecArguments(reward_variant="paper", max_turns=3, env_image_size=[96, 72])
    env = make_recrm_env(cfg, "supermarket")
    assert env.composite.variant.name == "paper" and not env.composite.normalize
    assert make_recrm_env(SituRecArguments(max_turns=3, env_image_size=[96, 72]), "supermarket") \
        .composite.variant.name == "full"  # the shipped default trains on the shaped reward
    env.close()
