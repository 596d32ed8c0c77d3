"""How records read as text: item, query, profile and facts renderings shared by synthesis and scorers."""

from __future__ import annotations

from collections.abc import Sequence

from situ_gym.scene.index import SceneIndex
from situ_gym.scene.model import DisclosureItem, Profile, Task

__all__ = ["item_text", "query_text", "profile_text", "facts_text", "context_text"]


def item_text(index: SceneIndex, pid: str) -> str:
    """One product as a judge reads it: name, category, price, labels and where it is."""
    p = index.products[pid]
    tags = ", ".join(t.split(":", 1)[1] for t in p.tags) or "none"
    return f"{p.name} | {p.category} ({p.group}) | ${p.price:.2f} | labels: {tags} | at {index.location_text(pid)}"


def query_text(task: Task, revealed: Sequence[DisclosureItem]) -> str:
    """What the shopper has said about the need (the revealed disclosure details, in order)."""
    said = [d.text for d in revealed]
    return "; ".join(said) if said else f"looking for {task.category}"


def profile_text(profile: Profile | None) -> str:
    """The shopper profile as the ranker and behaviour classifier read it."""
    if profile is None:
        return "unknown shopper"
    demo = ", ".join(f"{k}: {v}" for k, v in sorted(profile.demographics.items()))
    inter = profile.interaction
    return (
        f"{profile.persona} ({demo}); price sensitivity {inter.price_sensitivity}, "
        f"substitutes {inter.substitute_willingness}"
    )


def facts_text(
    index: SceneIndex,
    product_ids: Sequence[str],
    cart: Sequence[str],
    held: str | None,
    budget: float | None,
) -> str:
    """The record a consistency judge checks a response against (the paper's tool output)."""
    lines = [f"- {item_text(index, pid)}" for pid in dict.fromkeys(product_ids) if pid in index.products]
    lines.append(f"cart: {', '.join(index.products[c].name for c in cart if c in index.products) or 'empty'}")
    lines.append(f"holding: {index.products[held].name if held in index.products else 'nothing'}")
    lines.append(f"stated budget: {f'${budget:g}' if budget is not None else 'not stated'}")
    return "\n".join(lines)


def context_text(dialogue: Sequence[tuple[str, str]], visible: Sequence[str], index: SceneIndex, last: int = 4) -> str:
    """The last ``last`` dialogue lines and the products in view, for the instruction judge."""
    lines = [f"{who}: {text}" for who, text in list(dialogue)[-last:]]
    seen = [index.products[v].name for v in sorted(visible) if v in index.products][:6]
    lines.append(f"in view: {', '.join(seen) or 'no products'}")
    return "\n".join(lines)
