"""The runner against the real env: interrupt + resume == uninterrupted; 1 vs 2 workers
give identical episodes; a crashing agent is recorded and the run goes on."""

from __future__ import annotations

import pytest

from agents.base import Assistant
from eval.aggregate import summarize_groups
from eval.io import read_episodes
from eval.rollout import RolloutConfig, run

# Tiny settings so the whole module stays a few seconds: 3 tasks, 3 turns, 64x48 frames.
SMALL = dict(env="SituRec-Supermarket-v0", agent="random", tasks="0-2", max_turns=3,
             env_kwargs={"image_size": [64, 48]}, judge="none", no_report=True)


class CrashingAssistant(Assistant):
    """Crashes on its second turn (to test that the runner records errors)."""

    name = "crash"

    def reset(self, observation, info, *, seed=None):
        self.n = 0

    def act(self, observation):
        self.n += 1
        if self.n == 2:
            raise RuntimeError("boom")
        return '{"response": "hi", "assistant_actions": [{"type": "Greet"}], "ranking": []}'


def _by_id(path):
    return {ep.episode_id: ep.model_dump_json() for ep in read_episodes(path)}


def _metrics(path):
    groups = summarize_groups(read_episodes(path))
    for g in groups.values():
        g.pop("per_episode")
    return groups


def test_interrupt_then_resume_equals_uninterrupted(tmp_path):
    full = tmp_path / "full"
    run(RolloutConfig(out=str(full), **SMALL))
    part = tmp_path / "part"
    run(RolloutConfig(out=str(part), max_episodes=1, **SMALL))  # "killed" after one episode
    with open(part / "trajectories.jsonl", "a") as fh:
        fh.write('{"episode_id": "sm_t0')  # and mid-way through writing the next line
    run(RolloutConfig(out=str(part), resume=True, **SMALL))
    assert _by_id(part / "trajectories.jsonl") == _by_id(full / "trajectories.jsonl")
    assert _metrics(part / "trajectories.jsonl") == _metrics(full / "trajectories.jsonl")
    assert len(_by_id(full / "trajectories.jsonl")) == 3
    # Resuming a finished run adds nothing; a different setup is refused.
    run(RolloutConfig(out=str(part), resume=True, **SMALL))
    assert len(read_episodes(part / "trajectories.jsonl")) == 3
    with pytest.raises(ValueError, match="different setup"):
        run(RolloutConfig(out=str(part), resume=True, **{**SMALL, "seed": 5}))


def test_worker_count_does_not_change_results(tmp_path):
    one, two = tmp_path / "w1", tmp_path / "w2"
    run(RolloutConfig(out=str(one), workers=1, repeats=2, **SMALL))
    run(RolloutConfig(out=str(two), workers=2, repeats=2, **SMALL))
    a, b = _by_id(one / "trajectories.jsonl"), _by_id(two / "trajectories.jsonl")
    assert len(a) == 6 and a == b
    # The file itself, not only its episodes: rewritten in (task, repeat) order at the end.
    assert (one / "trajectories.jsonl").read_bytes() == (two / "trajectories.jsonl").read_bytes()
    seeds = sorted({ep.seed for ep in read_episodes(one / "trajectories.jsonl")})
    assert seeds == [0, 1]  # repeat r uses seed + r


def test_crashed_episode_is_saved_and_the_run_goes_on(tmp_path):
    out = tmp_path / "crash"
    groups = run(RolloutConfig(out=str(out), **{**SMALL, "agent": f"{__name__}:CrashingAssistant",
                                                 "no_report": False, "judge": "rule"}))
    eps = read_episodes(out / "trajectories.jsonl")
    assert len(eps) == 3
    assert all(ep.termination == "error" and "boom" in ep.error for ep in eps if len(ep.turns) == 1)
    assert sum(ep.termination == "error" for ep in eps) >= 1
    assert next(iter(groups.values()))["errors"] >= 1
    assert (out / "report.md").exists() and (out / "index.html").exists()


class BatchedRandom(Assistant):
    """A batch agent (reset_batch / act_batch(episodes=...)) made of RandomAssistants, so
    its turns must equal the per-episode run; records the largest batch it served."""

    name = "batched-random"
    largest = 0

    def reset(self, observation, info, *, seed=None):
        self.reset_batch([observation], [info], seeds=[seed])

    def reset_batch(self, observations, infos, *, seeds=None):
        from agents.random_agent import RandomAssistant

        self.slots = []
        for obs, info, seed in zip(observations, infos, seeds, strict=True):
            agent = RandomAssistant()
            agent.reset(obs, info, seed=seed)
            self.slots.append(agent)

    def act(self, observation):
        return self.act_batch([observation], episodes=[0])[0]

    def act_batch(self, observations, *, episodes=None):
        type(self).largest = max(type(self).largest, len(observations))
        return [self.slots[i].act(o) for i, o in zip(episodes, observations, strict=True)]


def test_lock_step_batches_give_the_per_episode_results(tmp_path):
    ref = tmp_path / "ref"
    run(RolloutConfig(out=str(ref), **SMALL))
    plain = tmp_path / "plain"  # RandomAssistant has no reset_batch: one instance per episode
    run(RolloutConfig(out=str(plain), batch_size=2, **SMALL))
    batched = tmp_path / "batched"
    run(RolloutConfig(out=str(batched), batch_size=3, **{**SMALL, "agent": f"{__name__}:BatchedRandom"}))
    assert BatchedRandom.largest == 3
    expected = {k: v.replace('"agent":"random"', "") for k, v in _by_id(ref / "trajectories.jsonl").items()}
    assert _by_id(plain / "trajectories.jsonl") == _by_id(ref / "trajectories.jsonl")
    got = {k: v.replace(f'"agent":"{__name__}:BatchedRandom"', "")
           for k, v in _by_id(batched / "trajectories.jsonl").items()}
    assert got == expected
