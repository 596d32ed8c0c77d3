"""The vision path: Set-of-Mark views reach the model, for the shopper and the assistant, on both backends.

OpenAI-compatible: an in-process HTTP transport decodes the PNG data URLs the server
receives and compares them pixel for pixel with the role's own view. Local transformers:
a tiny random LLaVA built in-process (``tests.llm.tiny_vision``); the ``pixel_values``
handed to ``generate`` must be the image processor's output for that same view. The
response cache keys on the image's hash: a rerun is served from the cache, another view
is not.
"""

from __future__ import annotations

import base64
import json

import cv2
import gymnasium as gym
import httpx2 as httpx  # the HTTP client package that openai uses
import numpy as np
import pytest

import situ_gym  # noqa: F401 - registers the envs
from agents.chat_agent import ChatAssistant
from situ_gym.llm import ChatRequest, clear_backends, make_backend
from situ_gym.llm.cache import request_key
from situ_gym.llm.openai_backend import OpenAIChatBackend
from situ_gym.llm.types import image_digest
from situ_gym.user import LLMUser
from tests.llm.tiny_vision import IMAGE_SIZE, build_tiny_vision_model

TASK = "sm_u01_t1"
ENV = "SituRec-Supermarket-v0"
SIZE = (160, 120)  # small frames keep the PNGs and the processor cheap; the path is the same
GREET = json.dumps({"response": "Hi! What are you shopping for?", "assistant_actions": [{"type": "Greet"}],
                    "expected_user_action": {"name": "idle", "arguments": {}}, "ranking": []})
SHOPPER_REPLY = json.dumps({"utterance": "I need yogurt.", "tool_call": {"name": "idle", "arguments": {}},
                            "revealed": None, "give_up": False})


def _completion(text: str) -> dict:
    return {"id": "x", "object": "chat.completion", "created": 0, "model": "vlm",
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14}}


class FakeVisionServer:
    """An OpenAI-compatible endpoint in-process: records every request's decoded images."""

    def __init__(self, reply: str):
        self.reply = reply
        self.requests: list[dict] = []
        self.images: list[list[np.ndarray]] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        self.requests.append(body)
        images = []
        for m in body["messages"]:
            for part in m["content"] if isinstance(m["content"], list) else []:
                if part["type"] == "image_url":
                    png = base64.b64decode(part["image_url"]["url"].split(",", 1)[1])
                    bgr = cv2.imdecode(np.frombuffer(png, np.uint8), cv2.IMREAD_COLOR)
                    images.append(cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB))
        self.images.append(images)
        return httpx.Response(200, json=_completion(self.reply))

    def backend(self) -> OpenAIChatBackend:
        client = httpx.Client(transport=httpx.MockTransport(self))
        return OpenAIChatBackend("vlm", base_url="http://vlm.local/v1", http_client=client)


def _env(user=None):
    env = gym.make(ENV, image_size=SIZE, **({"user": user} if user is not None else {}))
    obs, _ = env.reset(seed=3, options={"task_id": TASK})
    return env, obs


def _image_parts(request: ChatRequest) -> list[np.ndarray]:
    return [p["image"] for m in request.messages if isinstance(m["content"], list) for p in m["content"]
            if p["type"] == "image"]


# ---------------------------------------------------------------------- OpenAI-compatible


def test_openai_shopper_sends_its_own_som_view_and_a_rerun_hits_the_cache(tmp_path):
    server = FakeVisionServer(SHOPPER_REPLY)
    cache = tmp_path / "c.sqlite"
    user = LLMUser(server.backend(), cache=cache, images=True)
    sent: list[ChatRequest] = []
    send = user.backend.inner.chat_batch
    user.backend.inner.chat_batch = lambda reqs: sent.extend(reqs) or send(reqs)
    env, obs = _env(user)
    seen = env.unwrapped.user_view.image.copy()  # what the shopper looks at when it answers
    info = env.step(GREET)[4]
    assert info["turn"].user_utterance == "I need yogurt."
    (images,) = server.images
    assert len(images) == 1 and np.array_equal(images[0], seen)  # lossless PNG: the same pixels
    assert not np.array_equal(images[0], obs["som_rgb"])  # the shopper's marks, not the assistant's
    text = server.requests[0]["messages"][1]["content"][1]["text"]
    assert text.startswith("Turn 1.") and "Your tools" in text

    # The request is stored under a key that holds the view's hash ...
    assert image_digest(seen) in json.dumps(sent[0].key_payload("vlm"))
    assert user.backend.cache.get(request_key(sent[0], "vlm")).text == SHOPPER_REPLY
    # ... so the same episode again is answered without the server.
    env2, _ = _env(LLMUser(server.backend(), cache=cache, images=True))
    assert env2.step(GREET)[4]["turn"].user_utterance == "I need yogurt." and len(server.requests) == 1
    env.close()
    env2.close()


def test_openai_assistant_sends_som_view_and_map(tmp_path):
    reply = json.dumps({"response": "Welcome! What do you need today?", "assistant_actions": [{"type": "Greet"}],
                        "expected_user_action": {"name": "idle", "arguments": {}}, "ranking": []})
    server = FakeVisionServer(reply)
    agent = ChatAssistant(server.backend(), images=True, cache=tmp_path / "c.sqlite")
    env, obs = _env()
    agent.reset(obs, {"store": "supermarket"}, seed=0)
    assert agent.act(obs) == reply
    (images,) = server.images
    assert [im.shape for im in images] == [obs["som_rgb"].shape, obs["map"].shape]
    assert np.array_equal(images[0], obs["som_rgb"]) and np.array_equal(images[1], obs["map"])
    obs2 = env.step(reply)[0]
    agent.act(obs2)  # a new view: a new key, so the server is asked again
    assert len(server.requests) == 2 and np.array_equal(server.images[1][0], obs2["som_rgb"])
    # Older turns keep their text only: the second request carries this turn's two images.
    assert len(server.images[1]) == 2
    env.close()


# ---------------------------------------------------------------------- local transformers


@pytest.fixture(scope="module")
def tiny_vlm(tmp_path_factory):
    return str(build_tiny_vision_model(tmp_path_factory.mktemp("vlm") / "model"))


@pytest.fixture
def spied(tiny_vlm, tmp_path):
    """A cached HF vision backend whose model calls and requests are recorded."""
    clear_backends()
    backend = make_backend(f"hf:{tiny_vlm}", cache=tmp_path / "c.sqlite")
    inner = backend.inner
    calls, requests = [], []
    generate, chat_batch = inner.net.generate, inner.chat_batch

    def spy_generate(**kwargs):
        calls.append({k: v.clone() for k, v in kwargs.items() if hasattr(v, "clone")})
        return generate(**kwargs)

    def spy_chat_batch(reqs):
        requests.extend(reqs)
        return chat_batch(reqs)

    inner.net.generate = spy_generate
    inner.chat_batch = spy_chat_batch
    yield backend, calls, requests
    clear_backends()


def _pixels(backend, images):
    from PIL import Image

    proc = backend.inner.processor.image_processor
    return proc(images=[Image.fromarray(im) for im in images], return_tensors="pt")["pixel_values"]


def test_hf_vision_shopper_gets_its_view_as_pixel_values(spied):
    backend, calls, requests = spied
    user = LLMUser(backend, max_tokens=6)
    assert user.images  # a vision model: images on by default
    env, obs = _env(user)
    seen = env.unwrapped.user_view.image.copy()
    turn = env.step(GREET)[4]["turn"]
    assert turn.user_action.valid  # a random model's text: re-asked, then the recorded idle fallback
    first = requests[0]
    (image,) = _image_parts(first)
    assert np.array_equal(image, seen) and first.role == "user"
    pv = calls[0]["pixel_values"]
    assert tuple(pv.shape) == (1, 3, IMAGE_SIZE, IMAGE_SIZE)
    assert np.allclose(pv.numpy(), _pixels(backend, [seen]).numpy())
    assert not np.allclose(pv.numpy(), _pixels(backend, [obs["som_rgb"]]).numpy())  # not the assistant's view
    # The image's hash is in the cache key: the stored entry is found by this request's key.
    assert image_digest(seen) in json.dumps(first.key_payload(backend.model))
    assert backend.cache.get(request_key(first, backend.model)) is not None
    n = len(calls)
    env2, _ = _env(LLMUser(backend, max_tokens=6))
    env2.step(GREET)
    assert len(calls) == n  # the rerun is served from the cache
    env.close()
    env2.close()


def test_hf_vision_assistant_batches_views_and_maps_of_two_episodes(spied):
    backend, calls, requests = spied
    agent = ChatAssistant(backend, images=True, max_tokens=4)
    envs = [_env()[0] for _ in range(2)]
    obs = [envs[0].reset(seed=3, options={"task_id": TASK})[0], envs[1].reset(seed=4, options={"task_id": "sm_u02_t1"})[0]]
    agent.reset_batch(obs, [{"store": "supermarket"}] * 2, seeds=[0, 1])
    texts = agent.act_batch(obs)
    assert len(texts) == 2 and len(calls) == 1  # one generate for both episodes
    pv = calls[0]["pixel_values"]
    expected = _pixels(backend, [obs[0]["som_rgb"], obs[0]["map"], obs[1]["som_rgb"], obs[1]["map"]])
    assert tuple(pv.shape) == (4, 3, IMAGE_SIZE, IMAGE_SIZE) and np.allclose(pv.numpy(), expected.numpy())
    image_token = backend.inner.net.config.image_token_index
    per_row = (calls[0]["input_ids"] == image_token).sum(dim=1).tolist()
    assert per_row == [2 * (IMAGE_SIZE // 8) ** 2] * 2  # two images' patch tokens in each prompt
    for env in envs:
        env.close()
