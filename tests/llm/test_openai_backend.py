"""OpenAIChatBackend against an in-process HTTP transport: request shape, images, retries, failures."""

from __future__ import annotations

import base64
import json

import httpx2 as httpx  # the HTTP client package that openai uses
import numpy as np
import pytest

from situ_gym.llm import BackendUnavailable, ChatRequest
from situ_gym.llm.openai_backend import OpenAIChatBackend


def _completion(text: str) -> dict:
    return {"id": "x", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14}}


def _backend(handler, **kw) -> OpenAIChatBackend:
    client = httpx.Client(transport=httpx.MockTransport(handler))
    return OpenAIChatBackend("m", base_url="http://test.local/v1", http_client=client, **kw)


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

    (res,) = _backend(handler, max_retries=2).chat_batch([ChatRequest([{"role": "user", "content": "hi"}])])
    assert res.text == "ok"


def test_dead_or_refusing_endpoints_raise_backend_unavailable_in_one_line():
    def down(request):
        raise httpx.ConnectError("connection refused")

    with pytest.raises(BackendUnavailable, match="stopped answering") as err:
        _backend(down, max_retries=0).chat(ChatRequest([{"role": "user", "content": "hi"}]))
    assert "\n" not in str(err.value)
    with pytest.raises(BackendUnavailable, match="is not usable"):
        _backend(down, max_retries=0).check()

    def unauthorized(request):
        return httpx.Response(401, json={"error": {"message": "bad key"}})

    with pytest.raises(BackendUnavailable, match="refused the request"):
        _backend(unauthorized).chat(ChatRequest([{"role": "user", "content": "hi"}]))


def test_servers_rejecting_json_mode_are_asked_again_without_it():
    bodies = []

    def handler(request):
        body = json.loads(request.content)
        bodies.append(body)
        if "response_format" in body:
            return httpx.Response(400, json={"error": {"message": "response_format unsupported"}})
        return httpx.Response(200, json=_completion("{}"))

    (res,) = _backend(handler).chat_batch([ChatRequest([{"role": "user", "content": "x"}], json_mode=True)])
    assert res.text == "{}" and len(bodies) == 2 and "response_format" not in bodies[1]


def test_batch_keeps_order_under_concurrency():
    def handler(request):
        return httpx.Response(200, json=_completion(json.loads(request.content)["messages"][0]["content"]))

    reqs = [ChatRequest([{"role": "user", "content": str(i)}]) for i in range(12)]
    out = _backend(handler, concurrency=4).chat_batch(reqs)
    assert [r.text for r in out] == [str(i) for i in range(12)]


def test_missing_api_key_for_a_hosted_api_is_a_clear_error(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ValueError, match="set OPENAI_API_KEY"):
        OpenAIChatBackend("gpt-4o")
