"""The assistant's catalog/map tools (situ_gym.assistant_tools) and the env's catalog_view="tools"."""

from __future__ import annotations

import json
import math

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

import situ_gym  # noqa: F401  (registers the envs)
from agents.base import agent_info
from agents.heuristic import HeuristicAssistant
from agents.obs_text import parse_catalog
from situ_gym.assistant_tools import (
    ERROR_PREFIX,
    MAX_SEARCH_RESULTS,
    MAX_TOOL_CALLS_PER_TURN,
    TOOL_NAMES,
    TOOL_SCHEMAS,
    TOOLS_TITLE,
    CatalogTools,
)
from situ_gym.scene import SceneIndex
from situ_gym.scene.loader import load_scene
from situ_gym.som import fixed_handles
from situ_gym.text import catalog_text
from tests.episodes import play

SMALL = (64, 48)  # pixels are irrelevant here
STORES = {"supermarket": "SituRec-Supermarket-v0", "home_furnishings": "SituRec-HomeFurnishings-v0"}


@pytest.fixture(scope="module", params=list(STORES))
def store_tools(request):
    index = SceneIndex(load_scene(request.param))
    return index, CatalogTools(index)


def _every(index: SceneIndex, step: int = 7) -> list[str]:
    return list(index.products)[::step]


def test_schemas_are_openai_function_tools_for_each_tool():
    assert [s["function"]["name"] for s in TOOL_SCHEMAS] == list(TOOL_NAMES)
    for schema in TOOL_SCHEMAS:
        assert schema["type"] == "function"
        params = schema["function"]["parameters"]
        assert params["type"] == "object" and params["additionalProperties"] is False
        assert set(params["required"]) <= set(params["properties"]) and schema["function"]["description"]


def test_search_lines_are_the_catalogs_own_lines(store_tools):
    index, tools = store_tools
    full = {line.split(" | ")[0]: line for line in catalog_text(index).splitlines()[1:]}
    for pid in _every(index):
        product = index.products[pid]
        answer = tools.call("search_catalog", {"query": product.name, "max_results": MAX_SEARCH_RESULTS})
        assert answer.ok
        lines = answer.result.splitlines()[1:]
        ids = [line.split(" | ")[0] for line in lines]
        assert pid in ids[:3], (product.name, ids[:3])  # its own name finds it among the first
        for line in lines:
            assert line == full[line.split(" | ")[0]]  # id, name, category, price, location, labels as listed


def test_search_respects_max_results_and_finds_a_whole_category(store_tools):
    index, tools = store_tools
    category = index.products[next(iter(index.products))].category
    members = {pid for pid, p in index.products.items() if p.category == category}
    for n in (1, 3):
        assert len(parse_catalog(tools.call("search_catalog", {"query": category, "max_results": n}).result)) == n
    found = {e.id for e in parse_catalog(tools.call("search_catalog", {"query": category, "max_results": 20}).result)}
    assert members <= found


def test_search_without_a_match_says_so():
    tools = CatalogTools(SceneIndex(load_scene("supermarket")))
    answer = tools.call("search_catalog", {"query": "xyzzy quux"})
    assert answer.ok and answer.result.startswith("No catalog entry matches")


def test_get_product_gives_the_catalogs_facts_and_the_handles_of_its_place(store_tools):
    index, tools = store_tools
    by_id = {eid: h for h, eid in fixed_handles(index, "assistant").items()}
    for pid in _every(index):
        product = index.products[pid]
        facts = json.loads(tools.call("get_product", {"product_id": pid}).result)
        assert (facts["id"], facts["name"], facts["brand"], facts["category"]) == (
            pid, product.name, product.brand, product.category)
        assert facts["price"] == pytest.approx(product.price) and facts["labels"] == list(product.tags)
        assert facts["location"].startswith(index.location_text(pid))
        assert facts["location_handles"] == [by_id[e] for e in index.location_of(pid)]


def test_locate_a_product_names_its_holders_and_measures_from_the_shopper(store_tools):
    index, tools = store_tools
    by_id = {eid: h for h, eid in fixed_handles(index, "assistant").items()}
    pid = _every(index)[3]
    x, y = index.products[pid].instances[0].position[:2]
    for name in (pid, index.products[pid].name.upper()):
        out = json.loads(tools.call("locate", {"target": name}).result)
        assert out["id"] == pid and [a["handle"] for a in out["at"]] == [by_id[e] for e in index.location_of(pid)]
        assert out["position"] == [round(x, 1), round(y, 1)] and "from_shopper" not in out
    # From 5 m west of it, facing east: ahead; facing west: behind; facing north: to the right.
    for yaw, direction in ((0.0, "ahead"), (180.0, "behind"), (90.0, "90 degrees to the right")):
        out = json.loads(tools.call("locate", {"target": pid}, pose=(x - 5.0, y, yaw)).result)
        assert out["from_shopper"] == {"distance_m": 5.0, "direction": direction}


def test_locate_a_place_by_handle_name_or_short_name(store_tools):
    index, tools = store_tools
    handles = fixed_handles(index, "assistant")
    for handle, eid in list(handles.items())[::4]:
        name = index.name(eid)
        answers = [json.loads(tools.call("locate", {"target": t}).result)
                   for t in (handle, f"[{handle}]", eid, name.lower(), name.split(":", 1)[0])]
        assert all(a["handle"] == handle and a["name"] == name for a in answers)
        pose = (0.0, 0.0, 0.0)
        out = json.loads(tools.call("locate", {"target": handle}, pose=pose).result)
        assert out["from_shopper"]["distance_m"] == pytest.approx(math.hypot(*out["position"]), abs=0.1)


@pytest.mark.parametrize("name, arguments, says", [
    ("find", {"query": "milk"}, "unknown tool 'find'"),
    (None, {}, "unknown tool None"),
    ("search_catalog", {}, "needs 'query'"),
    ("search_catalog", {"query": ""}, "'query' must be a non-empty string"),
    ("search_catalog", {"query": 3}, "'query' must be a non-empty string"),
    ("search_catalog", {"query": "milk", "max_results": 0}, "'max_results' must be an integer from 1 to 20"),
    ("search_catalog", {"query": "milk", "max_results": "5"}, "'max_results' must be an integer"),
    ("search_catalog", {"query": "milk", "max_results": 2.0}, "'max_results' must be an integer"),
    ("search_catalog", {"query": "milk", "limit": 3}, "unexpected argument(s) limit"),
    ("search_catalog", '{"query": ', "arguments must be a JSON object"),
    ("search_catalog", ["milk"], "arguments must be a JSON object"),
    ("get_product", {"product_id": "sm_p999"}, "unknown product_id 'sm_p999'"),
    ("get_product", {"product_id": None}, "'product_id' must be a non-empty string"),
    ("locate", {"target": "the moon"}, "cannot locate 'the moon'"),
    ("locate", {}, "locate needs 'target'"),
])
def test_a_bad_call_is_answered_with_an_error_that_says_what_is_wrong(name, arguments, says):
    answer = CatalogTools(SceneIndex(load_scene("supermarket"))).call(name, arguments)
    assert not answer.ok and answer.result.startswith(ERROR_PREFIX) and says in answer.result


def test_arguments_may_come_as_json_text():
    tools = CatalogTools(SceneIndex(load_scene("supermarket")))
    assert tools.call("get_product", '{"product_id": "sm_p001"}') == tools.call("get_product", {"product_id": "sm_p001"})


# ---------------------------------------------------------------- the env option

def _make(view: str = "tools", store: str = "supermarket", **kw):
    return gym.make(STORES[store], image_size=SMALL, catalog_view=view, **kw)


def test_check_env_passes_with_the_tools_view(recwarn):
    check_env(_make(disable_env_checker=True).unwrapped, skip_render_check=True)
    assert not recwarn.list, [f"{w.filename}: {w.message}" for w in recwarn]


def test_the_tools_view_lists_no_product_only_the_navigation_index():
    obs, info = _make().reset(seed=0)
    full, _ = _make("full").reset(seed=0)
    assert obs["catalog"].startswith(TOOLS_TITLE) and not parse_catalog(obs["catalog"])
    assert obs["catalog"].endswith(full["catalog"][full["catalog"].index("Navigation targets"):])
    assert agent_info(info)["tools"] is info["tools"]  # the assistant gets the handle


def test_other_views_have_no_tools_and_record_none():
    env = _make("full")
    obs, info = env.reset(seed=0)
    assert "tools" not in info and "tools" not in agent_info(info)
    with pytest.raises(RuntimeError, match="catalog_view='tools'"):
        env.unwrapped.call_tool("search_catalog", {"query": "milk"})
    turns, _ = play(env, HeuristicAssistant(), env.unwrapped.task_ids[0])
    assert all(not t.tool_calls and "tool_calls" not in t.model_dump_json() for _, _, t in turns)


@pytest.mark.parametrize("store", list(STORES))
def test_the_same_actions_play_the_same_turns_under_the_full_and_the_tools_view(store):
    """The option changes what the observation lists and adds the tool record, nothing else."""
    full, tools = _make("full", store), _make("tools", store)
    task = full.unwrapped.task_ids[2]
    turns, _ = play(full, HeuristicAssistant(), task, seed=3)
    tools.reset(seed=3, options={"task_id": task})
    for text, _, turn in turns:
        *_, info = tools.step(text)
        assert info["turn"].model_dump_json() == turn.model_dump_json()


def test_tool_calls_are_recorded_in_order_in_the_next_turn_and_then_cleared():
    env = _make()
    obs, info = env.reset(seed=0)
    tools = agent_info(info)["tools"]
    first = tools("search_catalog", {"query": "peanut butter", "max_results": 2})
    second = env.unwrapped.call_tool("get_product", '{"product_id": "nope"}')
    third = tools("locate", {"target": parse_catalog(first)[0].id})
    agent = HeuristicAssistant()
    full_obs, _ = _make("full").reset(seed=0)
    agent.reset(full_obs, {"store": "supermarket"})
    *_, info = env.step(agent.act(full_obs))
    calls = info["turn"].tool_calls
    assert [(c.name, c.result, c.ok) for c in calls] == [
        ("search_catalog", first, True), ("get_product", second, False), ("locate", third, True)]
    assert calls[1].arguments == {"product_id": "nope"} and second.startswith(ERROR_PREFIX)
    assert json.loads(info["turn"].model_dump_json())["tool_calls"][0]["arguments"] == {
        "query": "peanut butter", "max_results": 2}
    *_, info = env.step(agent.act(full_obs))
    assert info["turn"].tool_calls == []


def test_calls_beyond_the_turn_limit_get_an_error_and_are_still_recorded():
    env = _make()
    env.reset(seed=0)
    results = [env.unwrapped.call_tool("get_product", {"product_id": "sm_p001"})
               for _ in range(MAX_TOOL_CALLS_PER_TURN + 2)]
    assert not any(r.startswith(ERROR_PREFIX) for r in results[:MAX_TOOL_CALLS_PER_TURN])
    assert all("tool-call limit" in r for r in results[MAX_TOOL_CALLS_PER_TURN:])
    assert len(env.unwrapped._tool_calls) == MAX_TOOL_CALLS_PER_TURN + 2


def test_unserialisable_arguments_are_recorded_as_text():
    env = _make()
    env.reset(seed=0)
    result = env.unwrapped.call_tool("search_catalog", {"query": object()})
    call = env.unwrapped._tool_calls[-1]
    assert result.startswith(ERROR_PREFIX) and isinstance(call.arguments, str)
    call.model_dump_json()


def test_snapshot_and_restore_keep_the_turns_pending_tool_calls():
    env = _make()
    env.reset(seed=0)
    env.unwrapped.call_tool("search_catalog", {"query": "jam"})
    state = env.unwrapped.snapshot()
    env.unwrapped.call_tool("locate", {"target": "1"})
    env.unwrapped.restore(state)
    assert [c.name for c in env.unwrapped._tool_calls] == ["search_catalog"]


def test_call_tool_needs_an_open_episode():
    env = _make()
    with pytest.raises(RuntimeError, match="open episode"):
        env.unwrapped.call_tool("locate", {"target": "1"})


def test_an_episode_record_counts_its_turns_tool_calls_and_writes_them_back():
    from situ_gym.records import EpisodeRecord

    env = _make()
    env.reset(seed=0)
    agent, full = HeuristicAssistant(), _make("full")
    obs, _ = full.reset(seed=0)
    agent.reset(obs, {"store": "supermarket"})
    turns = []
    for n in (2, 0, 1):
        for _ in range(n):
            env.unwrapped.call_tool("locate", {"target": "1"})
        *_, info = env.step(agent.act(obs))
        turns.append(info["turn"])
    task = env.unwrapped.task
    record = EpisodeRecord(episode_id="e", env_id="SituRec-Supermarket-v0", store="supermarket", task_id=task.id,
                           profile_id=task.profile_id, subset=0, seed=0, agent="a", user="rule", target_id="t",
                           reference_set=[], budget=1.0, turns=turns, termination="turn_limit")
    assert record.tool_calls == 3
    again = EpisodeRecord.model_validate_json(record.model_dump_json(), context={"file": True})
    assert [len(t.tool_calls) for t in again.turns] == [2, 0, 1] and again.tool_calls == 3
