"""Executors: local processes report failed chunks and dead workers; a rollout gives the same
bytes (trajectories.jsonl, metrics.json) in this process, in local processes and on Ray,
whatever the worker count and batch size."""

from __future__ import annotations

import os

import pytest

from eval.executors import ChunkFailed, InlineExecutor, ProcessExecutor, WorkerDied, make_executor
from eval.rollout import RolloutConfig, run


def square_or_fail(chunk: list[int]) -> list[int]:
    """Module-level, so worker processes can import it."""
    if chunk == [13]:
        raise ArithmeticError("unlucky chunk")
    if chunk == [-1]:
        os._exit(3)  # the worker dies without a word
    return [x * x for x in chunk]


def test_process_executor_reports_failed_chunks_and_dead_workers():
    executor = ProcessExecutor(2)
    try:
        got = dict(executor.map_unordered(square_or_fail, [[1, 2], [13], [3]]))
        assert got[0] == [1, 4] and got[2] == [9]
        assert isinstance(got[1], ChunkFailed) and "ArithmeticError: unlucky chunk" in got[1].error
        with pytest.raises(WorkerDied, match="a worker process died"):
            list(executor.map_unordered(square_or_fail, [[-1]]))
    finally:
        executor.close()
    assert list(InlineExecutor().map_unordered(square_or_fail, [[2], [3]])) == [(0, [4]), (1, [9])]
    with pytest.raises(ValueError, match="unknown executor 'dask'"):
        make_executor("dask")


SMALL = dict(env="SituRec-Supermarket-v0", agent="heuristic", tasks="0-2", max_turns=3, repeats=2,
             env_kwargs={"image_size": [64, 48]}, judge="rule")


@pytest.mark.slow  # starts a local Ray (about 10 s) and four small runs: ~25 s idle, ~70 s on a busy machine
def test_inline_process_and_ray_runs_are_byte_identical(tmp_path):
    import ray

    runs = {
        "inline": {},
        "process-w2-b2": {"executor": "process", "workers": 2, "batch_size": 2},
        "ray-w2-b1": {"executor": "ray", "workers": 2},
        "ray-w2-b3": {"executor": "ray", "workers": 2, "batch_size": 3},
    }
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)  # both Ray runs share it
    try:
        for name, extra in runs.items():
            run(RolloutConfig(out=str(tmp_path / name), **SMALL, **extra))
        assert ray.is_initialized()  # the executor leaves a Ray it did not start running
    finally:
        ray.shutdown()
    reference = {f: (tmp_path / "inline" / f).read_bytes() for f in ("trajectories.jsonl", "metrics.json")}
    assert reference["trajectories.jsonl"].count(b"\n") == 6
    for name in runs:
        for file, expected in reference.items():
            assert (tmp_path / name / file).read_bytes() == expected, (name, file)


def sleep_after_writing_pid(folder: str) -> int:
    """Writes this worker's pid, then stays busy far longer than any test waits."""
    import time

    with open(os.path.join(folder, f"{os.getpid()}.pid"), "w") as fh:
        fh.write(str(os.getpid()))
    time.sleep(120)
    return 0


def test_aborting_a_process_executor_ends_the_chunks_in_flight(tmp_path):
    """A run that decided to stop must not let its workers go on (sending requests)."""
    import time

    executor = ProcessExecutor(2)
    results = executor.map_unordered(sleep_after_writing_pid, [str(tmp_path), str(tmp_path)])
    import threading

    threading.Thread(target=lambda: list(results), daemon=True).start()  # the caller waiting on chunks
    deadline = time.monotonic() + 60
    while len(list(tmp_path.glob("*.pid"))) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    pids = [int(p.read_text()) for p in tmp_path.glob("*.pid")]
    assert len(pids) == 2
    executor.close(abort=True)
    deadline = time.monotonic() + 30
    alive = set(pids)
    while alive and time.monotonic() < deadline:
        for pid in list(alive):
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                alive.discard(pid)
        time.sleep(0.05)
    assert not alive  # both workers are gone long before their chunk would have ended
