"""A malformed request gets a clear error and the server goes on serving; the session cap
refuses with a clear error; idle sessions are reclaimed."""

from __future__ import annotations

import json
import time

import httpx
import pytest
from websockets.sync.client import connect

from situ_gym import ENV_IDS
from situ_gym.serve import RemoteEnv, RequestError, ServerBusy, SessionLost
from tests.serve.conftest import running_server
from tests.serve.play import SMALL, play

GREET = ('{"response": "Hi! What are you shopping for today?", "assistant_actions": [{"type": "Greet"}], '
         '"expected_user_action": {"name": "idle", "arguments": {}}}')


def _ask(ws, message) -> dict:
    ws.send(message if isinstance(message, str) else json.dumps(message))
    return json.loads(ws.recv(timeout=60))


def _still_serves(url: str) -> None:
    env = RemoteEnv(url, ENV_IDS[0], **SMALL)
    env.reset(seed=0)
    assert env.step(GREET)[4]["turn"].assistant_valid
    env.close()
    assert httpx.get(f"{url}/health").json()["status"] == "healthy"


def test_malformed_messages_get_clear_errors_on_a_session_that_goes_on(server):
    with connect(server.url.replace("http", "ws") + "/ws") as ws:
        bad_json = _ask(ws, "{not json")
        assert bad_json["type"] == "error" and bad_json["data"]["code"] == "INVALID_JSON"
        unknown = _ask(ws, {"type": "teleport"})
        assert unknown["data"]["code"] == "UNKNOWN_TYPE" and "teleport" in unknown["data"]["message"]
        before_reset = _ask(ws, {"type": "step", "data": {"text": GREET}})
        assert before_reset["data"]["code"] == "EXECUTION_ERROR"
        assert "step before reset" in before_reset["data"]["message"]
        bad_reset = _ask(ws, {"type": "reset", "data": {"seed": -1, "colour": "red"}})
        assert bad_reset["data"]["code"] == "VALIDATION_ERROR"
        assert {e["loc"][0] for e in bad_reset["data"]["errors"]} == {"seed", "colour"}
        ok = _ask(ws, {"type": "reset", "data": {"seed": 0, "env_kwargs": SMALL}})
        assert ok["type"] == "observation" and ok["data"]["observation"]["obs"]["history"] == ""
        for action in ({"txt": GREET}, {}, {"text": GREET, "command": "snapshot"}, {"command": "restore"}):
            refused = _ask(ws, {"type": "step", "data": action})
            assert refused["data"]["code"] == "VALIDATION_ERROR", action
        stepped = _ask(ws, {"type": "step", "data": {"text": GREET}})
        assert stepped["type"] == "observation" and stepped["data"]["observation"]["info"]["turn"]["turn"] == 1
    _still_serves(server.url)


def test_bad_requests_through_remote_env_are_request_errors(server):
    env = RemoteEnv(server.url, ENV_IDS[0], **SMALL)
    with pytest.raises(RequestError, match="step before reset"):
        env.step(GREET)
    with pytest.raises(RequestError, match="unknown task_id"):
        env.reset(seed=0, options={"task_id": "no-such-task"})
    with pytest.raises(RequestError, match="unknown snapshot handle"):
        env.reset(seed=0) and env.restore("0" * 32)
    # An action that is no assistant JSON is an invalid turn, as in-process, not an error.
    _, _, _, _, info = env.step("this is not JSON")
    assert not info["turn"].assistant_valid and info["turn"].assistant_errors
    play(env, seed=1)
    with pytest.raises(RequestError, match="episode is over"):
        env.step(GREET)
    with pytest.raises(ValueError, match="a str"):
        env.step({"response": "hi"})
    env.close()
    # What only the server chooses (an engine, a simulator, a window) cannot be asked for.
    with connect(server.url.replace("http", "ws") + "/ws") as ws:
        refused = _ask(ws, {"type": "reset", "data": {"env_kwargs": {"backend": "unrealcv"}}})
        assert refused["data"]["code"] == "EXECUTION_ERROR" and "server's to choose" in refused["data"]["message"]
        refused = _ask(ws, {"type": "reset", "data": {"env_id": "CartPole-v1"}})
        assert "not served here" in refused["data"]["message"]
    _still_serves(server.url)


def test_http_faults_and_unknown_sessions(server):
    unknown = httpx.post(f"{server.url}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "openenv/session/close",
                                                    "params": {"session_id": "no-such-session"}}).json()
    assert "Unknown session_id" in unknown["error"]["message"]
    assert "error" in httpx.post(f"{server.url}/mcp", content=b"{oops").json()
    # The stateless HTTP episode routes are not served: an episode is a WebSocket session.
    assert httpx.post(f"{server.url}/step", json={"action": {"text": GREET}}).status_code in (404, 405)
    assert httpx.get(f"{server.url}/schema").json()["action"]["properties"]["text"]
    _still_serves(server.url)


def test_the_session_cap_refuses_with_a_clear_error():
    with running_server(max_sessions=2, session_timeout=600) as running:
        first, second = (RemoteEnv(running.url, ENV_IDS[0], **SMALL) for _ in range(2))
        first.reset(seed=0)
        second.reset(seed=0)
        third = RemoteEnv(running.url, ENV_IDS[0], **SMALL)
        with pytest.raises(ServerBusy, match="2/2 sessions") as refused:
            third.reset(seed=0)
        assert refused.value.code == "CAPACITY_REACHED" and refused.value.details["max_sessions"] == 2
        first.close()
        deadline = time.monotonic() + 10
        while running.sessions() > 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        third.reset(seed=0)  # the refused call, retried once a slot is free
        assert third.step(GREET)[4]["turn"].assistant_valid
        third.close()
        _still_serves(running.url)
        second.close()


def test_an_idle_session_is_reclaimed():
    # OpenEnv looks for idle sessions every max(timeout / 4, 5) seconds: about 5 s here.
    with running_server(max_sessions=1, session_timeout=1) as running:
        idle = RemoteEnv(running.url, ENV_IDS[0], **SMALL)
        idle.reset(seed=0)
        assert running.sessions() == 1
        deadline = time.monotonic() + 20
        while running.sessions() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert running.sessions() == 0
        with pytest.raises(SessionLost, match="reclaimed"):
            idle.step(GREET)
        _still_serves(running.url)  # the one slot is free again
        idle.close()
