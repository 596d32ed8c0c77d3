"""A fault-injecting OpenAI-compatible server on 127.0.0.1 for the chat backend's fault tests.

``FaultServer().start()`` listens on a free port (``url`` ends in ``/v1``); it answers
``GET /v1/models`` and ``POST /v1/chat/completions``. What each chat request meets is
scripted: ``plan(*faults)`` queues faults for the next requests in arrival order, ``when(text,
fault)`` gives a fault to every request whose messages contain ``text``, ``refuse_formats``
lists the ``response_format`` types answered by a 400, ``refuse_connections(seconds)`` stops
listening for a while; anything unscripted is answered with the last user message echoed.
It counts requests in flight (and the most ever), stamps each arrival, and records the
client disconnects its hanging handlers see. It stops by itself after ``lifetime`` seconds.
"""

from __future__ import annotations

import email.utils
import json
import select
import socket
import struct
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["FAULTS", "FaultServer", "Arrival"]


def _error(status: int, message: str, code: Any = None, type_: str = "BadRequestError") -> tuple[int, dict, dict]:
    return status, {}, {"error": {"message": message, "type": type_, "param": None, "code": code}}


# name -> (status, headers, JSON body) for the faults answered with one plain response;
# "reset", "hang", "not_json", "retry_after_date" and "ok" are handled by the handler itself.
FAULTS: dict[str, tuple[int, dict, Any]] = {
    "500": _error(500, "internal error", 500, "InternalServerError"),
    "503": _error(503, "overloaded", 503, "ServiceUnavailableError"),
    "429": _error(429, "rate limited", "rate_limit_exceeded", "requests"),
    "429_retry_after_1s": (429, {"Retry-After": "1"}, {"error": {"message": "slow down"}}),
    "429_retry_after_ms": (429, {"retry-after-ms": "400"}, {"error": {"message": "slow down"}}),
    "no_choices": (200, {}, {"id": "x", "object": "chat.completion", "model": "m", "usage": {}}),
    "no_content": (200, {}, {"id": "x", "object": "chat.completion", "choices": [
        {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": None}}]}),
    # vLLM (flat body), vLLM V1 engine, OpenAI (code), llama.cpp server (type)
    "context_vllm": (400, {}, {"object": "error", "type": "BadRequestError", "param": None, "code": 400,
                               "message": "This model's maximum context length is 2048 tokens. However, you "
                                          "requested 4100 tokens (4000 in the messages, 100 in the completion)."}),
    "context_vllm_v1": _error(400, "The decoder prompt (length 4000) is longer than the maximum model length of "
                                   "2048. Make sure that `max_model_len` is no smaller than the number of tokens."),
    "context_openai": _error(400, "Your input is too long for this model.", "context_length_exceeded",
                             "invalid_request_error"),
    "context_llamacpp": _error(400, "request (4476 tokens) exceeds the available context size (4096 tokens)", 400,
                               "exceed_context_size_error"),
    "context_413": (413, {}, {"error": {"message": "This model's maximum context length is 2048 tokens."}}),
    "content_filter": (200, {}, {"id": "x", "object": "chat.completion", "choices": [
        {"index": 0, "finish_reason": "content_filter", "message": {"role": "assistant", "content": None}}]}),
    "content_filter_400": _error(400, "The response was filtered due to the prompt triggering content management "
                                      "policy.", "content_filter", None),
    "invalid_422": (422, {}, {"detail": [{"loc": ["body", "temperature"], "msg": "Input should be <= 2"}]}),
    "401": _error(401, "Incorrect API key provided", "invalid_api_key", "invalid_request_error"),
    "403": _error(403, "forbidden", None, "PermissionDeniedError"),
    "404": (404, {}, {"object": "error", "message": "The model `m` does not exist.", "type": "NotFoundError",
                      "code": 404}),
}
SPECIAL = ("ok", "reset", "hang", "not_json", "retry_after_date")


@dataclass
class Arrival:
    """One chat request as the server saw it."""

    t: float  # time.monotonic() on arrival
    body: dict
    fault: str | tuple  # a fault name, or a plan_raw answer
    disconnected: bool = False  # a hanging handler saw the client go away


@dataclass
class _Script:
    queue: deque = field(default_factory=deque)
    rules: list = field(default_factory=list)  # (text, fault)


class FaultServer:
    """See the module docstring. ``models`` served (default: ``[model]``), ``max_model_len``
    reported on them (None: not reported), ``delay`` seconds before each "ok" answer,
    ``cached_tokens`` reported in the usage, ``hang_limit`` the longest a "hang" waits."""

    def __init__(self, model: str = "m", *, models: list[str] | None = None, max_model_len: int | None = None,
                 delay: float = 0.0, cached_tokens: int | None = None, hang_limit: float = 5.0,
                 lifetime: float = 60.0):
        self.model = model
        self.models = models if models is not None else [model]
        self.max_model_len = max_model_len
        self.delay = delay
        self.cached_tokens = cached_tokens
        self.hang_limit = hang_limit
        self.lifetime = lifetime
        self.refuse_formats: set[str] = set()
        self.models_fault: str | None = None  # a fault for GET /models
        self.arrivals: list[Arrival] = []
        self.model_requests = 0
        self.refused_formats: list[str] = []  # the response_format type of each refused request
        self.in_flight = 0
        self.max_in_flight = 0
        self._script = _Script()
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._stopped = threading.Event()
        self.port = 0

    # ------------------------------------------------------------------ script

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def plan(self, *faults: str) -> FaultServer:
        for f in faults:
            if f not in FAULTS and f not in SPECIAL:
                raise ValueError(f"unknown fault {f!r}; known: {sorted(FAULTS) + list(SPECIAL)}")
        with self._lock:
            self._script.queue.extend(faults)
        return self

    def plan_raw(self, status: int, payload: bytes, headers: dict[str, str] | None = None,
                 content_type: str = "application/json") -> FaultServer:
        """Answer the next request with exactly these bytes (status, headers, body)."""
        with self._lock:
            self._script.queue.append(("raw", status, payload, dict(headers or {}), content_type))
        return self

    def when(self, text: str, fault: str) -> FaultServer:
        self.plan(fault)  # validates the name
        with self._lock:
            self._script.queue.pop()
            self._script.rules.append((text, fault))
        return self

    def requests(self) -> int:
        with self._lock:
            return len(self.arrivals)

    def disconnects(self) -> int:
        with self._lock:
            return sum(a.disconnected for a in self.arrivals)

    def gaps(self) -> list[float]:
        with self._lock:
            times = [a.t for a in self.arrivals]
        return [b - a for a, b in zip(times, times[1:], strict=False)]

    def _fault_for(self, body: dict) -> str:
        text = json.dumps(body.get("messages", []))
        with self._lock:
            for needle, fault in self._script.rules:
                if needle in text:
                    return fault
            return self._script.queue.popleft() if self._script.queue else "ok"

    # ------------------------------------------------------------------ life

    def start(self) -> FaultServer:
        self._serve(0)
        timer = threading.Timer(self.lifetime, self.stop)
        timer.daemon = True
        timer.start()
        return self

    def _serve(self, port: int) -> None:
        handler = type("Handler", (_Handler,), {"fault_server": self})
        httpd = ThreadingHTTPServer(("127.0.0.1", port), handler)
        httpd.daemon_threads = True
        self._httpd = httpd
        self.port = httpd.server_address[1]
        threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def _close_listener(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def refuse_connections(self, seconds: float) -> None:
        """Stop listening now (connections are refused) and listen again on the same port after ``seconds``."""
        port = self.port
        self._close_listener()

        def back():
            if not self._stopped.is_set():
                self._serve(port)

        timer = threading.Timer(seconds, back)
        timer.daemon = True
        timer.start()

    def stop(self) -> None:
        self._stopped.set()
        self._close_listener()

    # ------------------------------------------------------------------ replies

    def completion(self, body: dict) -> dict:
        last = next((m for m in reversed(body.get("messages", [])) if m.get("role") == "user"), {})
        content = last.get("content", "")
        if isinstance(content, list):
            content = "".join(p.get("text", "") for p in content if p.get("type") == "text")
        usage: dict[str, Any] = {"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14}
        if self.cached_tokens is not None:
            usage["prompt_tokens_details"] = {"cached_tokens": self.cached_tokens}
        return {"id": "x", "object": "chat.completion", "created": 0, "model": body.get("model", self.model),
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": content}}],
                "usage": usage}

    def models_list(self) -> dict:
        entries = []
        for name in self.models:
            entry: dict[str, Any] = {"id": name, "object": "model", "owned_by": "test"}
            if self.max_model_len is not None:
                entry["max_model_len"] = self.max_model_len
            entries.append(entry)
        return {"object": "list", "data": entries}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    fault_server: FaultServer

    def log_message(self, format, *args):  # noqa: A002 - quiet
        return

    def _send(self, status: int, payload: bytes, headers: dict | None = None,
              content_type: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(payload)
        self.wfile.flush()

    def do_GET(self):  # noqa: N802
        srv = self.fault_server
        if not self.path.rstrip("/").endswith("/models"):
            self._send(404, b'{"error": {"message": "no such route"}}')
            return
        with srv._lock:
            srv.model_requests += 1
        if srv.models_fault is not None:
            status, headers, body = FAULTS[srv.models_fault]
            self._send(status, json.dumps(body).encode(), headers)
            return
        self._send(200, json.dumps(srv.models_list()).encode())

    def do_POST(self):  # noqa: N802
        srv = self.fault_server
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        fmt = (body.get("response_format") or {}).get("type")
        fault = "format_refused" if fmt in srv.refuse_formats else srv._fault_for(body)
        arrival = Arrival(time.monotonic(), body, fault)
        with srv._lock:
            srv.arrivals.append(arrival)
            srv.in_flight += 1
            srv.max_in_flight = max(srv.max_in_flight, srv.in_flight)
        counted = [True]

        def done() -> None:  # called before the answer's bytes leave, so a client never sees it early
            if counted[0]:
                counted[0] = False
                with srv._lock:
                    srv.in_flight -= 1

        try:
            self._answer(srv, body, fault, fmt, arrival, done)
        finally:
            done()

    def _answer(self, srv: FaultServer, body: dict, fault, fmt: str | None, arrival: Arrival, done) -> None:
        if isinstance(fault, tuple):  # plan_raw
            _, status, payload, headers, content_type = fault
            done()
            self._send(status, payload, headers, content_type=content_type)
        elif fault == "format_refused":
            with srv._lock:
                srv.refused_formats.append(fmt)
            done()
            payload = {"error": {"message": f"response_format type {fmt} is not supported by this server",
                                 "type": "BadRequestError", "code": 400}}
            self._send(400, json.dumps(payload).encode())
        elif fault == "ok":
            if srv.delay:
                time.sleep(srv.delay)
            done()
            self._send(200, json.dumps(srv.completion(body)).encode())
        elif fault == "hang":
            arrival.disconnected = self._wait_for_disconnect(srv.hang_limit)
            self.close_connection = True
        elif fault == "reset":
            done()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "1000")
            self.end_headers()
            self.wfile.write(b'{"id": "x", "choi')
            self.wfile.flush()
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()  # RST mid-body
            self.close_connection = True
        elif fault == "not_json":
            done()
            self._send(200, b"<html><body>502 Bad Gateway</body></html>", content_type="text/html")
        elif fault == "retry_after_date":
            done()
            when = email.utils.formatdate(int(time.time()) + 2, usegmt=True)
            self._send(429, b'{"error": {"message": "slow down"}}', {"Retry-After": when})
        else:
            status, headers, payload = FAULTS[fault]
            done()
            self._send(status, json.dumps(payload).encode(), headers)

    def _wait_for_disconnect(self, limit: float) -> bool:
        """Hold the request without answering until the client closes (True) or ``limit`` passes."""
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self.connection], [], [], 0.02)
            if ready:
                try:
                    if self.connection.recv(1, socket.MSG_PEEK) == b"":
                        return True
                except OSError:
                    return True
        return False
