"""ChatAssistant under catalog_view="tools": OpenAI tool calls run by the env within the turn."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest

import situ_gym  # noqa: F401  (registers the envs)
from agents.base import agent_info
from agents.chat_agent import ChatAssistant
from agents.obs_text import parse_catalog
from situ_gym.assistant_tools import ERROR_PREFIX, TOOL_NAMES
from situ_gym.llm import ChatRequest, ChatResult
from situ_gym.llm.cache import CachedBackend, ResponseCache
from tests.llm.scripted import ScriptedBackend

ANSWER = json.dumps({"response": "Hi! What are you looking for today?", "assistant_actions": [{"type": "Greet"}],
                     "expected_user_action": {"name": "idle", "arguments": {}}, "ranking": []})


def _call(name: str, arguments: object, call_id: str | None = "c1") -> dict:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


class ToolScript(ScriptedBackend):
    """A scripted backend that can call tools: ``reply(request, i)`` gives text or a list of calls."""

    supports_tools = True

    def chat_batch(self, requests: list[ChatRequest]) -> list[ChatResult]:
        self.batches.append(list(requests))
        out = []
        for r in requests:
            reply = self.reply(r, self.calls)
            self.calls += 1
            if isinstance(reply, list):
                out.append(ChatResult(text="", prompt_tokens=10, model=self.model, extra={"tool_calls": reply}))
            else:
                out.append(ChatResult(text=reply, prompt_tokens=10, model=self.model))
        return out


def _env(view: str = "tools"):
    return gym.make("SituRec-Supermarket-v0", catalog_view=view, text_only=True)


def _start(backend, view: str = "tools", **kw):
    env = _env(view)
    obs, info = env.reset(seed=0, options={"task_id": env.unwrapped.task_ids[0]})
    agent = ChatAssistant(backend, **kw)
    agent.reset(obs, agent_info(info), seed=0)
    return env, obs, agent


def test_tool_calls_are_run_by_the_env_answered_as_tool_messages_and_recorded_in_the_turn():
    def reply(request: ChatRequest, i: int):
        if i == 0:
            return [_call("search_catalog", '{"query": "peanut butter", "max_results": 2}', "s1")]
        if i == 1:  # reads the search result it got, then asks for one product's facts
            found = parse_catalog(request.messages[-1]["content"])
            return [_call("get_product", json.dumps({"product_id": found[0].id}), "g1"), _call("locate", "{}", None)]
        return ANSWER

    backend = ToolScript(reply)
    env, obs, agent = _start(backend)
    text = agent.act(obs)
    *_, info = env.step(text)
    requests = [r for batch in backend.batches for r in batch]
    assert text == ANSWER and len(requests) == 3
    assert all([t["function"]["name"] for t in r.tools] == list(TOOL_NAMES) for r in requests)
    calls = info["turn"].tool_calls
    assert [c.name for c in calls] == ["search_catalog", "get_product", "locate"]
    assert [c.ok for c in calls] == [True, True, False] and calls[2].result.startswith(ERROR_PREFIX)
    # What the model read as each tool's answer is what the turn records, call by call.
    last = requests[2].messages
    tool_messages = [m for m in last if m["role"] == "tool"]
    assert [m["content"] for m in tool_messages] == [c.result for c in calls]
    asked = [c for m in last if m["role"] == "assistant" and m.get("tool_calls") for c in m["tool_calls"]]
    assert [m["tool_call_id"] for m in tool_messages] == [c["id"] for c in asked]
    assert asked[0]["id"] == "s1" and asked[2]["id"]  # a call without an id gets one
    assert json.loads(calls[1].result)["id"] == parse_catalog(calls[0].result)[0].id


def test_a_turn_has_at_most_max_tool_rounds_of_calls_then_must_answer():
    backend = ToolScript(lambda r, i: ANSWER if r.tool_choice == "none"
                         else [_call("locate", '{"target": "1"}')])
    env, obs, agent = _start(backend, max_tool_rounds=2)
    text = agent.act(obs)
    *_, info = env.step(text)
    requests = [r for batch in backend.batches for r in batch]
    assert [r.tool_choice for r in requests] == ["auto", "auto", "none"] and text == ANSWER
    assert len(info["turn"].tool_calls) == 2
    agent.act(env.unwrapped._observation())  # the next turn starts its rounds afresh
    assert [r.tool_choice for batch in backend.batches[3:] for r in batch] == ["auto", "auto", "none"]


def test_calls_in_a_reply_past_the_last_round_are_not_run():
    backend = ToolScript(lambda r, i: [_call("locate", '{"target": "1"}')])  # ignores tool_choice
    env, obs, agent = _start(backend, max_tool_rounds=1)
    text = agent.act(obs)
    *_, info = env.step(text)
    assert text == "" and len(info["turn"].tool_calls) == 1 and not info["turn"].assistant_valid


def test_without_the_tools_view_no_tools_are_sent():
    backend = ToolScript(lambda r, i: ANSWER)
    env, obs, agent = _start(backend, view="full")
    agent.act(obs)
    (request,) = backend.batches[0]
    assert request.tools is None and request.tool_choice is None
    assert "tools" not in request.key_payload("m")  # cache keys of runs without tools are as before


def test_a_backend_that_cannot_call_tools_refuses_the_tools_view():
    env = _env()
    obs, info = env.reset(seed=0)
    with pytest.raises(ValueError, match="cannot call tools.*hf: backend"):
        ChatAssistant(ScriptedBackend(lambda r, i: ANSWER)).reset(obs, agent_info(info))


def test_tool_messages_reach_the_api_and_the_cache_keeps_the_calls(tmp_path):
    from situ_gym.llm.openai_backend import OpenAIChatBackend

    call = _call("locate", '{"target": "1"}')
    messages = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "", "tool_calls": [call]},
                {"role": "tool", "tool_call_id": "c1", "content": "at Shelf 1"}]
    tools = [{"type": "function", "function": {"name": "locate", "parameters": {"type": "object"}}}]
    request = ChatRequest(messages, tools=tools, tool_choice="auto")
    backend = OpenAIChatBackend("m", base_url="http://127.0.0.1:9/v1")
    body = backend._body(request, None)
    assert body["tools"] == tools and body["tool_choice"] == "auto"
    assert body["messages"][1]["tool_calls"] == [call] and body["messages"][2]["tool_call_id"] == "c1"
    assert request.key_payload("m")["tools"] == tools
    cached = CachedBackend(ToolScript(lambda r, i: [call]), ResponseCache(tmp_path / "c.sqlite"))
    assert cached.supports_tools
    first, = cached.chat_batch([request])
    again, = cached.chat_batch([request])
    assert again.cached and again.tool_calls == first.tool_calls == [call]


def test_over_http_the_tools_go_out_and_the_calls_come_back():
    """The OpenAI-compatible backend against a local server: the request carries the tools, the
    reply's tool calls are run by the env, and the next request carries the call and its result."""
    from situ_gym.llm.openai_backend import OpenAIChatBackend, reset_endpoints
    from tests.llm.fault_server import FaultServer

    def completion(message: dict) -> bytes:
        return json.dumps({"id": "x", "object": "chat.completion", "model": "m", "usage": {"prompt_tokens": 5},
                           "choices": [{"index": 0, "finish_reason": "stop",
                                        "message": {"role": "assistant", **message}}]}).encode()

    reset_endpoints()
    srv = FaultServer(lifetime=60.0).start()
    try:
        srv.plan_raw(200, completion({"content": None, "tool_calls": [
            _call("search_catalog", '{"query": "jam", "max_results": 1}', "call_9")]}))
        srv.plan_raw(200, completion({"content": ANSWER}))
        env, obs, agent = _start(OpenAIChatBackend("m", base_url=srv.url))
        text = agent.act(obs)
        *_, info = env.step(text)
    finally:
        srv.stop()
        reset_endpoints()
    first, second = (a.body for a in srv.arrivals)
    assert [t["function"]["name"] for t in first["tools"]] == list(TOOL_NAMES) and first["tool_choice"] == "auto"
    (call,) = info["turn"].tool_calls
    assert text == ANSWER and call.name == "search_catalog" and call.arguments == {"query": "jam", "max_results": 1}
    asked, answered = second["messages"][-2:]
    assert asked["tool_calls"][0]["id"] == "call_9" and asked["role"] == "assistant"
    assert answered == {"role": "tool", "content": call.result, "tool_call_id": "call_9"}
