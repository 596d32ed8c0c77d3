"""The registry of stores: ``store_spec(id)`` gives a store's ``StoreSpec`` and its folder.

The paper's two stores are folders of the package data (``situ_gym/assets/data/<id>``); any other
folder in the same format joins with ``register_store_folder(path)``, with ``gym.make(
"SituRec-Custom-v0", store=PATH)``, or by listing it in ``SITUREC_STORES`` (paths separated by
``os.pathsep``), which every process importing situ_gym reads, so that vector-env workers and
the command lines (``eval.metrics``, ``eval.report``) know the store too.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from situ_gym.stores.spec import FORMAT_VERSION, LAYOUTS, PromptWords, StoreSpec

__all__ = [
    "FORMAT_VERSION",
    "LAYOUTS",
    "PAPER_STORES",
    "PromptWords",
    "RegisteredStore",
    "StoreSpec",
    "StoreError",
    "read_store_spec",
    "register_env",
    "register_store_folder",
    "registered_stores",
    "spec_table",
    "store_folder",
    "store_spec",
]

PACKAGE_DATA = Path(__file__).resolve().parent.parent / "assets" / "data"
# SituRecBench's stores, in the paper's order (Table 2): the package's built-in folders.
PAPER_STORES = ("supermarket", "home_furnishings")
ENV_VAR = "SITUREC_STORES"


class StoreError(ValueError):
    """A store that cannot be found or whose ``store.json`` is invalid (one line, names the file)."""


@dataclass(frozen=True)
class RegisteredStore:
    spec: StoreSpec
    folder: Path  # holds store.json, scene.json, tasks.json
    builtin: bool


_REGISTRY: dict[str, RegisteredStore] = {}


def read_store_spec(folder: str | Path) -> StoreSpec:
    """The validated ``store.json`` of a store folder; ``StoreError`` naming the file otherwise."""
    path = Path(folder) / "store.json"
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise StoreError(f"{path}: no store.json (a store folder holds store.json, scene.json, tasks.json)") from None
    except (OSError, UnicodeDecodeError) as e:
        raise StoreError(f"{path}: cannot read the file: {e}") from None
    except json.JSONDecodeError as e:
        raise StoreError(f"{path}:{e.lineno}: not JSON: {e.msg}") from None
    try:
        return StoreSpec.model_validate(raw)
    except ValidationError as e:
        err = e.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "(top level)"
        more = f" (and {e.error_count() - 1} more)" if e.error_count() > 1 else ""
        raise StoreError(f"{path}: {where}: {err['msg']}{more}") from None


def _add(folder: Path, builtin: bool) -> StoreSpec:
    spec = read_store_spec(folder)
    folder = folder.resolve()
    known = _REGISTRY.get(spec.id)
    if known is not None:
        if known.folder == folder:
            return known.spec
        raise StoreError(f"{folder}/store.json: store id {spec.id!r} is already the store of {known.folder}")
    for other in _REGISTRY.values():
        if other.spec.env_id == spec.env_id:
            raise StoreError(f"{folder}/store.json: env_id {spec.env_id!r} is already the id of store {other.spec.id!r}")
    _REGISTRY[spec.id] = RegisteredStore(spec, folder, builtin)
    if not builtin:
        register_env(spec, folder)
    return spec


def register_env(spec: StoreSpec, folder: Path | None = None) -> None:
    """Register ``spec.env_id`` with gymnasium (once). A folder store's env is bound to its path,
    so that a process that has not registered it (a vector-env worker) still finds it."""
    from gymnasium.envs.registration import register, registry

    if spec.env_id not in registry:
        # The turn limit is a rule of the benchmark with its own termination reason
        # ("turn_limit"), so the env enforces it (max_turns) instead of a TimeLimit wrapper.
        register(id=spec.env_id, entry_point="situ_gym.env:SituRecEnv", kwargs={"store": spec.id if folder is None else str(folder)},
                 disable_env_checker=False)


def _shown(value: object, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


def register_store_folder(folder: str | Path) -> StoreSpec:
    """Add the store in ``folder`` to the registry (and its ``env_id`` to gymnasium's); idempotent."""
    try:
        folder = Path(folder)
        is_dir = folder.is_dir()
    except (OSError, ValueError, TypeError):  # a name too long, a NUL byte, not a path
        is_dir = False
    if not is_dir:
        raise StoreError(f"{_shown(str(folder))}: not a store folder (a directory holding store.json)")
    return _add(folder, builtin=False)


def store_spec(store: str) -> StoreSpec:
    """The spec of a registered store id, or of the store folder at path ``store``."""
    found = _REGISTRY.get(store)
    if found is not None:
        return found.spec
    if isinstance(store, str) and (os.sep in store or "/" in store or store.startswith(".")):
        return register_store_folder(store)  # a path: a store folder, or a one-line StoreError
    raise StoreError(f"unknown store {_shown(store)}; registered: {', '.join(_REGISTRY)} "
                     f"(a store folder is registered with its path, or listed in ${ENV_VAR})")


def store_folder(store: str) -> Path:
    """The folder holding the registered store's ``scene.json`` and ``tasks.json``."""
    store_spec(store)
    if store in _REGISTRY:
        return _REGISTRY[store].folder
    return _REGISTRY[read_store_spec(store).id].folder


class spec_table(Mapping):
    """A read-only ``{store id: value}`` table computed from each registered store's spec, so
    that tables such as ``LEGAL_TOOLS[store]`` hold for every store, the ones registered later
    included: ``LEGAL_TOOLS = spec_table(lambda spec: spec.legal_tools)``."""

    def __init__(self, value_of: Callable[[StoreSpec], Any]):
        self._value_of = value_of

    def __getitem__(self, store: str) -> Any:
        found = _REGISTRY.get(store) if isinstance(store, str) else None
        if found is None:
            raise KeyError(store)
        return self._value_of(found.spec)

    def __iter__(self) -> Iterator[str]:
        return iter(tuple(_REGISTRY))

    def __len__(self) -> int:
        return len(_REGISTRY)

    def __repr__(self) -> str:
        return f"spec_table({dict(self)!r})"


def registered_stores() -> tuple[str, ...]:
    """Ids of every registered store: the paper's first, then others in registration order."""
    return tuple(_REGISTRY)


for _id in PAPER_STORES:
    _add(PACKAGE_DATA / _id, builtin=True)
for _path in filter(None, os.environ.get(ENV_VAR, "").split(os.pathsep)):
    register_store_folder(_path)
