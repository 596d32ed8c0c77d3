"""Batched RecRM rewards over many envs: step_envs and RecRMVectorReward equal RecRMReward per env."""

import gymnasium as gym
import pytest

import situ_gym  # noqa: F401  (registers the envs)
from agents.heuristic import HeuristicAssistant
from recrm.composite import RecRMComposite, score_turns
from recrm.wrapper import RecRMReward, RecRMVectorReward, step_envs

ENV_ID = "SituRec-Supermarket-v0"
SEEDS = (0, 1, 2)
TURNS = 4  # every env is still open after 4 heuristic turns (checked below), so all are scored each step
ENV_KW = dict(image_size=(96, 72), max_turns=8)  # small frames: the reward reads no pixels


def _heuristic_texts() -> list[list[str]]:
    """The heuristic's texts for TURNS turns of each seed's episode, plus a broken turn in env 1."""
    texts = []
    for seed in SEEDS:
        env = gym.make(ENV_ID, **ENV_KW)
        obs, info = env.reset(seed=seed)
        agent = HeuristicAssistant()
        agent.reset(obs, info, seed=seed)
        played = []
        for _ in range(TURNS):
            played.append(agent.act(obs))
            obs, _, terminated, truncated, _ = env.step(played[-1])
            assert not (terminated or truncated), "the test needs episodes longer than TURNS"
        texts.append(played)
        env.close()
    texts[1][2] = "Sure, here is the list: [a] sm_p001"  # not JSON: the gates close, the reward is 0
    return texts


@pytest.fixture(scope="module")
def texts():
    return _heuristic_texts()


@pytest.fixture(scope="module")
def tiny_ranker(tmp_path_factory):
    """A tiny random cross-encoder saved as a ``model:PATH`` ranking scorer (no training needed to count calls)."""
    from transformers import AutoModelForSequenceClassification

    from recrm.data.prompts import SYSTEM_PROMPTS
    from recrm.train.models import save_scorer
    from train.tiny import build_tiny_model

    root = tmp_path_factory.mktemp("vec_rm")
    base = build_tiny_model(root / "base", list(SYSTEM_PROMPTS.values()), hidden_size=32, num_layers=1)
    model = AutoModelForSequenceClassification.from_pretrained(base, num_labels=1)
    from transformers import AutoTokenizer

    return save_scorer(model, AutoTokenizer.from_pretrained(base), root / "ranking",
                       {"dimension": "ranking", "type": "cross_encoder"})


def _per_env(texts, **kw):
    """Rewards, info['recrm'] and record fields of each env stepped alone by its own RecRMReward."""
    envs = [RecRMReward(gym.make(ENV_ID, **ENV_KW), **kw) for _ in SEEDS]
    for seed, env in zip(SEEDS, envs, strict=True):
        env.reset(seed=seed)
    steps = []
    for t in range(TURNS):
        steps.append([env.step(texts[i][t]) for i, env in enumerate(envs)])
    return envs, steps


def _summary(step):
    _obs, reward, terminated, truncated, info = step
    return reward, terminated, truncated, info["recrm"], dict(info["turn"].reward)


def test_step_envs_equals_each_wrapper_alone(texts):
    _, alone = _per_env(texts, variant="full", outcome_bonus=1.0)
    envs = [RecRMReward(gym.make(ENV_ID, **ENV_KW), variant="full", outcome_bonus=1.0) for _ in SEEDS]
    for seed, env in zip(SEEDS, envs, strict=True):
        env.reset(seed=seed)
    rewards = set()
    for t in range(TURNS):
        batched = step_envs(envs, [texts[i][t] for i in range(len(envs))])
        for a, b in zip(alone[t], batched, strict=True):
            assert _summary(b) == _summary(a)  # exactly: same reward, info and record fields
            rewards.add(b[1])
    assert 0.0 in rewards and len(rewards) >= 2  # the broken turn scores 0, the others do not


def test_vector_wrapper_equals_make_vec_of_wrappers(texts):
    kw = dict(variant="+behavior", beta=0.25)
    per_env = gym.make_vec(ENV_ID, num_envs=len(SEEDS), vectorization_mode="sync",
                           wrappers=[lambda e: RecRMReward(e, **kw)], **ENV_KW)
    vec = RecRMVectorReward(gym.make_vec(ENV_ID, num_envs=len(SEEDS), vectorization_mode="sync", **ENV_KW), **kw)
    per_env.reset(seed=list(SEEDS))
    vec.reset(seed=list(SEEDS))
    for t in range(TURNS):
        actions = [texts[i][t] for i in range(len(SEEDS))]
        _, r_a, *_, info_a = per_env.step(actions)
        _, r_b, *_, info_b = vec.step(actions)
        assert r_b.tolist() == r_a.tolist()
        assert info_b["recrm"]["total"].tolist() == info_a["recrm"]["total"].tolist()
        assert info_b["recrm"]["components"]["relevance"].tolist() == info_a["recrm"]["components"]["relevance"].tolist()
        assert [dict(r.reward) for r in info_b["turn"]] == [dict(r.reward) for r in info_a["turn"]]
    per_env.close()
    vec.close()


def test_vector_wrapper_rejects_what_it_cannot_score():
    with pytest.raises(ValueError, match="same_step"):
        RecRMVectorReward(gym.make_vec(ENV_ID, num_envs=1, vectorization_mode="sync", image_size=(96, 72),
                                       vector_kwargs={"autoreset_mode": gym.vector.AutoresetMode.SAME_STEP}))
    with pytest.raises(ValueError, match="outcome_bonus"):
        RecRMVectorReward(gym.make_vec(ENV_ID, num_envs=1, vectorization_mode="sync", image_size=(96, 72)),
                          outcome_bonus=-1.0)
    with pytest.raises(ValueError, match="one action per env"):
        step_envs([RecRMReward(gym.make(ENV_ID, image_size=(96, 72)))], [])


def _count_calls(monkeypatch, scorer):
    calls = []
    predict = scorer.predict
    monkeypatch.setattr(scorer, "predict", lambda fields: calls.append(len(fields)) or predict(fields))
    return calls


@pytest.mark.slow
def test_a_model_scorer_sees_one_batch_per_vector_step(texts, tiny_ranker, monkeypatch):
    from recrm.scorers import resolve_scorer

    spec = {"ranking": f"model:{tiny_ranker}"}
    scorer = resolve_scorer("ranking", spec["ranking"])  # the process-wide copy every wrapper shares
    calls = _count_calls(monkeypatch, scorer)
    _, alone = _per_env(texts, scorers=spec)
    ranked = [sum(1 for step in alone[t] if step[4]["recrm"]["components"]["ranking"] is not None)
              for t in range(TURNS)]
    assert calls == [1] * sum(ranked)  # alone: one call of one turn per env that ranked something

    calls.clear()
    envs = [RecRMReward(gym.make(ENV_ID, **ENV_KW), scorers=spec) for _ in SEEDS]
    for seed, env in zip(SEEDS, envs, strict=True):
        env.reset(seed=seed)
    vec = RecRMVectorReward(gym.make_vec(ENV_ID, num_envs=len(SEEDS), vectorization_mode="sync", **ENV_KW),
                            scorers=spec)
    vec.reset(seed=list(SEEDS))
    for t in range(TURNS):
        actions = [texts[i][t] for i in range(len(SEEDS))]
        before = len(calls)
        batched = step_envs(envs, actions)
        assert calls[before:] == ([ranked[t]] if ranked[t] else [])  # ONE call holding every env's turn
        before = len(calls)
        _, rewards, *_ = vec.step(actions)
        assert calls[before:] == ([ranked[t]] if ranked[t] else [])
        for a, b, r in zip(alone[t], batched, rewards, strict=True):
            assert b[1] == pytest.approx(a[1], abs=1e-6) and r == pytest.approx(a[1], abs=1e-6)
            assert b[4]["recrm"]["details"]["ranking"].get("scorer", str(tiny_ranker.resolve())) == str(
                tiny_ranker.resolve())
    assert sum(ranked) > TURNS  # the heuristic ranks in most turns: batching had something to gather


def test_score_turns_groups_shared_components(index, task):
    """Two composites sharing one component object: one call for both turns, results as alone."""
    from recrm.components import ComponentScore, default_components
    from recrm.context import TurnContext

    class Counting:
        name = "ranking"

        def __init__(self):
            self.batches = []

        def score(self, ctx):
            return ComponentScore(0.5, {})

        def score_batch(self, ctxs):
            self.batches.append(len(ctxs))
            return [self.score(c) for c in ctxs]

    shared = Counting()
    comps = lambda: [c for c in default_components() if c.name != "ranking"] + [shared]  # noqa: E731
    a, b = RecRMComposite(components=comps()), RecRMComposite(components=comps(), beta=0.25)
    ctx = TurnContext(task=task, index=index, response="Do you have a budget in mind?", ranking=(task.reference_set[0],))
    results = score_turns([(a, ctx), (b, ctx)])
    assert shared.batches == [2]
    assert [r.as_dict() for r in results] == [a.score(ctx).as_dict(), b.score(ctx).as_dict()]
    assert list(results[1].components) == list(b.components)  # keys in the composite's own order


def test_vector_wrapper_leaves_autoreset_steps_unscored(texts):
    """next_step autoreset: the step after an episode ends resets that env; it carries no turn and earns 0."""
    kw = dict(image_size=(96, 72), max_turns=2)
    per_env = gym.make_vec(ENV_ID, num_envs=2, vectorization_mode="sync", wrappers=[RecRMReward], **kw)
    vec = RecRMVectorReward(gym.make_vec(ENV_ID, num_envs=2, vectorization_mode="sync", **kw))
    per_env.reset(seed=[0, 1])
    vec.reset(seed=[0, 1])
    for t in range(3):
        actions = [texts[0][t], texts[1][t]]
        _, r_a, _, trunc_a, info_a = per_env.step(actions)
        _, r_b, _, trunc_b, info_b = vec.step(actions)
        assert r_b.tolist() == r_a.tolist() and trunc_b.tolist() == trunc_a.tolist()
        if t == 1:
            assert trunc_b.tolist() == [True, True]  # the turn limit ends both episodes
        if t == 2:  # both envs were reset instead of stepped
            assert r_b.tolist() == [0.0, 0.0] and "recrm" not in info_b and "recrm" not in info_a
        else:
            assert info_b["_recrm"].tolist() == [True, True] and r_b[0] > 0
    per_env.close()
    vec.close()


def test_the_last_step_carries_the_outcome_credit_alone_and_batched():
    """On an episode's last step both wrappers write ``info["recrm"]["outcome_credit"]``
    (recrm.outcome.outcome_credit of the episode: what a trainer reads, remotely too); on no
    earlier step. A gate-failing first turn leaves the purchase part of its bonus."""
    from recrm.outcome import outcome_credit

    kw = dict(image_size=(96, 72), max_turns=20, text_only=True)
    broken = "Sure, here is the list: [a] sm_p001"  # not JSON: the gates close
    alone = RecRMReward(gym.make(ENV_ID, **kw))
    obs, info = alone.reset(seed=0)
    agent = HeuristicAssistant()
    agent.reset(obs, info, seed=0)
    texts, seen = [broken], []
    obs, _, terminated, truncated, info = alone.step(broken)
    while not (terminated or truncated):
        seen.append("outcome_credit" in info["recrm"])
        texts.append(agent.act(obs))
        obs, _, terminated, truncated, info = alone.step(texts[-1])
    base = alone.unwrapped
    assert info.get("termination") == "success_cart_added" and not any(seen)
    credit = info["recrm"]["outcome_credit"]
    assert credit == outcome_credit(base.turns, base.backend.cart, base.index) and 0.0 < credit < 1.0
    vec = RecRMVectorReward(gym.make_vec(ENV_ID, num_envs=1, vectorization_mode="sync", **kw))
    vec.reset(seed=0)
    for text in texts:
        _, _, terminated, truncated, infos = vec.step([text])
    assert terminated[0] or truncated[0]
    assert infos["recrm"]["_outcome_credit"][0] and infos["recrm"]["outcome_credit"][0] == credit
