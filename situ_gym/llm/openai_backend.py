"""Chat through any OpenAI-compatible endpoint (vLLM, `transformers serve`, llama.cpp, hosted APIs).

The official ``openai`` client carries the requests (its own retries off); this module
decides what each fault is, once, by the kinds of ``situ_gym.llm.errors``:

- transient (connection refused or reset, timeout, 408/409/429, 5xx, a 200 whose body is
  not JSON, has no ``choices`` or a choice with neither content nor tool call): retried
  here, ``LLMSettings.retries`` times, with exponential backoff and full jitter from a
  private RNG; a server's ``Retry-After`` / ``retry-after-ms`` (seconds or HTTP date) wins;
- episode (400/413/422 saying the context is exceeded, content filtered, any other
  400/413/422): that request's ``ChatResult.error``, the rest of the batch is answered;
- persistent: ``persistent_after`` consecutive requests to one endpoint that each spent
  their retries mark it dead for the whole process (``BackendUnavailable``, nothing sent
  again); a request whose retries are spent while the endpoint is not yet dead starts a
  fresh budget, so a lone request makes at most ``persistent_after * (retries + 1)``
  attempts. 401/403/404 and other 4xx raise ``BackendUnavailable`` at once;
- setup: ``check()`` (``GET /models``) raises ``SetupError``.

Structured output: a request's ``schema`` goes as ``response_format`` json_schema, its
``json_mode`` as json_object; an endpoint that refuses a format is found out once (one
request probes it while the others wait), logged once, and sent the next weaker format
(json_schema -> json_object -> plain text) by every backend of the process from then on.
Caps and rates are per endpoint (``situ_gym.llm.limits``). The API key is read from an
environment variable (``OPENAI_API_KEY`` by default; local servers accept any value).
"""

from __future__ import annotations

import email.utils
import json
import logging
import os
import random
import threading
import time
from collections.abc import Iterator
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from contextlib import contextmanager
from typing import Any

from situ_gym import jsonl
from situ_gym.llm.errors import BackendUnavailable, EpisodeError, SetupError, TransientError
from situ_gym.llm.limits import Cancelled, EndpointLimits
from situ_gym.llm.settings import LLMSettings
from situ_gym.llm.settings import current as current_settings
from situ_gym.llm.types import ChatBackend, ChatRequest, ChatResult, png_data_url

__all__ = ["OpenAIChatBackend", "reset_endpoints", "MAX_RETRY_AFTER"]

logger = logging.getLogger(__name__)

MAX_RETRY_AFTER = 120.0  # seconds: a longer Retry-After is cut to this (the openai client's own bound)
CHECK_TIMEOUT = 10.0  # seconds for check()'s GET /models

# What servers say when the prompt (plus max_tokens) does not fit the context.
_CONTEXT_PHRASES = (
    "maximum context length",  # vLLM, OpenAI: "This model's maximum context length is N tokens"
    "context_length_exceeded",  # OpenAI's code
    "longer than the maximum model length",  # vLLM V1: "The decoder prompt (length N) is longer than ..."
    "longer than the model's context length",  # SGLang
    "exceeds the available context size",  # llama.cpp server
    "exceed_context_size_error",  # llama.cpp's error type
    "context length exceeded",
    "context window",
    "prompt is too long",
    "`inputs` tokens + `max_new_tokens`",  # text-generation-inference
)
_FILTER_CODES = ("content_filter", "content_policy_violation")
_FORMAT_WORDS = ("response_format", "json_schema", "json schema", "json_object", "not supported", "unsupported")
_FORMATS = ("json_schema", "json_object")  # strongest first


def _first_line(text: Any, limit: int = 200) -> str:
    lines = str(text).strip().splitlines()
    return (lines[0] if lines else "")[:limit]


def _error_fields(body: Any) -> tuple[str, str]:
    """(message, code) of a parsed error body, OpenAI-style ``{"error": {...}}`` or vLLM's flat one."""
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        body = body["error"]
    if not isinstance(body, dict):
        return _first_line(body), ""
    message = body.get("message") or body.get("detail") or body.get("error") or json.dumps(body)[:200]
    code = " ".join(str(body.get(k)) for k in ("code", "type") if body.get(k) is not None)
    return _first_line(message if isinstance(message, str) else json.dumps(message)), code


def _error_info(response: Any) -> tuple[str, str]:
    """(message, code) of an error response."""
    try:
        body = jsonl.loads(response.content)
    except ValueError:
        return _first_line(response.text), ""
    return _error_fields(body)


def _retry_after(headers: Any) -> float | None:
    """Seconds the server asks us to wait: ``retry-after-ms``, ``retry-after`` in seconds or as an HTTP date."""
    if headers is None:
        return None
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            return max(0.0, float(value) / scale)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        return max(0.0, when.timestamp() - time.time())
    return None


class _FormatRefused(Exception):
    """The endpoint refused the ``response_format`` sent (only ever seen inside this module)."""

    def __init__(self, kind: str, detail: str):
        super().__init__(detail)
        self.kind = kind


def _status_fault(status: int, message: str, code: str, headers: Any, url: str, model: str,
                  fmt: str | None) -> Exception:
    """The one place that decides what an HTTP error status means."""
    detail = f"status {status}: {message}" if message else f"status {status}"
    if status in (408, 409, 429) or status >= 500:
        return TransientError(detail, status=status, retry_after=_retry_after(headers))
    if status in (400, 413, 422):
        text = f"{message} {code}".lower()
        if any(p.lower() in text for p in _CONTEXT_PHRASES):
            return EpisodeError("context_length", detail)
        if any(c in text for c in _FILTER_CODES):
            return EpisodeError("content_filter", detail)
        if fmt is not None and any(w in text for w in _FORMAT_WORDS):
            return _FormatRefused(fmt, detail)
        return EpisodeError("invalid_request", detail)
    if status == 404:
        return BackendUnavailable(f"endpoint {url}: {detail} (unknown model {model!r} or wrong base URL)")
    if status in (401, 403):
        return BackendUnavailable(f"endpoint {url}: {detail} (check the API key)")
    return BackendUnavailable(f"endpoint {url}: {detail}")


def _token_count(value: Any) -> int:
    """A usage field as a token count; 0 when the server sent something else (a string, a
    negative or absurd number): usage is accounting, never a reason to lose the reply."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0
    if not (0 <= value < 2**53):  # also NaN, which no comparison admits
        return 0
    return int(value)


def _reply_text(data: Any) -> tuple[str, dict[str, Any]]:
    """The text of a 200's parsed body, or the fault it is (transient or content filtered)."""
    if isinstance(data, dict) and data.get("error") and not data.get("choices"):
        message, code = _error_fields(data)
        if any(p.lower() in f"{message} {code}".lower() for p in _CONTEXT_PHRASES):
            raise EpisodeError("context_length", f"status 200: {message}")
        raise TransientError(f"status 200 with an error body: {message}", status=200)
    choices = data.get("choices") if isinstance(data, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise TransientError("status 200 without choices", status=200)
    choice = choices[0]
    finish = choice.get("finish_reason")
    message = choice.get("message") if isinstance(choice.get("message"), dict) else {}
    if finish == "content_filter" or (message.get("refusal") and not message.get("content")):
        raise EpisodeError("content_filter", f"finish_reason {finish}: {_first_line(str(message.get('refusal') or ''))}")
    content = message.get("content")
    if isinstance(content, list):  # some servers answer in parts
        content = "".join(p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    if content is not None and not isinstance(content, str):
        raise TransientError(f"status 200 with content that is not text ({type(content).__name__})", status=200)
    if not isinstance(finish, (str, type(None))):
        finish = str(finish)[:40]
    tool_calls = message.get("tool_calls")
    if content is None and not tool_calls and finish != "length":
        raise TransientError(f"status 200 with a choice without content (finish_reason {finish})", status=200)
    extra: dict[str, Any] = {"finish_reason": finish}
    if tool_calls:
        extra["tool_calls"] = tool_calls
    return content or "", extra


class _Endpoint:
    """What this process knows about one endpoint: its caps, its health, the formats it takes."""

    def __init__(self, url: str, settings: LLMSettings):
        self.url = url
        self.limits = EndpointLimits(url, settings)
        self.lock = threading.Lock()
        self.exhausted = 0  # consecutive requests whose retries were all spent
        self.dead: str | None = None  # the one-line reason, once dead
        self.formats: dict[str, bool] = {}  # response_format type -> accepted (absent: not yet known)
        self.probe = threading.Lock()  # one request at a time tries a format not yet known

    def succeeded(self) -> None:
        with self.lock:
            self.exhausted = 0

    def spent(self, reason: str, persistent_after: int) -> bool:
        """One more request spent its retries; True when the endpoint is (now) dead."""
        with self.lock:
            self.exhausted += 1
            if self.dead is None and self.exhausted >= persistent_after:
                self.dead = reason
                logger.error("%s; no more requests go there from this process", reason)
            return self.dead is not None

    def learn(self, kind: str, accepted: bool, detail: str = "") -> None:
        with self.lock:
            if self.formats.get(kind) is accepted:
                return
            self.formats[kind] = accepted
        if not accepted:
            weaker = _FORMATS[_FORMATS.index(kind) + 1] if kind != _FORMATS[-1] else "plain text"
            logger.warning("endpoint %s refuses response_format %s (%s); it gets %s from now on",
                           self.url, kind, detail, weaker)


_ENDPOINTS: dict[str, _Endpoint] = {}
_ENDPOINTS_LOCK = threading.Lock()


def _endpoint(url: str, settings: LLMSettings) -> _Endpoint:
    with _ENDPOINTS_LOCK:
        ep = _ENDPOINTS.get(url)
        if ep is None:
            ep = _ENDPOINTS[url] = _Endpoint(url, settings)
        else:
            ep.limits.configure(settings)
        return ep


def reset_endpoints() -> None:
    """Forget what this process learnt about endpoints (dead ones, refused formats, rate
    windows): for tests, or a long-lived process whose server was restarted."""
    with _ENDPOINTS_LOCK:
        _ENDPOINTS.clear()


class _Call:
    """One chat_batch call: its requests stop at their next step once ``stop`` is set."""

    def __init__(self):
        self.stop = threading.Event()


def _estimated_tokens(request: ChatRequest) -> int:
    """Prompt tokens guessed as characters / 4, plus the completion's ``max_tokens`` (what tpm counts)."""
    chars = sum(len(m["content"]) for m in request.text_messages())
    return chars // 4 + request.max_tokens


class OpenAIChatBackend(ChatBackend):
    """``model`` at ``base_url`` (None: the client's default, api.openai.com).

    ``settings`` (default ``situ_gym.llm.settings.current()``) sets the timeout, retries,
    backoff, the persistent-failure threshold and the endpoint's caps and rates;
    ``http_client`` an HTTP client of the kind the openai package takes (proxies, custom
    transports). Images go as PNG data URLs. ``context_length`` is the model's context in
    tokens: what ``check()`` read from the server, else ``settings.max_context`` (None: unknown).
    """

    supports_tools = True  # ChatRequest.tools go as the API's tools; the reply's calls come back

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        settings: LLMSettings | None = None,
        http_client: Any = None,
    ):
        try:
            import openai
        except ImportError as exc:
            raise ImportError('the OpenAI-compatible backend needs openai: pip install "situ-gym[llm]"') from exc
        if not model:
            raise ValueError("model must be a non-empty name")
        settings = settings if settings is not None else current_settings()
        if not isinstance(settings, LLMSettings):
            raise ValueError(f"settings must be an LLMSettings, got {settings!r}")
        api_key = os.environ.get(api_key_env)
        if not api_key:
            if base_url is None:
                raise ValueError(f"set {api_key_env} to the API key (or pass a local --base-url)")
            api_key = "EMPTY"  # local servers ignore the key but the client needs one
        self.model = model
        self.base_url = base_url
        self.settings = settings
        self.context_length: int | None = settings.max_context
        self._openai = openai
        # Our loop retries (by fault kind, with the endpoint's health); the client's would hide attempts.
        self.client = openai.OpenAI(base_url=base_url, api_key=api_key, timeout=settings.timeout, max_retries=0,
                                    http_client=http_client)
        self.url = str(self.client.base_url).rstrip("/")
        self._endpoint = _endpoint(self.url, settings)
        self._rng = random.Random()  # jitter only; never the global RNG, which seeds episodes
        self._pool = ThreadPoolExecutor(max_workers=settings.concurrency, thread_name_prefix="openai-chat")
        self._calls: set[_Call] = set()
        self._calls_lock = threading.Lock()
        self._closed = False

    # ------------------------------------------------------------------ setup

    def check(self) -> None:
        """``GET /models`` once (no retries, short timeout) before any episode: the endpoint
        must answer and list ``model``; keeps the model's context length when it is reported."""
        client = self.client.with_options(max_retries=0, timeout=min(CHECK_TIMEOUT, self.settings.timeout))
        try:
            response = client.models.with_raw_response.list().http_response
            data = jsonl.loads(response.content)
        except (self._openai.APIConnectionError, self._openai.APITimeoutError) as exc:
            raise SetupError(f"endpoint {self.url} is unreachable ({self._cause(exc)})") from exc
        except self._openai.APIStatusError as exc:
            message, _ = _error_info(exc.response)
            raise SetupError(f"endpoint {self.url}: GET /models answered status {exc.status_code} ({message})") from exc
        except ValueError as exc:
            raise SetupError(f"endpoint {self.url}: GET /models answered something that is not JSON") from exc
        entries = [m for m in (data.get("data") if isinstance(data, dict) else None) or [] if isinstance(m, dict)]
        served = [str(m.get("id")) for m in entries]
        entry = next((m for m in entries if m.get("id") == self.model), None)
        if entry is None:
            shown = ", ".join(served[:20]) + (f" and {len(served) - 20} more" if len(served) > 20 else "")
            raise SetupError(f"endpoint {self.url} does not serve model {self.model!r}; it serves: {shown or 'none'}")
        for key in ("max_model_len", "context_length", "max_context_length"):  # vLLM, OpenRouter, LM Studio
            if isinstance(entry.get(key), int) and entry[key] > 0:
                self.context_length = entry[key]
                break

    # ------------------------------------------------------------------ one request

    @staticmethod
    def _cause(exc: BaseException) -> str:
        inner = exc.__cause__ or exc
        return f"{type(inner).__name__}: {_first_line(inner) or _first_line(exc)}"

    def _usable(self, call: _Call) -> None:
        if self._closed:
            raise BackendUnavailable(f"endpoint {self.url}: backend closed")
        if self._endpoint.dead is not None:
            raise BackendUnavailable(self._endpoint.dead)
        if call.stop.is_set():
            raise BackendUnavailable(f"endpoint {self.url}: call stopped")

    def _pause(self, seconds: float, call: _Call) -> None:
        if seconds > 0 and call.stop.wait(seconds):
            self._usable(call)

    def _backoff(self, retry: int, retry_after: float | None) -> float:
        """Seconds before retry number ``retry`` (1-based): the server's word, else full jitter."""
        if retry_after is not None:
            return min(retry_after, MAX_RETRY_AFTER)
        s = self.settings
        return self._rng.uniform(0.0, min(s.max_backoff, s.backoff * 2.0 ** min(retry - 1, 60)))

    def _format(self, request: ChatRequest) -> str | None:
        """The strongest ``response_format`` the request wants that the endpoint has not refused."""
        wanted = _FORMATS if request.schema is not None else _FORMATS[1:] if request.json_mode else ()
        return next((k for k in wanted if self._endpoint.formats.get(k) is not False), None)

    def _body(self, request: ChatRequest, fmt: str | None) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": request.api_messages(lambda px: {"type": "image_url", "image_url": {"url": png_data_url(px)}}),
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
            "top_p": request.top_p,
            "seed": request.seed,
        }
        if fmt == "json_schema":
            body["response_format"] = {"type": "json_schema", "json_schema": {
                "name": f"{request.role}_reply", "schema": request.schema, "strict": True}}
        elif fmt == "json_object":
            body["response_format"] = {"type": "json_object"}
        if request.tools:
            body["tools"] = request.tools
            if request.tool_choice is not None:
                body["tool_choice"] = request.tool_choice
        return body

    @contextmanager
    def _probing(self, call: _Call) -> Iterator[None]:
        while not self._endpoint.probe.acquire(timeout=0.05):
            self._usable(call)
        try:
            yield
        finally:
            self._endpoint.probe.release()

    def _send(self, request: ChatRequest, fmt: str | None, tokens: int, call: _Call) -> ChatResult:
        """One attempt: the answer, or the fault it met (raised)."""
        openai = self._openai
        try:
            with self._endpoint.limits.slot(call.stop):
                self._endpoint.limits.admit(tokens, call.stop)
                self._usable(call)
                try:
                    response = self.client.chat.completions.with_raw_response.create(
                        **self._body(request, fmt)).http_response
                except openai.APITimeoutError as exc:  # the client has dropped the connection
                    raise TransientError(f"no answer within {self.settings.timeout} s") from exc
                except openai.APIConnectionError as exc:
                    raise TransientError(self._cause(exc)) from exc
                except openai.APIStatusError as exc:
                    message, code = _error_info(exc.response)
                    raise _status_fault(exc.status_code, message, code, exc.response.headers, self.url, self.model,
                                        fmt) from None
        except Cancelled:
            self._usable(call)
            raise BackendUnavailable(f"endpoint {self.url}: call stopped") from None
        try:
            data = jsonl.loads(response.content)
        except ValueError:
            raise TransientError(f"status 200 with a body that is not JSON ({_first_line(response.text, 60)!r})",
                                 status=200) from None
        text, extra = _reply_text(data)
        if fmt is not None:
            self._endpoint.learn(fmt, True)
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
        details = usage.get("prompt_tokens_details") if isinstance(usage.get("prompt_tokens_details"), dict) else {}
        return ChatResult(
            text=text,
            prompt_tokens=_token_count(usage.get("prompt_tokens")),
            completion_tokens=_token_count(usage.get("completion_tokens")),
            cached_prompt_tokens=_token_count(details.get("cached_tokens")),
            model=self.model,
            extra=extra,
        )

    def _attempt(self, request: ChatRequest, tokens: int, call: _Call) -> ChatResult:
        """One attempt in the strongest format the endpoint takes (refused formats are
        dropped on the way, without spending a retry)."""
        while True:
            fmt = self._format(request)
            try:
                if fmt is None or fmt in self._endpoint.formats:
                    return self._send(request, fmt, tokens, call)
                with self._probing(call):
                    if fmt in self._endpoint.formats:
                        continue  # another request found out meanwhile
                    return self._send(request, fmt, tokens, call)
            except _FormatRefused as exc:
                self._endpoint.learn(exc.kind, False, str(exc))

    def _answer(self, request: ChatRequest, call: _Call) -> ChatResult:
        start = time.perf_counter()
        tokens = _estimated_tokens(request)
        attempts = 0
        last: TransientError | None = None
        while True:  # one budget of 1 + retries attempts per turn
            for _ in range(self.settings.retries + 1):
                self._usable(call)
                if attempts:
                    self._pause(self._backoff(attempts, last.retry_after if last else None), call)
                attempts += 1
                try:
                    result = self._attempt(request, tokens, call)
                except TransientError as exc:
                    logger.debug("%s: attempt %d failed (%s)", self.url, attempts, exc)
                    last = exc
                    continue
                except EpisodeError as exc:
                    self._endpoint.succeeded()  # the server answered: it is alive
                    return ChatResult(text="", model=self.model, error=exc, retries=attempts - 1,
                                      latency=time.perf_counter() - start)
                self._endpoint.succeeded()
                result.retries, result.latency = attempts - 1, time.perf_counter() - start
                return result
            status = last.status if last is not None and last.status is not None else "none"
            reason = f"endpoint {self.url}: last status {status} ({last})"
            if self._endpoint.spent(reason, self.settings.persistent_after):
                raise BackendUnavailable(self._endpoint.dead or reason)
            logger.warning("%s: a request spent its %d retries (%s); it starts again", self.url,
                           self.settings.retries, last)

    # ------------------------------------------------------------------ batches

    def chat_batch(self, requests: list[ChatRequest]) -> list[ChatResult]:
        if not requests:
            return []
        call = _Call()
        self._usable(call)
        with self._calls_lock:
            self._calls.add(call)
        t0 = time.perf_counter()
        try:
            try:
                futures = [self._pool.submit(self._answer, r, call) for r in requests]
            except RuntimeError as exc:  # the pool was shut down by close() meanwhile
                raise BackendUnavailable(f"endpoint {self.url}: backend closed") from exc
            done, _ = wait(futures, return_when=FIRST_EXCEPTION)
            failed = next((f for f in futures if f in done and (f.cancelled() or f.exception() is not None)), None)
            if failed is not None:
                call.stop.set()  # the batch's other requests stop at their next step
                wait(futures)
                if failed.cancelled():  # close() dropped the queued requests
                    raise BackendUnavailable(f"endpoint {self.url}: backend closed")
                raise failed.exception()
        finally:
            with self._calls_lock:
                self._calls.discard(call)
        results = [f.result() for f in futures]
        # Requests overlap: share the batch's wall time out so per-role sums are wall time.
        wall = time.perf_counter() - t0
        for r in results:
            r.seconds = wall / len(results)
        return results

    def close(self) -> None:
        """Stop sending at once (waiting requests give up; in-flight connections are closed)."""
        if self._closed:
            return
        self._closed = True
        with self._calls_lock:
            for call in self._calls:
                call.stop.set()
        self._endpoint.limits.wake()
        self._pool.shutdown(wait=False, cancel_futures=True)
        self.client.close()

