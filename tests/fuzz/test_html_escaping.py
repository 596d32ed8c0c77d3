"""Property tests (issue 29): nothing a model or a participant wrote is injected into HTML.

Every page that shows their text is rendered twice from one drawn shape: once with hostile
text (markup attacks, lone surrogates, controls, huge strings) in every text field, once
with each distinct text replaced by a distinct plain word. Parsed with the standard
library's ``html.parser``, the hostile page must have exactly the benign page's elements
and attribute names (nothing injected: no ``<script>``, ``<iframe>``, ``<svg>``, ...,
nowhere an ``on*`` attribute or a ``javascript:`` / ``data:`` / ``vbscript:`` link), and
the hostile text must be in the parsed text (escaped, not dropped). Pages: the viewer's
episode page, its ``index.html`` and summary, the Markdown reports (``eval.report``,
``eval.human.report``) rendered by markdown-it with raw HTML allowed, and the human app's
page script, which must put server text into the DOM through ``textContent`` only.
File names derived from episode ids must stay inside the run folder.
"""

from __future__ import annotations

import json
import re
import tempfile
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, example, given
from hypothesis import strategies as st

from eval.judge import DIMENSIONS
from eval.viewer import episode_page, frame_name, map_name, marks_name, safe_name, write_viewer
from situ_gym.records import EpisodeRecord, ExecutionResult, ToolCall, TurnRecord
from tests.fuzz.strategies import HOSTILE_ATOMS, HTML_ATTACKS, budget, hostile_text, json_text

DANGEROUS = {"script", "iframe", "object", "embed", "svg", "math", "frame", "frameset", "base", "form",
             "meta", "link", "style", "template", "noscript", "applet", "xmp", "plaintext", "textarea"}
URL_ATTRS = {"href", "src", "action", "formaction", "xlink:href", "srcdoc", "background", "poster", "data"}
BAD_SCHEMES = ("javascript:", "data:", "vbscript:")
_SURROGATE = re.compile("[\ud800-\udfff]")


def shown(text: str) -> str:
    """What a page shows for ``text``: lone surrogates (not encodable) as U+FFFD."""
    return _SURROGATE.sub("\ufffd", text)


class Page(HTMLParser):
    """Elements (tag, attribute names), attributes, text and comments of one HTML page."""

    def __init__(self, html: str):
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, tuple[str, ...]]] = []
        self.attributes: list[tuple[str, str, str | None]] = []
        self.chunks: list[str] = []
        self.comments: list[str] = []
        self.feed(html)
        self.close()
        self.text = "".join(self.chunks)

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, tuple(sorted(name for name, _ in attrs))))
        self.attributes += [(tag, name, value) for name, value in attrs]

    handle_startendtag = handle_starttag

    def handle_data(self, data):
        self.chunks.append(data)

    def handle_comment(self, data):
        self.comments.append(data)

    def handle_pi(self, data):
        self.comments.append(data)

    def unknown_decl(self, data):
        self.comments.append(data)


def _scheme_of(value: str) -> str:
    """The URL as a browser reads its scheme: controls and whitespace dropped, lower case."""
    return re.sub(r"[\x00-\x20\x7f]+", "", value).lower()


def assert_nothing_injected(hostile_html: str, benign_html: str, fragments: list[str],
                            template_tags: set[str] = frozenset(), from_tag: str | None = None) -> Page:
    """``from_tag``: compare the elements from the first such tag on (what comes before
    depends on the page's place in the run, not on its text)."""
    page, benign = Page(hostile_html), Page(benign_html)
    ours, theirs = page.elements, benign.elements
    if from_tag is not None:
        ours = ours[[t for t, _ in ours].index(from_tag):]
        theirs = theirs[[t for t, _ in theirs].index(from_tag):]
    assert ours == theirs, _first_difference(ours, theirs)
    assert len(page.comments) == len(benign.comments) == 0, page.comments[:3]
    for tag, _ in page.elements:
        assert tag not in DANGEROUS or tag in template_tags, tag
    for tag, name, value in page.attributes:
        assert not name.startswith("on"), (tag, name, value)
        if name in URL_ATTRS and value is not None:
            assert not _scheme_of(value).startswith(BAD_SCHEMES), (tag, name, value)
            if name in ("href", "src"):
                _assert_relative_path(value)
    for fragment in fragments:
        assert shown(fragment) in page.text, f"hostile text dropped or altered: {fragment[:120]!r}"
    return page


def _assert_relative_path(value: str) -> None:
    """A link of the viewer: a relative path whose segments (after the template's own
    leading ``../``) are plain names, never ``.`` / ``..`` / empty / absolute."""
    path = value.split("#", 1)[0]
    assert path and not path.startswith("/") and "\\" not in path and ":" not in path, value
    segments = path.split("/")
    while segments and segments[0] == "..":
        segments.pop(0)
    assert segments and all(s not in ("", ".", "..") for s in segments), value


def _first_difference(a: list, b: list) -> str:
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return f"element {i}: hostile {x} vs benign {y}; context {a[max(0, i - 3):i + 3]}"
    return f"{len(a)} vs {len(b)} elements; tail {a[len(b):][:5] or b[len(a):][:5]}"


# ------------------------------------------------------------------ drawn records
_SHORT = st.lists(st.one_of(st.sampled_from(HOSTILE_ATOMS), st.text(max_size=6)), max_size=5).map("".join)


def html_text(max_size: int = 40) -> st.SearchStrategy[str]:
    """Markup attacks, hostile text (now and then huge), and the two glued together."""
    attack = st.sampled_from(HTML_ATTACKS)
    return st.one_of(attack, _SHORT, st.lists(st.one_of(attack, _SHORT), min_size=1, max_size=4).map("".join),
                     hostile_text(max_size))


class Texts:
    """Maps every text of a drawn shape: as drawn (hostile) or to a distinct plain word
    (benign; "" and the words that mean something to the pages, like "error", kept)."""

    KEEP = frozenset({"", "error"})

    def __init__(self, benign: bool, keep: tuple[str, ...] = ()):
        self.benign = benign
        self.keep = self.KEEP | set(keep)
        self.words: dict[str, str] = {}

    def __call__(self, text: str | None) -> str | None:
        if text is None or not self.benign or text in self.keep:
            return text
        return self.words.setdefault(text, f"w{len(self.words)}")


ROLES = ("assistant", "user", "map")


def tool_calls() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries({
        "name": html_text(20),
        "arguments": st.dictionaries(html_text(10), st.one_of(html_text(20), st.integers(), st.floats()), max_size=2),
        "target_id": st.one_of(st.none(), html_text(20), st.just("sm_p001")),
        "legal": st.booleans(), "valid": st.booleans(), "error": st.one_of(st.none(), html_text()),
    })


def turn_specs() -> st.SearchStrategy[dict[str, Any]]:
    ids = st.lists(st.one_of(html_text(20), st.just("sm_p001")), max_size=3)
    return st.fixed_dictionaries({
        "response": html_text(), "raw": html_text(), "errors": st.lists(html_text(), max_size=2),
        "action_type": st.one_of(st.none(), html_text(20)),
        "action": st.one_of(st.none(), st.dictionaries(html_text(10), html_text(20), max_size=2)),
        "goal": st.one_of(st.none(), html_text(20)), "recommended": st.one_of(st.none(), html_text(20)),
        "expected": st.one_of(st.none(), tool_calls()), "actual": st.one_of(st.none(), tool_calls()),
        "utterance": html_text(), "result": st.one_of(st.none(), st.tuples(st.booleans(), html_text())),
        "ranking": ids, "visible": ids, "cart": ids, "held": st.one_of(st.none(), html_text(20)),
        "reward": st.dictionaries(html_text(12), st.one_of(st.none(), st.floats(0, 1)), max_size=2),
    })


@st.composite
def episode_specs(draw, episode_id: st.SearchStrategy[str] | None = None) -> dict[str, Any]:
    turns = draw(st.lists(turn_specs(), max_size=3))
    t = html_text()
    return {
        "episode_id": draw(episode_id or t), "env_id": draw(t), "task_id": draw(t), "profile_id": draw(t),
        "agent": draw(t), "user": draw(t), "target": draw(t), "termination": draw(t),
        "reference": draw(st.lists(t, max_size=2)), "cart": draw(st.lists(t, max_size=2)),
        "error": draw(st.one_of(st.none(), t)), "error_cause": draw(st.one_of(st.none(), t)),
        "turns": turns,
        "frames": draw(st.lists(st.tuples(st.integers(1, len(turns) + 1), st.sampled_from(ROLES)), max_size=3,
                                unique=True)),
        "junk_frames": draw(st.lists(t, max_size=2)),
        "marks": draw(st.lists(st.tuples(html_text(10), st.one_of(html_text(20), st.just("sm_p001"))), max_size=2)),
        # What write_viewer finds in the legend files instead of the marks (None: the marks).
        "legend_json": draw(st.one_of(st.none(), st.none(), json_text())),
        "rating": draw(st.one_of(st.none(), st.fixed_dictionaries(
            {"judge": t, **{d: st.one_of(st.integers(1, 5), t) for d in DIMENSIONS[:2]}}))),
    }


def _spec(**fields: Any) -> dict[str, Any]:
    """A plain drawn shape (for the explicit examples), ``fields`` replaced."""
    base = {k: "x" for k in ("episode_id", "env_id", "task_id", "profile_id", "agent", "user", "target",
                             "termination")}
    base.update(reference=[], cart=[], error=None, error_cause=None, turns=[], frames=[], junk_frames=[], marks=[],
                legend_json=None, rating=None)
    return {**base, **fields}


def _turn_spec(**fields: Any) -> dict[str, Any]:
    base = dict(response="r", raw="{}", errors=[], action_type=None, action=None, goal=None, recommended=None,
                expected=None, actual=None, utterance="u", result=None, ranking=[], visible=[], cart=[], held=None,
                reward={})
    return {**base, **fields}


def _call(spec: dict[str, Any] | None, f: Texts) -> ToolCall | None:
    if spec is None:
        return None
    args = {f(k): (f(v) if isinstance(v, str) else v) for k, v in spec["arguments"].items()}
    return ToolCall(name=f(spec["name"]), arguments=args, target_id=f(spec["target_id"]), legal=spec["legal"],
                    valid=spec["valid"], error=f(spec["error"]))


def build(spec: dict[str, Any], f: Texts) -> tuple[EpisodeRecord, dict[str, list[list[str]]]]:
    """The episode (and the legends of its frames) of a drawn shape, its texts mapped by ``f``."""
    turns = []
    for n, s in enumerate(spec["turns"], start=1):
        ok, message = s["result"] if s["result"] else (True, "")
        turns.append(TurnRecord(
            turn=n, assistant_raw=f(s["raw"]), assistant_valid=not s["errors"], assistant_errors=[f(e) for e in s["errors"]],
            response=f(s["response"]), action_type=f(s["action_type"]),
            action=None if s["action"] is None else {f(k): f(v) for k, v in s["action"].items()},
            navigation_goal_id=f(s["goal"]), recommended_id=f(s["recommended"]),
            expected_user_action=_call(s["expected"], f), ranking=[f(x) for x in s["ranking"]],
            user_utterance=f(s["utterance"]), user_action=_call(s["actual"], f),
            result=None if s["result"] is None else ExecutionResult(ok=ok, message=f(message)),
            visible_after=[f(x) for x in s["visible"]], pose_after=(1.0 + n, 2.0, 90.0), held_item=f(s["held"]),
            cart=[f(x) for x in s["cart"]], reward={f(k): v for k, v in s["reward"].items()},
        ))
    eid = f(spec["episode_id"])
    frames = [frame_name(eid, turn, role) for turn, role in spec["frames"]] + [f(j) for j in spec["junk_frames"]]
    ep = EpisodeRecord(
        episode_id=eid, env_id=f(spec["env_id"]), store="supermarket", task_id=f(spec["task_id"]),
        profile_id=f(spec["profile_id"]), subset=1, seed=7, agent=f(spec["agent"]), user=f(spec["user"]),
        target_id=f(spec["target"]), reference_set=[f(x) for x in spec["reference"]], budget=12.5, turns=turns,
        cart=[f(x) for x in spec["cart"]], termination=f(spec["termination"]), error=f(spec["error"]),
        error_cause=f(spec["error_cause"]), frames=frames,
    )
    marks = {frame_name(eid, turn, role): [[f(h), f(e)] for h, e in spec["marks"]] for turn, role in spec["frames"]}
    return ep, marks


def _rating(spec: dict[str, Any], f: Texts) -> dict[str, Any] | None:
    if spec["rating"] is None:
        return None
    return {k: (f(v) if isinstance(v, str) else v) for k, v in spec["rating"].items()}


def fragments(spec: dict[str, Any], with_marks: bool = True) -> list[str]:
    """The texts of a drawn shape that the episode page must show, as they must read there."""
    out = [spec[k] for k in ("episode_id", "env_id", "agent", "user", "target", "termination")]
    out += spec["reference"] + spec["cart"] + ([spec["error"]] if spec["error"] else [])
    out.append(f"{spec['task_id']} / {spec['profile_id']} / 1")
    if spec["rating"]:
        out.append(str(spec["rating"]["judge"]))
    for s in spec["turns"]:
        out += [s["response"], s["utterance"], *s["errors"], *s["ranking"], *s["visible"], *s["cart"],
                *s["reward"], str(s["action_type"])]
        out += [x for x in (s["goal"], s["recommended"], s["held"]) if x]
        if s["action"]:
            out.append(json.dumps(s["action"], ensure_ascii=False))
        if s["result"]:
            out.append(s["result"][1])
        for call in (s["expected"], s["actual"]):
            if call:
                out += [call["name"], json.dumps(call["arguments"], ensure_ascii=False)]
                out += [x for x in (call["target_id"], call["error"]) if x]
    if with_marks and spec["frames"] and spec.get("legend_json") is None:
        for h, e in spec["marks"]:
            out += [h, e]
    return out


@pytest.fixture(scope="module")
def index():
    from situ_gym.scene.index import SceneIndex
    from situ_gym.scene.loader import load_scene

    return SceneIndex(load_scene("supermarket"))


def _page(spec: dict[str, Any], f: Texts, idx, neighbours: tuple[str | None, str | None]) -> str:
    ep, marks = build(spec, f)
    return episode_page(ep, idx, _rating(spec, f), (f(neighbours[0]), f(neighbours[1])), marks, map_name(ep.episode_id))


# ------------------------------------------------------------------ the viewer
@given(spec=episode_specs(), use_index=st.booleans(),
       neighbours=st.tuples(st.one_of(st.none(), html_text(20)), st.one_of(st.none(), html_text(20))))
# A lone surrogate in any text reached the page: writing it as UTF-8 raised UnicodeEncodeError.
@example(spec=_spec(termination="\ud800<script>alert(1)</script>",
                    turns=[_turn_spec(response="\udfff", action={"k": "\ud800"})]),
         use_index=False, neighbours=("\ud800", None))
@budget(ci=40)
def test_the_episode_page_escapes_every_text_field(spec, use_index, neighbours, index):
    idx = index if use_index else None
    hostile = _page(spec, Texts(False), idx, neighbours)
    hostile.encode("utf-8")  # a page is written as UTF-8: no lone surrogate may reach it
    benign = _page(spec, Texts(True), idx, neighbours)
    extra = [n for n in neighbours if n]
    assert_nothing_injected(hostile, benign, fragments(spec) + extra, template_tags={"style", "meta"})


def _write_run(specs: list[dict[str, Any]], f: Texts, root: Path, with_ratings: bool) -> Path:
    run = root / "run"
    eps = []
    for spec in specs:
        ep, marks = build(spec, f)
        for rel, pairs in marks.items():  # the legends write_viewer reads beside the frames
            legend = json.dumps(pairs) if spec.get("legend_json") is None else spec["legend_json"]
            (run / marks_name(rel)).parent.mkdir(parents=True, exist_ok=True)
            (run / marks_name(rel)).write_bytes(legend.encode("utf-8", "surrogatepass"))
        eps.append(ep)
    ratings = [_rating(s, f) or {"judge": f("rule"), "Overall": 3} for s in specs] if with_ratings else None
    write_viewer(run, eps, {}, ratings)
    return run


@given(specs=st.lists(episode_specs(), min_size=1, max_size=3), with_ratings=st.booleans())
# A stored frames entry was followed as a path (run / "<entry>.json"): one past the file
# name limit raised OSError out of write_viewer, a NUL ValueError, and "../.." looked outside the run.
@example(specs=[_spec(junk_frames=["x" * 300 + ".png", "../../../etc/passwd.png", "a\x00.png"])],
         with_ratings=False)
# A legend that is not a list of pairs ([[1, 2, 3]]) raised ValueError while unpacking it.
@example(specs=[_spec(episode_id="e1", frames=[(1, "user")], legend_json='[["a", "b", "c"], 5, ["h", "e"]]')],
         with_ratings=True)
@budget(ci=20)
def test_the_run_index_summary_and_every_page_escape_text_and_stay_in_the_run(specs, with_ratings):
    names = [safe_name(s["episode_id"]) for s in specs]
    if len(set(names)) < len(names):
        specs = specs[:1]  # ids that share a file name overwrite each other's page (see the report)
    # One judge rates a whole run (index.html names the first rating's judge).
    judge = {"judge": (specs[0]["rating"] or {}).get("judge") or "rule"}
    specs = [{**s, "rating": {**(s["rating"] or {}), **judge} if with_ratings else None} for s in specs]
    with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
        hostile_run = _write_run(specs, Texts(False), Path(a), with_ratings)
        benign = Texts(True)
        benign_run = _write_run(specs, benign, Path(b), with_ratings)
        # Nothing was written outside the run folder.
        assert [p.name for p in Path(a).iterdir()] == ["run"]
        for p in hostile_run.rglob("*"):
            assert p.resolve().is_relative_to(hostile_run.resolve()), p
        index_fragments = [x for s in specs for x in (s["episode_id"], s["env_id"], s["agent"], s["termination"])]
        index_fragments += [x for s in specs for x in (s["user"],)] + ([judge["judge"]] if with_ratings else [])
        assert_nothing_injected((hostile_run / "index.html").read_bytes().decode("utf-8"),
                                (benign_run / "index.html").read_bytes().decode("utf-8"), index_fragments,
                                template_tags={"style", "meta", "script"})  # the sort/filter script: a constant
        _assert_script_is_the_constant((hostile_run / "index.html").read_text(encoding="utf-8"))
        pages = sorted((hostile_run / "episodes").iterdir())
        assert len(pages) == len(specs)
        for spec in specs:
            page = hostile_run / "episodes" / f"{safe_name(spec['episode_id'])}.html"
            twin = benign_run / "episodes" / f"{safe_name(benign(spec['episode_id']))}.html"
            assert_nothing_injected(page.read_bytes().decode("utf-8"), twin.read_bytes().decode("utf-8"),
                                    fragments(spec), template_tags={"style", "meta"}, from_tag="h1")


def _assert_script_is_the_constant(html: str) -> None:
    """index.html's one script is the viewer's constant, whatever the run's text: no text of
    the run reaches it, and it writes text into the page through textContent only."""
    from eval.viewer import _INDEX_JS

    scripts = re.findall(r"<script>(.*?)</script>", html, flags=re.S)
    assert scripts == [_INDEX_JS], [s[:80] for s in scripts]
    assert "innerHTML" not in _INDEX_JS and "insertAdjacentHTML" not in _INDEX_JS and "eval(" not in _INDEX_JS


ODD_IDS = ["..", ".", "", "/", "\\", "\x00", "../../etc/passwd", "a/../../b", "/abs/path", "C:\\x", "\ud800",
           "..\x00..", ".hidden", "CON", "x" * 5000, "\u202e..", "%2e%2e", "a" * 300 + "/..", " ", "\n"]


@given(eid=st.one_of(st.sampled_from(ODD_IDS), html_text(), st.text(max_size=300)))
# ".." was kept as it is: frames/../t01_user.png named a file of the run folder itself.
@example(eid="..")
# 5,000 safe characters made a 5,000-byte file name: writing the page raised OSError (name too long).
@example(eid="x" * 5000)
# "" gave "episodes/.html" (a hidden file) and frames//t01 (the frames folder itself).
@example(eid="")
@budget(ci=80)
def test_file_names_from_episode_ids_stay_in_their_folder(eid):
    name = safe_name(eid)
    assert re.fullmatch(r"[A-Za-z0-9_.-]+", name), name
    assert name not in (".", "..") and not name.startswith("."), name
    assert len(name.encode()) + len(".html") <= 255, len(name)
    run = Path("/run")
    for rel, folder in ((f"episodes/{name}.html", "episodes"), (frame_name(eid, 1, "user"), "frames"),
                        (map_name(eid), "maps"), (marks_name(frame_name(eid, 2, "map")), "frames")):
        parts = Path(rel).parts
        assert parts[0] == folder and ".." not in parts and "." not in parts, rel
        assert (run / rel).resolve().is_relative_to(run / folder), rel
    if eid and re.fullmatch(r"[A-Za-z0-9_-][A-Za-z0-9_.-]{0,150}", eid):
        assert name == eid  # an ordinary id keeps its name (runs already on disk stay readable)


def test_distinct_ordinary_ids_keep_distinct_names():
    ids = [f"sm_u{u:02d}_t{t}#r{r}" for u in range(1, 4) for t in range(3) for r in range(2)]
    assert len({safe_name(i) for i in ids}) == len(ids)
    assert safe_name("sm_u01_t1#r0") == "sm_u01_t1_r0"


# ------------------------------------------------------------------ Markdown reports
def _markdown_it():
    markdown_it = pytest.importorskip("markdown_it")
    # Raw HTML allowed: the most permissive renderer a reader could use (GitHub's sanitises more).
    return markdown_it.MarkdownIt("commonmark", {"html": True}).enable("table")


# What markdown-it trims off a table cell (JavaScript's String.prototype.trim).
_JS_TRIM = " \t\n\x0b\x0c\r\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a" \
           "\u2028\u2029\u202f\u205f\u3000\ufeff"


def one_line(text: str, strip: bool = True) -> str:
    """What a table cell or a report line shows of ``text``: its line breaks as spaces,
    NUL as U+FFFD (CommonMark), and (``strip``: alone in its cell) whitespace at the ends trimmed."""
    text = re.sub(r"[\r\n\x0b\x0c\x1c-\x1e\x85\u2028\u2029]+", " ", shown(text)).replace("\x00", "\ufffd")
    return text.strip(_JS_TRIM) if strip else text


@st.composite
def report_episodes(draw) -> list[dict[str, Any]]:
    """Shapes of episodes for the report: hostile env, agent, termination, error cause, reward names."""
    t = html_text(30)
    out = []
    for _ in range(draw(st.integers(1, 3))):
        out.append({"env_id": draw(t), "agent": draw(t), "termination": draw(st.one_of(t, st.just("error"))),
                    "error_cause": draw(st.one_of(st.none(), t)),
                    "reward": draw(st.dictionaries(t, st.floats(0, 1), max_size=2)),
                    "response": draw(t)})
    return out


def _report_records(shapes: list[dict[str, Any]], f: Texts) -> list[EpisodeRecord]:
    eps = []
    for i, s in enumerate(shapes):
        turn = TurnRecord(turn=1, assistant_raw="{}", assistant_valid=True, response=f(s["response"]),
                          action_type="Greet", reward={f(k): v for k, v in s["reward"].items()})
        eps.append(EpisodeRecord(
            episode_id=f"e{i}", env_id=f(s["env_id"]), store="supermarket", task_id=f"sm_u01_t{i}", profile_id="p1",
            subset=i % 4, seed=i, agent=f(s["agent"]), user="rule", target_id="sm_p001", reference_set=["sm_p001"],
            budget=10.0, turns=[turn], cart=[], termination=f(s["termination"]), error_cause=f(s["error_cause"]),
        ))
    return eps


@given(shapes=report_episodes(), title=html_text(30))
# Nothing was escaped but '|': a <script> in an agent name or a title, a link to javascript:,
# and a line break that ended a table row all reached the rendered report.
@example(shapes=[{"env_id": "<script>alert(1)</script>", "agent": "[x](javascript:alert(1))",
                  "termination": "a|b\nc\\", "error_cause": None, "reward": {"<img src=x onerror=alert(1)>": 0.5},
                  "response": "r"}], title="<iframe srcdoc='x'>")
# (a test fix: the benign twin must keep the cohorts' order, or their sections differ)
@example(shapes=[{"env_id": "<s>", "agent": "javascript:1", "termination": "t", "error_cause": None,
                  "reward": {"<s>": 0.0}, "response": "r"},
                 {"env_id": "<s>", "agent": "<s>", "termination": "t", "error_cause": None,
                  "reward": {"<s>": 0.0, "<i>": 0.0}, "response": "r"}], title="t")
@budget(ci=25)
def test_the_markdown_report_renders_without_injected_markup(shapes, title):
    from eval.aggregate import summarize_groups
    from eval.report import format_markdown

    md = _markdown_it()
    hostile_md = format_markdown(summarize_groups(_report_records(shapes, Texts(False))), title)
    # The benign twin keeps the cohorts' order (the report sorts them by "env / agent"):
    # each cohort's env and agent become words that sort as its hostile key does.
    # Environments keep their grouping too (the Fig. 10 tables are one per environment, split
    # from the key on its first " / " as eval.aggregate.by_environment does).
    keys = sorted({f"{s['env_id']} / {s['agent']}" for s in shapes})
    ranks = [keys.index(f"{s['env_id']} / {s['agent']}") for s in shapes]
    envs = list(dict.fromkeys(k.split(" / ", 1)[0] for k in keys))
    env_rank = [envs.index(keys[r].split(" / ", 1)[0]) for r in range(len(keys))]
    assume(env_rank == sorted(env_rank))  # a twin can keep both orders only if each env's cohorts are adjacent
    twins = [{**s, "env_id": f"env{env_rank[r]:02d}", "agent": f"agent{r:02d}"}
             for s, r in zip(shapes, ranks, strict=True)]
    benign = Texts(True, keep=tuple(x for t in twins for x in (t["env_id"], t["agent"])))
    benign_md = format_markdown(summarize_groups(_report_records(twins, benign)), benign(title) or "")
    table_rows = [line for line in hostile_md.splitlines() if line.startswith("|")]
    assert all(line.endswith("|") for line in table_rows), "a cell's text broke its table row"
    frags = [one_line(x) for s in shapes for x in (s["env_id"], s["agent"], s["termination"], *s["reward"])]
    frags = [x for x in frags if x and " / " not in x]  # "env / agent" is split on its first " / "
    assert_nothing_injected(md.render(hostile_md), md.render(benign_md), frags + [one_line(title)])


@given(agents=st.lists(html_text(30), min_size=1, max_size=3), judge=html_text(20))
# format_questionnaire wrote names as they were: markup, '|' and line breaks and all.
@example(agents=["<script>alert(1)</script>", "a|b\nc"], judge="<b>rule</b>")
@example(agents=["x"], judge="\ud800\u2028")  # (a test fix: the judge's name is inside its cell, not trimmed)
@example(agents=["\xa0", "\ufeffa\u3000"], judge="j")  # (a test fix: a cell is trimmed as JavaScript trims)
@budget(ci=25)
def test_the_questionnaire_table_renders_without_injected_markup(agents, judge):
    from eval.human.report import format_questionnaire

    md = _markdown_it()

    def rows(f: Texts) -> list[dict[str, Any]]:
        return [{"agent": f(a), "episodes": 2, "rated": 1, "judge_name": f(judge),
                 "human": {d: 3.0 for d in DIMENSIONS}, "judge": {d: None for d in DIMENSIONS}} for a in agents]

    hostile_md = format_questionnaire(rows(Texts(False)))
    lines = hostile_md.splitlines()
    assert len(lines) == 2 + 2 * len(agents), "a cell's text broke its table row"
    assert len({len(re.findall(r"(?<!\\)\|", line.replace("\\\\", ""))) for line in lines}) == 1, lines
    frags = [x for x in (one_line(a) for a in agents) if x] + [f"judge ({one_line(judge, strip=False)})"]
    assert_nothing_injected(md.render(hostile_md), md.render(format_questionnaire(rows(Texts(True)))), frags)


@given(names=st.lists(st.tuples(html_text(30), html_text(30)), min_size=1, max_size=2))
# "$x^$" in an agent name: matplotlib parsed it as mathtext and raised ValueError; a lone
# surrogate made the font renderer raise TypeError (the run's plots, hence finalize, failed).
@example(names=[("SituRec-Supermarket-v0", "hf:$x^$"), ("\ud800", "a$\\frac{$")])
@budget(ci=3)
def test_the_run_plots_draw_any_cohort_name(names):
    """index.html shows the run's plots: a cohort name from the records never stops them."""
    import warnings

    from eval.aggregate import summarize_groups
    from eval.plots import write_plots

    eps = []
    for i, (env, agent) in enumerate(names):
        turn = TurnRecord(turn=1, assistant_raw="{}", assistant_valid=True, response="r", action_type="Greet")
        eps.append(EpisodeRecord(episode_id=f"e{i}", env_id=env, store="supermarket", task_id=f"sm_u01_t{i}",
                                 profile_id="p1", subset=0, seed=i, agent=agent, user="rule", target_id="sm_p001",
                                 reference_set=[], budget=10.0, turns=[turn], termination="turn_limit"))
    with tempfile.TemporaryDirectory() as out, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # missing glyphs (controls, NUL) are only warnings
        paths = write_plots(out, summarize_groups(eps))
        assert all(p.stat().st_size > 0 for p in paths)


# ------------------------------------------------------------------ the human app's page
APP_JS = Path(__file__).resolve().parents[2] / "eval" / "human" / "static" / "app.js"
INDEX_HTML = APP_JS.with_name("index.html")


def test_the_study_page_puts_server_text_into_the_dom_only_as_text():
    """A static check of app.js: no HTML parsing sink at all, element names only literals,
    and the only URL sinks are the two images, which the server fills with PNG data URLs
    (tests/fuzz/test_human_app.py checks that)."""
    src = APP_JS.read_bytes().decode("utf-8")
    code = re.sub(r"//[^\n]*", "", src)  # comments say what they like
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "insertAdjacentElement", "document.write",
                 "eval(", "new Function", "Function(", "setAttribute", "srcdoc", "DOMParser",
                 "createContextualFragment", "execCommand", "javascript:", ".href", "location", "import(",
                 "setTimeout", "setInterval", "open("):
        assert sink not in code, sink
    assert re.findall(r"\.src\s*=\s*([^;]+);", code) == ["state.view", "state.map"]
    # Every element is made by el(tag, ...) or createElement with a literal tag name.
    for call in re.findall(r"\bel\(([^,)]*)", code):
        assert re.fullmatch(r'"[a-z]+"|tag', call.strip()), call
    for call in re.findall(r"createElement\(([^)]*)\)", code):
        assert call.strip() in ("tag",) or re.fullmatch(r'"[a-z]+"', call.strip()), call
    # Text goes in as textContent or text nodes; the el() helper is the one textContent writer for server text.
    assert "node.textContent = text" in code and "document.createTextNode(" in code
    page = Page(INDEX_HTML.read_bytes().decode("utf-8"))
    scripts = [dict(a) for (tag, _), a in zip(page.elements, _attrs_by_element(INDEX_HTML), strict=True)
               if tag == "script"]
    assert scripts == [{"src": "/static/app.js"}]  # one external script, no inline code
    assert not any(name.startswith("on") for _, name, _ in page.attributes)


def _attrs_by_element(path: Path) -> list[list[tuple[str, str | None]]]:
    out: list[list[tuple[str, str | None]]] = []

    class Collect(HTMLParser):
        def handle_starttag(self, tag, attrs):
            out.append(attrs)

        handle_startendtag = handle_starttag

    Collect().feed(path.read_bytes().decode("utf-8"))
    return out
