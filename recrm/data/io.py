"""JSONL reading (validated, errors name the line and field), writing, and HF ``datasets`` views."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from recrm.data.schema import KINDS, RECORD_TYPES
from situ_gym.jsonl import object_lines

__all__ = ["DataError", "read_records", "write_records", "load_split", "to_dataset", "data_file"]

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
    where = ".".join(str(p) for p in err["loc"]) or "record"
    more = f" (+{exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    return f"field {where}: {err['msg']}{more}"


def read_records(path: str | Path, kind: str | None = None) -> list[BaseModel]:
    """Validated records of one JSONL file; ``kind`` defaults to the file's stem.

    Raises ``DataError("FILE:LINE: field X: ...")`` at the first bad line and ``DataError``
    for duplicate ids, so nothing is silently dropped.
    """
    path = Path(path)
    kind = kind or path.stem
    if kind not in RECORD_TYPES:
        raise DataError(f"{path}: unknown record kind {kind!r}; choose one of {list(KINDS)}")
    model = RECORD_TYPES[kind]
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise DataError(f"{path}: cannot read: {exc.strerror or exc}") from None
    out, seen = [], {}
    for n, raw in object_lines(lines, path, error=DataError):
        try:
            rec = model.model_validate(raw)
        except ValidationError as exc:
            raise DataError(f"{path}:{n}: {_field_error(exc)}") from None
        if rec.id in seen:
            raise DataError(f"{path}:{n}: field id: {rec.id!r} already used on line {seen[rec.id]}")
        seen[rec.id] = n
        out.append(rec)
    return out


def write_records(path: str | Path, records: Iterable[BaseModel]) -> int:
    """Write records as JSON lines (sorted keys, so output is byte-stable); returns the count."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    with path.open("w", encoding="utf-8") as fh:
        for rec in records:
            fh.write(json.dumps(rec.model_dump(mode="json"), sort_keys=True, ensure_ascii=False) + "\n")
            n += 1
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
        for key in ("source", "turn", "history", "dimensions", "revealed"):
            if key in row:
                row[key] = json.dumps(row[key], sort_keys=True)
        rows.append(row)
    return Dataset.from_list(rows)
