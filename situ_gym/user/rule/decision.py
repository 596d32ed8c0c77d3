"""The rule shopper's product decision: does an inspected product fit, and would it buy it?

``assess`` compares the inspected details with the private goal: category and avoided labels
are hard, needs and budget may be soft for this persona (``Persona``). ``Decision`` turns the
verdict, the explanations heard and the persona's draws into buy / ask for a reason / reject.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from situ_gym.scene.model import Task
from situ_gym.user.rule.persona import Persona
from situ_gym.user.rule.state import EpisodeState

__all__ = ["Verdict", "assess", "Decision", "PRICIER"]

PRICIER = 0.15  # price-sensitive shoppers turn down a fit when another fit is this much cheaper


@dataclass(frozen=True)
class Verdict:
    kind: str  # "fit" | "soft" | "avoid" | "budget" | "category" | "need"
    tag: str | None = None  # the offending label
    soft_reason: str | None = None  # for "soft": "need" or "budget"


def assess(details: dict[str, Any], task: Task, persona: Persona) -> Verdict:
    """The verdict on an inspected product (``details``: price, tags, category)."""
    tags = set(details.get("tags", []))
    price = float(details.get("price", float("inf")))
    for tag in task.avoided_tags:
        if tag in tags:
            return Verdict("avoid", tag)
    category = details.get("category")
    if category is not None and category != task.category:
        return Verdict("category")
    missing = [t for t in task.required_tags if t not in tags]
    over = price > task.budget + 1e-9
    within_slack = price <= task.budget * (1.0 + persona.budget_slack) + 1e-9
    hard_missing = [t for t in missing if t not in persona.soft_needs]
    if hard_missing:
        return Verdict("need", hard_missing[0])
    if over and not within_slack:
        return Verdict("budget")
    misses = len(missing) + int(over)
    if misses == 0:
        return Verdict("fit")
    if misses == 1:
        return Verdict("soft", missing[0] if missing else None, "need" if missing else "budget")
    return Verdict("need", missing[0]) if missing else Verdict("budget")


class Decision:
    """Buy, ask for a reason, or reject — given what the shopper has heard and inspected."""

    def __init__(self, task: Task, persona: Persona, state: EpisodeState, rng: np.random.Generator):
        self.task, self.persona, self.state, self.rng = task, persona, state, rng

    def convinced_of_tradeoff(self, pid: str, verdict: Verdict) -> bool:
        """Whether an explanation for ``pid`` addressed the missed point (and the persona lets it go)."""
        cited = self.state.explained.get(pid, set())
        if verdict.soft_reason == "budget":
            addressed = bool(cited & {"price", "budget"})
        else:
            key = (verdict.tag or "").partition(":")[0]
            addressed = any(c.partition(":")[0] == key for c in cited if ":" in c)
        if not addressed:
            return False
        if pid not in self.state.tradeoff_ok:
            self.state.tradeoff_ok[pid] = bool(self.rng.random() < self.persona.tradeoff_p)
        return self.state.tradeoff_ok[pid]

    def substitute_ok(self, pid: str) -> bool:
        if pid == self.task.target_product_id:
            return True
        if not self.task.acceptance.accept_substitutes:
            return False
        if pid not in self.state.substitute_ok:
            self.state.substitute_ok[pid] = bool(self.rng.random() < self.persona.substitute_p)
        return self.state.substitute_ok[pid]

    def cheaper_fit(self, pid: str, inspected: dict[str, dict[str, Any]]) -> str | None:
        """Another inspected, still acceptable fit that is clearly cheaper (price-sensitive shoppers)."""
        price = float(inspected[pid].get("price", 0.0))
        best = None
        for other, details in inspected.items():
            if other == pid or other in self.state.rejected:
                continue
            if assess(details, self.task, self.persona).kind != "fit":
                continue
            if other != self.task.target_product_id and not self.task.acceptance.accept_substitutes:
                continue
            p = float(details.get("price", float("inf")))
            if p <= price * (1.0 - PRICIER) and (best is None or p < best[0]):
                best = (p, other)
        return best[1] if best else None

    def decide(self, pid: str, inspected: dict[str, dict[str, Any]]) -> tuple[str, Verdict, str | None]:
        """("buy" | "buy_tradeoff" | "explain" | "hesitate" | "reject", verdict, cheaper
        alternative) for an inspected product."""
        verdict = assess(inspected[pid], self.task, self.persona)
        tradeoff = False
        if verdict.kind == "soft":
            if self.task.acceptance.accept_substitutes and self.convinced_of_tradeoff(pid, verdict):
                tradeoff = True
            elif pid not in self.state.hesitated and self.task.acceptance.accept_substitutes:
                self.state.hesitated.add(pid)
                return "hesitate", verdict, None  # voices the miss: is it worth it anyway?
            else:
                return "reject", Verdict(verdict.soft_reason or "need", verdict.tag), None
        elif verdict.kind != "fit":
            return "reject", verdict, None
        if not tradeoff and not self.substitute_ok(pid):
            return "reject", Verdict("substitute"), None
        if self.persona.price_sensitive:
            cheaper = self.cheaper_fit(pid, inspected)
            if cheaper is not None:
                return "reject", Verdict("pricier"), cheaper
        if self.state.explanations < self.persona.explanations_needed:
            return "explain", verdict, None
        return ("buy_tradeoff" if tradeoff else "buy"), verdict, None
