"""The FastAPI app of the human evaluation: a static single page plus a small JSON API.

All routes but the page and ``POST /api/participants`` need the participant's session
token (``Authorization: Bearer TOKEN``) and only ever touch that participant's data.
Participant mistakes get HTTP 400 with ``{"error": "one line"}``, a missing or unknown
token 401; request bodies are capped in size and every text field in length.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Header, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field, StrictFloat, StrictInt, StrictStr

from eval.human.conversation import MAX_UTTERANCE
from eval.human.study import MAX_NOTE, PROFILE_CHOICES, Study, UserError

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
    gave_up: bool = False


class RatingsIn(_Body):
    ratings: dict[str, int] = Field(max_length=10)


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


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


def create_app(study: Study) -> FastAPI:
    """The app serving ``study``; the study's files are the only state (restart-safe)."""
    app = FastAPI(title="SituRec human evaluation", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.study = study

    @app.middleware("http")
    async def limit_body(request: Request, call_next):
        length = request.headers.get("content-length")
        if length is None and request.method == "POST":  # e.g. chunked: its size is unknown up front
            return _error(411, "requests need a Content-Length header")
        if length is not None and (not length.isdigit() or int(length) > MAX_BODY):
            return _error(413, f"request too large (limit {MAX_BODY} bytes)")
        return await call_next(request)

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
        return study.turn(pid, body.utterance, call, body.gave_up)

    @app.post("/api/ratings")
    def ratings(body: RatingsIn, authorization: str | None = Header(default=None)) -> dict[str, Any]:
        return study.rate(who(authorization), body.ratings)

    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    return app
