"""Property tests of the human-evaluation app's requests (issue 29): hostile bodies, headers,
paths, methods and call orders against every route of ``eval.human.app``.

Invariants, for every request:
- the answer is 2xx or one of the documented refusals (400 participant mistake, 401 token,
  404 / 405 route, 411 no Content-Length, 413 too large); never 5xx, never 422, and never an
  exception out of the app (the client re-raises one: ``raise_server_exceptions``);
- a refusal's body is ``{"error": "one line"}``, and it is not a crash of the env or the
  assistant turned into a message ("the assistant could not answer ...": the heuristic
  assistant never fails, so that message here means the input broke something);
- a refusal changes no file of the study; what a success stores is strict JSON (UTF-8, no
  NaN / Infinity, no lone surrogate);
- afterwards the app still serves a valid participant (a turn plays).
"""

from __future__ import annotations

import json
import re
import string
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient
from hypothesis import example, given
from hypothesis import strategies as st
from starlette.testclient import httpx as _httpx  # the HTTP client TestClient is built on

from eval.human.app import MAX_BODY, STATIC, create_app
from eval.human.conversation import MAX_UTTERANCE
from eval.human.study import MAX_NOTE, PROFILE_CHOICES, Study, StudyConfig
from eval.judge import DIMENSIONS
from tests.fuzz.strategies import (
    HOSTILE_ATOMS,
    budget,
    deep_json_text,
    hostile_key,
    hostile_text,
    json_text,
    json_values,
    with_wrong_field,
)

PROFILE = {"age_group": "25-34", "shopping_frequency": "weekly", "note": ""}
LEFT = {"name": "turn", "arguments": {"direction": "left", "angle": 30}}
IDLE = {"name": "idle", "arguments": {}}
GOOD = {
    "/api/participants": PROFILE,
    "/api/start": {},
    "/api/turn": {"utterance": "Hi, I want yogurt.", "action": LEFT, "gave_up": False},
    "/api/ratings": {"ratings": {d: 3 for d in DIMENSIONS}},
}
POST_ROUTES = list(GOOD)
GET_ROUTES = ["/", "/api/options", "/api/state"]
REFUSALS = (400, 401, 404, 405, 411, 413)
STAGES = ("anonymous", "forged", "briefing", "chat", "rating", "done")
_PROFILE_LENGTH = str(len(json.dumps(PROFILE).encode())).encode()  # the honest Content-Length of PROFILE
STATIC_FILES = {p.read_bytes() for p in STATIC.iterdir() if p.is_file()}
CONTENT_TYPES = [None, "application/json", "application/json; charset=utf-8", "APPLICATION/JSON",
                 "application/problem+json", "application/json; charset=utf-16", "text/plain",
                 "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "text/html",
                 "application/octet-stream", "", ";", "application/", "json"]
BAD_LENGTHS = ["", "-1", "+5", " 5", "5 ", "0x10", "1e3", "5, 5", "5.0", "\u0665", "\u00b2", "\u00b9\u00b2",
               "99999999999999999999999999", str(MAX_BODY + 1), "nan", "\t"]


def _strict_json(path: Path, raw: bytes) -> None:
    """Fails unless ``raw`` is UTF-8 JSON (one value, or one per line for .jsonl) with no
    NaN / Infinity and no lone surrogate in any string."""
    text = raw.decode("utf-8")  # strict: a stored file is UTF-8

    def refuse(name: str) -> Any:
        raise AssertionError(f"{path}: {name} is not JSON")

    pieces = text.splitlines() if path.suffix == ".jsonl" else [text]
    for piece in pieces:
        if piece.strip():
            value = json.loads(piece, parse_constant=refuse)
            try:
                json.dumps(value, ensure_ascii=False).encode("utf-8")
            except UnicodeEncodeError as exc:
                raise AssertionError(f"{path}: stores a lone surrogate ({exc})") from None


class Lab:
    """One study served by a TestClient, with participants kept at every stage."""

    def __init__(self, root: Path):
        self.root = root
        self.study = Study(StudyConfig(assistants=("heuristic",), out=str(root), tasks_per_participant=1,
                                       max_turns=20))
        self.client = TestClient(create_app(self.study), raise_server_exceptions=True)
        self._auth: dict[str, dict[str, str]] = {}

    # ---------------------------------------------------------------- participants
    def join(self) -> dict[str, str]:
        r = self.client.post("/api/participants", json=PROFILE)
        assert r.status_code == 200, r.text
        return {"Authorization": f"Bearer {r.json()['token']}"}

    def stage(self, auth: dict[str, str]) -> str:
        r = self.client.get("/api/state", headers=auth)
        assert r.status_code == 200, r.text
        return r.json()["stage"]

    def at(self, stage: str) -> dict[str, str]:
        """The Authorization header of a participant now in ``stage`` (made when none is)."""
        if stage == "anonymous":
            return {}
        if stage == "forged":
            return {"Authorization": "Bearer " + "A" * 32}
        auth = self._auth.get(stage)
        if auth is not None and self.stage(auth) == stage:
            return auth
        auth = self.join()
        steps = {"chat": ["start"], "rating": ["start", "quit"], "done": ["start", "quit", "rate"]}[stage] \
            if stage != "briefing" else []
        for step in steps:
            if step == "start":
                r = self.client.post("/api/start", headers=auth)
            elif step == "quit":
                r = self.client.post("/api/turn", headers=auth,
                                     json={"utterance": "No thanks, bye.", "action": IDLE, "gave_up": True})
            else:
                r = self.client.post("/api/ratings", headers=auth, json=GOOD["/api/ratings"])
            assert r.status_code == 200, r.text
        assert self.stage(auth) == stage
        self._auth[stage] = auth
        return auth

    # ---------------------------------------------------------------- checks
    def snapshot(self) -> dict[str, bytes]:
        return {str(p.relative_to(self.root)): p.read_bytes() for p in sorted(self.root.rglob("*")) if p.is_file()}

    def check(self, r, before: dict[str, bytes], *, ok: tuple[int, ...] = (200,)) -> None:
        """The invariants every answer keeps (see the module docstring)."""
        assert r.status_code in ok + REFUSALS, (r.status_code, r.text[:300])
        if r.status_code >= 400:
            if r.request.method != "HEAD":
                body = r.json()
                assert set(body) == {"error"}, body
                error = body["error"]
                assert isinstance(error, str) and len(error.splitlines()) == 1, body  # one line
                assert not error.startswith("the assistant could not answer"), error
            after = self.snapshot()
            assert after == before, f"a refused request ({r.status_code}) changed {_changed(before, after)}"
        else:
            for rel, raw in self.snapshot().items():
                if rel.endswith((".json", ".jsonl")):
                    _strict_json(self.root / rel, raw)

    def still_serving(self) -> None:
        """A participant in conversation plays a valid turn; the options page answers."""
        assert self.client.get("/api/options").status_code == 200
        auth = self.at("chat")
        r = self.client.post("/api/turn", headers=auth, json={"utterance": "What else?", "action": LEFT})
        assert r.status_code == 200, r.text
        assert r.json()["stage"] in ("chat", "rating")


def _changed(before: dict[str, bytes], after: dict[str, bytes]) -> list[str]:
    return sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    lab = Lab(tmp_path_factory.mktemp("study"))
    yield lab
    lab.study.close()


def _post(lab: Lab, route: str, auth: dict[str, str], body: bytes | Any, content_type: str | None,
          length: str | bytes | None = None, chunked: bool = False):
    headers: dict[str, Any] = dict(auth)
    if content_type is not None:
        headers["Content-Type"] = content_type
    if length is not None:
        headers["Content-Length"] = length
    content = iter([body[i:i + 4096] for i in range(0, len(body), 4096)] or [b""]) if chunked else body
    return lab.client.post(route, headers=headers, content=content)


# ------------------------------------------------------------------ bodies
def _dumps(value: Any, ascii_only: bool = True) -> bytes:
    return json.dumps(value, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")  # may be non-UTF-8


@st.composite
def bodies(draw) -> tuple[str, str, bytes]:
    """(route, kind, bytes) of a hostile body for one of the POST routes."""
    route = draw(st.sampled_from(POST_ROUTES))
    good = GOOD[route]
    kind = draw(st.sampled_from(["json_text", "deep", "wrong_shape", "wrong_field", "binary", "non_utf8",
                                 "hostile_strings"]))
    if kind == "json_text":
        return route, kind, draw(json_text()).encode("utf-8", "surrogatepass")
    if kind == "deep":
        return route, kind, draw(deep_json_text()).encode("utf-8")
    if kind == "wrong_shape":
        return route, kind, _dumps(draw(json_values()), draw(st.booleans()))
    if kind == "wrong_field":
        return route, kind, _dumps(draw(with_wrong_field(good)), draw(st.booleans()))
    if kind == "binary":
        return route, kind, draw(st.binary(max_size=400))
    if kind == "non_utf8":
        text = json.dumps({**good, **({"note": "caf\u00e9"} if route == "/api/participants" else {})},
                          ensure_ascii=False)
        how = draw(st.sampled_from(["latin-1", "utf-16", "utf-32", "cp1252", "byte"]))
        if how == "byte":
            raw = text.encode("utf-8")
            at = draw(st.integers(0, len(raw)))
            return route, kind, raw[:at] + draw(st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xc0\xaf"])) + raw[at:]
        return route, kind, text.encode(how, "replace")
    # hostile text in every string field of a well-formed body
    value = json.loads(json.dumps(good))
    if route == "/api/participants":
        value["note"] = draw(hostile_text())
    elif route == "/api/turn":
        value["utterance"] = draw(hostile_text())
        value["action"]["arguments"]["direction"] = draw(hostile_text(20))
    elif route == "/api/ratings":
        value["ratings"][draw(hostile_key())] = 3
    return route, kind, _dumps(value, draw(st.booleans()))


@given(case=bodies(), stage=st.sampled_from(STAGES), content_type=st.sampled_from(CONTENT_TYPES))
# Bytes that are not UTF-8: FastAPI's json.loads raised UnicodeDecodeError, answered
# {"detail": "There was an error parsing the body"}, not the app's {"error": ...}.
@example(case=("/api/participants", "binary", b"\x80"), stage="anonymous", content_type="application/json")
# 5,000 nested arrays: the standard decoder's RecursionError, answered the same way.
@example(case=("/api/turn", "deep", b"[" * 5000), stage="chat", content_type="application/json")
# (a test fix, from the soak: a body over MAX_BODY is 413 whatever its bytes)
@example(case=("/api/turn", "hostile_strings", b'{"utterance": "' + b"\xed\xa0\x80" * 6000 + b'"}'), stage="anonymous",
         content_type=None)
@budget(ci=50)
def test_hostile_bodies_are_refused_with_one_line_and_change_nothing(lab, case, stage, content_type):
    route, kind, body = case
    auth = lab.at(stage)
    before = lab.snapshot()
    r = _post(lab, route, auth, body, content_type)
    lab.check(r, before)
    if len(body) > MAX_BODY:
        assert r.status_code == 413, (r.status_code, r.text)  # refused before it is read
        return lab.still_serving()
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        if route != "/api/start":  # the only POST without a body to read
            assert r.status_code == 400, (r.status_code, r.text)  # JSON is UTF-8 (RFC 8259 8.1)
    if kind == "deep" and route != "/api/start" and content_type in (None, "application/json"):
        # Parsed through situ_gym.jsonl: a body nested too deeply is invalid JSON, not a parser crash.
        assert r.status_code in (400, 401), r.text
    lab.still_serving()


@given(route=st.sampled_from(POST_ROUTES), stage=st.sampled_from(STAGES),
       size=st.one_of(st.integers(MAX_BODY + 1, MAX_BODY + 64), st.integers(MAX_BODY + 1, 8 * MAX_BODY)),
       framing=st.sampled_from(["honest", "chunked", "lying_small", "lying_zero", "lying_large"]))
# Content-Length: 10 on a 16 KiB+ body: the cap read only the header, so TestClient (and any
# ASGI server that does not frame by Content-Length) got the whole oversized body parsed and
# a participant joined with it.
@example(route="/api/participants", stage="anonymous", size=MAX_BODY + 1, framing="lying_small")
@budget(ci=30)
def test_oversized_bodies_are_refused_whatever_the_headers_say(lab, route, stage, size, framing):
    auth = lab.at(stage)
    good = json.dumps(GOOD[route])
    body = (good[:-1] + " " * (size - len(good)) + "}").encode()  # valid JSON, just too long
    assert len(body) == size
    length = {"honest": None, "chunked": None, "lying_small": "10", "lying_zero": "0",
              "lying_large": str(10 * MAX_BODY)}[framing]
    before = lab.snapshot()
    r = _post(lab, route, auth, body, "application/json", length, chunked=framing == "chunked")
    lab.check(r, before, ok=())
    expected = {"chunked": 411, "lying_small": (400, 413), "lying_zero": (400, 413)}.get(framing, 413)
    assert r.status_code in (expected if isinstance(expected, tuple) else (expected,)), (r.status_code, r.text)
    lab.still_serving()


def _asgi(lab: Lab, method: str, path: str, headers: list[tuple[bytes, bytes]],
          chunks: list[bytes]) -> tuple[int, bytes]:
    """One request straight into the ASGI app, header bytes and body framing as given (a
    client would normalise or refuse some); returns (status, body)."""
    import asyncio

    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method,
             "scheme": "http", "path": path, "raw_path": path.encode(), "root_path": "", "query_string": b"",
             "headers": headers, "client": ("127.0.0.1", 1), "server": ("testserver", 80)}
    incoming = [{"type": "http.request", "body": c, "more_body": i + 1 < len(chunks)} for i, c in enumerate(chunks)]
    incoming = incoming or [{"type": "http.request", "body": b"", "more_body": False}]
    out: list[dict[str, Any]] = []

    async def receive():
        if incoming:
            return incoming.pop(0)
        await asyncio.sleep(3600)  # the client stays connected; nothing more comes

    async def send(message):
        out.append(message)

    async def run():
        await asyncio.wait_for(lab.client.app(scope, receive, send), timeout=60)

    asyncio.run(run())
    status = next(m["status"] for m in out if m["type"] == "http.response.start")
    return status, b"".join(m.get("body", b"") for m in out if m["type"] == "http.response.body")


@given(route=st.sampled_from(POST_ROUTES), stage=st.sampled_from(("anonymous", "chat", "rating")),
       lengths=st.lists(st.one_of(st.sampled_from(BAD_LENGTHS).map(lambda t: t.encode("latin-1", "replace")),
                                  st.binary(max_size=6), st.integers(0, 4 * MAX_BODY).map(lambda n: str(n).encode())),
                        max_size=2),
       cuts=st.lists(st.integers(0, 200), max_size=3), pad=st.integers(0, 2 * MAX_BODY))
# "\u00b2" (latin-1 byte 0xB2) is a digit to str.isdigit() but not to int(): the cap's
# int(length) raised ValueError out of the middleware (a 500).
@example(route="/api/participants", stage="anonymous", lengths=[b"\xb2"], cuts=[], pad=0)
# Content-Length: 0 on a whole profile: the cap read the header only, and the profile joined.
@example(route="/api/participants", stage="anonymous", lengths=[b"0"], cuts=[], pad=0)
# Two Content-Length headers that disagree (RFC 9112 6.3: unrecoverable): the first was
# believed, and the request went through.
@example(route="/api/participants", stage="anonymous", lengths=[_PROFILE_LENGTH, b"5"], cuts=[], pad=0)
# 5,000 digits: past int()'s 4,300-digit limit, the cap's int(length) raised ValueError.
@example(route="/api/participants", stage="anonymous", lengths=[b"9" * 5000], cuts=[], pad=0)
@budget(ci=30)
def test_a_content_length_that_is_not_the_bodys_is_refused(lab, route, stage, lengths, cuts, pad):
    body = json.dumps(GOOD[route]).encode()
    body = body[:-1] + b" " * pad + body[-1:]
    honest = str(len(body)).encode()
    if lengths and all(v == honest for v in lengths):
        return  # the honest request: the other properties' business
    chunks, at = [], 0
    for cut in sorted(cuts):
        chunks.append(body[at:cut])
        at = max(at, cut)
    chunks.append(body[at:])
    headers = [(b"content-type", b"application/json"), *((b"content-length", v) for v in lengths)]
    auth = lab.at(stage)
    if auth:
        headers.append((b"authorization", auth["Authorization"].encode()))
    before = lab.snapshot()
    status, answer = _asgi(lab, "POST", route, headers, chunks)
    assert status in REFUSALS, (lengths, status, answer[:200])
    error = json.loads(answer)["error"]
    assert len(error.splitlines()) == 1, error
    if not lengths:
        assert status == 411
    elif len(body) > MAX_BODY:
        assert status in (400, 413)
    assert lab.snapshot() == before
    lab.still_serving()


# ------------------------------------------------------------------ headers
@st.composite
def authorizations(draw, lab_tokens: list[str]) -> bytes | None:
    """Absent, empty, wrong scheme, forged, truncated or padded tokens, stored hashes, junk."""
    token = lab_tokens[0] if lab_tokens else "x"
    how = draw(st.sampled_from(["absent", "junk", "scheme", "truncated", "padded", "hash", "forged", "case"]))
    if how == "absent":
        return None
    if how == "junk":
        return draw(hostile_text(40)).encode("latin-1", "replace")
    if how == "scheme":
        return draw(st.sampled_from(["Basic ", "Token ", "Bearer", "Bearer\t", "", "bearer:", "Bearer\x00"])).encode() \
            + token.encode()
    if how == "truncated":
        return ("Bearer " + token[: draw(st.integers(0, len(token) - 1))]).encode()
    if how == "padded":
        return ("Bearer " + token + draw(st.sampled_from(["x", "=", "\x00", ".", "%00", token]))).encode()
    if how == "hash":  # what the study stores: never a token itself
        from eval.human.storage import token_hash
        return ("Bearer " + token_hash(token)).encode()
    if how == "case":
        return ("Bearer " + token.swapcase()).encode() if token.swapcase() != token else b"Bearer ?"
    return ("Bearer " + draw(st.text(string.ascii_letters + string.digits + "-_", min_size=1, max_size=64))).encode()


@given(data=st.data(), stage=st.sampled_from(("briefing", "chat", "rating", "done")),
       route=st.sampled_from(["/api/state", *POST_ROUTES[1:]]))
@budget(ci=30)
def test_a_missing_or_forged_token_gets_401_and_touches_nobody(lab, data, stage, route):
    real = lab.at(stage)["Authorization"].split(" ", 1)[1]
    header = data.draw(authorizations([real]), label="authorization")
    headers = {} if header is None else {"Authorization": header}
    before = lab.snapshot()
    try:
        if route == "/api/state":
            r = lab.client.get(route, headers=headers)
        else:
            r = lab.client.post(route, headers=headers, json=GOOD[route])
    except ValueError:  # a header httpx will not send
        return
    lab.check(r, before, ok=())
    assert r.status_code == 401, (header, r.status_code, r.text)
    lab.still_serving()


# ------------------------------------------------------------------ paths and methods
SEGMENTS = ["..", ".", "%2e%2e", "%2E%2E%2F", "%2f", "%00", "%5c..%5c", "..%2f..%2f", "app.js", "index.html",
            "style.css", "api", "static", "state", "turn", "", "%ff", "%c0%ae%c0%ae", "~", "*", "?", "#",
            "app.py", "__init__.py", "study.json", "participants", "P001.json"]


@st.composite
def paths(draw) -> str:
    prefix = draw(st.sampled_from(["/", "/api/", "/static/", "/static/../", "/api/participants/", "//"]))
    segs = draw(st.lists(st.one_of(st.sampled_from(SEGMENTS),
                                   hostile_text(16).map(lambda t: quote(t[:40].encode("utf-8", "surrogatepass"), safe=""))),
                         max_size=4))
    return prefix + "/".join(segs)


@given(method=st.sampled_from(["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD", "TRACE"]),
       path=st.one_of(paths(), st.sampled_from(GET_ROUTES + POST_ROUTES)))
@example(method="GET", path="/api/nope")  # a 404 answered {"detail": ...}, not the app's {"error": ...}
@example(method="DELETE", path="/api/state")  # likewise a 405
@budget(ci=60)
def test_hostile_paths_and_methods_get_404_or_405(lab, method, path):
    before = lab.snapshot()
    try:
        r = lab.client.request(method, path, headers={"Content-Type": "application/json"}, content=b"{}")
    except (ValueError, _httpx.InvalidURL):  # the client refuses to build the URL (not the app's business)
        return
    route = r.request.url.path or "/"
    known = (method in ("GET", "HEAD") and route in GET_ROUTES) or (method == "POST" and route in POST_ROUTES)
    lab.check(r, before, ok=(200,) if known or route.startswith("/static/") else ())
    if r.status_code == 200 and route.startswith("/static/") and method == "GET":
        assert r.content in STATIC_FILES, route  # nothing outside the static folder is served
    if not known and not route.startswith("/static/"):
        assert r.status_code in (404, 405), (method, route, r.status_code)


# ------------------------------------------------------------------ call order
OPS = ["start", "turn", "bad_turn", "quit", "rate", "bad_rate", "state", "join_other"]


@given(ops=st.lists(st.sampled_from(OPS), min_size=1, max_size=10))
@example(ops=["turn", "rate", "start", "start", "quit", "quit", "rate", "rate", "start", "turn"])
@budget(ci=15)
def test_calls_out_of_order_are_refused_and_the_stage_follows_the_protocol(lab, ops):
    """A model of the stages (briefing -> chat -> rating -> done) predicts every answer."""
    auth = lab.join()
    stage = "briefing"
    for op in ops:
        before = lab.snapshot()
        if op == "start":
            r = lab.client.post("/api/start", headers=auth)
            allowed = stage == "briefing"
        elif op in ("turn", "bad_turn", "quit"):
            action = {"turn": LEFT, "quit": IDLE, "bad_turn": {"name": "add_to_cart", "arguments": {"item": "999"}}}[op]
            r = lab.client.post("/api/turn", headers=auth,
                                json={"utterance": "Hello there?", "action": action, "gave_up": op == "quit"})
            allowed = stage == "chat" and op != "bad_turn"
        elif op in ("rate", "bad_rate"):
            ratings = dict(GOOD["/api/ratings"]["ratings"])
            if op == "bad_rate":
                ratings.pop("Overall")
            r = lab.client.post("/api/ratings", headers=auth, json={"ratings": ratings})
            allowed = stage == "rating" and op == "rate"
        elif op == "state":
            r = lab.client.get("/api/state", headers=auth)
            allowed = True
        else:
            r = lab.client.post("/api/participants", json=PROFILE)
            allowed = True
        lab.check(r, before)
        assert (r.status_code == 200) == allowed, (op, stage, r.status_code, r.text)
        if allowed and op != "join_other":
            new = r.json()["stage"]
            expected = {"start": {"chat"}, "turn": {"chat", "rating"}, "quit": {"rating"}, "rate": {"done"},
                        "state": {stage}}[op]
            assert new in expected, (op, stage, new)
            stage = new
        assert lab.stage(auth) == stage


# ------------------------------------------------------------------ validation oracles
def _is_int(v: Any) -> bool:
    return type(v) is int


@given(body=with_wrong_field(GOOD["/api/ratings"]))
# {"Overall": true} was taken as 1 and "5" as 5: the ratings were lax ints, so a wrong type was
# stored as a rating instead of refused (Study._check_ratings's own bool check never saw it).
@example(body={"ratings": {**{d: 3 for d in DIMENSIONS}, "Overall": True}})
@example(body={"ratings": {**{d: 3 for d in DIMENSIONS}, "Overall": "5"}})
@example(body={"ratings": {**{d: 3 for d in DIMENSIONS}, "Overall": 4.0}})
# Found by the long soak: an unknown question's name is quoted in the error; a lone surrogate
# in it made JSONResponse raise UnicodeEncodeError (a 500), a line break split the "one line".
@example(body={"ratings": {**{d: 3 for d in DIMENSIONS}, "x\ud800": 3}})
@example(body={"ratings": {**{d: 3 for d in DIMENSIONS}, "x\r\ny": 3}})
@budget(ci=40)
def test_ratings_are_stored_only_when_every_answer_is_an_integer_1_to_5(lab, body):
    auth = lab.at("rating")
    valid = (isinstance(body, dict) and set(body) == {"ratings"} and isinstance(body["ratings"], dict)
             and set(body["ratings"]) == set(DIMENSIONS)
             and all(_is_int(v) and 1 <= v <= 5 for v in body["ratings"].values()))
    before = lab.snapshot()
    r = lab.client.post("/api/ratings", headers={**auth, "Content-Type": "application/json"}, content=_dumps(body))
    lab.check(r, before)
    assert (r.status_code == 200) == valid, (body, r.status_code, r.text)
    if valid:
        run = lab.root / "runs" / "heuristic" / "ratings.jsonl"
        last = json.loads(run.read_text(encoding="utf-8").splitlines()[-1])
        assert last["ratings"] == body["ratings"]


def _last_played(lab: Lab, r) -> dict[str, Any]:
    """The participant turn last stored in the replay log of the participant ``r`` answered."""
    pid = r.json()["participant_id"]
    state = json.loads((lab.root / "participants" / f"{pid}.json").read_text(encoding="utf-8"))
    return [e["user"] for e in state["log"] if e["user"] is not None][-1]


def _turn_shape_ok(body: Any) -> bool:
    if not isinstance(body, dict) or not set(body) <= {"utterance", "action", "gave_up"}:
        return False
    if not isinstance(body.get("utterance"), str) or len(body["utterance"]) > MAX_UTTERANCE:
        return False
    if "gave_up" in body and not isinstance(body["gave_up"], bool):
        return False
    action = body.get("action")
    if not isinstance(action, dict) or not set(action) <= {"name", "arguments"}:
        return False
    if not isinstance(action.get("name"), str) or len(action["name"]) > 40:
        return False
    args = action.get("arguments", {})
    return (isinstance(args, dict) and len(args) <= 4
            and all(isinstance(v, (str, int, float)) and not isinstance(v, bool) for v in args.values()))


@given(body=with_wrong_field(GOOD["/api/turn"]))
# "gave_up": "yes" (or 1, or "on") ended the conversation: gave_up was a lax bool.
@example(body={**GOOD["/api/turn"], "gave_up": "yes"})
@example(body={**GOOD["/api/turn"], "gave_up": 1})
@example(body={**GOOD["/api/turn"], "a\nb": 1})  # (the soak) the extra field's name, quoted, broke the line
@budget(ci=40)
def test_a_turn_of_the_wrong_shape_is_refused_before_anything_is_played(lab, body):
    auth = lab.at("chat")
    before = lab.snapshot()
    r = lab.client.post("/api/turn", headers={**auth, "Content-Type": "application/json"}, content=_dumps(body))
    lab.check(r, before)
    if not _turn_shape_ok(body):
        assert r.status_code in (400, 413), (body, r.status_code, r.text)
    if r.status_code == 200:  # what was played is what was sent
        played = _last_played(lab, r)
        assert played["utterance"] == body["utterance"].strip()
        assert played["gave_up"] is body.get("gave_up", False)


@given(body=st.one_of(with_wrong_field(PROFILE),
                      st.fixed_dictionaries({"age_group": st.sampled_from(PROFILE_CHOICES["age_group"]),
                                             "shopping_frequency": st.sampled_from(
                                                 PROFILE_CHOICES["shopping_frequency"]),
                                             "note": hostile_text()})))
@example(body={**PROFILE, "note": "\ud800 caf\u00e9 \x00 \u2028"})
@budget(ci=50)
def test_a_profile_is_stored_when_valid_and_round_trips(lab, body):
    valid = (isinstance(body, dict) and set(body) <= set(PROFILE)
             and body.get("age_group") in PROFILE_CHOICES["age_group"]
             and body.get("shopping_frequency") in PROFILE_CHOICES["shopping_frequency"]
             and isinstance(body.get("note", ""), str) and len(body.get("note", "")) <= MAX_NOTE
             and not any(0xD800 <= ord(c) <= 0xDFFF for c in body.get("note", "")))
    before = lab.snapshot()
    r = lab.client.post("/api/participants", headers={"Content-Type": "application/json"}, content=_dumps(body))
    lab.check(r, before)
    assert (r.status_code == 200) == valid, (body, r.status_code, r.text)
    if valid:
        pid = r.json()["participant_id"]
        state = json.loads((lab.root / "participants" / f"{pid}.json").read_text(encoding="utf-8"))
        assert state["profile"]["note"] == body.get("note", "").strip()
        assert r.json()["token"] not in json.dumps(state)  # only its hash is stored


@given(utterance=hostile_text(), direction=st.sampled_from(["left", "right", *HOSTILE_ATOMS[:12]]))
@budget(ci=40)
def test_hostile_utterances_play_or_are_refused_and_what_is_stored_round_trips(lab, utterance, direction):
    auth = lab.at("chat")
    body = {"utterance": utterance, "action": {"name": "turn", "arguments": {"direction": direction, "angle": 30}}}
    before = lab.snapshot()
    r = lab.client.post("/api/turn", headers={**auth, "Content-Type": "application/json"}, content=_dumps(body))
    lab.check(r, before)
    surrogate = any(0xD800 <= ord(c) <= 0xDFFF for c in utterance + direction)
    if len(_dumps(body)) > MAX_BODY:
        assert r.status_code == 413, r.text
    elif surrogate or len(utterance) > MAX_UTTERANCE or not utterance.strip():
        assert r.status_code == 400, r.text
    if r.status_code == 200:
        assert _last_played(lab, r)["utterance"] == utterance.strip()  # stored as typed
        trajectories = lab.root / "runs" / "heuristic" / "trajectories.jsonl"
        if trajectories.exists():
            _strict_json(trajectories, trajectories.read_bytes())


def test_a_whole_participant_flow_still_works_after_the_properties(lab):
    """The app keeps serving: join -> start -> turns -> questionnaire -> done, saved."""
    auth = lab.join()
    assert lab.client.post("/api/start", headers=auth).status_code == 200
    r = lab.client.post("/api/turn", headers=auth, json={"utterance": "Hi, I want yogurt.", "action": LEFT})
    assert r.status_code == 200 and r.json()["stage"] == "chat", r.text
    # The page's only URL sinks (app.js: $("view").src, $("map").src) get PNG data and nothing else.
    for key in ("view", "map"):
        assert re.fullmatch(r"data:image/png;base64,[A-Za-z0-9+/]+=*", r.json()[key]), r.json()[key][:60]
    r = lab.client.post("/api/turn", headers=auth, json={"utterance": "Bye.", "action": IDLE, "gave_up": True})
    assert r.status_code == 200 and r.json()["stage"] == "rating", r.text
    r = lab.client.post("/api/ratings", headers=auth, json=GOOD["/api/ratings"])
    assert r.status_code == 200 and r.json()["stage"] == "done", r.text
    for rel, raw in lab.snapshot().items():
        if rel.endswith((".json", ".jsonl")):
            _strict_json(lab.root / rel, raw)
