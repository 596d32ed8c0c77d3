"""benchmarks.tool_views: the chat prompts it counts are the ChatAssistant's, tool turns included."""

from __future__ import annotations

import gymnasium as gym

import situ_gym  # noqa: F401  (registers the envs)
from benchmarks import tool_views
from situ_gym.llm import ChatRequest


def words(text: str, add_special_tokens: bool = False) -> dict:
    """A stand-in tokenizer (one token per whitespace-separated word): what is counted, not how."""
    return {"input_ids": text.split()}


def test_a_tools_episode_counts_one_request_per_tool_round_and_the_answer():
    env = gym.make("SituRec-Supermarket-v0", catalog_view="tools", text_only=True)
    task = env.unwrapped.task_ids[0]
    out = tool_views.play(env, "tools", words, task, seed=0)  # raises if the chat agent's turn differed
    rounds = sum(1 for t in env.unwrapped.turns if t.tool_calls)
    assert out["tool_calls"] == sum(len(t.tool_calls) for t in env.unwrapped.turns) > 0
    assert out["requests"] == out["turns"] + rounds and out["turns"] == len(env.unwrapped.turns)
    full = gym.make("SituRec-Supermarket-v0", text_only=True)
    plain = tool_views.play(full, "full", words, task, seed=0)
    assert plain["tool_calls"] == 0 and plain["requests"] == plain["turns"]


def test_chatml_writes_the_tools_calls_and_results():
    call = {"id": "c", "type": "function", "function": {"name": "locate", "arguments": '{"target": "1"}'}}
    tools = [{"type": "function", "function": {"name": "locate"}}]
    request = ChatRequest([{"role": "system", "content": "rules"}, {"role": "user", "content": "hi"},
                           {"role": "assistant", "content": "", "tool_calls": [call]},
                           {"role": "tool", "tool_call_id": "c", "content": "Shelf 1"}], tools=tools)
    text = tool_views.chatml(request)
    assert '<tools>\n{"type": "function", "function": {"name": "locate"}}\n</tools>' in text
    assert '<tool_call>\n{"name": "locate", "arguments": "{\\"target\\": \\"1\\"}"}\n</tool_call>' in text
    assert "<tool_response>\nShelf 1\n</tool_response>" in text and text.endswith("<|im_start|>assistant\n")


def test_an_unknown_view_stops_before_any_episode(capsys):
    assert tool_views.main(["--views", "pictures", "--tasks", "1"]) == 2
    assert "unknown store or view ['pictures']" in capsys.readouterr().err
