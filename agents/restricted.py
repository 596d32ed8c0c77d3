"""The heuristic assistant restricted to the compact catalog view a small-context policy gets.

``RestrictedHeuristic`` plays ``HeuristicAssistant`` but knows only the catalog entries the
observations have listed so far in the episode, which is exactly what a policy's growing
conversation holds (``agents.prompting``). With ``SituRecEnv(catalog_view="retrieved")`` it
can only rank, recommend, explain or route to products that retrieval surfaced, so its SR
measures what the compact view costs a strong policy:

    python -m eval.rollout --env SituRec-Supermarket-v0 --agent heuristic-restricted \\
        --env-kwargs '{"catalog_view": "retrieved", "catalog_k": 5}' --tasks all --out runs/x

With the full catalog it behaves exactly like ``HeuristicAssistant``.
"""

from __future__ import annotations

import json
from typing import Any

from agents.heuristic import HeuristicAssistant
from agents.obs_text import parse_catalog
from agents.prompting import ranking_size

__all__ = ["RestrictedHeuristic"]


class RestrictedHeuristic(HeuristicAssistant):
    """``HeuristicAssistant`` whose catalog is the union of the entries listed so far."""

    name = "heuristic-restricted"

    def reset(self, observation: dict[str, Any], info: dict[str, Any], *, seed: int | None = None) -> None:
        super().reset(observation, info, seed=seed)
        # As many ids as the prompt asks of a policy in this view (each id is ~8 tokens a turn).
        self.ranking_size = ranking_size(str(observation.get("catalog", "")))
        self._learn(observation)

    def act(self, observation: dict[str, Any]) -> str:
        self._learn(observation)
        if not self.catalog and self.turn >= 1:
            # Nothing retrieved yet (the shopper named no product words): ask instead of guessing.
            self.turn += 1  # the dialogue so far is read once entries arrive
            return json.dumps(
                {
                    "response": self._fresh("Could you tell me what kind of product you are looking for?"),
                    "assistant_actions": [{"type": "AskPreference"}],
                    "expected_user_action": {"name": "idle", "arguments": {}},
                    "ranking": [],
                }
            )
        return super().act(observation)

    def _learn(self, observation: dict[str, Any]) -> None:
        """Add the observation's catalog entries to what this assistant knows (never forgets)."""
        for entry in parse_catalog(str(observation.get("catalog", ""))):
            if entry.id not in self.catalog:
                self.catalog[entry.id] = entry
                self.by_category.setdefault(entry.category, []).append(entry.id)
