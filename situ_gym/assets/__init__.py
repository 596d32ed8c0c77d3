"""Packaged store data (scene.json, tasks.json per store) and the seeded generator that writes it.

``python -m situ_gym.assets generate|validate|stats``; load the data with
``situ_gym.scene.loader.load_scene(store)`` / ``load_task_bank(store)``.
"""

from pathlib import Path

__all__ = ["DATA_DIR", "DEFAULT_SEED"]

DATA_DIR = Path(__file__).resolve().parent / "data"  # where `generate` writes by default
DEFAULT_SEED = 0
