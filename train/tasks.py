"""Train / held-out task split by shopper PROFILE, and the GSPO prompt rows (task, seed)."""

from __future__ import annotations

import re
from collections import ChainMap
from collections.abc import MutableMapping
from typing import Any

import numpy as np

from situ_gym.stores import spec_table

__all__ = ["ENV_OF_STORE", "split_by_profile", "split_tasks", "prompt_key", "parse_prompt_key", "gspo_rows", "training_rows"]

# {store id: gym id} of every registered store; assignments override one store's id
# (train.evidence points them at env ids with an observation mode) and leave the spec alone.
ENV_OF_STORE: MutableMapping[str, str] = ChainMap({}, spec_table(lambda spec: spec.env_id))
_KEY = re.compile(r"^siturec:([a-z][a-z0-9_]{1,39}):([A-Za-z0-9_.\-]+):(\d+)$")


def split_by_profile(
    task_profiles: list[tuple[str, str]], eval_fraction: float, seed: int
) -> tuple[list[str], list[str]]:
    """(train task ids, held-out task ids) from (task_id, profile_id) pairs, disjoint by profile.

    A seeded permutation of the sorted profile ids holds out ``round(eval_fraction * n)``
    profiles (at least 1, at most n - 1); task order is kept.

    >>> split_by_profile([("t1", "p1"), ("t2", "p2"), ("t3", "p1"), ("t4", "p3")], 0.34, 0)[1]
    ['t4']
    """
    if not 0.0 < eval_fraction < 1.0:
        raise ValueError(f"eval_fraction must be in (0, 1), got {eval_fraction!r}")
    profiles = sorted({p for _, p in task_profiles})
    if len(profiles) < 2:
        raise ValueError(f"need at least 2 profiles to split, got {profiles!r}")
    n_eval = min(len(profiles) - 1, max(1, round(eval_fraction * len(profiles))))
    order = np.random.default_rng(seed).permutation(len(profiles))
    held = {profiles[i] for i in order[:n_eval]}
    train = [t for t, p in task_profiles if p not in held]
    held_out = [t for t, p in task_profiles if p in held]
    return train, held_out


def split_tasks(store: str, eval_fraction: float, seed: int) -> tuple[list[str], list[str]]:
    """``split_by_profile`` over the store's task bank (``situ_gym.scene.loader``)."""
    from situ_gym.scene.loader import load_task_bank

    bank = load_task_bank(store)
    return split_by_profile([(t.id, t.profile_id) for t in bank.tasks], eval_fraction, seed)


def prompt_key(store: str, task_id: str, seed: int) -> str:
    """The dataset's ``prompt`` string: names the episode the rollout must play."""
    key = f"siturec:{store}:{task_id}:{int(seed)}"
    if not _KEY.match(key):
        raise ValueError(f"cannot build a prompt key from store={store!r}, task_id={task_id!r}, seed={seed!r}")
    return key


def parse_prompt_key(prompt: object) -> tuple[str, str, int]:
    """(store, task_id, seed) from a ``prompt_key`` string.

    >>> parse_prompt_key("siturec:supermarket:sm_t003:7")
    ('supermarket', 'sm_t003', 7)
    """
    match = _KEY.match(prompt) if isinstance(prompt, str) else None
    if match is None:
        raise ValueError(f"prompt is not a SituRec prompt key 'siturec:<store>:<task_id>:<seed>': {prompt!r}")
    return match.group(1), match.group(2), int(match.group(3))


def gspo_rows(store: str, task_ids: list[str], episodes_per_task: int, seed: int) -> list[dict]:
    """One dataset row per (task, episode): prompt key, store, task_id and env seed."""
    return [
        {"prompt": prompt_key(store, t, seed + k), "store": store, "task_id": t, "seed": seed + k}
        for k in range(episodes_per_task)
        for t in task_ids
    ]


def training_rows(cfg: Any, seed: int) -> tuple[list[dict], dict[str, list[str]]]:
    """(rows of (prompt key, store, task_id, seed) for the TRAINING tasks, {store: held-out task ids})."""
    rows, held_out = [], {}
    for store in cfg.stores:
        train_ids, held = split_tasks(store, cfg.eval_profile_fraction, cfg.split_seed)
        if cfg.max_tasks is not None:
            train_ids = train_ids[: cfg.max_tasks]
        held_out[store] = held
        rows.extend(gspo_rows(store, train_ids, cfg.episodes_per_task, seed))
    if not rows:
        raise ValueError(f"no training tasks for stores {cfg.stores!r}")
    return rows, held_out
