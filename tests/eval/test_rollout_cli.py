"""``python -m eval.rollout`` as a terminal runs it: Ctrl-C with several workers, and what the
default log level lets through (subprocesses, the way a user meets them)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from eval.io import read_episodes

ROOT = Path(__file__).resolve().parents[2]
# Small and quick: 64x48 frames, no report; "all" tasks so that the run is still going when
# the interrupt comes.
ARGS = ["--env", "SituRec-Supermarket-v0", "--agent", "heuristic", "--tasks", "all", "--max-turns", "6",
        "--env-kwargs", '{"image_size": [64, 48]}', "--no-report"]
BAR = "heuristic on SituRec-Supermarket-v0: "  # the progress bar's lines


def _as_from_a_terminal() -> None:
    """In the child before exec: SIGINT delivered and at its default, as a terminal starts a
    command. A pytest worker may hold SIGINT ignored or blocked (left so by something that ran in
    it before), and a child inherits both: Python then never turns Ctrl-C into KeyboardInterrupt
    and the run goes on to its end (seen twice in full fresh-clone runs, never alone)."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _group_gone(pgid: int, timeout: float) -> bool:
    """Has every process of the group exited (the workers, the forkserver, Ray's)?"""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.2)
    return False


@pytest.mark.parametrize("executor", ["process", "inline", pytest.param("ray", marks=pytest.mark.slow)])
def test_ctrl_c_with_two_workers_prints_one_message(tmp_path, executor):
    """A terminal's Ctrl-C reaches the whole process group: the parent prints its one message
    (how many episodes are saved, --resume), no worker prints a traceback, nothing is left running."""
    if executor == "ray":
        pytest.importorskip("ray", reason='the Ray executor needs pip install "situ-gym[ray]"')
    out = tmp_path / "run"
    workers = ["--workers", "1" if executor == "inline" else "2"]
    proc = subprocess.Popen([sys.executable, "-m", "eval.rollout", *ARGS, *workers, "--executor", executor,
                             "--out", str(out)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True,  # its own group: the test's stand-in terminal
                            preexec_fn=_as_from_a_terminal)
    traj = out / "trajectories.jsonl"
    try:
        deadline = time.monotonic() + 180
        while not (traj.exists() and traj.read_bytes().count(b"\n") >= 2):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "no episode saved in 180 s"
            time.sleep(0.1)
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, err[-2000:]
    lines = [line for line in err.replace("\r", "\n").splitlines() if line.strip() and not line.startswith(BAR)
             and "Token authentication is enabled" not in line]  # Ray's own notice when it starts
    saved = len(read_episodes(traj))
    assert lines == [f"python -m eval.rollout: interrupted; {saved} episodes saved in {out}, "
                     "rerun the same command with --resume to finish"], err[-3000:]
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    assert _group_gone(proc.pid, 30), "worker processes outlived the interrupted run"


# The [eval] install has no torch: run the CLI as such an install would (import torch fails).
WITHOUT_TORCH = """
import runpy, sys
sys.modules["torch"] = None
sys.argv = ["eval.rollout", *sys.argv[1:]]
runpy.run_module("eval.rollout", run_name="__main__", alter_sys=True)
"""


def _readme_first_command(tmp_path, *extra):
    env = {**os.environ, "MPLCONFIGDIR": str(tmp_path / "mpl")}  # a first run: matplotlib builds its font cache
    env.pop("TRANSFORMERS_NO_ADVISORY_WARNINGS", None)
    return subprocess.run([sys.executable, "-c", WITHOUT_TORCH, "--env", "SituRec-Supermarket-v0", "--agent",
                           "heuristic", "--tasks", "0-1", "--out", str(tmp_path / "x"), *extra],
                          cwd=ROOT, capture_output=True, text=True, env=env, timeout=300)


def test_no_library_log_lines_at_the_default_level(tmp_path):
    """The README's first command prints its tables and the progress bar, not matplotlib's
    INFO lines nor transformers' advice about torch; ``-v`` shows them."""
    proc = _readme_first_command(tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = [line for line in proc.stderr.replace("\r", "\n").splitlines() if line.strip() and not line.startswith(BAR)]
    assert lines == [], lines
    assert "run directory:" in proc.stdout
    verbose = _readme_first_command(tmp_path / "v", "-v")
    assert verbose.returncode == 0, verbose.stderr[-2000:]
    assert "INFO matplotlib" in verbose.stderr and "PyTorch was not found" in verbose.stderr
    assert "episodes to run" in verbose.stderr
