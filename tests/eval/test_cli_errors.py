"""User errors on the scoring command lines are one line, exit 2 (the usage block is for --help)."""

from __future__ import annotations

import pytest

from eval.metrics.__main__ import main as metrics_main
from recrm.score import main as score_main


def _bad_inputs(tmp_path):
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_text("hello\nworld\n")
    binary = tmp_path / "binary.jsonl"
    binary.write_bytes(b"\xff\xfe\x00\x01\x80" * 20 + b"\n" + b"\x00" * 10)
    wrong = tmp_path / "wrong.jsonl"
    wrong.write_text('{"episode_id": 3}\n{"nope": true}\n')
    return {"missing": tmp_path / "nope.jsonl", "garbage": garbage, "binary": binary, "wrong": wrong}


@pytest.mark.parametrize("cli", ["eval.metrics", "recrm.score"])
@pytest.mark.parametrize("kind", ["missing", "garbage", "binary", "wrong"])
def test_bad_trajectory_file_is_one_line(tmp_path, capsys, cli, kind):
    path = _bad_inputs(tmp_path)[kind]
    main = metrics_main if cli == "eval.metrics" else score_main
    with pytest.raises(SystemExit) as exc:
        main([str(path)])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "usage:" not in err and err.count("\n") == 1
    assert err.startswith(f"python -m {cli}: error: ") and path.name in err


@pytest.mark.parametrize("cli", ["eval.metrics", "recrm.score"])
def test_a_record_without_turns_is_refused_at_its_line(tmp_path, capsys, cli):
    """It used to read as an episode of 0 turns (a 0-turn success when its cart was kept:
    mean Turn fell from 11.1 to 7.6); now it names FILE: line N and the field."""
    import json

    from eval.io import append_episode
    from tests.eval.builders import episode, turn

    path = tmp_path / "t.jsonl"
    append_episode(path, episode([turn(1)]))
    doc = json.loads(path.read_text().splitlines()[0])
    del doc["turns"]
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(doc) + "\n")
    main = metrics_main if cli == "eval.metrics" else score_main
    with pytest.raises(SystemExit) as exc:
        main([str(path)])
    assert exc.value.code == 2
    assert capsys.readouterr().err == (f"python -m {cli}: error: {path}: line 2 is not a valid EpisodeRecord: "
                                       "field turns: Field required in a trajectory file\n")


def test_metrics_unknown_judge_is_one_line(tmp_path, capsys):
    from eval.io import append_episode
    from tests.eval.builders import episode, turn

    path = tmp_path / "t.jsonl"
    append_episode(path, episode([turn(1)]))
    with pytest.raises(SystemExit) as exc:
        metrics_main([str(path), "--judge", "gpt"])
    assert exc.value.code == 2
    assert capsys.readouterr().err.strip().splitlines()[-1].endswith("unknown judge 'gpt'; choose one of ['rule', 'llm']")


# ------------------------------------------------ the LLM judge: model missing, endpoint dead


def _saved_run(tmp_path):
    from eval.io import append_episode
    from tests.eval.builders import episode, turn

    path = tmp_path / "run" / "trajectories.jsonl"
    path.parent.mkdir()
    append_episode(path, episode([turn(1, response="Hello! What are you looking for?")]))
    return path.parent


def _one_line(capsys, cli="eval.metrics"):
    err = capsys.readouterr().err
    assert "Traceback" not in err and "usage:" not in err and err.count("\n") == 1, err
    assert err.startswith(f"python -m {cli}: error: ")
    return err.strip()


@pytest.mark.parametrize("argv, message", [
    (["--judge", "llm"], "--judge llm needs --judge-model SPEC"),
    (["--judge-model", "hf:x"], "--judge-model and --judge-base-url need --judge llm"),
    (["--judge", "llm", "--judge-model", "nospec"], "model spec must be 'hf:MODEL' or 'openai:MODEL'"),
    (["--judge", "llm", "--judge-model", "hf:gguf:/nowhere/model.gguf"], "judge model hf:gguf:/nowhere/model.gguf"),
])
def test_metrics_llm_judge_setup_mistakes_are_one_line(tmp_path, capsys, argv, message):
    with pytest.raises(SystemExit) as exc:
        metrics_main([str(_saved_run(tmp_path)), *argv])
    assert exc.value.code == 2
    assert message in _one_line(capsys)


def test_metrics_llm_judge_dead_endpoint_is_one_line(tmp_path, capsys, free_tcp_port):
    url = f"http://127.0.0.1:{free_tcp_port}/v1"  # nobody listens there
    with pytest.raises(SystemExit) as exc:
        metrics_main([str(_saved_run(tmp_path)), "--judge", "llm", "--judge-model", "openai:m",
                      "--judge-base-url", url])
    assert exc.value.code == 2
    last = _one_line(capsys)
    assert last.startswith("python -m eval.metrics: error: judge model openai:m: endpoint ") and "unreachable" in last


def test_metrics_llm_judge_endpoint_dying_after_the_check_is_one_line(tmp_path, capsys):
    from situ_gym.llm import configure
    from situ_gym.llm.settings import LLMSettings
    from tests.llm.fault_server import FaultServer

    server = FaultServer(lifetime=60.0).start()
    try:
        server.when("Assistant:", "503")  # GET /models answers; every judge request is refused
        configure(LLMSettings(retries=0, backoff=0.0, max_backoff=0.0, timeout=5.0))
        with pytest.raises(SystemExit) as exc:
            metrics_main([str(_saved_run(tmp_path)), "--judge", "llm", "--judge-model", "openai:m",
                          "--judge-base-url", server.url, "--no-scene"])
    finally:
        server.stop()
    assert exc.value.code == 2
    last = _one_line(capsys)
    assert last.startswith("python -m eval.metrics: error: judge model openai:m: ") and "503" in last


def test_human_report_llm_judge_mistakes_are_one_line(tmp_path, capsys, free_tcp_port):
    from eval.human.__main__ import main as human_main

    study = tmp_path / "study"
    run = study / "runs" / "heuristic"
    run.mkdir(parents=True)
    (_saved_run(tmp_path) / "trajectories.jsonl").rename(run / "trajectories.jsonl")
    url = f"http://127.0.0.1:{free_tcp_port}/v1"
    for argv, message in [
        (["--judge", "llm"], "--judge llm needs --judge-model SPEC"),
        (["--judge", "llm", "--judge-model", "openai:m", "--judge-base-url", url], "unreachable"),
    ]:
        assert human_main(["report", "--out", str(study), *argv]) == 2
        err = capsys.readouterr().err
        assert "Traceback" not in err and err.count("\n") == 1 and err.startswith("error: ") and message in err
        assert not (run / "report.md").exists()  # refused before any report was written
