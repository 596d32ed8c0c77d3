"""RandomAssistant: valid-format but uninformed turns, the floor every agent should beat."""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np

from agents.base import Assistant
from situ_gym.actions.assistant import ACTION_TYPES, MAX_RANKING
from situ_gym.actions.tools import DISTANCES, LEGAL_TOOLS, TARGET_ARGUMENT, TOOLS

__all__ = ["RandomAssistant", "parse_catalog", "parse_visible"]

_HANDLE_LINE = re.compile(r"^\[(?P<handle>[^\]]+)\]\s*(?P<rest>.*)$")
_APPROACH = re.compile(r"\(approach:\s*(?P<opts>[^)]*)\)")
_SECTIONS = {
    "Visible products:": "product",
    "Visible fixtures:": "fixture",
    "Visible stores:": "store",
    "Visible areas:": "area",
}


def parse_catalog(text: str) -> tuple[list[dict[str, str]], list[dict[str, Any]]]:
    """Products (id, name, category, price) and navigation targets (handle, name, kind,
    approach options) from ``obs["catalog"]``."""
    products: list[dict[str, str]] = []
    targets: list[dict[str, Any]] = []
    section = None
    for line in text.splitlines():
        if line.startswith("Catalog ("):
            section = "catalog"
            continue
        if line.startswith("Navigation targets"):
            section = "nav"
            continue
        parts = [p.strip() for p in line.split("|")]
        if section == "catalog" and len(parts) >= 4:
            products.append({"id": parts[0], "name": parts[1], "category": parts[2], "price": parts[3]})
        elif section == "nav":
            m = _HANDLE_LINE.match(line.strip())
            if m:
                fields = [p.strip() for p in m.group("rest").split("|")]
                opts = [o.strip() for o in fields[-1].split(",")] if len(fields) >= 4 else []
                targets.append({"handle": m.group("handle"), "name": fields[0],
                                "kind": fields[1] if len(fields) > 1 else "", "approach": opts})
    return products, targets


def parse_visible(text: str) -> dict[str, list[dict[str, Any]]]:
    """Marked entities by kind from ``obs["visible"]``: handle, name, approach options."""
    out: dict[str, list[dict[str, Any]]] = {k: [] for k in _SECTIONS.values()}
    kind = None
    for line in text.splitlines():
        line = line.strip()
        if line in _SECTIONS:
            kind = _SECTIONS[line]
            continue
        if line.startswith(("Holding:", "Cart:")):
            kind = None
            continue
        m = _HANDLE_LINE.match(line)
        if kind and m:
            rest = m.group("rest")
            a = _APPROACH.search(rest)
            name = re.sub(r"\s*\([^)]*\)\s*$", "", rest).strip()
            out[kind].append({"handle": m.group("handle"), "name": name,
                              "approach": [o.strip() for o in a.group("opts").split(",")] if a else []})
    return out


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
            store = "home_furnishings" if "outside_doorway" in catalog else "supermarket"
        self.store = store

    def _pick(self, items: list[Any]) -> Any:
        return items[int(self._rng.integers(len(items)))] if items else None

    def _expected(self, visible: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
        options = []
        for name in LEGAL_TOOLS[self.store]:
            target = TARGET_ARGUMENT.get(name)
            kind = {"item": "product"}.get(target, target)
            if target is None or visible.get(kind):
                options.append(name)
        name = self._pick(options)
        arguments: dict[str, Any] = {}
        entity: dict[str, Any] = {}
        for arg, allowed in TOOLS[name].arguments.items():
            if allowed == "handle":
                kind = {"item": "product"}.get(arg, arg)
                entity = self._pick(visible[kind])
                arguments[arg] = entity["handle"]
            elif arg == "approach" and entity.get("approach"):
                # only the approach options the caption lists for this target
                arguments[arg] = self._pick([a for a in entity["approach"] if a in allowed] or list(allowed))
            elif allowed == "angle":
                arguments[arg] = int(self._rng.integers(15, 91))
            elif allowed == "distance":
                arguments[arg] = self._pick(sorted(DISTANCES))
            else:
                arguments[arg] = self._pick(list(allowed))
        return {"name": name, "arguments": arguments}

    def act(self, observation: dict[str, Any]) -> str:
        products, targets = parse_catalog(observation.get("catalog", ""))
        visible = parse_visible(observation.get("visible", ""))
        kind = self._pick(list(ACTION_TYPES))
        action: dict[str, Any] = {"type": kind}
        response = f"Let me help you with that ({kind})."
        if kind == "Recommend":
            seen = self._pick(visible["product"])
            product = seen or self._pick(products) or {"name": "something"}
            action.update(display_name=product["name"], visible_now=seen is not None,
                          reason="It might suit you.")
            response = f"How about {product['name']}?"
        elif kind == "Navigate":
            goal = self._pick(targets) or {"handle": "1", "name": "there", "approach": []}
            action.update(navigation_goal=goal["handle"], reason="Let's look there.")
            if self.store == "home_furnishings":
                hops = visible["store"] + visible["area"]
                hop = self._pick(hops) or goal
                action.update(next_waypoint=hop["handle"],
                              target_approach=self._pick(goal["approach"]) or "outside_doorway")
            response = f"Let's head to {goal['name']}."
        ids = [p["id"] for p in products]
        k = min(MAX_RANKING, len(ids))
        ranking = [ids[i] for i in self._rng.permutation(len(ids))[:k]] if k else []
        return json.dumps({
            "response": response,
            "assistant_actions": [action],
            "expected_user_action": self._expected(visible),
            "ranking": ranking,
        })
