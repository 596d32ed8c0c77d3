"""Model faults by kind, seen from the rollout command: an episode-level fault ends its own
episode with its cause and nothing else; a dead endpoint stops the run with every finished
episode saved; a prompt beyond the context stops it before the first episode; exit
statuses tell these apart, and a role that mostly fell back fails the run."""

from __future__ import annotations

import json
import os

from agents.base import Assistant
from eval.io import read_episodes
from eval.rollout import (
    EXIT_EPISODE_ERRORS,
    EXIT_FALLBACKS,
    EXIT_OK,
    EXIT_STOPPED,
    RolloutConfig,
    main,
    run_status,
)
from eval.runner import EpisodeSpec, play_batch
from situ_gym.llm import BackendUnavailable, EpisodeError

ARGS = ["--env", "SituRec-Supermarket-v0", "--tasks", "0-2", "--max-turns", "3",
        "--env-kwargs", '{"image_size": [64, 48]}', "--judge", "none"]


class _Counting(Assistant):
    """A random assistant that counts its episodes (runs here are inline: one process)."""

    episodes = 0

    def reset(self, observation, info, *, seed=None):
        from agents.random_agent import RandomAssistant

        type(self).episodes += 1
        self.episode, self.turn = type(self).episodes, 0
        self.inner = RandomAssistant()
        self.inner.reset(observation, info, seed=seed)

    def act(self, observation):
        self.turn += 1
        fault = self.fault()
        if fault is not None:
            raise fault
        return self.inner.act(observation)

    def fault(self):
        return None


class OverflowOnSecond(_Counting):
    """The second episode's second request overflows the model's context while
    SITU_TEST_OVERFLOW is set (the setup check's episode counts as the first)."""

    name = "overflow"

    def fault(self):
        if os.environ.get("SITU_TEST_OVERFLOW") and self.episode == 3 and self.turn == 2:
            return EpisodeError("context_length", "prompt of 9000 tokens, context 8192")
        return None


class DiesOnSecond(_Counting):
    name = "dies"

    def fault(self):
        if os.environ.get("SITU_TEST_DEAD") and self.episode >= 3:
            return BackendUnavailable("endpoint http://127.0.0.1:9/v1: last status 503 after 6 retries")
        return None


class TooLongFirstPrompt(_Counting):
    name = "too-long"

    def check_first_prompt(self, observation):
        raise EpisodeError("context_length", "the first prompt holds 20025 tokens, the model's context is 8192")


def _reset_counts():
    _Counting.episodes = 0
    for cls in (OverflowOnSecond, DiesOnSecond, TooLongFirstPrompt):
        cls.episodes = 0


def test_an_episode_level_fault_ends_that_episode_alone_and_resume_keeps_it(tmp_path, capsys, monkeypatch):
    _reset_counts()
    monkeypatch.setenv("SITU_TEST_OVERFLOW", "1")
    out = tmp_path / "r"
    argv = [*ARGS, "--agent", f"{__name__}:OverflowOnSecond", "--out", str(out)]
    assert main(argv) == EXIT_EPISODE_ERRORS
    err = capsys.readouterr().err
    assert "1 of 3 episodes ended in error (context_length: 1)" in err
    saved = read_episodes(out / "trajectories.jsonl")
    assert [ep.error_cause for ep in saved] == [None, "context_length", None]
    assert [len(ep.turns) for ep in saved] == [3, 1, 3]  # the first turn of the failed episode is kept
    report = (out / "report.md").read_text(encoding="utf-8").splitlines()
    assert "1 of 3 episodes ended in error" in "\n".join(report[:4]) and "context_length: 1" in report[2]
    groups = json.loads((out / "metrics.json").read_text())["groups"]
    assert next(iter(groups.values()))["error_causes"] == {"context_length": 1}

    # The same request would overflow again: --resume keeps the episode ...
    monkeypatch.delenv("SITU_TEST_OVERFLOW")
    _reset_counts()
    assert main([*argv, "--resume"]) == EXIT_EPISODE_ERRORS
    assert [ep.error_cause for ep in read_episodes(out / "trajectories.jsonl")] == [None, "context_length", None]
    assert not (out / "errors.jsonl").exists()
    # ... and --retry-errors plays it again (here the fault is gone).
    _reset_counts()
    assert main([*argv, "--resume", "--retry-errors"]) == EXIT_OK
    again = read_episodes(out / "trajectories.jsonl")
    assert [ep.termination != "error" for ep in again] == [True, True, True]
    assert [ep.error_cause for ep in read_episodes(out / "errors.jsonl")] == ["context_length"]


def test_a_dead_endpoint_stops_the_run_saves_what_finished_and_resume_reruns_the_rest(tmp_path, capsys,
                                                                                       monkeypatch):
    _reset_counts()
    monkeypatch.setenv("SITU_TEST_DEAD", "1")
    out = tmp_path / "r"
    argv = [*ARGS, "--agent", f"{__name__}:DiesOnSecond", "--out", str(out), "--no-report"]
    assert main(argv) == EXIT_STOPPED
    err = capsys.readouterr().err.strip().splitlines()
    assert "a chat model endpoint failed" in err[-1] and "last status 503" in err[-1]
    assert "Traceback" not in "\n".join(err)
    saved = read_episodes(out / "trajectories.jsonl")
    assert [ep.error_cause for ep in saved] == [None, "backend_unavailable"]  # the third never started
    monkeypatch.delenv("SITU_TEST_DEAD")
    _reset_counts()
    assert main([*argv, "--resume"]) == EXIT_OK
    done = read_episodes(out / "trajectories.jsonl")
    assert len(done) == 3 and all(ep.error is None for ep in done)


def test_a_first_prompt_beyond_the_context_is_a_setup_error_before_any_episode(tmp_path, capsys):
    import pytest

    _reset_counts()
    out = tmp_path / "r"
    with pytest.raises(SystemExit) as exc:
        main([*ARGS, "--agent", f"{__name__}:TooLongFirstPrompt", "--out", str(out)])
    assert exc.value.code == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last.startswith("python -m eval.rollout: error:") and "20025 tokens" in last and "does not fit" in last
    assert not out.exists()


def test_a_batched_assistant_can_fail_one_episode_of_its_batch():
    """An EpisodeError returned in place of one episode's text ends that episode only."""
    import gymnasium as gym

    import situ_gym  # noqa: F401

    class HalfOverflows(Assistant):
        def reset(self, observation, info, *, seed=None):
            pass

        def reset_batch(self, observations, infos, *, seeds=None):
            from agents.heuristic import HeuristicAssistant

            self.inner = HeuristicAssistant()
            self.inner.reset_batch(observations, infos, seeds=seeds)

        def act(self, observation):
            raise AssertionError("acts in batches")

        def act_batch(self, observations, *, episodes=None):
            texts = self.inner.act_batch(observations, episodes=episodes)
            return [EpisodeError("context_length", "too long") if e == 1 else t
                    for e, t in zip(episodes, texts, strict=True)]

    envs = [gym.make("SituRec-Supermarket-v0", max_turns=2, image_size=(64, 48)) for _ in range(3)]
    results = play_batch(envs, HalfOverflows(), [EpisodeSpec(f"sm_u0{i + 1}_t1", 0) for i in range(3)])
    assert [r.error_cause for r in results] == [None, "context_length", None]
    assert [r.turns for r in results] == [2, 0, 2]
    assert results[1].termination == "error" and "context_length: too long" in results[1].error


def _usage(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def test_a_role_that_mostly_fell_back_fails_the_run_naming_role_and_rate(tmp_path):
    out = tmp_path / "r"
    out.mkdir()
    config = RolloutConfig(out=str(out), user="llm", user_model="hf:m", judge="none")
    shopper = [{"role": "user", "model": "hf:m", "decisions": 1, "used": 1}] * 7
    shopper += [{"role": "user", "model": "hf:m", "decisions": 1, "fallbacks": 1}] * 3
    _usage(out / "llm_usage.jsonl", shopper)
    status, lines = run_status(config)
    assert status == EXIT_FALLBACKS and "user role fell back on 3 of 10 decisions (30%" in lines[0]
    assert "hf:m" in lines[0]
    # At 20% (the default limit) it passes; a stricter limit fails it.
    _usage(out / "llm_usage.jsonl", shopper[:1] + shopper[:7] + shopper[-2:])  # 8 used, 2 fallbacks
    assert run_status(config)[0] == EXIT_OK
    strict = RolloutConfig(out=str(out), user="llm", user_model="hf:m", judge="none", max_fallback_rate=0.1)
    assert run_status(strict)[0] == EXIT_FALLBACKS
