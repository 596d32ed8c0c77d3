"""``python -m situ_gym.serve``: --help, one-line errors for bad flags, and a real server process."""

from __future__ import annotations

import re
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

from situ_gym import ENV_IDS
from situ_gym.serve import RemoteEnv
from tests.serve.play import SMALL

ROOT = Path(__file__).resolve().parents[2]
GREET = ('{"response": "Hello! What can I help you find?", "assistant_actions": [{"type": "Greet"}], '
         '"expected_user_action": {"name": "idle", "arguments": {}}}')


def _serve(*flags: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "situ_gym.serve", *flags], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, **kwargs)


def test_help_exits_0_and_lists_the_options():
    proc = _serve("--help")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("usage: ") and "--max-sessions" in proc.stdout and "--session-timeout" in proc.stdout


def test_bad_flags_are_one_line_errors():
    for flags, said in ((("--max-sessions", "0"), "--max-sessions must be at least 1"),
                        (("--session-timeout", "-1"), "--session-timeout must be"),
                        (("--reward", "no.such.module:Wrapper"), "--reward no.such.module:Wrapper"),
                        (("--store", "/no/such/store"), "--store /no/such/store: '/no/such/store': not a store folder"),
                        (("--env", "SituRec-Pharmacy-v0"), "--env SituRec-Pharmacy-v0: not a registered store's")):
        proc = _serve(*flags)
        assert proc.returncode == 2 and said in proc.stderr, proc.stderr
        assert "Traceback" not in proc.stderr


@contextmanager
def _serving(*flags: str):
    """``python -m situ_gym.serve --port 0 --max-sessions 2 FLAGS``: (its URL, its first line),
    once it listens; stopped after, and its stderr must hold no traceback."""
    proc = subprocess.Popen([sys.executable, "-m", "situ_gym.serve", "--port", "0", "--max-sessions", "2", *flags],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()  # "serving ... on ws://127.0.0.1:PORT/ws (...)", once listening
        port = re.search(r":(\d+)/ws", line)
        assert port, (line, proc.stderr.read() if proc.poll() is not None else "")
        yield f"http://127.0.0.1:{port.group(1)}", line
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert "Traceback" not in proc.stderr.read()


def test_a_server_process_serves_a_remote_env():
    with _serving("--env", ENV_IDS[1]) as (url, _):
        env = RemoteEnv(url, ENV_IDS[1], **SMALL)
        obs, info = env.reset(seed=0)
        assert info["store"] == "home_furnishings" and obs["som_rgb"].shape == (48, 64, 3)
        assert env.step(GREET)[4]["turn"].assistant_valid
        env.close()


def test_a_server_process_serves_a_store_folder(pharmacy_folder):
    with _serving("--store", str(pharmacy_folder)) as (url, line):
        assert line.startswith(f"serving {', '.join(ENV_IDS)}, SituRec-Pharmacy-v0 on ")  # every registered store
        env = RemoteEnv(url, store=pharmacy_folder, **SMALL)
        obs, info = env.reset(seed=0)
        assert info["store"] == "pharmacy" and obs["som_rgb"].shape == (48, 64, 3)
        assert env.step(GREET)[4]["turn"].assistant_valid
        env.close()
