"""Trajectory JSONL: append, read back, truncated last line, resume keys."""

from __future__ import annotations

import logging

import pytest

from eval.io import append_episode, done_keys, drop_truncated_tail, read_episodes, repeat_of
from tests.eval.builders import episode, turn


def test_append_and_read_round_trip(tmp_path):
    path = tmp_path / "trajectories.jsonl"
    eps = [episode([turn(1, ranking=["a"])], cart=["a"], task_id="t1", repeat=0),
           episode([turn(1), turn(2)], task_id="t1", repeat=1)]
    for ep in eps:
        append_episode(path, ep)
    assert path.read_text().count("\n") == 2
    back = read_episodes(path)
    assert back == eps
    assert [repeat_of(e) for e in back] == [0, 1]
    assert done_keys(back) == {("t1", 0), ("t1", 1)}


def test_truncated_last_line_is_dropped_with_warning(tmp_path, caplog):
    path = tmp_path / "trajectories.jsonl"
    append_episode(path, episode([turn(1)], task_id="t1"))
    full = episode([turn(1)], task_id="t2").model_dump_json()
    with open(path, "a") as fh:
        fh.write(full[: len(full) // 2])  # killed mid-write
    with caplog.at_level(logging.WARNING):
        back = read_episodes(path)
    assert [e.task_id for e in back] == ["t1"]
    assert "truncated" in caplog.text
    # Resume: cut the tail, append again, and the file is whole.
    removed = drop_truncated_tail(path)
    assert removed == len(full) // 2
    append_episode(path, episode([turn(1)], task_id="t2"))
    assert [e.task_id for e in read_episodes(path)] == ["t1", "t2"]


def test_bad_line_in_the_middle_raises(tmp_path):
    path = tmp_path / "trajectories.jsonl"
    append_episode(path, episode([turn(1)], task_id="t1"))
    with open(path, "a") as fh:
        fh.write("{not json}\n")
    append_episode(path, episode([turn(1)], task_id="t3"))
    with pytest.raises(ValueError, match="line 2"):
        read_episodes(path)


def test_append_rejects_non_records(tmp_path):
    with pytest.raises(ValueError, match="EpisodeRecord"):
        append_episode(tmp_path / "x.jsonl", {"episode_id": "x"})
    with pytest.raises(ValueError, match="does not exist"):
        read_episodes(tmp_path / "missing.jsonl")
