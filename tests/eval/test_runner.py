"""eval.runner.play_batch on the real env: the per-episode default of Assistant, batched
assistants, crash isolation, hooks, and results that do not depend on the batch."""

from __future__ import annotations

import gymnasium as gym
import pytest

import situ_gym  # noqa: F401 - registers the envs
from agents.base import Assistant, acts_in_batches
from agents.heuristic import HeuristicAssistant
from eval.runner import EpisodeSpec, play_batch

SPECS = [EpisodeSpec("sm_u01_t1", 0), EpisodeSpec("sm_u01_t2", 1), EpisodeSpec("sm_u01_t3", 2)]


@pytest.fixture(scope="module")
def envs():
    made = [gym.make("SituRec-Supermarket-v0", image_size=(64, 48), max_turns=4) for _ in SPECS]
    yield made
    for env in made:
        env.close()


def _transcripts(envs, assistant, specs):
    """Per episode: the assistant texts, the env's termination and the turn count."""
    texts: dict[int, list[str]] = {i: [] for i in range(len(specs))}
    done_flags: dict[int, list[bool]] = {i: [] for i in range(len(specs))}

    def on_step(i, text, obs, info, done):
        texts[i].append(text)
        done_flags[i].append(done)

    results = play_batch(envs[: len(specs)], assistant, specs, on_step=on_step)
    for i, r in enumerate(results):  # the last step, and only it, ends an episode the env ended
        ended = [True] if r.error is None else [False]
        assert done_flags[i] == [False] * (r.turns - 1) + ended, (i, r)
    return [(texts[i], r.termination, r.turns, r.error) for i, r in enumerate(results)]


class Counter(Assistant):
    """A stateful per-episode assistant: its text names its own turn count and seed, so
    state shared between episodes would show."""

    name = "counter"

    def reset(self, observation, info, *, seed=None):
        self.n, self.seed = 0, seed

    def act(self, observation):
        self.n += 1
        if self.seed == 1 and self.n == 2:
            raise RuntimeError("episode with seed 1 breaks on its second turn")
        return (f'{{"response": "turn {self.n} of seed {self.seed}", "assistant_actions": [{{"type": "Greet"}}], '
                '"ranking": []}')


def test_batches_of_the_heuristic_equal_single_episodes(envs):
    together = _transcripts(envs, HeuristicAssistant(), SPECS)
    alone = [_transcripts(envs, HeuristicAssistant(), [spec])[0] for spec in SPECS]
    assert together == alone
    assert all(error is None and termination for _, termination, _, error in together)
    assert any(turns > 1 for _, _, turns, _ in together)


def test_a_crash_ends_only_its_episode_and_the_default_keeps_episodes_apart(envs):
    agent = Counter()
    assert not acts_in_batches(agent)
    (t0, end0, n0, err0), (t1, end1, n1, err1), (t2, end2, n2, err2) = _transcripts(envs, agent, SPECS)
    assert end1 == "error" and "seed 1 breaks" in err1 and t1 == [t0[0].replace("seed 0", "seed 1")]
    assert err0 is None and err2 is None and end0 == end2 == "turn_limit" and n0 == n2 == 4
    assert [t.split('"')[3] for t in t2] == [f"turn {k} of seed 2" for k in range(1, 5)]


class Batched:
    """A duck-typed batch policy: records every act_batch call's episode indices."""

    def __init__(self):
        self.calls: list[list[int]] = []

    def reset_batch(self, observations, infos, *, seeds=None):
        self.infos, self.seeds = infos, seeds

    def act_batch(self, observations, *, episodes=None):
        self.calls.append(list(episodes))
        if len(self.calls) == 2:  # the whole batch fails once
            raise ConnectionError("engine gone")
        return ['{"response": "hello", "assistant_actions": [{"type": "Greet"}], "ranking": []}'] * len(episodes)


def test_batched_assistants_get_one_call_per_turn_and_a_batch_failure_ends_the_batch(envs):
    agent = Batched()
    assert acts_in_batches(agent)
    results = play_batch(envs, agent, SPECS)
    assert agent.calls == [[0, 1, 2], [0, 1, 2]]
    assert agent.infos == [{"store": "supermarket", "ablation": None, "protocol": "default"}] * 3
    assert agent.seeds == [0, 1, 2]
    assert [(r.termination, r.turns) for r in results] == [("error", 1)] * 3
    assert all("engine gone" in r.error for r in results)


class BrokenStep(gym.Wrapper):
    def step(self, action):
        raise OSError("renderer lost")


def test_an_env_crash_and_a_hook_crash_stay_in_their_episode(envs):
    done_order = []

    def on_reset(i, obs, info):
        if i == 2:
            raise KeyError("hook")

    wrapped = [envs[0], BrokenStep(envs[1]), envs[2]]
    results = play_batch(wrapped, HeuristicAssistant(), SPECS, on_reset=on_reset,
                         on_done=lambda i, r: done_order.append((i, r.termination)))
    assert "renderer lost" in results[1].error and "KeyError: 'hook'" in results[2].error
    assert results[0].error is None and results[0].termination != "error" and results[0].env_seconds > 0
    assert done_order[:2] == [(2, "error"), (1, "error")] and done_order[2][0] == 0


def test_one_env_per_episode():
    with pytest.raises(ValueError, match="one env per episode, got 1 envs for 2 episodes"):
        play_batch([None], HeuristicAssistant(), SPECS[:2])
