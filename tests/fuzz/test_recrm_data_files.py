"""Property tests: RecRM-format data files (``<kind>.jsonl``, one record per line) given to
``recrm.data.read_records`` / ``load_split`` (what reward-model training reads), the
``python -m recrm.data validate|stats|synthesize`` CLI, and ``write_records``.

The files are real: synthesised once per module from heuristic episodes in both stores.
Each example mutates one file the way the trajectory properties do (a line cut at a byte, a
field at any depth set to any type, NaN / Infinity / 1e400 / huge integers, deep nesting,
duplicate keys and ids, lone surrogate escapes, blank and garbage lines, a BOM, CRLF, bytes
that are not UTF-8). Invariants:

* ``read_records`` returns one validated record per non-blank line, or raises ``DataError``
  (never another exception type) whose one-line message starts ``FILE:LINE:`` with the line
  at fault; what it returns builds every training input and can be written back unchanged;
* ``write_records`` writes what ``read_records`` reads back equal, or raises ``DataError``
  naming the record and field and leaves the previous file as it was;
* the CLI exits 0, or 2 with one ``error: FILE...`` line and no traceback; ``synthesize``
  from a broken trajectory file leaves the previous data directory untouched.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import tempfile
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from tests.fuzz.strategies import budget, hostile_text
from tests.fuzz.test_trajectory_files import (
    json_paths,
    line_mutations,
    mutated_file,
    path_groups,
)

KINDS = ("instruction", "consistency", "relevance", "ranking", "behavior")


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """Trajectories (2 Supermarket + 1 Home Furnishings heuristic episodes) and the five
    RecRM files synthesised from them: per kind the records' JSON and path groups."""
    return _build_data(tmp_path_factory.mktemp("fuzz_recrm"))


def _build_data(root: Path) -> dict:
    from eval.rollout import RolloutConfig, run
    from recrm.data.__main__ import main

    traj: list[dict] = []
    for env, tasks in (("SituRec-Supermarket-v0", "0-1"), ("SituRec-HomeFurnishings-v0", "0-0")):
        out = root / env
        run(RolloutConfig(env=env, agent="heuristic", tasks=tasks, seed=0, out=str(out), max_turns=6, no_report=True))
        traj += [json.loads(line) for line in (out / "trajectories.jsonl").read_text(encoding="utf-8").splitlines()]
    runs = [str(root / "SituRec-Supermarket-v0"), str(root / "SituRec-HomeFurnishings-v0")]
    datadir = root / "data"
    assert main(["synthesize", "--runs", *runs, "--out", str(datadir), "--no-hf"]) == 0
    docs = {k: [json.loads(line) for line in (datadir / f"{k}.jsonl").read_text(encoding="utf-8").split("\n") if line]
            for k in KINDS}
    assert all(len(docs[k]) >= 2 for k in KINDS), {k: len(v) for k, v in docs.items()}
    from recrm.data.synth import World

    return {"dir": datadir, "docs": docs, "worlds": {s: World.load(s) for s in ("supermarket", "home_furnishings")}, "groups": {k: [path_groups(json_paths(d)) for d in v] for k, v in docs.items()},
            "files": {k: (datadir / f"{k}.jsonl").read_bytes() for k in KINDS},
            "traj": traj, "traj_groups": [path_groups(json_paths(d)) for d in traj]}


def assert_names_line(message: str, path: Path, where: set[int]) -> None:
    assert "\n" not in message and "\r" not in message, message[:300]
    assert len(message) < 2000, message[:300]
    m = re.match(re.escape(str(path)) + r":(\d+): ", message)
    assert m, f"does not start FILE:LINE: {message[:300]!r}"
    assert not where or int(m.group(1)) in where, (message[:300], sorted(where))


def use_records(kind: str, records, worlds) -> None:
    """Build every input training and scoring make from the records (what a record that
    read_records accepted must allow)."""
    from recrm.data.io import DataError
    from recrm.data.prompts import (
        JUDGE_KINDS,
        judge_fields,
        judge_messages,
        judge_target,
        list_text,
        pair_text,
    )
    from recrm.evaluate import rule_predictions
    from recrm.train.judge import judge_rows
    from situ_gym.records import TurnRecord

    if kind in JUDGE_KINDS:
        for row in judge_rows(kind, records):
            assert row["prompt"][1]["content"] and row["completion"][0]["content"].startswith("Reason: ")
        for r in records:
            judge_messages(kind, judge_fields(kind, r))
            judge_target(r.reason, r.score if kind == "relevance" else r.label)
    if kind in ("instruction", "consistency"):
        for r in records:
            TurnRecord.model_validate(r.turn)
            [TurnRecord.model_validate(h) for h in r.history]
    if kind == "ranking":
        for r in records:
            pair_text(r.profile, r.query)
            assert len(r.candidates) == len(r.labels) == len(r.candidate_ids) and sum(r.labels) == 1
    if kind == "behavior":
        for r in records:
            list_text(r.profile, r.query, r.items)
            assert r.label == int(r.purchased_id in r.item_ids)
    # what `python -m recrm.evaluate --scorer rule` runs; it may refuse a record whose task is
    # unknown (DataError). Relevance records of an unknown product are left out: they raise
    # KeyError there (recrm/evaluate.py, see test_rule_relevance_of_an_unknown_product)
    known = [r for r in records if kind != "relevance" or r.product_id in worlds[r.source.store].index.products]
    try:
        preds = rule_predictions(kind, known, worlds)
    except DataError as exc:
        assert re.match(r"record .*: unknown task ", str(exc)), str(exc)[:300]
    else:
        assert len(preds) == len(known)


def _draw(data_, data, kind: str) -> tuple:
    return data_.draw(line_mutations(data["docs"][kind], data["groups"][kind]), label="mutation")


@budget(ci=60)
@given(data_=st.data(), kind=st.sampled_from(KINDS), mutation=st.none())
# Regression examples, by what they broke before the fix:
# a byte that is not UTF-8 raised UnicodeDecodeError, not DataError
@example(data_=None, kind="relevance", mutation=("bytes", 1, 0.5, b"\xff"))
# an integer past the 4300-digit limit escaped read_records as a plain ValueError
@example(data_=None, kind="ranking", mutation=("edit", 0, ("set", ("positive",), "1" * 5000)))
# a lone surrogate escape was read, then made write_records fail half-way through the file
@example(data_=None, kind="behavior", mutation=("edit", 1, ("set", ("query",), '"\\ud800"')))
# NaN inside the free-form turn dict was read; scoring it later failed
@example(data_=None, kind="instruction", mutation=("edit", 0, ("set", ("turn", "reward"), '{"x": NaN}')))
# a turn that is no TurnRecord was read; recrm.evaluate's rule scorers raised ValidationError
@example(data_=None, kind="consistency", mutation=("edit", 0, ("set", ("turn", "turn"), '"x"')))
# an unknown store was read; the rule scorers' World.load raised on it
@example(data_=None, kind="relevance", mutation=("edit", 0, ("set", ("source", "store"), '"mall"')))
# a hostile key made the message several lines long
@example(data_=None, kind="relevance", mutation=("edit", 0, ("key", (), "a\nb" * 500, "1", False)))
# a BOM made line 1 "not JSON"
@example(data_=None, kind="ranking", mutation=("bom",))
def test_read_records_or_name_file_and_line(data, data_, kind, mutation):
    """read_records: every non-blank line as a validated record, usable and writable back
    unchanged; or one DataError line starting FILE:LINE with the mutated line."""
    from recrm.data.io import DataError, read_records, write_records

    mutation = mutation or _draw(data_, data, kind)
    raw, where = mutated_file(data["docs"][kind], mutation)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{kind}.jsonl"
        path.write_bytes(raw)
        try:
            records = read_records(path)
        except DataError as exc:
            assert type(exc) is DataError
            assert_names_line(str(exc), path, where)
            return
        text = raw.decode("utf-8").removeprefix("\ufeff")
        assert len(records) == sum(1 for line in text.split("\n") if line.strip())
        use_records(kind, records, data["worlds"])
        again = Path(tmp) / "again" / f"{kind}.jsonl"
        assert write_records(again, records) == len(records)
        assert read_records(again) == records


_TEXT_FIELDS = {"instruction": ("context", "response", "reason"), "consistency": ("facts", "response", "reason"),
                "relevance": ("query", "item", "reason"), "ranking": ("profile", "query"),
                "behavior": ("profile", "query")}


@budget(ci=15)
@given(kind=st.sampled_from(KINDS), at=st.integers(0, 1), field=st.integers(0, 2),
       text=st.one_of(hostile_text(40), st.sampled_from(["\u2028", "\x85", "\r\n", "\ud800", "a\udc00"])))
# a lone surrogate made the UTF-8 encoder raise half-way through: the file was left cut off
@example(kind="relevance", at=1, field=0, text="\ud800")
# U+2028 / NEL in a text field, written as they are, were line ends to read_records
# (str.splitlines): the file written could not be read back
@example(kind="relevance", at=0, field=2, text="a\u2028b\x85c")
def test_write_records_round_trip_or_leave_the_file(data, kind, at, field, text):
    """write_records over an existing file: read back equal, or a DataError naming the record
    and field with the previous file byte for byte as it was and no temporary file left."""
    from recrm.data.io import DataError, read_records, write_records

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{kind}.jsonl"
        path.write_bytes(data["files"][kind])
        records = read_records(path)
        name = _TEXT_FIELDS[kind][field % len(_TEXT_FIELDS[kind])]
        records[at] = records[at].model_copy(update={name: text})
        try:
            write_records(path, records)
        except DataError as exc:
            assert re.search("[\ud800-\udfff]", text), f"refused clean text: {exc}"
            assert str(exc).startswith(f"{path}: record ") and f"field {name}" in str(exc), str(exc)[:300]
            assert path.read_bytes() == data["files"][kind]
            assert [p.name for p in Path(tmp).iterdir()] == [path.name]
            return
        assert not re.search("[\ud800-\udfff]", text)
        assert read_records(path) == records
        assert [p.name for p in Path(tmp).iterdir()] == [path.name]


def _cli(argv) -> tuple[int, str, str]:
    from recrm.data.__main__ import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


@budget(ci=12)
@given(data_=st.data(), kind=st.sampled_from(KINDS), command=st.sampled_from(["validate", "stats"]), mutation=st.none())
@example(data_=None, kind="behavior", command="validate", mutation=("bytes", 0, 0.3, b"\xc3("))
def test_validate_and_stats_cli(data, data_, kind, command, mutation):
    """``python -m recrm.data validate|stats DIR`` with one mutated file: exit 0, or exit 2
    with exactly one ``error: FILE:LINE: ...`` line, no traceback, nothing on stdout."""
    mutation = mutation or _draw(data_, data, kind)
    raw, where = mutated_file(data["docs"][kind], mutation)
    with tempfile.TemporaryDirectory() as tmp:
        for k in KINDS:
            (Path(tmp) / f"{k}.jsonl").write_bytes(raw if k == kind else data["files"][k])
        code, out, err = _cli([command, tmp])
        path = Path(tmp) / f"{kind}.jsonl"
    assert "Traceback" not in err
    if code == 0:
        assert err == "" and out
        return
    assert code == 2 and out == ""
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), lines[:3]
    assert_names_line(lines[0][len("error: "):], path, where)


@budget(ci=10)
@given(data_=st.data(), mutation=st.none())
# a bad line in the trajectory file must fail before any data file is replaced
@example(data_=None, mutation=("edit", 1, ("set", ("turns", 0, "reward", "recrm/total"), "NaN")))
@example(data_=None, mutation=("insert", 1, "garbage"))
# an episode given twice was synthesised twice: write_records wrote relevance.jsonl with
# repeated ids, which read_records (and so training) then refused
@example(data_=None, mutation=("dup", 0))
def test_synthesize_from_a_broken_trajectory_file_leaves_the_data(data, data_, mutation):
    """``python -m recrm.data synthesize --runs FILE --out DIR`` over an existing data
    directory: exit 0 with readable files, or exit 2 with one ``error:`` line naming the
    trajectory file and the previous files byte for byte as they were."""
    from recrm.data.io import read_records

    mutation = mutation or data_.draw(line_mutations(data["traj"], data["traj_groups"]), label="mutation")
    raw, where = mutated_file(data["traj"], mutation)
    with tempfile.TemporaryDirectory() as tmp:
        traj, out = Path(tmp) / "trajectories.jsonl", Path(tmp) / "data"
        traj.write_bytes(raw)
        out.mkdir()
        for k in KINDS:
            (out / f"{k}.jsonl").write_bytes(data["files"][k])
        code, stdout, err = _cli(["synthesize", "--runs", str(traj), "--out", str(out), "--no-hf"])
        assert "Traceback" not in err
        if code == 0:
            for f in out.glob("*.jsonl"):
                read_records(f)
            return
        assert code == 2
        lines = err.splitlines()
        assert len(lines) == 1, lines[:3]
        assert lines[0].startswith(f"error: {traj}") or lines[0].startswith("error: no finished episodes in ["), lines[0]
        assert sorted(p.name for p in out.iterdir()) == sorted(f"{k}.jsonl" for k in KINDS)
        assert all((out / f"{k}.jsonl").read_bytes() == data["files"][k] for k in KINDS)


# It raised KeyError from world.index.products[rec.product_id] (recrm/evaluate.py).
def test_rule_relevance_of_an_unknown_product(data):
    """A relevance record that validates but names no catalog product: the rule scorer
    should refuse it with DataError naming the record (as it does an unknown task)."""
    from recrm.data.io import DataError, read_records
    from recrm.evaluate import rule_predictions

    raw, _ = mutated_file(data["docs"]["relevance"], ("edit", 0, ("set", ("product_id",), '"zz_missing"')))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "relevance.jsonl"
        path.write_bytes(raw)
        records = read_records(path)
    with pytest.raises(DataError, match="unknown product"):
        rule_predictions("relevance", records, data["worlds"])
