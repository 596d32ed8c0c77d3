"""The FastAPI app of the human evaluation: a static single page plus a small JSON API.

All routes but the page and ``POST /api/participants`` need the participant's session
token (``Authorization: Bearer TOKEN``) and only ever touch that participant's data. The
researcher page ``/admin?token=TOKEN`` and its data ``GET /api/admin`` (the same token as a
Bearer header) need the researcher token the server printed at start; without one given to
:func:`create_app` they answer 404.
Participant mistakes get HTTP 400 with ``{"error": "one line"}``, a missing or unknown
token 401, an unknown path 404, a wrong method 405, a POST without ``Content-Length`` 411
and a body over :data:`MAX_BODY` bytes 413, all with the same ``{"error": ...}`` body.
Request bodies are capped by the bytes actually received (a ``Content-Length`` that is not
a decimal number, or that differs from the body, is refused with 400), decoded as UTF-8
JSON through :mod:`situ_gym.jsonl` (nesting bounded) and typed strictly (a quoted number or
a 0/1 is not taken for a rating or a flag); every text field is capped in length.
"""

from __future__ import annotations

import hmac
import json
import logging
import re
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Header, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse
from fastapi.routing import APIRoute
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt, StrictStr
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from eval.human.conversation import MAX_UTTERANCE
from eval.human.study import MAX_NOTE, PROFILE_CHOICES, Study, UserError
from situ_gym import jsonl

__all__ = ["create_app", "MAX_BODY"]

logger = logging.getLogger(__name__)

STATIC = Path(__file__).with_name("static")
MAX_BODY = 16_384  # bytes: a turn is a short utterance and one tool call
_UNION_TAGS = {"str", "int", "float"}


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Profile(_Body):
    age_group: str = Field(max_length=40)
    shopping_frequency: str = Field(max_length=40)
    note: str = Field(default="", max_length=MAX_NOTE)


class ToolCallIn(_Body):
    name: str = Field(max_length=40)
    # Strict: a true/false or a quoted number is refused, not silently turned into another value.
    arguments: dict[str, StrictStr | StrictInt | StrictFloat] = Field(default_factory=dict, max_length=4)


class TurnIn(_Body):
    utterance: str = Field(max_length=MAX_UTTERANCE)
    action: ToolCallIn
    gave_up: StrictBool = False  # "yes", 1 or "on" is refused, not taken for True
    silent: StrictBool = False  # the participant says nothing this turn (an empty utterance is meant)


class RatingsIn(_Body):
    ratings: dict[str, StrictInt] = Field(max_length=10)  # true or "5" is refused, not taken for 1 or 5


_SURROGATE = re.compile("[\ud800-\udfff]")
MAX_ERROR = 300  # characters of an error message


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    """``{"error": message}`` on one line: a message can quote the request (a field name, a
    value), so line breaks become spaces, lone surrogates (not encodable) U+FFFD, and it is
    cut to :data:`MAX_ERROR` characters."""
    line = " ".join(_SURROGATE.sub("\ufffd", str(message)).splitlines()).strip() or "request refused"
    if len(line) > MAX_ERROR:
        line = line[: MAX_ERROR - 1] + "\u2026"
    return JSONResponse({"error": line}, status_code=status, headers=headers)


def _first_problem(exc: RequestValidationError) -> str:
    """One line naming the first bad field, e.g. ``utterance: at most 500 characters``."""
    errors = exc.errors()
    if not errors:
        return "invalid request"
    err = errors[0]
    if err.get("type") == "json_invalid":
        return "the request is not valid JSON"
    loc = [str(p) for p in err.get("loc", ()) if p != "body"]
    if loc and loc[-1] in _UNION_TAGS:  # an argument value: the union member tried is noise
        return f"{'.'.join(loc[:-1])}: must be a word or a number"
    where = ".".join(loc) or "request"
    if err.get("type") == "string_too_long":
        return f"{where}: at most {err['ctx']['max_length']} characters"
    return f"{where}: {err.get('msg', 'invalid')}"


class _LimitBody:
    """ASGI middleware: reads the whole body here, at most ``MAX_BODY + 1`` bytes, and hands
    it on only when it is within the cap and as long as its ``Content-Length`` says.

    The header alone is not trusted: a server that does not frame by it (or a test client)
    delivers whatever was sent, so the bytes are counted as they arrive.
    """

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refusal = None
        lengths = set(Headers(scope=scope).getlist("content-length"))
        length = next(iter(lengths)) if lengths else None
        if length is None and scope["method"] == "POST":  # e.g. chunked: its size is unknown up front
            refusal = _error(411, "requests need a Content-Length header")
        elif len(lengths) > 1:  # which one frames the body? (RFC 9112 6.3: unrecoverable)
            refusal = _error(400, "the request has Content-Length headers that disagree")
        elif length is not None and not (length.isascii() and length.isdigit()):
            refusal = _error(400, "the Content-Length header is not a number of bytes")
        elif length is not None and (len(length) > 9 or int(length) > MAX_BODY):  # int() refuses 4,300+ digits
            refusal = _error(413, f"request too large (limit {MAX_BODY} bytes)")
        if refusal is None:
            body, more = b"", True
            while more:
                message = await receive()
                if message["type"] != "http.request":  # the client went away
                    return
                body += message.get("body", b"")
                more = message.get("more_body", False)
                if len(body) > MAX_BODY:
                    refusal = _error(413, f"request too large (limit {MAX_BODY} bytes)")
                    break
            if refusal is None and length is not None and int(length) != len(body):
                refusal = _error(400, "the body is not as long as its Content-Length header says")
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        delivered = False

        async def replay() -> Message:
            nonlocal delivered
            if delivered:
                return await receive()
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)


class _JSONRequest(Request):
    """A request whose JSON body is decoded as untrusted text: UTF-8 only and through
    :func:`situ_gym.jsonl.loads` (nesting bounded), every failure a ``JSONDecodeError``,
    which FastAPI answers as invalid JSON (400 here) instead of a parser's crash."""

    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            raw = await self.body()
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise json.JSONDecodeError("not UTF-8", raw.decode("utf-8", "replace"), exc.start) from None
            self._json = jsonl.loads(text)
        return self._json


class _Route(APIRoute):
    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def route(request: Request) -> Response:
            return await handler(_JSONRequest(request.scope, request.receive))

        return route


def create_app(study: Study, *, admin_token: str | None = None) -> FastAPI:
    """The app serving ``study``; the study's files are the only state (restart-safe).
    ``admin_token`` opens the researcher page (None: no researcher page)."""
    app = FastAPI(title="SituRec human evaluation", docs_url=None, redoc_url=None, openapi_url=None)
    app.router.route_class = _Route  # before any route is declared
    app.state.study = study
    app.add_middleware(_LimitBody)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_request: Request, exc: StarletteHTTPException):
        # 404 / 405 (and any other HTTP error) in the app's own one-line shape, not {"detail": ...}
        detail = exc.detail if isinstance(exc.detail, str) else "request refused"
        return _error(exc.status_code, detail, headers=getattr(exc, "headers", None))

    @app.exception_handler(RequestValidationError)
    async def bad_request(_request: Request, exc: RequestValidationError):
        return _error(400, _first_problem(exc))

    @app.exception_handler(UserError)
    async def user_error(_request: Request, exc: UserError):
        return _error(400, str(exc))

    class _Unauthorized(Exception):
        pass

    def who(authorization: str | None) -> str:
        token = None
        if authorization and authorization.startswith("Bearer "):
            token = authorization[len("Bearer "):].strip()
        pid = study.participant(token)
        if pid is None:
            raise _Unauthorized()
        return pid

    @app.exception_handler(_Unauthorized)
    async def unauthorized(_request: Request, _exc: _Unauthorized):
        return _error(401, "unknown or missing session token; start again or enter your resume code")

    @app.get("/", include_in_schema=False)
    def index() -> FileResponse:
        return FileResponse(STATIC / "index.html")

    @app.get("/api/options")
    def options() -> dict[str, Any]:
        return {"profile": {k: list(v) for k, v in PROFILE_CHOICES.items()}, "max_note": MAX_NOTE,
                "max_utterance": MAX_UTTERANCE}

    @app.post("/api/participants")
    def join(profile: Profile) -> dict[str, Any]:
        pid, token = study.join(profile.model_dump())
        return {"participant_id": pid, "token": token}

    @app.get("/api/state")
    def state(authorization: str | None = Header(default=None)) -> dict[str, Any]:
        return study.state(who(authorization))

    @app.post("/api/start")
    def start(authorization: str | None = Header(default=None)) -> dict[str, Any]:
        return study.start(who(authorization))

    @app.post("/api/turn")
    def turn(body: TurnIn, authorization: str | None = Header(default=None)) -> dict[str, Any]:
        pid = who(authorization)
        call = {"name": body.action.name, "arguments": dict(body.action.arguments)}
        return study.turn(pid, body.utterance, call, body.gave_up, body.silent)

    @app.post("/api/ratings")
    def ratings(body: RatingsIn, authorization: str | None = Header(default=None)) -> dict[str, Any]:
        return study.rate(who(authorization), body.ratings)

    def researcher(token: str | None) -> None:
        if admin_token is None:
            raise StarletteHTTPException(404, "Not Found")
        if not token or not hmac.compare_digest(token.encode("utf-8", "replace"), admin_token.encode("utf-8")):
            raise StarletteHTTPException(401, "the researcher page needs the token the server printed at start")

    @app.get("/admin", include_in_schema=False)
    def admin_page(token: str | None = None) -> FileResponse:
        researcher(token)
        return FileResponse(STATIC / "admin.html", headers={"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"})

    @app.get("/api/admin")
    def admin_data(authorization: str | None = Header(default=None)) -> dict[str, Any]:
        token = authorization[len("Bearer "):].strip() if authorization and authorization.startswith("Bearer ") else None
        researcher(token)
        return study.progress()

    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    return app
