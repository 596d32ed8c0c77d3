"""JSONL reading (validated, errors name the line and field), writing, and HF ``datasets`` views."""

from __future__ import annotations

import codecs
import contextlib
import json
import logging
import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from recrm.data.schema import KINDS, RECORD_TYPES
from situ_gym.jsonl import bad_leaf, decode_json, field_path, suspect

__all__ = ["DataError", "read_records", "write_records", "render_records", "load_split", "to_dataset",
           "data_file"]

logger = logging.getLogger(__name__)


class DataError(ValueError):
    """A RecRM data file that does not validate; the message names the file, line and field."""


def data_file(root: str | Path, kind: str) -> Path:
    """``ROOT/<kind>.jsonl``, the file of one record kind."""
    if kind not in KINDS:
        raise ValueError(f"unknown record kind {kind!r}; choose one of {list(KINDS)}")
    return Path(root) / f"{kind}.jsonl"


def _field_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    more = f" (+{exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    return f"field {field_path(err['loc']) if err['loc'] else 'record'}: {err['msg']}{more}"


def _lines(path: Path) -> list[str]:
    """The file's lines: UTF-8 (a BOM skipped), split at "\\n" only; text written by
    ``write_records`` keeps U+2028, NEL and the like as they are, which ``str.splitlines``
    would take for line ends."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise DataError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if raw.startswith(codecs.BOM_UTF8):
        raw = raw[len(codecs.BOM_UTF8):]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise DataError(f"{path}:{line}: not UTF-8 text "
                        f"(byte {exc.start}: {raw[exc.start:exc.start + 4]!r})") from None
    return text.split("\n")


def read_records(path: str | Path, kind: str | None = None) -> list[BaseModel]:
    """Validated records of one JSONL file; ``kind`` defaults to the file's stem.

    Raises ``DataError("FILE:LINE: ...")`` (one line) at the first line that is not UTF-8,
    not JSON, not an object, holds a lone surrogate escape or a number that is not finite,
    or does not validate (``FILE:LINE: field X: ...``), and for duplicate ids, so nothing is
    silently dropped. Blank lines are skipped.
    """
    path = Path(path)
    kind = kind or path.stem
    if kind not in RECORD_TYPES:
        raise DataError(f"{path}: unknown record kind {kind!r}; choose one of {list(KINDS)}")
    model = RECORD_TYPES[kind]
    out, seen = [], {}
    for n, line in enumerate(_lines(path), start=1):
        if not line.strip():
            continue
        try:
            raw = decode_json(line)
        except json.JSONDecodeError as exc:  # jsonl refuses too-long integers this way too
            raise DataError(f"{path}:{n}: not JSON: {exc.msg} at column {exc.colno}") from None
        if not isinstance(raw, dict):
            raise DataError(f"{path}:{n}: expected a JSON object, got {type(raw).__name__}")
        bad = bad_leaf(raw) if suspect(line) else None
        if bad is not None:
            raise DataError(f"{path}:{n}: field {field_path(bad[0])}: {bad[1]}")
        try:
            rec = model.model_validate(raw)
        except ValidationError as exc:
            raise DataError(f"{path}:{n}: {_field_error(exc)}") from None
        if rec.id in seen:
            raise DataError(f"{path}:{n}: field id: {rec.id[:80]!r} already used on line {seen[rec.id]}")
        seen[rec.id] = n
        out.append(rec)
    return out


def _line(path: Path, rec: BaseModel) -> str:
    row = rec.model_dump(mode="json")
    if row.get("teacher", 0) is None:  # unlabelled: the line reads as before teachers existed
        del row["teacher"]
    line = json.dumps(row, sort_keys=True, ensure_ascii=False)
    bad = bad_leaf(row) if suspect(line) else None
    if bad is not None:  # read_records would refuse it: a lone surrogate, a NaN
        raise DataError(f"{path}: record {str(getattr(rec, 'id', '?'))[:80]!r} "
                        f"field {field_path(bad[0])}: {bad[1]}; nothing written")
    return line + "\n"


def _render(path: Path, records: Iterable[BaseModel]) -> Iterator[str]:
    seen: set[Any] = set()
    for rec in records:
        rid = getattr(rec, "id", None)
        if rid in seen:  # read_records would refuse the file
            raise DataError(f"{path}: record {str(rid)[:80]!r} given twice; nothing written")
        seen.add(rid)
        yield _line(path, rec)


def render_records(path: str | Path, records: Iterable[BaseModel]) -> str:
    """The text ``write_records`` would write to ``path``; ``DataError`` naming the record
    (and field) that ``read_records`` would refuse (a lone surrogate, a NaN, a repeated id)."""
    return "".join(_render(Path(path), records))


def write_records(path: str | Path, records: Iterable[BaseModel]) -> int:
    """Write records as JSON lines (sorted keys, so output is byte-stable); returns the count.

    All or nothing: the lines go to a temporary file beside ``path`` that replaces it only
    once every record is written, so a record that cannot be written (``DataError``: a lone
    surrogate, a number that is not finite, an id given twice: what ``read_records`` would
    refuse) or any other failure leaves an existing file as it was.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")  # beside it: os.replace stays atomic
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            for line in _render(path, records):
                fh.write(line)
                n += 1
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    return n


def load_split(root: str | Path, kind: str, split: str | None = None) -> list[Any]:
    """Records of ``ROOT/<kind>.jsonl``, optionally only one split ("train" / "test")."""
    recs = read_records(data_file(root, kind), kind)
    return [r for r in recs if split is None or r.split == split]


def to_dataset(records: Sequence[BaseModel]):
    """A Hugging Face ``datasets.Dataset`` of the records (nested fields kept as JSON text)."""
    from datasets import Dataset

    rows = []
    for rec in records:
        row = rec.model_dump(mode="json")
        for key in ("source", "turn", "history", "dimensions", "revealed", "teacher"):
            if key in row:
                row[key] = json.dumps(row[key], sort_keys=True)
        rows.append(row)
    return Dataset.from_list(rows)
