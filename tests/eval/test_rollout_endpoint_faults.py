"""The README's fault table, row by row, on a real rollout against the fault-injecting
OpenAI-compatible server (127.0.0.1): what the run does, its exit status, what is saved.

The LLM shopper talks to the server (which echoes, so most of its turns fall back to idle:
``--max-fallback-rate 1`` keeps that out of the exit status except in its own row)."""

from __future__ import annotations

import pytest

from eval.io import read_episodes
from eval.rollout import EXIT_EPISODE_ERRORS, EXIT_FALLBACKS, EXIT_OK, EXIT_STOPPED, main
from situ_gym.scene.loader import load_task_bank
from tests.llm.fault_server import FaultServer


@pytest.fixture
def server():
    srv = FaultServer(lifetime=120.0).start()
    yield srv
    srv.stop()


def _argv(server, out, *extra):
    return ["--env", "SituRec-Supermarket-v0", "--agent", "heuristic", "--tasks", "0-2", "--max-turns", "2",
            "--env-kwargs", '{"image_size": [64, 48]}', "--judge", "none", "--no-report", "--llm-cache", "none",
            "--user", "llm", "--user-model", "openai:m", "--user-base-url", server.url,
            "--llm-retries", "1", "--llm-timeout", "5", "--max-fallback-rate", "1", "--out", str(out), *extra]


def _goal(task_index: int) -> str:
    """Text found only in that task's shopper prompt (its private goal)."""
    return load_task_bank("supermarket").tasks[task_index].request


def test_transient_faults_are_retried_and_the_run_finishes_clean(server, tmp_path):
    from situ_gym.llm import METER

    server.plan("500", "not_json", "no_choices", "429_retry_after_ms", "reset")
    out = tmp_path / "r"
    before = METER.log_path
    assert main(_argv(server, out)) == EXIT_OK
    assert METER.log_path == before  # the run's usage file was the meter's for the run only
    saved = read_episodes(out / "trajectories.jsonl")
    assert len(saved) == 3 and all(ep.error is None and len(ep.turns) == 2 for ep in saved)
    from situ_gym.llm import read_usage, summarize_usage

    assert summarize_usage(read_usage(out / "llm_usage.jsonl"))["user"]["retries"] == 5


@pytest.mark.parametrize("fault, cause", [("context_vllm", "context_length"), ("content_filter", "content_filter")])
def test_an_episode_level_fault_ends_its_episode_alone(server, tmp_path, fault, cause):
    server.when(_goal(1), fault)
    out = tmp_path / "r"
    assert main(_argv(server, out)) == EXIT_EPISODE_ERRORS
    saved = read_episodes(out / "trajectories.jsonl")
    assert [ep.error_cause for ep in saved] == [None, cause, None]
    assert [len(ep.turns) for ep in saved] == [2, 0, 2]
    before = server.requests()
    assert main([*_argv(server, out), "--resume"]) == EXIT_EPISODE_ERRORS  # not retried ...
    assert server.requests() == before
    assert main([*_argv(server, out), "--resume", "--retry-errors"]) == EXIT_EPISODE_ERRORS  # ... unless asked
    assert server.requests() > before


def test_an_endpoint_that_stays_down_stops_the_run_with_one_line(server, tmp_path, capsys):
    server.when(_goal(1), "503")
    out = tmp_path / "r"
    assert main(_argv(server, out)) == EXIT_STOPPED
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert server.url in last and "503" in last and "--resume" in last
    saved = read_episodes(out / "trajectories.jsonl")
    assert [ep.error_cause for ep in saved] == [None, "backend_unavailable"]  # task 2 never started
    import json

    assert not any(_goal(2) in json.dumps(a.body) for a in server.arrivals)  # nothing sent after the stop


def test_a_batch_keeps_its_other_episodes_when_one_overflows(server, tmp_path):
    server.when(_goal(0), "context_vllm_v1")
    out = tmp_path / "r"
    assert main([*_argv(server, out), "--batch-size", "3"]) == EXIT_EPISODE_ERRORS
    saved = read_episodes(out / "trajectories.jsonl")
    assert [ep.error_cause for ep in saved] == ["context_length", None, None]
    assert [len(ep.turns) for ep in saved] == [0, 2, 2]


def test_a_shopper_model_that_never_answers_usably_fails_the_run(server, tmp_path, capsys):
    out = tmp_path / "r"
    argv = _argv(server, out)
    argv[argv.index("--max-fallback-rate") + 1] = "0.2"
    assert main(argv) == EXIT_FALLBACKS
    err = capsys.readouterr().err
    assert "the user role fell back on 6 of 6 decisions (100% > --max-fallback-rate 20%)" in err
    assert "its model (m)" in err


@pytest.mark.parametrize("setup, message", [
    (dict(models=["other-model"]), "does not serve model 'm'; it serves: other-model"),
    (dict(max_model_len=64), "does not fit"),
])
def test_setup_faults_stop_before_any_episode(tmp_path, capsys, setup, message):
    from situ_gym.llm import METER

    srv = FaultServer(lifetime=60.0, **setup).start()
    before = METER.log_path
    try:
        out = tmp_path / "r"
        argv = ["--env", "SituRec-Supermarket-v0", "--tasks", "0-1", "--judge", "none", "--llm-cache", "none",
                "--agent", "openai", "--model", "m", "--base-url", srv.url, "--out", str(out)]
        if "max_model_len" in setup:
            srv.when("", "context_vllm")  # the server's own word on the first prompt
        with pytest.raises(SystemExit) as exc:
            main(argv)
        assert exc.value.code == 2
        last = capsys.readouterr().err.strip().splitlines()[-1]
        assert last.startswith("python -m eval.rollout: error:") and message in last
        assert not out.exists()
        # a later LLM call in this process must not log into the refused run's (missing) folder
        assert METER.log_path == before
    finally:
        srv.stop()
