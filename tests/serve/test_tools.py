"""The assistant tools through the server (issue 27): ``RemoteEnv.call_tool`` and the
``info["tools"]`` handle answer and record as in-process, byte for byte; bad calls get the
same "Error: ..." results; the per-turn cap holds; another catalog view is a clear RequestError."""

from __future__ import annotations

import json

import pytest

from situ_gym import ENV_IDS, STORE_OF_ENV
from situ_gym.assistant_tools import MAX_TOOL_CALLS_PER_TURN, TOOL_SCHEMAS, ToolHandle
from situ_gym.scene.loader import load_task_bank
from situ_gym.serve import RemoteEnv, RequestError
from tests.serve.play import SMALL, local_env, play

TOOLS = dict(SMALL, catalog_view="tools")
ASK = ('{"response": "What would you like?", "assistant_actions": [{"type": "AskPreference"}], '
       '"expected_user_action": {"name": "idle", "arguments": {}}}')
# Good and bad calls as a model (or a Python caller) may send them: each answers as in-process.
CALLS = [
    ("search_catalog", {"query": "coffee", "max_results": 3}),
    ("search_catalog", '{"query": "lamp"}'),        # the arguments as OpenAI sends them: JSON text
    ("locate", {"target": "1"}),
    ("get_product", {"product_id": "nope"}),         # unknown id
    ("get_product", None),                           # missing argument
    ("search_catalog", "{not json"),                 # no JSON
    ("search_catalog", ["coffee"]),                  # no JSON object
    ("search_catalog", {"query": "x", "max_results": 0}),
    ("teleport", {}),                                # unknown tool
    (None, {}),
]


def _task(env_id: str, k: int) -> str:
    return load_task_bank(STORE_OF_ENV[env_id]).tasks[k].id


def _tool_calls(records: list[tuple]) -> int:
    return sum(len((json.loads(r[-1]).get("turn") or {}).get("tool_calls", [])) for r in records)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_a_heuristic_tools_episode_through_the_server_is_byte_identical(server, env_id):
    options = {"task_id": _task(env_id, 7)}
    local = local_env(env_id, **TOOLS)
    remote = RemoteEnv(server.url, env_id, **TOOLS)
    expected, _ = play(local, options=options, agent="heuristic-tools")
    got, _ = play(remote, options=options, agent="heuristic-tools")
    assert len(expected) >= 3 and _tool_calls(expected) >= 3
    assert got == expected  # observations, rewards, flags, infos with the turns' tool_calls
    # info["tools"] is one handle, like in-process: the same schemas, calls over the wire.
    _, info = remote.reset(seed=5, options=options)
    _, local_info = local.reset(seed=5, options=options)
    tools = info["tools"]
    assert isinstance(tools, ToolHandle) and callable(tools) and tools.schemas == TOOL_SCHEMAS
    assert remote.step(ASK)[4]["tools"] is tools and local.step(ASK)
    assert tools("search_catalog", {"query": "red"}) == local_info["tools"]("search_catalog", {"query": "red"})
    remote.close()
    local.close()


def test_tool_calls_and_their_errors_answer_and_record_as_in_process(server):
    env_id = ENV_IDS[0]
    options = {"task_id": _task(env_id, 3)}
    local, remote = local_env(env_id, **TOOLS), RemoteEnv(server.url, env_id, **TOOLS)
    local.reset(seed=2, options=options)
    remote.reset(seed=2, options=options)
    for name, arguments in CALLS:
        expected = local.unwrapped.call_tool(name, arguments)
        assert remote.call_tool(name, arguments) == expected, (name, arguments)
    assert remote.state().step_count == 0  # a tool call does not step the episode
    # The per-turn cap holds: the calls past it get the limit's error (and are recorded).
    for _ in range(MAX_TOOL_CALLS_PER_TURN - len(CALLS) + 1):
        expected = local.unwrapped.call_tool("locate", {"target": "2"})
        assert remote.call_tool("locate", {"target": "2"}) == expected
    assert expected.startswith("Error: the tool-call limit")
    # Arguments with no JSON form (a Python caller's) get an error result, never an exception.
    assert remote.unwrapped.call_tool("search_catalog", {"a", "b"}).startswith("Error: ")
    local.unwrapped.call_tool("search_catalog", repr({"a", "b"}))  # what the remote env sent
    steps = local.step(ASK), remote.step(ASK)
    assert steps[1][4]["turn"] == steps[0][4]["turn"] and len(steps[1][4]["turn"].tool_calls) == MAX_TOOL_CALLS_PER_TURN + 2
    assert steps[1][1] == steps[0][1]
    # A new turn has a fresh budget; a snapshot keeps the turn's calls so far.
    assert remote.call_tool("locate", {"target": "1"}) == local.unwrapped.call_tool("locate", {"target": "1"})
    handle = remote.snapshot()
    remote.call_tool("search_catalog", {"query": "tea"})
    remote.restore(handle)
    assert remote.step(ASK)[4]["turn"] == local.step(ASK)[4]["turn"]
    remote.close()
    local.close()


def test_call_tool_under_another_view_or_after_the_end_is_a_request_error(server):
    env_id = ENV_IDS[1]
    remote = RemoteEnv(server.url, env_id, **SMALL)  # catalog_view "full"
    _, info = remote.reset(seed=0)
    assert "tools" not in info
    with pytest.raises(RequestError, match="catalog_view='tools'"):
        remote.call_tool("search_catalog", {"query": "lamp"})
    assert remote.step(ASK)[4]["turn"].tool_calls == []  # the session goes on
    remote.close()
    remote = RemoteEnv(server.url, env_id, **dict(TOOLS, max_turns=1))
    remote.reset(seed=0)
    assert remote.step(ASK)[3]  # the turn limit
    with pytest.raises(RequestError, match="open episode"):
        remote.call_tool("search_catalog", {"query": "lamp"})
    remote.close()
