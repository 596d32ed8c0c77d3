"""OpenAIChatBackend against an in-process HTTP transport: request shape, images, retries, failures.

The fault kinds one by one, against a real socket, are in test_faults.py."""

from __future__ import annotations

import base64
import json

import httpx2 as httpx  # the HTTP client package that openai uses
import numpy as np
import pytest

from situ_gym.llm import BackendUnavailable, ChatRequest, LLMSettings, SetupError
from situ_gym.llm.openai_backend import OpenAIChatBackend, reset_endpoints

# Quick retries: the transport answers at once, only the backoff would take time.
FAST = LLMSettings(retries=2, backoff=0.01, max_backoff=0.02)


@pytest.fixture(autouse=True)
def _fresh_endpoints():
    """Every test talks to http://test.local/v1: forget what the previous one taught the process."""
    reset_endpoints()
    yield
    reset_endpoints()


def _completion(text: str) -> dict:
    return {"id": "x", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14}}


def _backend(handler, settings: LLMSettings = FAST) -> OpenAIChatBackend:
    client = httpx.Client(transport=httpx.MockTransport(handler))
    return OpenAIChatBackend("m", base_url="http://test.local/v1", http_client=client, settings=settings)


def test_request_carries_sampling_seed_json_mode_and_images_as_png():
    seen = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(json.loads(request.content))
        return httpx.Response(200, json=_completion('{"end": false}'))

    img = np.zeros((6, 8, 3), np.uint8)
    img[0, 0] = (255, 0, 0)
    req = ChatRequest([{"role": "system", "content": "s"},
                       {"role": "user", "content": [{"type": "image", "image": img}, {"type": "text", "text": "t"}]}],
                      role="judge", max_tokens=9, temperature=0.5, top_p=0.9, seed=42, json_mode=True)
    (res,) = _backend(handler).chat_batch([req])
    assert (res.text, res.prompt_tokens, res.completion_tokens) == ('{"end": false}', 11, 3)
    body = seen[0]
    assert (body["model"], body["max_tokens"], body["temperature"], body["top_p"], body["seed"]) == ("m", 9, 0.5, 0.9, 42)
    assert body["response_format"] == {"type": "json_object"}
    image, text = body["messages"][1]["content"]
    assert text == {"type": "text", "text": "t"}
    url = image["image_url"]["url"]
    assert url.startswith("data:image/png;base64,")
    import cv2

    decoded = cv2.imdecode(np.frombuffer(base64.b64decode(url.split(",", 1)[1]), np.uint8), cv2.IMREAD_COLOR)
    assert decoded.shape == (6, 8, 3) and tuple(decoded[0, 0]) == (0, 0, 255)  # BGR of red


def test_rate_limits_and_server_errors_are_retried_then_answered():
    codes = iter([429, 503])

    def handler(request):
        code = next(codes, 200)
        return httpx.Response(code, json=_completion("ok") if code == 200 else {"error": {"message": "busy"}},
                              headers={"retry-after-ms": "10"})

    (res,) = _backend(handler).chat_batch([ChatRequest([{"role": "user", "content": "hi"}])])
    assert res.text == "ok" and res.retries == 2


def test_dead_or_refusing_endpoints_raise_backend_unavailable_in_one_line():
    def down(request):
        raise httpx.ConnectError("connection refused")

    dead = LLMSettings(retries=0, persistent_after=1)
    with pytest.raises(BackendUnavailable, match=r"endpoint http://test.local/v1: last status none") as err:
        _backend(down, dead).chat(ChatRequest([{"role": "user", "content": "hi"}]))
    assert "\n" not in str(err.value)
    with pytest.raises(SetupError, match="is unreachable"):
        _backend(down, dead).check()

    reset_endpoints()
    sent = []

    def unauthorized(request):
        sent.append(request)
        return httpx.Response(401, json={"error": {"message": "bad key"}})

    with pytest.raises(BackendUnavailable, match="status 401: bad key"):
        _backend(unauthorized).chat(ChatRequest([{"role": "user", "content": "hi"}]))
    assert len(sent) == 1  # not retried


def test_servers_rejecting_json_mode_are_asked_again_without_it():
    bodies = []

    def handler(request):
        body = json.loads(request.content)
        bodies.append(body)
        if "response_format" in body:
            return httpx.Response(400, json={"error": {"message": "response_format unsupported"}})
        return httpx.Response(200, json=_completion("{}"))

    backend = _backend(handler)
    (res,) = backend.chat_batch([ChatRequest([{"role": "user", "content": "x"}], json_mode=True)])
    assert res.text == "{}" and len(bodies) == 2 and "response_format" not in bodies[1]
    backend.chat_batch([ChatRequest([{"role": "user", "content": "y"}], json_mode=True)])
    assert len(bodies) == 3 and "response_format" not in bodies[2]  # learnt once for the endpoint


def test_schema_requests_ask_for_strict_json_schema_named_by_role():
    bodies = []

    def handler(request):
        bodies.append(json.loads(request.content))
        return httpx.Response(200, json=_completion('{"score": 3}'))

    schema = {"type": "object", "properties": {"score": {"type": "integer"}}}
    (res,) = _backend(handler).chat_batch([ChatRequest([{"role": "user", "content": "x"}], role="moderator",
                                                       schema=schema)])
    assert res.text == '{"score": 3}'
    assert bodies[0]["response_format"] == {
        "type": "json_schema", "json_schema": {"name": "moderator_reply", "schema": schema, "strict": True}}


def test_batch_keeps_order_under_concurrency():
    def handler(request):
        return httpx.Response(200, json=_completion(json.loads(request.content)["messages"][0]["content"]))

    reqs = [ChatRequest([{"role": "user", "content": str(i)}]) for i in range(12)]
    out = _backend(handler, LLMSettings(concurrency=4)).chat_batch(reqs)
    assert [r.text for r in out] == [str(i) for i in range(12)]


def test_missing_api_key_for_a_hosted_api_is_a_clear_error(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ValueError, match="set OPENAI_API_KEY"):
        OpenAIChatBackend("gpt-4o")
