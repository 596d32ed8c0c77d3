"""TRL's environment_factory path under catalog_view: tools: the catalog tools beside assist."""

from __future__ import annotations

import inspect
import json

import pytest

from agents.obs_text import parse_catalog
from situ_gym.assistant_tools import TOOL_SCHEMAS
from train.config import SituRecArguments
from train.environment import (
    CATALOG_TOOL_INSTRUCTIONS,
    SituRecCatalogToolEnv,
    SituRecToolEnv,
    tool_dataset,
)
from train.tasks import split_tasks

# Three turns, small frames, one task: what the tests below need of an episode.
ARGS = SituRecArguments(max_turns=3, env_image_size=[160, 120], max_tasks=1, episodes_per_task=1,
                        catalog_view="tools", interface="environment_factory", env_text_only=True)
TASK = split_tasks("supermarket", 0.2, 0)[0][0]
ANSWER = {"response": "Hi! What are you looking for today?", "assistant_actions": [{"type": "Greet"}],
          "expected_user_action": {"name": "idle", "arguments": {}}, "ranking": []}


def _tools_trl_sees(cls: type) -> list[str]:
    """The methods GRPOTrainer turns into tools (TRL lists them on the class)."""
    return sorted(name for name, _ in inspect.getmembers(cls, inspect.isfunction)
                  if not name.startswith("_") and name not in ("reset", "get_reward"))


def test_the_factory_adds_the_catalog_tools_only_under_the_tools_view():
    assert _tools_trl_sees(SituRecCatalogToolEnv) == ["assist", "get_product", "locate", "search_catalog"]
    assert isinstance(SituRecToolEnv.factory(ARGS)(), SituRecCatalogToolEnv)
    plain = SituRecArguments(max_turns=3, env_image_size=[160, 120], interface="environment_factory")
    assert type(SituRecToolEnv.factory(plain)()) is SituRecToolEnv


def test_the_schemas_trl_derives_match_the_envs_tool_schemas():
    from transformers.utils import get_json_schema

    env = SituRecCatalogToolEnv(ARGS)
    for ours in TOOL_SCHEMAS:
        name = ours["function"]["name"]
        derived = get_json_schema(getattr(env, name))["function"]
        assert derived["name"] == name and derived["description"]
        params, expected = derived["parameters"], ours["function"]["parameters"]
        assert set(params["properties"]) == set(expected["properties"])
        assert sorted(params.get("required", [])) == sorted(expected["required"])
        for key, spec in params["properties"].items():
            assert spec["type"] == expected["properties"][key]["type"] and spec.get("description")


def test_the_tools_answer_from_the_env_and_are_recorded_in_the_turn_assist_plays():
    env = SituRecCatalogToolEnv(ARGS)
    first = env.reset(store="supermarket", task_id=TASK, seed=0, prompt=[])
    assert "Current view:" in first
    found = parse_catalog(env.search_catalog("peanut butter", 2))
    facts = json.loads(env.get_product(found[0].id))
    place = env.locate(found[0].id)
    assert len(found) == 2 and facts["name"] == found[0].name and facts["price"] == found[0].price
    assert env.get_product("nope").startswith("Error: ")
    env.assist(**ANSWER)
    turn = env.env.unwrapped.turns[-1]
    assert [(c.name, c.ok) for c in turn.tool_calls] == [
        ("search_catalog", True), ("get_product", True), ("locate", True), ("get_product", False)]
    assert turn.tool_calls[2].result == place


def test_a_tool_call_after_the_episode_is_refused():
    env = SituRecCatalogToolEnv(ARGS.__class__(**{**vars(ARGS), "max_turns": 1}))
    env.reset(store="supermarket", task_id=TASK, seed=0)
    env.assist(**ANSWER)
    with pytest.raises(ValueError, match="episode has ended"):
        env.locate("1")


def test_the_tools_view_needs_the_environment_factory_interface():
    with pytest.raises(ValueError, match="'tools' with interface: environment_factory"):
        SituRecArguments(catalog_view="tools")


def test_tool_dataset_tells_the_model_to_look_the_catalog_up():
    dataset, _ = tool_dataset(ARGS, seed=0)
    system = dataset[0]["prompt"][0]["content"]
    assert system.endswith(CATALOG_TOOL_INSTRUCTIONS) and not parse_catalog(system)
