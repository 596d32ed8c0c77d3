"""The heuristic assistant with its catalog knowledge from the env's tools instead of the observation.

``--agent heuristic-tools`` plays ``SituRecEnv(catalog_view="tools")``, whose observation
lists no product (only the navigation index). Within each turn, before it answers, it looks
products up with the tools (``situ_gym.assistant_tools``) through the handle
``agent_info(info)["tools"]``: every new shopper utterance is searched, a category the shopper
asks for is searched as a whole, and a product the shopper picks up or checks that it has not
seen yet is searched by its name. What it learns is the same catalog lines the full view
lists; from there it decides like ``agents.heuristic`` (belief, ranking, routing, wording)::

    python -m eval.rollout --env SituRec-Supermarket-v0 --agent heuristic-tools \\
        --env-kwargs '{"catalog_view": "tools"}' --tasks all --out runs/tools
"""

from __future__ import annotations

from typing import Any

from agents.heuristic import HANDLED_ITEM, HeuristicAssistant
from agents.obs_text import CatalogEntry, parse_catalog

__all__ = ["ToolHeuristicAssistant"]

class ToolHeuristicAssistant(HeuristicAssistant):
    """``HeuristicAssistant`` that knows only the catalog entries its tool calls returned."""

    name = "heuristic-tools"

    utterance_results = 5  # entries looked up per shopper utterance
    category_results = 10  # entries of the wanted category looked up (a category has at most 10)

    def reset(self, observation: dict[str, Any], info: dict[str, Any], *, seed: int | None = None) -> None:
        tools = info.get("tools")
        if not callable(tools):
            raise ValueError("heuristic-tools looks the catalog up with the env's tools: make the env with "
                             "catalog_view='tools' (eval.rollout: --env-kwargs '{\"catalog_view\": \"tools\"}')")
        super().reset(observation, info, seed=seed)  # the tools view lists no product: an empty catalog
        self.tools = tools
        self.searched: set[str] = set()

    # ------------------------------------------------------------------ tools
    def _search(self, query: str, max_results: int) -> list[CatalogEntry]:
        """The entries a search returns, added to what this episode knows."""
        key = query.strip().lower()
        if not key or key in self.searched:
            return []
        self.searched.add(key)
        entries = parse_catalog(self.tools("search_catalog", {"query": query[:300], "max_results": max_results}))
        for entry in entries:
            if entry.id not in self.catalog:
                self.catalog[entry.id] = entry
                self.by_category.setdefault(entry.category, []).append(entry.id)
        return entries

    def _update_belief(self, events: list[tuple[str, str]]) -> None:
        """Each event is read after the tools have told what it may refer to (see the module docstring)."""
        for speaker, text in events:
            if speaker == "user":
                self._search(text, self.utterance_results)
            elif speaker == "action":
                m = HANDLED_ITEM.match(text)
                if m and self._product_by_name(m.group(2)) is None:
                    self._search(m.group(2), 3)
            super()._update_belief([(speaker, text)])
            category = self.belief.category
            if category is not None:  # the whole category the shopper wants, to rank it all
                self._search(category, self.category_results)
