"""Write both stores' scene.json and tasks.json from a seed (byte-identical for the same seed)."""

from __future__ import annotations

import json
import logging
import random
from pathlib import Path

from situ_gym.assets import DATA_DIR, DEFAULT_SEED
from situ_gym.scene.model import STORE_KINDS, Scene, TaskBank

__all__ = ["build_scene", "build_task_bank", "dumps", "generate"]

logger = logging.getLogger(__name__)
_STORE_SALT = {"supermarket": 1, "home_furnishings": 2}


def _rng(seed: int, store: str, part: int) -> random.Random:
    """Independent stream per (seed, store, part) so editing one part leaves the others alone."""
    return random.Random(seed * 1000 + _STORE_SALT[store] * 10 + part)


def build_scene(store: str, seed: int = DEFAULT_SEED) -> Scene:
    if store == "supermarket":
        from situ_gym.assets.supermarket import build_supermarket

        return build_supermarket(_rng(seed, store, 0))
    if store == "home_furnishings":
        from situ_gym.assets.home import build_home

        return build_home(_rng(seed, store, 0))
    raise ValueError(f"store must be one of {STORE_KINDS}, got {store!r}")


def build_task_bank(store: str, scene: Scene, seed: int = DEFAULT_SEED) -> TaskBank:
    from situ_gym.assets.tasks import build_tasks

    return build_tasks(scene, _rng(seed, store, 1))


def dumps(record: Scene | TaskBank) -> str:
    """Canonical JSON text: sorted keys, one-space indent, trailing newline."""
    return json.dumps(record.model_dump(mode="json"), sort_keys=True, indent=1,
                      ensure_ascii=False) + "\n"


def generate(seed: int = DEFAULT_SEED, out: str | Path | None = None,
             stores: tuple[str, ...] = STORE_KINDS, tasks: bool = True) -> list[Path]:
    """Generate ``<out>/<store>/{scene,tasks}.json``; returns the written paths."""
    root = Path(out) if out is not None else DATA_DIR
    written = []
    for store in stores:
        scene = build_scene(store, seed)
        files = {"scene.json": scene}
        if tasks:
            files["tasks.json"] = build_task_bank(store, scene, seed)
        for name, record in files.items():
            path = root / store / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(dumps(record), encoding="utf-8")
            logger.info("wrote %s", path)
            written.append(path)
    return written
