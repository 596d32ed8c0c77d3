"""Property tests: asset folders (``<root>/<store>/{scene,tasks}.json``) given to
``load_scene`` / ``load_task_bank`` and ``python -m situ_gym.assets validate --root``.

Each example corrupts one file of a copy of a packaged store: its bytes cut at any point,
random bytes spliced in or in its place, bytes that are not UTF-8, a BOM; a JSON field at
any depth replaced by a value of any type (``with_wrong_field``, NaN / Infinity / 1e400 /
-0.0 / 1e308 / integers past 2**64 and past the interpreter's 4300-digit limit, deep or
cut-off nesting, lone surrogate escapes), deleted, duplicated as a key; duplicate ids;
dangling references; an empty file, a directory or nothing where the file should be.

Invariant: loading either succeeds with a scene (and task bank) that passes its cross
checks and can be indexed, or raises ``AssetError`` (never another exception type) whose
one-line message starts with the FILE at fault and names the record and field, or the
LINE, where one applies. An untouched file never fails: a broken tasks.json leaves the
scene loading, and only a broken scene.json may make tasks.json's cross checks fail.
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import re
import shutil
import tempfile
from pathlib import Path

from hypothesis import example, given
from hypothesis import strategies as st

from tests.fuzz.strategies import budget
from tests.fuzz.test_trajectory_files import (
    BAD_BYTES,
    apply_edit,
    get_at,
    json_edits,
    json_paths,
    path_groups,
    raw_values,
)

STORES = ("supermarket", "home_furnishings")
NAMES = ("scene.json", "tasks.json")
# Fields that name another record: what a dangling reference breaks.
REF_KEYS = {"fixture_id", "store_id", "area_id", "product_ids", "area_ids", "neighbors", "profile_id",
            "target_product_id", "reference_set", "owner"}


def _dumps(doc) -> str:
    """The packaged files' own layout (indent 1, sorted keys as generated)."""
    return json.dumps(doc, indent=1)


@functools.cache
def pristine(store: str, name: str) -> dict:
    """The packaged file's bytes, its JSON, every path in it, its id and reference paths."""
    from situ_gym.scene.loader import data_file

    raw = data_file(store, name).read_bytes()
    doc = json.loads(raw)
    paths = json_paths(doc)
    ids = [p for p in paths if p[-1] == "id" and isinstance(get_at(doc, p), str)]
    refs = [p for p in paths if isinstance(get_at(doc, p), str)
            and (p[-1] in REF_KEYS or (len(p) > 1 and p[-2] in REF_KEYS))]
    return {"raw": raw, "doc": doc, "groups": path_groups(paths), "ids": ids, "refs": refs}


@st.composite
def asset_mutations(draw) -> tuple:
    """``(store, file name, mutation)``; mutations:

    ``("edit", edit)``              one ``apply_edit`` edit (a value of any type at any depth,
                                    a deletion, a junk or duplicate key, a record's wrong field)
    ``("dup_id", i, j)``            id path j given the id at id path i
    ``("dangle", i, raw)``          reference path i set to an unknown id (or another type)
    ``("cut", frac)``               the bytes cut at a point
    ``("splice", frac, data)``      bytes inserted at a point
    ``("whole", data)``             the file replaced by bytes
    ``("bom",)`` ``("crlf",)`` ``("empty",)`` ``("directory",)`` ``("missing",)``
    """
    store = draw(st.sampled_from(STORES))
    name = draw(st.sampled_from(NAMES))
    src = pristine(store, name)
    how = draw(st.sampled_from(["edit"] * 8 + ["dup_id", "dup_id", "dangle", "dangle", "cut", "splice",
                                             "whole", "bom", "crlf", "empty", "directory", "missing"]))
    if how == "edit":
        return store, name, ("edit", draw(json_edits(src["doc"], src["groups"])))
    if how == "dup_id":
        n = len(src["ids"])
        i = draw(st.integers(0, n - 1))
        return store, name, ("dup_id", i, (i + draw(st.integers(1, n - 1))) % n)
    if how == "dangle":
        raw = draw(st.one_of(st.just('"zz_missing"'), st.just('""'), raw_values()))
        return store, name, ("dangle", draw(st.integers(0, len(src["refs"]) - 1)), raw)
    if how == "cut":
        return store, name, ("cut", draw(st.floats(0.0, 1.0)))
    if how == "splice":
        data = draw(st.one_of(st.sampled_from(BAD_BYTES), st.binary(min_size=1, max_size=16)))
        return store, name, ("splice", draw(st.floats(0.0, 1.0)), data)
    if how == "whole":
        return store, name, ("whole", draw(st.binary(max_size=300)))
    return store, name, (how,)


def write_copy(root: Path, store: str, name: str, mutation: tuple) -> dict:
    """Write ``root/<store>/`` (both files, ``name`` mutated); returns what an error about
    the mutated file may say: ``{"lines": set of lines, "syntax": bool}``."""
    folder = root / store
    folder.mkdir(parents=True)
    for other in NAMES:
        if other != name:
            (folder / other).write_bytes(pristine(store, other)["raw"])
    src = pristine(store, name)
    path = folder / name
    op = mutation[0]
    hint: dict = {"lines": set()}
    if op in ("edit", "dup_id", "dangle"):
        if op == "edit":
            edit = mutation[1]
        elif op == "dup_id":
            _, i, j = mutation
            edit = ("set", src["ids"][j], json.dumps(get_at(src["doc"], src["ids"][i])))
        else:
            _, i, raw = mutation
            edit = ("set", src["refs"][i], raw)
        text = apply_edit(src["doc"], edit, dumps=_dumps)
        data = text.encode("utf-8", "surrogatepass")
        # a syntax error is at or after the edited value's line
        first = _first_difference(src["raw"], data)
        hint["lines"] = set(range(data.count(b"\n", 0, first) + 1, data.count(b"\n") + 2))
    elif op == "cut":
        data = src["raw"][: int(mutation[1] * len(src["raw"]))]
        hint["lines"] = set(range(1, data.count(b"\n") + 2))
    elif op == "splice":
        _, frac, extra = mutation
        at = int(frac * len(src["raw"]))
        data = src["raw"][:at] + extra + src["raw"][at:]
        hint["lines"] = set(range(data.count(b"\n", 0, at) + 1, data.count(b"\n") + 2))
    elif op == "whole":
        data = mutation[1]
    elif op == "bom":
        data = b"\xef\xbb\xbf" + src["raw"]
    elif op == "crlf":
        data = src["raw"].replace(b"\n", b"\r\n")
    elif op == "empty":
        data = b""
    elif op == "directory":
        path.mkdir()
        return hint
    elif op == "missing":
        return hint
    else:  # pragma: no cover
        raise AssertionError(op)
    path.write_bytes(data)
    return hint


def _first_difference(a: bytes, b: bytes) -> int:
    n = min(len(a), len(b))
    lo = 0
    while lo < n and a[lo] == b[lo]:
        lo += 1
    return lo


_LINE = re.compile(r"\bline (\d+)\b")
_WHOLE_FILE = ("file not found", "cannot read the file")


def assert_names(err, allowed: set[Path], hint: dict | None) -> None:
    """An AssetError about one of ``allowed`` files, one line, naming record/field or line."""
    from situ_gym.scene.validate import AssetError

    assert type(err) is AssetError, f"{type(err).__name__}: {err}"
    assert err.file in {str(p) for p in allowed}, (err.file, allowed)
    msg = str(err)
    assert msg.startswith(err.file + ":"), msg[:200]
    assert "\n" not in msg and "\r" not in msg, msg[:300]
    line = _LINE.search(err.message)
    assert err.field is not None or line or any(w in err.message for w in _WHOLE_FILE), msg[:300]
    if line and err.field is None and hint is not None and hint["lines"]:
        assert int(line.group(1)) in hint["lines"], (msg[:300], sorted(hint["lines"])[:3])


def load_and_check(root: Path, store: str, name: str, hint: dict) -> str:
    """Load the copy; returns "ok", "scene" or "tasks" (which load raised)."""
    from situ_gym.scene.index import SceneIndex
    from situ_gym.scene.loader import load_scene, load_task_bank
    from situ_gym.scene.validate import AssetError, check_scene, check_task_bank

    scene_path, tasks_path = (root / store / n for n in NAMES)
    try:
        scene = load_scene(store, root)
    except AssetError as err:
        assert name == "scene.json", f"an untouched scene.json failed: {err}"
        assert_names(err, {scene_path}, hint)
        return "scene"
    check_scene(scene)  # a loaded scene is valid...
    SceneIndex(scene)  # ...usable...
    scene.model_dump_json()  # ...and can be written back (as UTF-8 JSON)
    assert scene.store == store
    try:
        bank = load_task_bank(store, root)
    except AssetError as err:
        # cross checks may blame tasks.json for what a changed scene.json no longer holds
        assert_names(err, {tasks_path} | ({scene_path} if name == "scene.json" else set()),
                     hint if err.file == str(root / store / name) else None)
        return "tasks"
    check_task_bank(bank, scene)
    bank.model_dump_json()
    products = {p.id for p in scene.products}
    assert all(t.target_product_id in products and set(t.reference_set) <= products for t in bank.tasks)
    return "ok"


@budget(ci=45)
@given(case=asset_mutations())
# Regression examples, by what they broke before the fix (each raised something else than
# AssetError, or an AssetError that did not say where):
# a waypoint far off the floor made segment_clearance sample its edges every 5 cm: numpy's
# "Maximum allowed size exceeded" (1e20 m), OverflowError (1e308 m), a 5 GiB MemoryError
# after 17 s (1e6 m)
@example(case=("supermarket", "scene.json", ("edit", ("set", ("waypoints", 0, "x"), "1e20"))))
@example(case=("home_furnishings", "scene.json", ("edit", ("set", ("waypoints", 2, "y"), "-1e308"))))
@example(case=("supermarket", "scene.json", ("edit", ("set", ("waypoints", 0, "x"), "1e6"))))
# a budget of 1e308 overflowed counting it in cents (OverflowError in budget._cents)
@example(case=("supermarket", "tasks.json", ("edit", ("set", ("tasks", 0, "budget"), "1e308"))))
# a colour channel of 2**64 overflowed numpy (OverflowError in the colour-distance check)
@example(case=("supermarket", "scene.json", ("edit", ("set", ("products", 0, "color", 0), str(2**64)))))
# an integer past the interpreter's 4300-digit limit escaped json as a plain ValueError
@example(case=("supermarket", "tasks.json", ("edit", ("set", ("tasks", 0, "subset"), "1" * 5000))))
# a lone surrogate escape in a name was loaded: the scene could then not be written or printed
@example(case=("home_furnishings", "scene.json", ("edit", ("set", ("products", 3, "group"), '"\\ud800"'))))
# a byte that is not UTF-8 was reported by byte offset, not line
@example(case=("supermarket", "scene.json", ("splice", 0.0, b"\xff")))
# an id holding a newline, quoted as is in a cross-check message, broke it into two lines
@example(case=("home_furnishings", "scene.json", ("edit", ("set", ("areas", 0, "store_id"), '"a\\nb"'))))
# a field error without a record read "FILE field 'areas': ..." (no colon after FILE)
@example(case=("supermarket", "scene.json", ("edit", ("set", ("areas",), "-0.0"))))
def test_corrupted_asset_folder_loads_or_names_the_file(case):
    """Loading a corrupted copy gives a valid, indexable scene and bank, or one AssetError
    naming the file (and record/field or line); the untouched file always loads."""
    store, name, mutation = case
    with tempfile.TemporaryDirectory() as tmp:
        hint = write_copy(Path(tmp), store, name, mutation)
        load_and_check(Path(tmp), store, name, hint)


@budget(ci=8)
@given(case=asset_mutations())
@example(case=("home_furnishings", "scene.json", ("directory",)))
@example(case=("supermarket", "scene.json", ("edit", ("set", ("products", 0, "price"), "NaN"))))
@example(case=("supermarket", "scene.json", ("edit", ("set", ("fixtures", 0, "kind"), '"open_cooler"'))))  # Table 2
def test_validate_cli_prints_one_line(case):
    """``python -m situ_gym.assets validate --root COPY``: exit 0 with both stores ok, or exit
    1 with exactly one stderr line ``INVALID: FILE...`` naming a file of the copy (both
    files for a Table 2 count), no traceback."""
    from situ_gym.assets.__main__ import main

    store, name, mutation = case
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        write_copy(root, store, name, mutation)
        other = next(s for s in STORES if s != store)
        for n in NAMES:
            (root / other).mkdir(exist_ok=True)
            (root / other / n).write_bytes(pristine(other, n)["raw"])
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["validate", "--root", str(root)])
        files = {str(root / store / n) for n in NAMES}
        shutil.rmtree(root / other)
    assert "Traceback" not in err.getvalue()
    if code == 0:
        assert err.getvalue() == "" and out.getvalue().count(": ok (") == 2
        return
    assert code == 1 and out.getvalue() == ""
    lines = err.getvalue().splitlines()
    assert len(lines) == 1 and lines[0].startswith("INVALID: "), lines[:3]
    # a Table 2 count spans both files: it is labelled "DIR/scene.json + tasks.json: ..."
    assert any(lines[0].startswith(f"INVALID: {f}:") or lines[0].startswith(f"INVALID: {f} + tasks.json:")
               for f in files), lines[0][:300]
