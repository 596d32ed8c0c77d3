"""Write a store's scene.json and tasks.json from a seed (byte-identical for the same seed).

The store's spec names its scene builder (``builder`` in store.json): a ``"module:function"``
taking a ``random.Random`` (the paper's stores), ``"fixtures"`` (the generic builder of
``situ_gym.assets.fixture_store`` from the folder's layout.json and catalog.json), or null (the
folder's scene.json is written by hand and kept). Tasks always come from the one generator,
``situ_gym.assets.tasks``.
"""

from __future__ import annotations

import importlib
import json
import logging
import random
from pathlib import Path

from situ_gym.assets import DEFAULT_SEED
from situ_gym.scene.model import STORE_KINDS, Scene, TaskBank
from situ_gym.stores import store_folder, store_spec

__all__ = ["build_scene", "build_task_bank", "build_store", "dumps", "generate"]

logger = logging.getLogger(__name__)


def _rng(seed: int, store: str, part: int) -> random.Random:
    """Independent stream per (seed, store, part) so editing one part leaves the others alone."""
    return random.Random(seed * 1000 + store_spec(store).seed_salt * 10 + part)


def build_scene(store: str, seed: int = DEFAULT_SEED, folder: str | Path | None = None) -> Scene:
    """The scene of a registered store (id or folder), made by the builder its spec names."""
    spec = store_spec(store if folder is None else str(folder))
    folder = Path(folder) if folder is not None else store_folder(spec.id)
    rng = _rng(seed, spec.id, 0)
    if spec.builder is None:
        from situ_gym.scene.loader import load_scene

        return load_scene(spec.id)
    if spec.builder == "fixtures":
        from situ_gym.assets.fixture_store import build_fixture_store

        return build_fixture_store(folder, spec, rng)
    module, _, function = spec.builder.partition(":")
    return getattr(importlib.import_module(module), function)(rng)


def build_task_bank(store: str, scene: Scene, seed: int = DEFAULT_SEED) -> TaskBank:
    from situ_gym.assets.tasks import build_tasks

    return build_tasks(scene, _rng(seed, store, 1))


def dumps(record: Scene | TaskBank) -> str:
    """Canonical JSON text: sorted keys, one-space indent, trailing newline."""
    return json.dumps(record.model_dump(mode="json"), sort_keys=True, indent=1,
                      ensure_ascii=False) + "\n"


def _write(path: Path, record: Scene | TaskBank, written: list[Path]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dumps(record), encoding="utf-8")
    logger.info("wrote %s", path)
    written.append(path)


def build_store(folder: str | Path, seed: int = DEFAULT_SEED, tasks: bool = True) -> list[Path]:
    """Write ``<folder>/scene.json`` (unless the spec has no builder) and ``tasks.json`` of the
    store folder; returns the written paths."""
    from situ_gym.scene.validate import check_scene

    folder = Path(folder)
    spec = store_spec(str(folder))
    written: list[Path] = []
    scene = build_scene(spec.id, seed, folder)
    if spec.builder is not None:
        check_scene(scene, str(folder / "scene.json"))
        _write(folder / "scene.json", scene, written)
    if tasks:
        _write(folder / "tasks.json", build_task_bank(spec.id, scene, seed), written)
    return written


def generate(seed: int = DEFAULT_SEED, out: str | Path | None = None,
             stores: tuple[str, ...] = STORE_KINDS, tasks: bool = True) -> list[Path]:
    """Generate ``<out>/<store>/{scene,tasks}.json`` (default: each store's own folder)."""
    written: list[Path] = []
    for store in stores:
        scene = build_scene(store, seed)
        root = Path(out) / store if out is not None else store_folder(store)
        _write(root / "scene.json", scene, written)
        if tasks:
            _write(root / "tasks.json", build_task_bank(store, scene, seed), written)
    return written
