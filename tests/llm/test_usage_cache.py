"""The response cache keeps only replies, keyed by endpoint, model, sampling and schema; the
usage log gives latency percentiles, the prompt share a prefix cache can reuse, and cost."""

from __future__ import annotations

import pytest

from situ_gym.llm import (
    CachedBackend,
    ChatRequest,
    ChatResult,
    EpisodeError,
    ResponseCache,
    request_key,
)
from situ_gym.llm.usage import UsageMeter, format_usage, read_usage, summarize_usage
from tests.llm.scripted import ScriptedBackend


def _req(text="hi", **kw):
    return ChatRequest([{"role": "user", "content": text}], role=kw.pop("role", "user"), **kw)


def test_the_cache_key_holds_the_endpoint_and_the_schema():
    base = request_key(_req(), "m", "http://127.0.0.1:8000/v1")
    assert base != request_key(_req(), "m", "http://127.0.0.1:8001/v1")
    assert base != request_key(_req(), "m", None)
    assert base != request_key(_req(schema={"type": "object"}), "m", "http://127.0.0.1:8000/v1")
    assert request_key(_req(schema={"type": "object"}), "m", None) == request_key(
        _req(schema={"type": "object"}), "m", None)


class _Failing(ScriptedBackend):
    """Answers "" for requests whose text is "empty" and an episode error for "long"."""

    def chat_batch(self, requests):
        out = super().chat_batch(requests)
        for r, res in zip(requests, out, strict=True):
            if r.messages[0]["content"] == "long":
                res.text, res.error = "", EpisodeError("context_length", "too long")
            if r.messages[0]["content"] == "empty":
                res.text = ""
        return out


def test_failed_replies_are_never_cached_and_asked_again_next_time(tmp_path):
    inner = _Failing(lambda r, i: f"answer {i}")
    cache = ResponseCache(tmp_path / "c.sqlite")
    backend = CachedBackend(inner, cache, UsageMeter(), endpoint="http://a/v1")
    first = backend.chat_batch([_req("ok"), _req("long"), _req("empty")])
    assert first[1].error is not None and first[1].error.cause == "context_length"
    assert len(cache) == 1
    second = backend.chat_batch([_req("ok"), _req("long"), _req("empty")])
    assert [r.cached for r in second] == [True, False, False]
    assert [len(b) for b in inner.batches] == [3, 2]  # only the failures went back to the model
    # Another endpoint never gets this endpoint's replies.
    other = CachedBackend(inner, cache, UsageMeter(), endpoint="http://b/v1")
    assert other.chat_batch([_req("ok")])[0].cached is False


def test_usage_gives_latency_percentiles_prefix_share_errors_and_cost(tmp_path):
    meter = UsageMeter(tmp_path / "u.jsonl")
    system = {"role": "system", "content": "S" * 60}
    turn1 = [system, {"role": "user", "content": "A" * 40}]
    turn2 = turn1 + [{"role": "assistant", "content": "B" * 20}, {"role": "user", "content": "C" * 20}]
    rewritten = [system, {"role": "user", "content": "Z" * 80}]  # the earlier turn rewritten
    reqs = [ChatRequest(m, role="user", conversation="user:1") for m in (turn1, turn2, rewritten)]
    results = [ChatResult("x", prompt_tokens=100, cached_prompt_tokens=c, completion_tokens=10, seconds=s,
                          latency=s) for c, s in ((0, 1.0), (80, 2.0), (50, 4.0))]
    meter.record("m", reqs, results)
    meter.record("m", [ChatRequest(turn1, role="judge")], [ChatResult("", error=EpisodeError("content_filter", "x"))])
    rows = read_usage(tmp_path / "u.jsonl")
    shares = [r.get("prefix_share") for r in rows if r["role"] == "user"]
    assert shares[0] is None and shares[1] > 0.6 and shares[2] < shares[1]
    s = summarize_usage(rows, prices=(2.0, 0.5, 8.0))
    user, judge = s["user"], s["judge"]
    assert (user["latency_p50"], user["latency_p95"]) == (2.0, pytest.approx(3.8))
    assert user["cached_prompt_tokens"] == 130 and judge["errors"] == 1
    assert user["prefix_share"] == pytest.approx((shares[1] + shares[2]) / 2, abs=1e-4)
    # 170 fresh prompt tokens at $2, 130 cached at $0.5, 30 completion tokens at $8, per million.
    assert user["cost"] == pytest.approx((170 * 2 + 130 * 0.5 + 30 * 8) / 1e6)
    table = format_usage(s)
    assert "Est. cost $" in table and "| judge |" in table and "Fallback rate" in table


def test_cache_hits_cost_nothing_and_do_not_count_as_latency(tmp_path):
    meter = UsageMeter(tmp_path / "u.jsonl")
    backend = CachedBackend(ScriptedBackend(lambda r, i: "a"), ResponseCache(tmp_path / "c.sqlite"), meter)
    backend.chat_batch([_req("x")])
    backend.chat_batch([_req("x")])  # a hit
    s = summarize_usage(read_usage(tmp_path / "u.jsonl"), prices=(1.0, 1.0, 1.0))["user"]
    assert (s["calls"], s["cache_hits"]) == (2, 1)
    assert s["cost"] == pytest.approx((10 + 1) / 1e6)  # the scripted backend's 10 prompt + 1 completion tokens
