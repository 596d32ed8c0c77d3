"""eval.rollout with LLM roles on a scripted backend: lock-step batches, cache replay, usage, failures."""

from __future__ import annotations

import json

import pytest

import situ_gym.llm.hf_backend as hf_backend
from eval.io import read_episodes
from eval.rollout import RolloutConfig, main, run
from situ_gym.llm import BackendUnavailable, clear_backends
from tests.llm.scripted import ScriptedBackend

CALLS: list[list] = []


def _reply(request, i):
    if request.role == "moderator":
        return '{"end": false, "reason": "still shopping"}'
    turn = request.messages[-1]["content"].split(".")[0]  # "Turn N"
    return json.dumps({"utterance": f"{turn}: show me yogurt please", "tool_call": {"name": "idle", "arguments": {}},
                       "revealed": None, "give_up": False})


class _Scripted(ScriptedBackend):
    """Stands in for HFChatBackend (same constructor call); fails after ``die_after`` calls."""

    die_after: int | None = None

    def __init__(self, spec, **kwargs):
        super().__init__(_reply, model=spec)

    def chat_batch(self, requests):
        if _Scripted.die_after is not None and self.calls >= _Scripted.die_after:
            raise BackendUnavailable("endpoint stopped answering (scripted)")
        CALLS.append([r.role for r in requests])
        return super().chat_batch(requests)


@pytest.fixture(autouse=True)
def scripted(monkeypatch):
    monkeypatch.setattr(hf_backend, "HFChatBackend", _Scripted)
    CALLS.clear()
    _Scripted.die_after = None
    clear_backends()
    yield
    clear_backends()


def _config(tmp_path, out, **kw):
    base = dict(agent="heuristic", user="llm", user_model="hf:scripted", moderator="llm", tasks="0-1",
                max_turns=3, batch_size=2, llm_cache=str(tmp_path / "cache.sqlite"), out=str(tmp_path / out))
    return RolloutConfig(**(base | kw))


def test_llm_user_and_moderator_batch_across_episodes_and_rerun_hits_the_cache(tmp_path):
    run(_config(tmp_path, "a"))
    first = read_episodes(tmp_path / "a" / "trajectories.jsonl")
    assert [t.user_utterance for t in first[0].turns] == [f"Turn {k}: show me yogurt please" for k in (1, 2, 3)]
    assert all(ep.user == "llm" for ep in first)
    # Lock-step: each turn one shopper batch then one moderator batch, both episodes together.
    assert CALLS == [["user", "user"], ["moderator", "moderator"]] * 3
    metrics = json.loads((tmp_path / "a" / "metrics.json").read_text())
    assert metrics["llm"]["user"]["calls"] == 6 and metrics["llm"]["user"]["cache_misses"] == 6
    assert "LLM roles: tokens, latency, cache" in (tmp_path / "a" / "report.md").read_text()
    assert json.loads((tmp_path / "a" / "config.json").read_text())["llm_usage"]["moderator"]["calls"] == 6

    CALLS.clear()
    clear_backends()
    run(_config(tmp_path, "b"))
    again = read_episodes(tmp_path / "b" / "trajectories.jsonl")
    assert CALLS == []  # every request was answered from the cache
    assert [ep.model_dump() for ep in again] == [ep.model_dump() for ep in first]
    usage = json.loads((tmp_path / "b" / "metrics.json").read_text())["llm"]
    assert usage["user"]["cache_hits"] == 6 and usage["user"]["cache_misses"] == 0


def test_dead_endpoint_stops_the_run_and_resume_retries_the_episode_in_flight(tmp_path, capsys):
    _Scripted.die_after = 3  # episode 1 takes 3 shopper calls, episode 2 dies in flight
    argv = ["--agent", "heuristic", "--user", "llm", "--user-model", "hf:scripted", "--tasks", "0-1",
            "--max-turns", "3", "--llm-cache", "none", "--out", str(tmp_path / "r")]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert "stopped answering" in err and "--resume" in err and "Traceback" not in err
    saved = read_episodes(tmp_path / "r" / "trajectories.jsonl")
    assert [ep.error is None for ep in saved] == [True, False]  # the in-flight episode is saved, crashed
    assert len(saved[0].turns) == 3
    _Scripted.die_after = None
    clear_backends()
    assert main([*argv, "--resume"]) == 0
    done = read_episodes(tmp_path / "r" / "trajectories.jsonl")
    assert sorted(ep.task_id for ep in done) == sorted({ep.task_id for ep in done}) and len(done) == 2
    assert all(ep.error is None and len(ep.turns) == 3 for ep in done)
    assert len(read_episodes(tmp_path / "r" / "errors.jsonl")) == 1


def _usage_error(argv, capsys) -> str:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err.strip().splitlines()[-1]


def test_unreachable_endpoint_fails_before_the_first_episode(tmp_path, capsys):
    argv = ["--agent", "heuristic", "--user", "llm", "--user-model", "openai:smol", "--user-base-url",
            "http://127.0.0.1:9/v1", "--tasks", "0-1", "--out", str(tmp_path / "u")]
    last = _usage_error(argv, capsys)
    assert "user model openai:smol: endpoint http://127.0.0.1:9/v1 is unreachable" in last
    assert not (tmp_path / "u").exists()


@pytest.mark.parametrize(
    "argv, message",
    [(["--user", "llm"], "--user llm needs --user-model"),
     (["--judge", "llm"], "--judge llm needs --judge-model"),
     (["--agent", "openai"], "--agent openai needs --model"),
     (["--user", "llm", "--user-model", "gpt4"], "model spec must be 'hf:MODEL' or 'openai:MODEL'"),
     (["--user", "llm", "--user-model", "hf:gguf:/nope/x.gguf"], "GGUF file not found")],
)
def test_llm_flag_mistakes_are_one_line_errors(tmp_path, capsys, argv, message):
    assert message in _usage_error([*argv, "--out", str(tmp_path / "x")], capsys)
