"""The heuristic restricted to the compact view: it only names what the observations listed."""

from __future__ import annotations

import json

import gymnasium as gym

import situ_gym  # noqa: F401  (registers the envs)
from agents.base import agent_info
from agents.heuristic import HeuristicAssistant
from agents.obs_text import parse_catalog
from agents.restricted import RestrictedHeuristic


def _play(agent, view: str, task: int, turns: int = 20) -> list[tuple[dict, dict[str, str]]]:
    env = gym.make("SituRec-Supermarket-v0", catalog_view=view, catalog_k=3)
    obs, info = env.reset(seed=0, options={"task_id": env.unwrapped.task_ids[task]})
    agent.reset(obs, agent_info(info), seed=0)
    known: dict[str, str] = {}  # id -> name of every entry listed so far
    played = []
    for _ in range(turns):
        known.update({e.id: e.name for e in parse_catalog(obs["catalog"])})
        action = agent.act(obs)
        played.append((json.loads(action), dict(known)))
        obs, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            break
    env.close()
    return played


def test_ranks_and_recommends_only_listed_entries():
    for task in (0, 5):
        played = _play(RestrictedHeuristic(), "retrieved", task)
        assert any(out["ranking"] for out, _ in played)
        recommended = [a for out, _ in played for a in out["assistant_actions"] if a["type"] == "Recommend"]
        assert recommended
        for out, known in played:
            assert set(out["ranking"]) <= set(known)
            for action in out["assistant_actions"]:
                if action["type"] == "Recommend":
                    assert action["display_name"] in known.values()


def test_with_the_full_catalog_it_plays_like_the_heuristic():
    ours = [out for out, _ in _play(RestrictedHeuristic(), "full", 0, turns=8)]
    theirs = [out for out, _ in _play(HeuristicAssistant(), "full", 0, turns=8)]
    assert ours == theirs
