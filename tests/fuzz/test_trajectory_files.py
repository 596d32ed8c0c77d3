"""Property tests: trajectory files (EpisodeRecord JSON lines) given to ``read_episodes``,
``eval.metrics`` (library and ``python -m eval.metrics``), ``recrm.score`` (library and CLI)
and the trajectory rewriters of ``eval.io``.

Every property starts from a real file (heuristic episodes in both stores, with RecRM
rewards, written by the rollout runner once per module) and mutates it: a line cut at a
byte, a field at any depth replaced by a wrong type or an out-of-range number (NaN,
Infinity, 1e400, -0.0, 1e308, integers past 2**64), deep nesting, duplicate keys, lone
surrogate escapes, blank or garbage lines in the middle and at the end, a BOM, CRLF line
ends, bytes that are not UTF-8. Invariants:

* the library either returns every record (a cut-off last line without its newline, the
  mark of a run killed mid-write, is the one line dropped) or raises a plain
  ``ValueError`` whose one-line message starts with ``FILE: line N`` naming the broken line;
* what it returns can be saved again, and every metric and RecRM score computed from it
  is a finite number in its documented range;
* the CLIs exit 0 with finite JSON, or exit 2 with one error line (no usage block) naming
  FILE and line, no traceback, nothing on stdout, and no file written;
* ``eval.io``'s rewriters keep every record whole whatever text it holds.

The JSON-editing helpers here (``json_paths``, ``apply_edit``, ``raw_values``, ...) are
shared with the asset and RecRM data properties of this folder.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from tests.fuzz.strategies import (
    budget,
    deep_json_text,
    hostile_text,
    json_values,
    with_wrong_field,
)

# ---------------------------------------------------------------- shared JSON editing

# Raw JSON texts of values that break readers: out-of-range numbers, wrong types, lone
# surrogate escapes, strings that look like numbers.
SPECIAL_NUMBERS = ["NaN", "Infinity", "-Infinity", "1e400", "-1e400", "-0.0", "0", "-1", "1e308",
                   "-1e308", "1e20", "1e6", "-1e6", "5e-324", "0.1", str(2**64), str(-(2**70)), "1" * 40, "1" * 400 + ".5",
                   "1" * 5000]  # past the interpreter's 4300-digit limit: json raises a plain ValueError
OTHER_RAW = ['""', '" "', "null", "true", "false", "[]", "{}", '"\\ud800"', '"x\\udc00y"',
             '"\\udfff\\ud800"', '["a"]', '{"a": 1}', '"1"', '"3.5"', '"NaN"', '"1e400"', "[1, 2]",
             '[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["x"]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]']
_PLACE = "\u0000fuzz-placeholder\u0000"
_PLACE_KEY = "\u0000fuzz-key\u0000"


def raw_values() -> st.SearchStrategy[str]:
    """JSON text of one value, any type, as a file could hold it (NaN/Infinity tokens,
    escapes of lone surrogates, deep or cut-off nesting included)."""
    return st.one_of(
        st.sampled_from(SPECIAL_NUMBERS + OTHER_RAW),
        json_values(6).map(json.dumps),
        st.tuples(hostile_text(), st.booleans()).map(lambda p: json.dumps(p[0], ensure_ascii=p[1])),
        deep_json_text(),
    )


def json_paths(doc: Any) -> list[tuple]:
    """Every path (tuple of keys / indices) to a node below the root, in document order."""
    out: list[tuple] = []
    stack: list[tuple[tuple, Any]] = [((), doc)]
    while stack:
        path, node = stack.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        children = [(path + (k,), v) for k, v in items]
        out.extend(p for p, _ in children)
        stack.extend(reversed(children))
    return out


def path_groups(paths: list[tuple]) -> list[list[tuple]]:
    """``paths`` grouped by shape (indices as ``*``: ``turns.*.reward.recrm/total``), so that
    an edit picks a kind of field uniformly, not one of the thousands of coordinates."""
    groups: dict[tuple, list[tuple]] = {}
    for p in paths:
        groups.setdefault(tuple("*" if isinstance(k, int) else k for k in p), []).append(p)
    return list(groups.values())


def get_at(doc: Any, path: tuple) -> Any:
    for part in path:
        doc = doc[part]
    return doc


def _rebuilt(node: Any, path: tuple, fn) -> Any:
    """``node`` with the container at ``path`` replaced by ``fn(copy of it)``; only the
    containers along the path are copied."""
    if not path:
        return fn(node.copy())
    new = node.copy()
    new[path[0]] = _rebuilt(node[path[0]], path[1:], fn)
    return new


def apply_edit(doc: Any, edit: tuple, *, dumps=json.dumps) -> str:
    """JSON text of ``doc`` with one edit:

    ``("set", path, raw)``      the value at ``path`` becomes the JSON text ``raw``
    ``("delete", path)``        the field / element at ``path`` is removed
    ``("append", path, raw)``   ``raw`` is appended to the list at ``path``
    ``("key", path, key, raw, first)`` an object at ``path`` gets ``"key": raw`` (a duplicate
                                when the key exists; before or after its other keys)
    """
    op = edit[0]
    if op == "set":
        _, path, raw = edit
        parent, last = path[:-1], path[-1]

        def put(c):
            c[last] = _PLACE
            return c
        return dumps(_rebuilt(doc, parent, put)).replace(json.dumps(_PLACE), raw, 1)
    if op == "delete":
        _, path = edit
        parent, last = path[:-1], path[-1]

        def drop(c):
            del c[last]
            return c
        return dumps(_rebuilt(doc, parent, drop))
    if op == "append":
        _, path, raw = edit

        def add(c):
            c.append(_PLACE)
            return c
        return dumps(_rebuilt(doc, path, add)).replace(json.dumps(_PLACE), raw, 1)
    if op == "key":
        _, path, key, raw, first = edit

        def with_key(c):
            return {_PLACE_KEY: _PLACE, **c} if first else {**c, _PLACE_KEY: _PLACE}
        text = dumps(_rebuilt(doc, path, with_key))
        marker = re.compile(re.escape(json.dumps(_PLACE_KEY)) + r"\s*:\s*" + re.escape(json.dumps(_PLACE)))
        return marker.sub(lambda _: json.dumps(key) + ": " + raw, text, count=1)
    raise AssertionError(op)


@st.composite
def json_edits(draw, doc: Any, groups: list[list[tuple]]) -> tuple:
    """One edit of ``doc`` (whose ``path_groups`` are ``groups``): a value at any depth set
    to any JSON text, a field deleted, a junk or duplicate key, an element appended, or the
    innermost object around it given a wrong field by ``with_wrong_field``."""
    path = draw(st.sampled_from(draw(st.sampled_from(groups))))
    how = draw(st.sampled_from(["set", "set", "set", "delete", "key", "append", "record"]))
    if how == "set":
        return ("set", path, draw(raw_values()))
    if how == "delete":
        return ("delete", path)
    containers = [path[:i] for i in range(len(path) - 1, -1, -1)]  # innermost first
    if how == "append":
        lists = [p for p in containers if isinstance(get_at(doc, p), list)]
        if lists:
            return ("append", lists[0], draw(raw_values()))
        return ("set", path, draw(raw_values()))
    objects = [p for p in containers if isinstance(get_at(doc, p), dict)]
    if how == "record":  # the innermost object (not the whole document) given a wrong field
        inner = [p for p in objects if p]
        if inner:
            return ("set", inner[0], json.dumps(draw(with_wrong_field(get_at(doc, inner[0])))))
    if not objects:
        return ("set", path, draw(raw_values()))
    target = objects[0]
    keys = list(get_at(doc, target))
    key = draw(st.one_of(st.sampled_from(keys), hostile_text(12))) if keys else draw(hostile_text(12))
    return ("key", target, key, draw(raw_values()), draw(st.booleans()))


def walk_numbers(value: Any, where: str = "") -> Iterator[tuple[str, float]]:
    """(path, number) of every int/float (bools excluded) in nested dicts/lists."""
    stack = [(where, value)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, bool) or node is None:
            continue
        if isinstance(node, (int, float)):
            yield path, node
        elif isinstance(node, dict):
            stack.extend((f"{path}.{k}", v) for k, v in node.items())
        elif isinstance(node, (list, tuple)):
            stack.extend((f"{path}[{i}]", v) for i, v in enumerate(node))


def assert_finite(value: Any, what: str) -> None:
    for path, x in walk_numbers(value):
        assert math.isfinite(x), f"{what}{path} = {x!r}"


# ---------------------------------------------------------------- line-file mutations

BAD_BYTES = [b"\xff", b"\xfe\xff", b"\xc3", b"\xc3(", b"\xed\xa0\x80", b"\xe2\x82", b"\x80\x80",
             b"\xf4\x90\x80\x80", b"\x00", b"\xef\xbb\xbf"]
INSERTED_LINES = ["", " ", "\t", "\r", "\x0c", "garbage", "{}", "[]", "null", "1", "{", "}", '"x"',
                  "\x00\x00", "\ufeff", '{"episode_id": 1}', "{\"a\": [1, 2", "\u2028", "NaN"]


@st.composite
def line_mutations(draw, docs: list[dict], paths: list[list[list[tuple]]]) -> tuple:
    """A mutation of a JSON-lines file whose records are ``docs``:

    ``("edit", i, edit)``            record i re-written with one ``apply_edit`` edit
    ``("cut", i, frac, newline)``    line i cut at a byte (its newline kept or not)
    ``("bytes", i, frac, data)``     raw bytes spliced into line i
    ``("insert", i, text)``          a line inserted before line i (i == len: at the end)
    ``("dup", i)``                   line i written twice
    ``("bom",)`` ``("crlf",)`` ``("no_final_newline",)`` ``("empty",)`` ``("whole", data)``
    """
    n = len(docs)
    how = draw(st.sampled_from(["edit"] * 6 + ["cut", "cut", "bytes", "insert", "insert", "dup", "bom",
                                             "crlf", "no_final_newline", "empty", "whole"]))
    i = draw(st.integers(0, n - 1))
    if how == "edit":
        return ("edit", i, draw(json_edits(docs[i], paths[i])))
    if how == "cut":
        return ("cut", i, draw(st.floats(0.0, 1.0)), draw(st.booleans()))
    if how == "bytes":
        data = draw(st.one_of(st.sampled_from(BAD_BYTES), st.binary(min_size=1, max_size=12)))
        return ("bytes", i, draw(st.floats(0.0, 1.0)), data)
    if how == "insert":
        text = draw(st.one_of(st.sampled_from(INSERTED_LINES), hostile_text(20)))
        return ("insert", draw(st.integers(0, n)), text)
    if how == "dup":
        return ("dup", i)
    if how == "whole":
        return ("whole", draw(st.binary(max_size=200)))
    return (how,)


def dump_line(doc: Any) -> str:
    """One record as the project writes it (pydantic's compact JSON, UTF-8 text as is)."""
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":"))


def mutated_file(docs: list[dict], mutation: tuple) -> tuple[bytes, set[int]]:
    """The file's bytes and the 1-based line numbers an error may name (empty: any)."""
    lines = [dump_line(d).encode("utf-8", "surrogatepass") for d in docs]
    op = mutation[0]
    where: set[int] = set()
    end = b"\n"
    if op == "edit":
        _, i, edit = mutation
        lines[i] = apply_edit(docs[i], edit, dumps=dump_line).encode("utf-8", "surrogatepass")
        where = {i + 1}
    elif op == "cut":
        _, i, frac, newline = mutation
        lines[i] = lines[i][: int(frac * len(lines[i]))]
        where = {i + 1}
        if not newline and i == len(lines) - 1:
            end = b""
    elif op == "bytes":
        _, i, frac, data = mutation
        at = int(frac * len(lines[i]))
        lines[i] = lines[i][:at] + data + lines[i][at:]
        where = set(range(i + 1, i + 2 + data.count(b"\n")))
    elif op == "insert":
        _, i, text = mutation
        lines.insert(i, text.encode("utf-8", "surrogatepass"))
        where = set(range(i + 1, i + 2 + text.count("\n")))
    elif op == "dup":
        _, i = mutation
        lines.insert(i, lines[i])
        where = {i + 1, i + 2}
    elif op == "bom":
        return b"\xef\xbb\xbf" + b"\n".join(lines) + b"\n", {1}
    elif op == "crlf":
        return b"\r\n".join(lines) + b"\r\n", set()
    elif op == "no_final_newline":
        end = b""
    elif op == "empty":
        return b"", set()
    elif op == "whole":
        return mutation[1], set()
    return b"\n".join(lines) + end, where


LINE_ERROR = r"^{path}: line (\d+)\b"


def assert_names_line(message: str, path: Path, where: set[int]) -> int:
    """The message is one short line naming ``path`` and a line (one of ``where``); returns it."""
    assert "\n" not in message and "\r" not in message, message
    assert len(message) < 2000, message[:300]
    m = re.match(LINE_ERROR.format(path=re.escape(str(path))), message)
    assert m, f"does not name FILE: line N: {message[:300]!r}"
    line = int(m.group(1))
    assert not where or line in where, f"names line {line}, the mutation was on {sorted(where)}: {message[:300]}"
    return line


# ---------------------------------------------------------------- the real trajectory file


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """Base records (two Supermarket episodes, one Home Furnishings, with RecRM rewards) and
    the packaged tasks and scene indexes of both stores."""
    return _build_world(tmp_path_factory.mktemp("fuzz_runs"))


def _build_world(root: Path) -> dict:
    from eval.aggregate import load_indexes, load_tasks
    from eval.rollout import RolloutConfig, run

    docs: list[dict] = []
    for env, tasks in (("SituRec-Supermarket-v0", "0-1"), ("SituRec-HomeFurnishings-v0", "0-0")):
        out = root / env
        run(RolloutConfig(env=env, agent="heuristic", tasks=tasks, seed=0, out=str(out), max_turns=6,
                          reward="recrm", no_report=True))
        docs += [json.loads(line) for line in (out / "trajectories.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(docs) == 3 and all(d["turns"] and d["turns"][0]["reward"] for d in docs)
    stores = {"supermarket", "home_furnishings"}
    return {"docs": docs, "paths": [path_groups(json_paths(d)) for d in docs],
            "indexes": load_indexes(stores), "tasks": load_tasks(stores)}


# The base records are only known once the fixture has run, so properties draw their
# mutation with st.data(); regression examples give it as an explicit ``mutation`` tuple.
def _draw_mutation(data, world) -> tuple:
    return data.draw(line_mutations(world["docs"], world["paths"]), label="mutation")


PERCENT_TABLE = ("SR", "AFR", "LNSR", "R@5", "NDCG@10", "RPR", "RPR|Cart", "R-MRR@10", "Catalog %")


def assert_metrics_in_range(groups: dict) -> None:
    """Every figure of ``summarize_groups`` finite; percentages in [0, 100]; counts >= 0."""
    assert_finite(groups, "metrics")
    for key, g in groups.items():
        for name in PERCENT_TABLE:
            stat = g["metrics"][name]
            for v in (stat["mean"], stat["sd"], stat["cohort"], *stat["subsets"].values()):
                assert v is None or 0.0 <= v <= 100.0, (key, name, stat)
        turn = g["metrics"]["Turn"]
        assert all(v is None or v >= 0 for v in (turn["mean"], turn["cohort"], *turn["subsets"].values()))
        assert all(0.0 <= v <= 100.0 for v in g["sr_by_turn"])
        for h, v in g["cgv"].items():
            lo = -100.0 if h.startswith("delta") else 0.0
            assert v is None or (h == "events" and v >= 0) or lo <= v <= 100.0, (h, v)
        assert all(0.0 <= v <= 100.0 for v in g["action_shares"]["shares"].values())
        assert all(0.0 <= v <= 100.0 for v in g["pass_hat_k"].values())
        for m in g["per_episode"]:
            for f in ("r5", "ndcg10", "afr", "lnsr", "rpr", "rpr_cart", "rmrr10"):
                assert m[f] is None or 0.0 <= m[f] <= 1.0, (f, m[f])
            assert m["success"] in (0, 1)
        for d in (g.get("dialogue") or {}).get("ratings", {}).values():
            assert all(v is None or 1.0 <= v <= 5.0 for v in (d["mean"], d["cohort"], *d["subsets"].values()))


def assert_scores_in_range(result: dict) -> None:
    """Every figure of ``recrm.score`` finite; rates and component means in [0, 1];
    R_total within [0, alpha + 2 beta]."""
    assert_finite(result, "recrm.score")
    p = result["params"]
    top = p["alpha"] + 2 * p["beta"] + p["outcome_bonus"]
    for s in [result["overall"], *result["agents"].values()]:
        assert s["episodes"] >= 0 and s["turns"] >= 0
        assert 0.0 <= s["mean_total"] <= top + 1e-9
        assert 0.0 <= s["indicator_rate"] <= 1.0
        assert all(0.0 <= v <= 1.0 for v in s["gate_pass"].values())
        for c in s["components"].values():
            assert c["mean"] is None or 0.0 <= c["mean"] <= 1.0
            assert 0.0 <= c["applicable"] <= 1.0


def score_everything(episodes, world) -> None:
    """Metrics (with the rule judge's ratings, as the CLI computes them) and RecRM scores."""
    from eval.aggregate import summarize_groups
    from eval.io import task_order
    from eval.judge import make_judge
    from recrm.score import score_episodes

    eps = task_order(episodes)
    judge = make_judge("rule")
    ratings = [judge.rate(ep, world["tasks"].get(ep.task_id), world["indexes"].get(ep.store)) for ep in eps]
    assert_metrics_in_range(summarize_groups(eps, indexes=world["indexes"], ratings=ratings))
    assert_scores_in_range(score_episodes(eps, tasks=world["tasks"], indexes=world["indexes"]))


def _expected_counts(data: bytes) -> tuple[int, bool]:
    """(non-blank lines, whether the last one is unterminated)."""
    text = data.decode("utf-8", "replace")
    if text.startswith("\ufeff"):
        text = text[1:]
    pieces = text.split("\n")
    nonblank = [p for p in pieces if p.strip()]
    return len(nonblank), bool(pieces) and bool(pieces[-1].strip())


# ---------------------------------------------------------------- properties


@budget(ci=70)
@given(data=st.data(), mutation=st.none())
# Regression examples, by what they broke before the fix:
# a NaN / 1e400 reward or budget was read as nan / inf and summed into every mean
@example(data=None, mutation=("edit", 0, ("set", ("turns", 0, "reward", "recrm/total"), "NaN")))
@example(data=None, mutation=("edit", 1, ("set", ("budget",), "1e400")))
# two 1e308 rewards summed to inf in eval.aggregate.reward_summary
@example(data=None, mutation=("edit", 2, ("set", ("turns", 0, "reward", "recrm/total"), "1e308")))
# a file cut inside a multi-byte character (a run killed mid-write) was "not a trajectory
# file" instead of losing only its last line
@example(data=None, mutation=("cut", 2, 0.97, False))
# a non-UTF-8 byte in line 2 named no line
@example(data=None, mutation=("bytes", 1, 0.5, b"\xff"))
# a lone surrogate escape was read, then could not be saved (or printed) again
@example(data=None, mutation=("edit", 0, ("set", ("agent",), '"\\ud800"')))
# a complete but invalid last line (garbage at the end, with its newline) was dropped in
# silence as if truncated, so a one-episode file scored as empty
@example(data=None, mutation=("insert", 3, "garbage"))
@example(data=None, mutation=("edit", 2, ("set", ("subset",), '"x"')))
# an unknown store passed the reader and made the metrics raise "unknown store"
@example(data=None, mutation=("edit", 0, ("set", ("store",), '"mall"')))
# a BOM made line 1 "not JSON"
@example(data=None, mutation=("bom",))
def test_read_then_score_or_name_the_line(world, data, mutation):
    """read_episodes returns every record (an unterminated cut-off last line dropped) or a
    plain ValueError naming FILE: line N of the mutation; metrics and RecRM scores of what
    it returns are finite and in range; every record returned can be saved again."""
    from situ_gym.records import EpisodeRecord, read_episodes

    mutation = mutation or _draw_mutation(data, world)
    raw, where = mutated_file(world["docs"], mutation)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "trajectories.jsonl"
        path.write_bytes(raw)
        try:
            episodes = read_episodes(path)
        except ValueError as exc:
            assert type(exc) is ValueError, f"{type(exc).__name__} leaked: {exc}"
            assert_names_line(str(exc), path, where)
            return
    nonblank, unterminated = _expected_counts(raw)
    assert len(episodes) == nonblank or (unterminated and len(episodes) == nonblank - 1), (len(episodes), nonblank)
    for ep in episodes:
        assert isinstance(ep, EpisodeRecord)
        assert EpisodeRecord.model_validate_json(ep.model_dump_json()) == ep  # savable, lossless
        assert_finite(ep.model_dump(), "record")
    score_everything(episodes, world)


def _run_cli(main, argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:
            code = exc.code
    return code, out.getvalue(), err.getvalue()


@budget(ci=14)
@given(data=st.data(), cli=st.sampled_from(["eval.metrics", "recrm.score"]), mutation=st.none())
# recrm.score printed a table of zeros, exit 0, for a file whose only line was broken
@example(data=None, cli="recrm.score", mutation=("empty",))
@example(data=None, cli="recrm.score", mutation=("edit", 2, ("set", ("seed",), '"x"')))
@example(data=None, cli="eval.metrics", mutation=("edit", 0, ("set", ("store",), '"mall"')))
def test_cli_exit_status_and_one_line(world, data, cli, mutation):
    """``python -m eval.metrics FILE --json`` / ``python -m recrm.score FILE --json``: exit 0
    with finite JSON in range, or exit 2 with one error line naming the file (and
    the line where one is at fault), no traceback, nothing on stdout, nothing written."""
    from eval.metrics.__main__ import main as metrics_main
    from recrm.score import main as score_main

    mutation = mutation or _draw_mutation(data, world)
    raw, where = mutated_file(world["docs"], mutation)
    main = metrics_main if cli == "eval.metrics" else score_main
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "trajectories.jsonl"
        path.write_bytes(raw)
        code, out, err = _run_cli(main, [str(path), "--json"])
        assert sorted(p.name for p in Path(tmp).iterdir()) == ["trajectories.jsonl"]
        assert path.read_bytes() == raw
    assert "Traceback" not in err
    if code == 0:
        result = json.loads(out, parse_constant=lambda c: pytest.fail(f"{c} in the JSON output"))
        if cli == "eval.metrics":
            assert_metrics_in_range(result)
        else:
            assert_scores_in_range(result)
        return
    assert code == 2 and out == "", (code, out[:200])
    lines = err.strip().splitlines()
    assert len(lines) == 1, lines[:3]  # the one line alone: the usage block is for --help
    prefix = f"python -m {cli}: error: "
    assert lines[-1].startswith(prefix), lines[-1]
    message = lines[-1][len(prefix):]
    if message.startswith(f"no episodes in {str(path)!r}"):
        assert _expected_counts(raw)[0] <= 1
    else:
        assert_names_line(message, path, where)


_TEXT_FIELDS = ("user_utterance", "response", "assistant_raw")
_SEPARATORS = ["\u2028", "\u2029", "\x85", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\r", "\r\n", "\n"]
_SURROGATES = re.compile("[\ud800-\udfff]")


@budget(ci=12)
@given(texts=st.lists(st.one_of(hostile_text(30).map(lambda t: _SURROGATES.sub("", t)), st.sampled_from(_SEPARATORS)),
                      min_size=1, max_size=3),
       errors=st.lists(st.booleans(), min_size=3, max_size=3),
       poisoned=st.one_of(st.none(), st.integers(0, 2)),
       retry_errors=st.booleans())
# move_error_episodes split lines at U+2028 / NEL (str.splitlines) and wrote the halves back
# as two broken lines
@example(texts=["a\u2028b"], errors=[True, False, False], poisoned=None, retry_errors=False)
@example(texts=["\x85"], errors=[False, True, False], poisoned=1, retry_errors=True)
def test_rewriters_keep_every_record_whole(world, texts, errors, poisoned, retry_errors):
    """Records holding any text (line and paragraph separators, NEL, CR, form feeds) go
    through append_episode, move_error_episodes and sort_episode_file and come back equal,
    each in exactly one of the two files; a record holding a lone surrogate (``poisoned``)
    cannot be saved and is refused before anything is written."""
    from eval.io import (
        append_episode,
        move_error_episodes,
        read_episodes,
        retried_on_resume,
        sort_episode_file,
    )
    from situ_gym.records import EpisodeRecord

    records = []
    for k, doc in enumerate(world["docs"]):
        rec = EpisodeRecord.model_validate(doc)
        turns = [t.model_copy(update={f: texts[(j + k) % len(texts)] for f in _TEXT_FIELDS})
                 for j, t in enumerate(rec.turns)]
        update = {"turns": turns, "agent": texts[k % len(texts)] + ("\ud800" if k == poisoned else "")}
        if errors[k]:
            update |= {"termination": "error", "error": "Traceback ...\n" + texts[0], "error_cause": "crash"}
        records.append(rec.model_copy(update=update))
    with tempfile.TemporaryDirectory() as tmp:
        path, errs = Path(tmp) / "trajectories.jsonl", Path(tmp) / "errors.jsonl"
        saved = []
        for k, rec in enumerate(records):
            before = path.read_bytes() if path.exists() else b""
            try:
                append_episode(path, rec)
            except ValueError:
                assert k == poisoned, "only the record with a lone surrogate cannot be saved"
                assert (path.read_bytes() if path.exists() else b"") == before  # nothing half-written
                continue
            assert k != poisoned
            saved.append(rec)
        assert read_episodes(path) == saved
        moved = move_error_episodes(path, errs, retry_errors=retry_errors)
        gone = [r for r in saved if retried_on_resume(r.termination, r.error_cause, retry_errors)]
        assert moved == len(gone)
        kept = read_episodes(path)
        assert kept == [r for r in saved if r not in gone]
        assert (read_episodes(errs) if errs.exists() else []) == gone
        sort_episode_file(path)
        assert sorted(read_episodes(path), key=lambda r: r.episode_id) == sorted(kept, key=lambda r: r.episode_id)


@budget(ci=10)
@given(cut=st.floats(0.0, 0.999), inside_a_character=st.booleans())
# cut inside a multi-byte character: read_episodes raised "not a trajectory file (not UTF-8)"
# for the whole file instead of dropping the unfinished line
@example(cut=0.5, inside_a_character=True)
def test_resume_cuts_exactly_the_unfinished_tail(world, cut, inside_a_character):
    """A run killed mid-write leaves a last line without its newline, cut at any byte (inside
    a multi-byte character too): read_episodes drops it with a warning, drop_truncated_tail
    removes exactly those bytes, and the next append makes a whole file."""
    from eval.io import append_episode, drop_truncated_tail, read_episodes
    from situ_gym.records import EpisodeRecord

    recs = [EpisodeRecord.model_validate(d) for d in world["docs"]]
    # non-ASCII text throughout the last record, so that cuts fall inside characters too
    recs[2] = recs[2].model_copy(update={"turns": [
        t.model_copy(update={"user_utterance": "Ça coûte 5 € — d'accord 😀 " + t.user_utterance}) for t in recs[2].turns]})
    whole = b"".join(r.model_dump_json().encode() + b"\n" for r in recs[:2])
    last = recs[2].model_dump_json().encode()
    at = int(cut * len(last))
    if inside_a_character:  # move the cut onto the next (else the last) continuation byte
        inside = [i for i, b in enumerate(last) if 0x80 <= b < 0xC0]
        at = next((i for i in inside if i >= at), inside[-1])
    tail = last[:at]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "trajectories.jsonl"
        path.write_bytes(whole + tail)
        assert read_episodes(path) == recs[:2]
        assert drop_truncated_tail(path) == len(tail)
        assert path.read_bytes() == whole
        append_episode(path, recs[2])
        assert read_episodes(path) == recs


# ---------------------------------------------------------------- one strict schema


def _required_paths(doc: dict) -> list[tuple[tuple, str]]:
    """(path, field) of every field a line must hold, at every depth of a real record."""
    from situ_gym.records import EpisodeRecord, ExecutionResult, ToolCall, TurnRecord

    found = [((name,), name) for name in EpisodeRecord.required_in_file()]
    for i, t in enumerate(doc["turns"]):
        found += [(("turns", i, name), name) for name in TurnRecord.required_in_file()]
        for key, model in (("expected_user_action", ToolCall), ("user_action", ToolCall), ("result", ExecutionResult)):
            if isinstance(t.get(key), dict):
                found += [(("turns", i, key, name), name) for name in model.required_in_file()]
    return found


def test_a_record_missing_a_required_field_is_refused_by_name(world):
    """A line without ``turns`` (or any field the writer always writes, at any depth) is
    refused with FILE: line N and the field, by the reader and by both CLIs, where it used
    to read as an episode of 0 turns: a success of 0 turns when its cart was kept."""
    from eval.metrics.__main__ import main as metrics_main
    from recrm.score import main as score_main
    from situ_gym.records import read_episodes

    doc = world["docs"][2]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "trajectories.jsonl"
        for where, _field in _required_paths(doc):
            lines = [dump_line(d) for d in world["docs"]]
            lines[2] = apply_edit(doc, ("delete", where))
            path.write_text("\n".join(lines) + "\n", encoding="utf-8")
            with pytest.raises(ValueError) as exc:
                read_episodes(path)
            message = str(exc.value)
            assert_names_line(message, path, {3})
            assert f"field {'.'.join(map(str, where))}: Field required" in message, message
        doc_no_turns = {k: v for k, v in doc.items() if k != "turns"}
        path.write_text(dump_line(doc_no_turns) + "\n", encoding="utf-8")
        for main, cli in ((metrics_main, "eval.metrics"), (score_main, "recrm.score")):
            code, out, err = _run_cli(main, [str(path)])
            assert (code, out) == (2, "")
            assert err.strip() == f"python -m {cli}: error: {path}: line 1 is not a valid EpisodeRecord: field turns: " \
                                  "Field required in a trajectory file", err


def test_fields_added_later_keep_their_defaults(world):
    """A file written before a field existed (``protocol``, ``error_cause``, a turn's
    ``put_forward``, ``recommendation_attempts``, ``user_marker_disclosures``, ``tool_calls``)
    still reads, with the field's default."""
    from situ_gym.records import EpisodeRecord, TurnRecord, read_episodes

    assert EpisodeRecord.added_later == {"error_cause", "protocol"}
    assert TurnRecord.added_later == {"put_forward", "recommendation_attempts", "user_marker_disclosures",
                                      "tool_calls"}
    old = {k: v for k, v in world["docs"][0].items() if k not in EpisodeRecord.added_later}
    old["turns"] = [{k: v for k, v in t.items() if k not in TurnRecord.added_later} for t in old["turns"]]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "trajectories.jsonl"
        path.write_text(dump_line(old) + "\n", encoding="utf-8")
        (ep,) = read_episodes(path)
    assert ep.protocol == "default" and ep.error_cause is None
    assert all(t.put_forward == [] and t.recommendation_attempts == 0 and t.user_marker_disclosures == []
               and t.tool_calls == [] for t in ep.turns)
    assert len(ep.turns) == len(world["docs"][0]["turns"])
