"""Load (and cache) a registered store's data: ``load_scene(store)``, ``load_task_bank(store)``.

A store's files are in its folder (``situ_gym.stores.store_folder``: the package data for the
paper's stores); ``root`` points at another directory laid out as ``<root>/<store>/{scene,tasks}.json``.
Every load is validated (``situ_gym.scene.validate``); the store's own data must also match the
counts its spec expects (SituRecBench Table 2 for the paper's stores).
"""

from __future__ import annotations

import codecs
import functools
import json
import re
import sys
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from situ_gym.jsonl import bad_leaf, decode_json, suspect
from situ_gym.scene.model import Scene, TaskBank
from situ_gym.scene.validate import AssetError, check_scene, check_table2, check_task_bank
from situ_gym.stores import StoreError, store_folder, store_spec

__all__ = [
    "AssetError",
    "data_file",
    "load_scene",
    "load_task_bank",
]


def _check_store(store: str) -> None:
    try:
        store_spec(store)
    except StoreError as e:
        raise ValueError(str(e)) from None


def data_file(store: str, name: str, root: str | Path | None = None) -> Path:
    """Path of ``<name>`` in the store's folder, or of ``<root>/<store>/<name>``."""
    _check_store(store)
    if root is None:
        return store_folder(store) / name
    return Path(root) / store / name


def _read_json(path) -> tuple[Any, str]:
    label = str(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise AssetError("file not found (run `python -m situ_gym.assets generate`)",
                         file=label) from None
    except OSError as e:  # e.g. a --root that names a file, a directory named scene.json
        raise AssetError(f"cannot read the file: {e.strerror or e}", file=label) from None
    if raw.startswith(codecs.BOM_UTF8):  # JSON readers may skip a BOM (RFC 8259 section 8.1)
        raw = raw[len(codecs.BOM_UTF8):]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw.count(b"\n", 0, e.start) + 1
        column = e.start - (raw.rfind(b"\n", 0, e.start) + 1) + 1
        raise AssetError(f"not UTF-8 text at line {line} column {column} "
                         f"(byte {e.start}: {raw[e.start:e.start + 4]!r})", file=label) from None
    try:
        data = decode_json(text)  # a NaN / 1e400 is decoded, for bad_leaf to name its field
    except json.JSONDecodeError as e:
        raise AssetError(f"invalid JSON at line {e.lineno} column {e.colno}: {e.msg}",
                         file=label) from None
    except ValueError as e:  # an integer beyond the interpreter's digit limit: no position
        long = re.search(rf"\d{{{sys.get_int_max_str_digits() + 1},}}", text)
        at = f" at line {text.count(chr(10), 0, long.start()) + 1}" if long else ""
        raise AssetError(f"invalid JSON{at}: {str(e).splitlines()[0]}", file=label) from None
    bad = bad_leaf(data) if suspect(text) else None
    if bad is not None:  # a lone surrogate escape (not text), a number that is not finite
        record, field = _record_of(data, bad[0])
        raise AssetError(bad[1], file=label, record=record, field=field)
    return data, label


def _record_of(raw: Any, loc: tuple) -> tuple[str | None, str]:
    """The id of the innermost record on a pydantic error path, and the field path below it."""
    record, below, node = None, [], raw
    for part in loc:
        if isinstance(node, dict) and isinstance(node.get("id"), str):
            record, below = node["id"], []
        below.append(str(part))
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            node = None
    return record, ".".join(below) or "<root>"


def _parse(model, raw: Any, label: str):
    try:
        return model.model_validate(raw)
    except ValidationError as e:
        err = e.errors()[0]
        record, field = _record_of(raw, tuple(err["loc"]))
        more = f" (and {e.error_count() - 1} more)" if e.error_count() > 1 else ""
        raise AssetError(f"{err['msg']}{more}", file=label, record=record, field=field) from None


@functools.lru_cache(maxsize=16)
def _load_scene(store: str, root: str | None) -> Scene:
    raw, label = _read_json(data_file(store, "scene.json", root))
    scene = _parse(Scene, raw, label)
    if scene.store != store:
        raise AssetError(f"file holds store {scene.store!r}, expected {store!r}", file=label,
                         record=None, field="store")
    check_scene(scene, label)
    if root is None:
        check_table2(scene, None, label)
    return scene


@functools.lru_cache(maxsize=16)
def _load_task_bank(store: str, root: str | None) -> TaskBank:
    scene = _load_scene(store, root)
    raw, label = _read_json(data_file(store, "tasks.json", root))
    bank = _parse(TaskBank, raw, label)
    if bank.store != store:
        raise AssetError(f"file holds store {bank.store!r}, expected {store!r}", file=label,
                         record=None, field="store")
    check_task_bank(bank, scene, label)
    if root is None:
        check_table2(scene, bank, label)
    return bank


def load_scene(store: str, root: str | Path | None = None) -> Scene:
    """The validated scene of ``store`` (a registered store id, e.g. "supermarket"); cached.

    Treat the result as read-only: it is shared by every caller.
    """
    _check_store(store)
    return _load_scene(store, None if root is None else str(Path(root).resolve()))


def load_task_bank(store: str, root: str | Path | None = None) -> TaskBank:
    """The validated profiles and tasks of ``store``, cross-checked against its scene; cached."""
    _check_store(store)
    return _load_task_bank(store, None if root is None else str(Path(root).resolve()))
