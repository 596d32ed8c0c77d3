"""Catalog retrieval (BM25 over the language layer's lemmas) and the env's compact catalog view."""

from __future__ import annotations

import doctest
import importlib

import gymnasium as gym
import pytest

import situ_gym  # noqa: F401  (registers the envs)
from agents.obs_text import parse_catalog, parse_nav_targets
from situ_gym.retrieval import RETRIEVED_TITLE, CatalogRetriever, document_words, query_words
from situ_gym.scene import SceneIndex
from situ_gym.scene.loader import load_scene


@pytest.fixture(scope="module")
def index():
    return SceneIndex(load_scene("supermarket"))


@pytest.fixture(scope="module")
def retriever(index):
    return CatalogRetriever(index)


def test_doctest():
    result = doctest.testmod(importlib.import_module("situ_gym.retrieval"))
    assert result.attempted > 0 and result.failed == 0


def test_retrieves_the_named_category_and_nothing_unrelated(retriever, index):
    ids = retriever.retrieve([("user", "I'd like some yogurt, please.")], k=8)
    assert ids, "a category the catalog carries must retrieve entries"
    assert all(index.products[pid].category == "yogurt" for pid in ids)
    assert retriever.retrieve([("user", "Hello there, how are you?")], k=8) == []
    assert retriever.retrieve([], k=8) == []


def test_attribute_words_rank_the_matching_entries_first(retriever, index):
    ranked = retriever.retrieve([("user", "breakfast cereal with honey")], k=12)
    cereals = [pid for pid in ranked if index.products[pid].category == "breakfast cereal"]
    honey = ["honey" in document_words(index, pid) for pid in cereals]
    assert any(honey) and not all(honey)
    assert honey == sorted(honey, reverse=True)  # every honey cereal before any other cereal
    assert ranked[: len(cereals)] == cereals  # the named category before other honey products


def test_shopper_words_weigh_more_than_assistant_words(retriever, index):
    said = [("user", "I want ice cream"), ("assistant", "Or maybe frozen pizza?")]
    top = retriever.retrieve(said, k=1)[0]
    assert index.products[top].category == "ice cream"
    swapped = [("assistant", "I want ice cream"), ("user", "Or maybe frozen pizza?")]
    assert index.products[retriever.retrieve(swapped, k=1)[0]].category == "frozen pizza"


def test_ties_keep_catalog_order_and_k_bounds(retriever):
    ids = retriever.retrieve([("user", "cereal")], k=5)
    scores = retriever.scores([("user", "cereal")])
    order = {pid: i for i, pid in enumerate(retriever.product_ids)}
    assert len(ids) == 5
    for a, b in zip(ids, ids[1:], strict=False):
        sa, sb = scores[order[a]], scores[order[b]]
        assert sa > sb or (sa == sb and order[a] < order[b])
    with pytest.raises(ValueError, match="k must be a positive integer"):
        retriever.retrieve([("user", "cereal")], k=0)


def test_query_words_split_roles_and_drop_function_words():
    user, assistant = query_words([("user", "I need the lamps!"), ("assistant", "Sure, these lamps $12")])
    assert user == ["need", "lamp"]
    assert assistant == ["sure", "lamp"]


def test_env_compact_view_lists_retrieved_entries_and_the_navigation_index():
    full = gym.make("SituRec-Supermarket-v0")
    env = gym.make("SituRec-Supermarket-v0", catalog_view="retrieved", catalog_k=4)
    obs_full, _ = full.reset(seed=0)
    obs, info = env.reset(seed=0)
    assert obs["catalog"].startswith(RETRIEVED_TITLE)
    assert parse_catalog(obs["catalog"]) == []  # nobody has spoken yet
    assert parse_nav_targets(obs["catalog"]) == parse_nav_targets(obs_full["catalog"])
    reply = '{"response": "Hi! What are you shopping for?", "assistant_actions": [{"type": "Greet"}], ' \
            '"expected_user_action": {"name": "idle", "arguments": {}}, "ranking": []}'
    obs, *_ = env.step(reply)
    entries = parse_catalog(obs["catalog"])
    base = env.unwrapped
    expected = base._retriever.retrieve(base._dialogue, 4)
    assert [e.id for e in entries] == expected and 0 < len(entries) <= 4
    full_lines = {line.split(" | ")[0]: line for line in obs_full["catalog"].splitlines()}
    for line in obs["catalog"].splitlines()[1 : len(entries) + 1]:
        assert full_lines[line.split(" | ")[0]] == line  # the same line as in the full catalog
    assert env.observation_space.contains(obs)
    full.close()
    env.close()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"catalog_view": "some"}, "catalog_view must be one of"), ({"catalog_k": 0}, "catalog_k must be a positive")],
)
def test_env_rejects_bad_catalog_options(kwargs, message):
    with pytest.raises(ValueError, match=message):
        gym.make("SituRec-Supermarket-v0", **kwargs)


def test_place_names_are_not_product_needs():
    home = CatalogRetriever(SceneIndex(load_scene("home_furnishings")))
    index = SceneIndex(load_scene("home_furnishings"))
    curio = [pid for pid in home.product_ids if "curio" in document_words(index, pid)]
    assert home.retrieve([("user", "I'll try Victorian Curio Collection first.")], k=5) == []
    wanted = home.retrieve([("user", "I'd like a curio cabinet.")], k=len(curio))
    assert curio and sorted(wanted) == sorted(curio)


def test_compact_observations_are_deterministic():
    from agents.base import agent_info
    from agents.restricted import RestrictedHeuristic

    def catalogs():
        env = gym.make("SituRec-HomeFurnishings-v0", catalog_view="retrieved", catalog_k=5)
        obs, info = env.reset(seed=3)
        agent = RestrictedHeuristic()
        agent.reset(obs, agent_info(info), seed=3)
        seen = [obs["catalog"]]
        for _ in range(6):
            obs, _, terminated, truncated, _ = env.step(agent.act(obs))
            seen.append(obs["catalog"])
            if terminated or truncated:
                break
        env.close()
        return seen

    first = catalogs()
    assert first == catalogs()
    assert len({c for c in first}) > 1  # the view follows the dialogue


def test_the_compact_title_carries_its_k_and_a_full_catalog_has_none():
    from situ_gym.retrieval import retrieved_k, retrieved_title

    assert retrieved_k(retrieved_title(7) + " (id | name):\nsm_p1 | ...") == 7
    assert retrieved_k("Catalog (id | name | category | price | location):\nsm_p1 | ...") is None
    env = gym.make("SituRec-Supermarket-v0", catalog_view="retrieved", catalog_k=3)
    obs, _ = env.reset(seed=0)
    env.close()
    assert retrieved_k(obs["catalog"]) == 3
