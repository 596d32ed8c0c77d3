"""RandomAssistant: valid-format but uninformed turns, the floor every agent should beat."""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from agents.base import Assistant
from agents.obs_text import Marked, parse_caption, parse_catalog, parse_nav_targets
from situ_gym.actions.assistant import ACTION_TYPES, MAX_RANKING
from situ_gym.actions.tools import DISTANCES, LEGAL_TOOLS, TARGET_ARGUMENT, TOOLS
from situ_gym.stores import PAPER_STORES, store_spec

__all__ = ["RandomAssistant"]

_KIND_OF_ARGUMENT = {"item": "product", "fixture": "fixture", "store": "store", "area": "area"}


class RandomAssistant(Assistant):
    """Uniform over dialogue actions, user tools (with visible targets) and catalog rankings.

    Required fields are filled from the observation text (random visible product, random
    fixed navigation handle), so every turn parses; nothing in it is informed by the
    dialogue. Seeded through ``reset(seed=...)``: same seed and observations, same turns.
    """

    name = "random"

    def __init__(self, store: str | None = None):
        if store is not None and store not in LEGAL_TOOLS:
            raise ValueError(f"store must be one of {sorted(LEGAL_TOOLS)}, got {store!r}")
        self.store = store
        self._rng = np.random.default_rng(0)

    def reset(self, observation: dict[str, Any], info: dict[str, Any], *, seed: int | None = None) -> None:
        self._rng = np.random.default_rng(seed)
        store = info.get("store", self.store)
        if store not in LEGAL_TOOLS:
            catalog = observation.get("catalog", "")
            store = PAPER_STORES[1] if "outside_doorway" in catalog else PAPER_STORES[0]
        self.store = store
        self.spec = store_spec(store)

    def _pick(self, items: list[Any]) -> Any:
        return items[int(self._rng.integers(len(items)))] if items else None

    def _expected(self, visible: dict[str, list[Marked]]) -> dict[str, Any]:
        options = []
        for name in LEGAL_TOOLS[self.store]:
            target = TARGET_ARGUMENT.get(name)
            if target is None or visible[_KIND_OF_ARGUMENT[target]]:
                options.append(name)
        name = self._pick(options)
        arguments: dict[str, Any] = {}
        entity: Marked | None = None
        for arg, allowed in TOOLS[name].arguments.items():
            if allowed == "handle":
                entity = self._pick(visible[_KIND_OF_ARGUMENT[arg]])
                arguments[arg] = entity.handle
            elif arg == "approach" and entity is not None and entity.approaches:
                # only the approach options the caption lists for this target
                arguments[arg] = self._pick([a for a in entity.approaches if a in allowed] or list(allowed))
            elif allowed == "angle":
                arguments[arg] = int(self._rng.integers(15, 91))
            elif allowed == "distance":
                arguments[arg] = self._pick(sorted(DISTANCES))
            else:
                arguments[arg] = self._pick(list(allowed))
        return {"name": name, "arguments": arguments}

    def act(self, observation: dict[str, Any]) -> str:
        products = parse_catalog(observation.get("catalog", ""))
        targets = parse_nav_targets(observation.get("catalog", ""))
        caption = parse_caption(observation.get("visible", ""))
        visible = {"product": caption.products, "fixture": caption.fixtures, "store": caption.stores, "area": caption.areas}
        kind = self._pick(list(ACTION_TYPES))
        action: dict[str, Any] = {"type": kind}
        response = f"Let me help you with that ({kind})."
        if kind == "Recommend":
            seen = self._pick(caption.products)
            product = seen or self._pick(products)
            name = product.name if product is not None else "something"
            action.update(display_name=name, visible_now=seen is not None, reason="It might suit you.")
            response = f"How about {name}?"
        elif kind == "Navigate":
            goal = self._pick(targets)
            handle, goal_name, approaches = (goal.handle, goal.name, goal.approaches) if goal else ("1", "there", ())
            action.update(navigation_goal=handle, reason="Let's look there.")
            if self.spec.layout == "stores":
                hop = self._pick(caption.stores + caption.areas)
                action.update(
                    next_waypoint=hop.handle if hop else handle,
                    target_approach=self._pick([a for a in approaches if a != "area"]) or "outside_doorway",
                )
            response = f"Let's head to {goal_name}."
        ids = [p.id for p in products]
        k = min(MAX_RANKING, len(ids))
        ranking = [ids[i] for i in self._rng.permutation(len(ids))[:k]] if k else []
        return json.dumps(
            {
                "response": response,
                "assistant_actions": [action],
                "expected_user_action": self._expected(visible),
                "ranking": ranking,
            }
        )
