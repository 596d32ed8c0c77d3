"""heuristic-tools: the heuristic with its catalog from the env's tools (catalog_view="tools")."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest

import situ_gym  # noqa: F401  (registers the envs)
from agents.heuristic import HeuristicAssistant
from agents.obs_text import parse_catalog
from agents.registry import make_agent
from agents.tool_heuristic import ToolHeuristicAssistant
from tests.episodes import play

ENV_IDS = ("SituRec-Supermarket-v0", "SituRec-HomeFurnishings-v0")
TASKS = 6  # a few tasks per store keep this quick; benchmarks/tool_views.py reports more


def test_registered_under_its_name():
    assert isinstance(make_agent("heuristic-tools"), ToolHeuristicAssistant)


def test_without_the_tools_view_it_says_which_env_option_it_needs():
    env = gym.make(ENV_IDS[0], text_only=True)
    obs, info = env.reset(seed=0)
    with pytest.raises(ValueError, match="catalog_view='tools'"):
        ToolHeuristicAssistant().reset(obs, {"store": info["store"]})


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_it_ranks_only_what_its_tool_calls_returned(env_id):
    env = gym.make(env_id, catalog_view="tools", text_only=True)
    for task in env.unwrapped.task_ids[:3]:
        turns, _ = play(env, ToolHeuristicAssistant(), task)
        returned: set[str] = set()
        calls = 0
        for text, _, turn in turns:
            for call in turn.tool_calls:
                assert call.ok, call.result
                returned |= {e.id for e in parse_catalog(call.result)}
            calls += len(turn.tool_calls)
            assert set(json.loads(text)["ranking"]) <= returned
        assert calls > 0 and returned


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_it_plays_as_well_as_the_heuristic_with_the_full_catalog(env_id):
    full = gym.make(env_id, text_only=True)
    tools = gym.make(env_id, catalog_view="tools", text_only=True)
    wins = {"full": 0, "tools": 0}
    for task in full.unwrapped.task_ids[:TASKS]:
        _, info = play(full, HeuristicAssistant(), task)
        wins["full"] += info["termination"] == "success_cart_added"
        _, info = play(tools, ToolHeuristicAssistant(), task)
        wins["tools"] += info["termination"] == "success_cart_added"
    assert wins["tools"] >= wins["full"] - 1 and wins["tools"] > 0, wins


def test_two_identical_rollouts_record_identical_turns_and_tool_calls():
    runs = []
    for _ in range(2):
        env = gym.make(ENV_IDS[1], catalog_view="tools", text_only=True)
        turns, _ = play(env, ToolHeuristicAssistant(), env.unwrapped.task_ids[4], seed=5)
        runs.append([t.model_dump_json() for _, _, t in turns])
    assert runs[0] == runs[1] and any('"tool_calls"' in t for t in runs[0])
