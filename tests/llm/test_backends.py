"""Response cache, usage accounting, JSON extraction, lock-step batching and spec parsing."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from situ_gym.llm import (
    GATE,
    CachedBackend,
    ChatRequest,
    ResponseCache,
    UsageMeter,
    chat_lockstep,
    extract_json,
    make_backend,
    read_usage,
    request_key,
    summarize_usage,
)
from tests.llm.scripted import ScriptedBackend


def _req(text="hi", **kw):
    return ChatRequest([{"role": "user", "content": text}], role=kw.pop("role", "user"), **kw)


def test_cache_replays_without_calling_the_model(tmp_path):
    inner = ScriptedBackend(lambda r, i: f"answer {i}")
    meter = UsageMeter(tmp_path / "usage.jsonl")
    backend = CachedBackend(inner, ResponseCache(tmp_path / "c.sqlite"), meter)
    first = backend.chat_batch([_req("a"), _req("b")])
    assert [r.text for r in first] == ["answer 0", "answer 1"] and not any(r.cached for r in first)
    # A new process (new cache object on the same file) gets the same texts, as hits.
    again = CachedBackend(inner, ResponseCache(tmp_path / "c.sqlite"), meter)
    second = again.chat_batch([_req("b"), _req("c"), _req("a")])
    assert [r.text for r in second] == ["answer 1", "answer 2", "answer 0"]
    assert [r.cached for r in second] == [True, False, True]
    assert [len(b) for b in inner.batches] == [2, 1]  # only the miss went to the model
    s = summarize_usage(read_usage(tmp_path / "usage.jsonl"))["user"]
    assert (s["calls"], s["cache_hits"], s["cache_misses"]) == (5, 2, 3)


def test_cache_key_covers_model_sampling_seed_and_image_bytes():
    img = np.zeros((4, 4, 3), np.uint8)
    other = img.copy()
    other[0, 0, 0] = 1

    def with_image(a):
        return ChatRequest([{"role": "user", "content": [{"type": "image", "image": a}, {"type": "text", "text": "x"}]}])

    base = request_key(_req(), "m")
    assert request_key(_req(), "m") == base
    assert len({base, request_key(_req(), "m2"), request_key(_req(temperature=0.5), "m"),
                request_key(_req(seed=1), "m"), request_key(_req(max_tokens=7), "m")}) == 5
    assert request_key(with_image(img), "m") == request_key(with_image(img.copy()), "m")
    assert request_key(with_image(img), "m") != request_key(with_image(other), "m")


def test_extract_json_skips_chatter_and_reports_errors():
    assert extract_json('Here: {"end": true} and {"x": 2}') == {"end": True}
    assert extract_json('{bad} then {"ok": 1}') == {"ok": 1}
    with pytest.raises(ValueError, match="invalid JSON"):
        extract_json('{"utterance": "unterminated')
    with pytest.raises(ValueError, match="no JSON object"):
        extract_json("[1, 2]")


def test_lockstep_joins_threads_into_one_ordered_batch():
    inner = ScriptedBackend(lambda r, i: r.messages[0]["content"].upper())
    results: dict[int, str] = {}

    def work(order: int) -> None:
        with GATE.participant(order):
            if order == 1:
                return  # this episode needs no model call this step
            results[order] = chat_lockstep(inner, [_req(f"ep{order}")])[0].text
            results[order] += chat_lockstep(inner, [_req(f"m{order}", role="moderator")])[0].text

    with GATE.session(4):
        threads = [threading.Thread(target=work, args=(k,)) for k in (3, 0, 2, 1)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=30)
    assert results == {0: "EP0M0", 2: "EP2M2", 3: "EP3M3"}
    assert [[r.messages[0]["content"] for r in b] for b in inner.batches] == [
        ["ep0", "ep2", "ep3"], ["m0", "m2", "m3"]
    ]


def test_lockstep_hands_a_backend_error_to_every_waiter():
    def boom(r, i):
        raise RuntimeError("endpoint died")

    inner = ScriptedBackend(boom)
    errors: list[str] = []

    def work(order: int) -> None:
        with GATE.participant(order):
            try:
                chat_lockstep(inner, [_req()])
            except RuntimeError as exc:
                errors.append(str(exc))

    with GATE.session(2):
        threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=30)
    assert errors == ["endpoint died", "endpoint died"]


@pytest.mark.parametrize("spec", ["smollm2", "gpt:4o", "hf:", "openai:"])
def test_bad_specs_name_the_valid_forms(spec):
    with pytest.raises(ValueError, match="hf:MODEL"):
        make_backend(spec)


def test_request_checks_its_arguments():
    with pytest.raises(ValueError, match="role"):
        _req(role="shopper")
    with pytest.raises(ValueError, match="temperature"):
        _req(temperature=-1)
