"""The text each reward model reads for a live turn: the same fields its training records
hold (``recrm.data``), shared by the trained scorers (``recrm.scorers``) and the zero-shot
chat judges (``recrm.judges.llm``)."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from recrm.context import TurnContext
from recrm.data.text import context_text, facts_text, item_text, profile_text, query_text

__all__ = ["context_fields"]


@lru_cache(maxsize=4)
def _profiles(store: str) -> dict[str, Any]:
    from situ_gym.scene.loader import load_task_bank

    return {p.id: p for p in load_task_bank(store).profiles}


def _profile(ctx: TurnContext):
    try:
        return _profiles(ctx.store).get(ctx.task.profile_id)
    except (OSError, ValueError):  # a test world without packaged assets
        return None


def _budget(ctx: TurnContext) -> float | None:
    vals = [d.value for d in ctx.revealed_items if d.kind == "budget" and isinstance(d.value, (int, float))]
    return float(vals[0]) if vals else None


def context_fields(kind: str, ctx: TurnContext) -> dict[str, Any] | None:
    """The text a ``kind`` model reads for a live turn (None: the dimension does not apply)."""
    index, pid = ctx.index, ctx.judged_item
    if kind == "instruction":
        return {"context": context_text(ctx.dialogue, ctx.visible, index), "response": ctx.raw}
    if kind == "consistency":
        ids = [pid] if pid else []
        ids += [p for p in ctx.ranking if p in index.products][:2]
        return {"facts": facts_text(index, ids, ctx.cart, ctx.held_item, _budget(ctx)), "response": ctx.response}
    if kind == "relevance":
        if pid is None:
            return None
        return {"query": query_text(ctx.task, ctx.revealed_items), "item": item_text(index, pid)}
    ranked = [p for p in dict.fromkeys(ctx.ranking) if p in index.products][:10]
    if not ranked:
        return None
    return {
        "profile": profile_text(_profile(ctx)),
        "query": query_text(ctx.task, ctx.revealed_items),
        "ids": ranked,
        "items": [item_text(index, p) for p in ranked],
    }
