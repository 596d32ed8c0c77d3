"""OpenAIChatBackend against a fault-injecting server: each fault kind has its one behaviour.

Waits are kept short on purpose: backoff of 10-50 ms, a 0.5 s timeout, Retry-After of at
most 2 s; the server measures the gaps between attempts itself.
"""

from __future__ import annotations

import logging
import random
import threading
import time

import pytest

from situ_gym.llm import BackendUnavailable, ChatRequest, EpisodeError, LLMSettings, SetupError
from situ_gym.llm.openai_backend import OpenAIChatBackend, reset_endpoints
from tests.llm.fault_server import FaultServer
from tests.ports import free_port

# Retries come quickly so that the whole file runs in seconds.
FAST = LLMSettings(timeout=5.0, retries=3, backoff=0.01, max_backoff=0.05, persistent_after=3)


@pytest.fixture
def server():
    reset_endpoints()
    srv = FaultServer(lifetime=60.0).start()
    yield srv
    srv.stop()
    reset_endpoints()


@pytest.fixture
def backends():
    made: list[OpenAIChatBackend] = []

    def make(url: str, settings: LLMSettings = FAST, model: str = "m") -> OpenAIChatBackend:
        made.append(OpenAIChatBackend(model, base_url=url, settings=settings))
        return made[-1]

    yield make
    for b in made:
        b.close()


def _req(text: str = "hi", **kw) -> ChatRequest:
    return ChatRequest([{"role": "system", "content": "be brief"}, {"role": "user", "content": text}], **kw)



# ------------------------------------------------------------------ transient


@pytest.mark.parametrize("fault", ["500", "503", "429", "not_json", "no_choices", "no_content", "reset"])
def test_transient_faults_are_retried_then_answered(server, backends, fault):
    server.plan(fault, fault)
    (res,) = backends(server.url).chat_batch([_req("hello")])
    assert res.error is None and res.text == "hello"
    assert res.retries == 2 and server.requests() == 3
    assert res.latency > 0


@pytest.mark.parametrize(("fault", "least"), [("429_retry_after_1s", 1.0), ("429_retry_after_ms", 0.4),
                                              ("retry_after_date", 0.95)])
def test_retry_after_is_honoured(server, backends, fault, least):
    server.plan(fault)
    (res,) = backends(server.url).chat_batch([_req()])
    assert res.text == "hi" and res.retries == 1
    (gap,) = server.gaps()
    assert least - 0.05 <= gap < least + 1.5  # the server's word, not our 10-50 ms backoff


def test_connection_refused_is_retried_until_the_server_listens(server, backends):
    settings = LLMSettings(timeout=2.0, retries=30, backoff=0.05, max_backoff=0.1)
    backend = backends(server.url, settings)  # a fresh client: no connection kept alive
    server.refuse_connections(0.6)
    t0 = time.monotonic()
    (res,) = backend.chat_batch([_req()])
    assert res.text == "hi" and res.retries >= 1
    assert time.monotonic() - t0 >= 0.5 and server.requests() == 1


def test_timeout_closes_the_connection_and_is_retried(server, backends):
    server.plan("hang")
    settings = LLMSettings(timeout=0.5, retries=2, backoff=0.01, max_backoff=0.02)
    (res,) = backends(server.url, settings).chat_batch([_req()])
    assert res.text == "hi" and res.retries == 1 and res.latency >= 0.5
    deadline = time.monotonic() + 2.0
    while server.disconnects() < 1 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.disconnects() == 1  # the hanging handler saw the client go: it can stop generating


def test_jitter_leaves_the_global_rng_alone(server, backends):
    server.plan("500", "503")
    random.seed(123)
    state = random.getstate()
    (res,) = backends(server.url).chat_batch([_req()])
    assert res.retries == 2 and random.getstate() == state


# ------------------------------------------------------------------ episode


@pytest.mark.parametrize(("fault", "cause"), [
    ("context_vllm", "context_length"), ("context_vllm_v1", "context_length"), ("context_openai", "context_length"),
    ("context_llamacpp", "context_length"), ("context_413", "context_length"),
    ("content_filter", "content_filter"), ("content_filter_400", "content_filter"),
    ("invalid_422", "invalid_request"),
])
def test_episode_errors_stay_with_their_request(server, backends, fault, cause):
    server.when("TOO LONG", fault)
    texts = ["a", "b TOO LONG", "c", "d"]
    out = backends(server.url).chat_batch([_req(t) for t in texts])
    assert [r.text for r in out] == ["a", "", "c", "d"]
    assert [r.error is None for r in out] == [True, False, True, True]
    assert isinstance(out[1].error, EpisodeError) and out[1].error.cause == cause
    assert out[1].retries == 0 and server.requests() == 4  # never retried


# ------------------------------------------------------------------ persistent


def test_exhausted_requests_mark_the_endpoint_dead_for_every_backend(server, backends):
    server.when("", "500")  # every request fails
    settings = LLMSettings(timeout=2.0, retries=1, backoff=0.01, max_backoff=0.02, persistent_after=2)
    with pytest.raises(BackendUnavailable, match=rf"endpoint {server.url}: last status 500 \(status 500: internal"):
        backends(server.url, settings).chat_batch([_req()])
    assert server.requests() == 4  # 2 budgets of (1 + 1 retry)
    other = backends(server.url, settings)
    t0 = time.monotonic()
    with pytest.raises(BackendUnavailable, match="last status 500"):
        other.chat_batch([_req("x"), _req("y")])
    assert time.monotonic() - t0 < 0.1 and server.requests() == 4  # nothing sent afterwards


def test_a_success_resets_the_consecutive_count(server, backends):
    settings = LLMSettings(timeout=2.0, retries=1, backoff=0.01, max_backoff=0.02, persistent_after=2)
    backend = backends(server.url, settings)
    for _ in range(3):  # each request spends one budget, then succeeds: never two in a row
        server.plan("500", "500")
        (res,) = backend.chat_batch([_req()])
        assert res.text == "hi" and res.retries == 2
    assert server.requests() == 9


@pytest.mark.parametrize("fault", ["401", "403", "404"])
def test_refused_credentials_or_unknown_model_raise_at_once(server, backends, fault):
    server.when("", fault)
    with pytest.raises(BackendUnavailable, match=f"status {fault}"):
        backends(server.url).chat_batch([_req()])
    assert server.requests() == 1


def test_dead_endpoint_with_the_connection_refused(backends):
    reset_endpoints()
    url = f"http://127.0.0.1:{free_port()}/v1"
    settings = LLMSettings(timeout=1.0, retries=1, backoff=0.01, max_backoff=0.02, persistent_after=1)
    with pytest.raises(BackendUnavailable, match=rf"endpoint {url}: last status none \(ConnectError"):
        backends(url, settings).chat_batch([_req()])
    reset_endpoints()


# ------------------------------------------------------------------ setup


def test_check_reads_the_context_length_and_names_the_models_served(backends):
    reset_endpoints()
    srv = FaultServer("m", models=["m", "other"], max_model_len=4096).start()
    try:
        backend = backends(srv.url, LLMSettings(max_context=1000))
        assert backend.context_length == 1000  # before check: the configured fallback
        backend.check()
        assert backend.context_length == 4096
        with pytest.raises(SetupError, match=r"does not serve model 'nope'; it serves: m, other"):
            backends(srv.url, model="nope").check()
        srv.max_model_len = None
        unreported = backends(srv.url, LLMSettings(max_context=1000))
        unreported.check()
        assert unreported.context_length == 1000
        srv.models_fault = "503"
        before = srv.model_requests
        with pytest.raises(SetupError, match="status 503"):
            backend.check()
        assert srv.model_requests == before + 1  # no retries
    finally:
        srv.stop()


def test_check_of_an_unreachable_endpoint_is_a_setup_error(backends):
    with pytest.raises(SetupError, match="unreachable"):
        backends(f"http://127.0.0.1:{free_port()}/v1").check()


# ------------------------------------------------------------------ structured output

SCHEMA = {"type": "object", "properties": {"score": {"type": "integer"}}, "required": ["score"],
          "additionalProperties": False}


def test_schema_refusal_is_detected_once_per_endpoint(server, backends, caplog):
    server.refuse_formats = {"json_schema"}
    settings = LLMSettings(timeout=5.0, retries=2, backoff=0.01, max_backoff=0.02, concurrency=4)
    with caplog.at_level(logging.WARNING, logger="situ_gym.llm.openai_backend"):
        out = backends(server.url, settings).chat_batch([_req(str(i), role="judge", schema=SCHEMA) for i in range(6)])
        assert [r.text for r in out] == [str(i) for i in range(6)] and all(r.retries == 0 for r in out)
        backends(server.url, settings).chat_batch([_req("again", role="judge", schema=SCHEMA)])
    assert server.refused_formats == ["json_schema"]  # one probe, not one per request or per backend
    first = server.arrivals[0].body["response_format"]
    assert first == {"type": "json_schema", "json_schema": {"name": "judge_reply", "schema": SCHEMA, "strict": True}}
    assert [a.body["response_format"] for a in server.arrivals[1:]] == [{"type": "json_object"}] * 7
    assert len([r for r in caplog.records if "refuses response_format" in r.message]) == 1


def test_an_endpoint_refusing_every_format_gets_plain_text(server, backends):
    server.refuse_formats = {"json_schema", "json_object"}
    backend = backends(server.url)
    (res,) = backend.chat_batch([_req("s", schema=SCHEMA)])
    (res2,) = backend.chat_batch([_req("j", json_mode=True)])
    assert (res.text, res2.text) == ("s", "j")
    assert server.refused_formats == ["json_schema", "json_object"]
    assert "response_format" not in server.arrivals[-1].body and len(server.arrivals) == 4


# ------------------------------------------------------------------ caps and usage


def test_concurrency_cap_holds_across_backends_and_threads(backends):
    reset_endpoints()
    srv = FaultServer(delay=0.1).start()
    try:
        settings = LLMSettings(timeout=5.0, concurrency=3)
        pair = [backends(srv.url, settings), backends(srv.url, settings)]
        errors: list[BaseException] = []

        def work(i: int) -> None:
            try:
                pair[i % 2].chat_batch([_req(f"{i}-{j}") for j in range(4)])
            except BaseException as exc:  # noqa: BLE001 - reported below
                errors.append(exc)

        threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=20)
        assert not errors and srv.requests() == 24
        assert srv.max_in_flight == 3  # reached, never passed
    finally:
        srv.stop()


@pytest.mark.parametrize("settings", [LLMSettings(timeout=5.0, rpm=2),
                                      LLMSettings(timeout=5.0, tpm=100)], ids=["rpm", "tpm"])
def test_rates_hold_requests_back_and_close_stops_them(server, backends, settings):
    backend = backends(server.url, settings)
    errors: list[BaseException] = []

    def work():
        try:  # 3 requests of ~45 tokens: 2 fit in the minute's rpm=2 or tpm=100
            backend.chat_batch([_req(str(i), max_tokens=45) for i in range(3)])
        except BaseException as exc:  # noqa: BLE001 - checked below
            errors.append(exc)

    thread = threading.Thread(target=work)
    thread.start()
    time.sleep(0.8)
    assert server.requests() == 2  # the third waits for the window
    t0 = time.monotonic()
    backend.close()
    thread.join(timeout=3)
    assert not thread.is_alive() and time.monotonic() - t0 < 1.0
    assert len(errors) == 1 and isinstance(errors[0], BackendUnavailable)
    assert server.requests() == 2  # nothing sent after close
    with pytest.raises(BackendUnavailable, match="closed"):
        backend.chat_batch([_req()])


def test_usage_reports_cached_prompt_tokens(backends):
    reset_endpoints()
    srv = FaultServer(cached_tokens=7).start()
    try:
        (res,) = backends(srv.url).chat_batch([_req()])
        assert (res.prompt_tokens, res.completion_tokens, res.cached_prompt_tokens) == (11, 3, 7)
    finally:
        srv.stop()
