"""User errors on the scoring command lines get argparse-style usage plus one line, exit 2."""

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
    assert "Traceback" not in err and f"usage: python -m {cli}" in err
    last = err.strip().splitlines()[-1]
    assert last.startswith(f"python -m {cli}: error: ") and path.name in last


def test_metrics_unknown_judge_is_one_line(tmp_path, capsys):
    from eval.io import append_episode
    from tests.eval.builders import episode, turn

    path = tmp_path / "t.jsonl"
    append_episode(path, episode([turn(1)]))
    with pytest.raises(SystemExit) as exc:
        metrics_main([str(path), "--judge", "gpt"])
    assert exc.value.code == 2
    assert capsys.readouterr().err.strip().splitlines()[-1].endswith("unknown judge 'gpt'; choose one of ['rule', 'llm']")
