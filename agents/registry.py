"""Agents by name ("random", "heuristic", "heuristic-tools", "plain", "paraphrase", "style-*", "hf", "openai", "chat",
"probe-*") or by import path "pkg.module:Class"."""

from __future__ import annotations

import importlib
from typing import Any

from agents.base import Assistant

__all__ = ["AGENTS", "PROBE_AGENTS", "resolve_agent", "make_agent"]

AGENTS: dict[str, str] = {
    "random": "agents.random_agent:RandomAssistant",
    "heuristic": "agents.heuristic:HeuristicAssistant",
    "heuristic-restricted": "agents.restricted:RestrictedHeuristic",  # catalog limited to the observed view
    "heuristic-tools": "agents.tool_heuristic:ToolHeuristicAssistant",  # catalog from the tools (catalog_view="tools")
    "hf": "agents.hf_policy:HFPolicyAssistant",
    "plain": "agents.plain:PlainAssistant",
    "paraphrase": "agents.paraphrase:ParaphrasingAssistant",
    "openai": "agents.chat_agent:OpenAIAssistant",  # --model NAME [--base-url URL]
    "chat": "agents.chat_agent:ChatAssistant",  # --model hf:... | openai:NAME (any chat backend)
    # the heuristic's decisions, its words restyled (agents/styles.py)
    "style-chat": "agents.styles:ChatStyleAssistant",  # markdown chat-model prose
    "style-clipped": "agents.styles:ClippedStyleAssistant",  # lower-case clipped notes
    "style-nonnative": "agents.styles:NonNativeStyleAssistant",  # non-native English
}

# Reward probes (eval.probes): assistants that try to game RecRM on purpose.
PROBE_AGENTS: dict[str, str] = {
    f"probe-{name}": f"agents.probes:{cls}"
    for name, cls in (
        ("echo", "EchoProbe"),
        ("keywords", "KeywordsProbe"),
        ("silent-ranker", "SilentRankerProbe"),
        ("always-confirm", "AlwaysConfirmProbe"),
        ("promo", "PromoProbe"),
        ("list-dumper", "ListDumperProbe"),
        ("mislabel", "MislabelProbe"),
        ("preference-inventor", "PreferenceInventorProbe"),
        ("name-drop", "NameDropProbe"),
        ("describe-only", "DescribeOnlyProbe"),
        ("multi", "MultiProbe"),
        ("price-lie", "PriceLieProbe"),
        ("flattery", "FlatteryProbe"),
        ("rude", "RudeProbe"),
        ("unsafe", "UnsafeProbe"),
        ("health-claim", "HealthClaimProbe"),
        ("wish-restate", "WishRestateProbe"),
    )
}
AGENTS.update(PROBE_AGENTS)


def resolve_agent(name: str) -> type[Assistant]:
    """The Assistant class for a registered name or a "pkg.module:Class" path (imported
    lazily, so optional heavy agents cost nothing until asked for)."""
    path = AGENTS.get(name, name)
    if ":" not in path:
        raise ValueError(f"unknown agent {name!r}; choose one of {sorted(AGENTS)} or give 'pkg.module:Class'")
    module_name, _, attr = path.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ValueError(f"agent {name!r}: cannot import {module_name!r} ({exc})") from exc
    cls = getattr(module, attr, None)
    if not (isinstance(cls, type) and issubclass(cls, Assistant)):
        raise ValueError(f"agent {name!r}: {path!r} is not an agents.base.Assistant subclass")
    return cls


def make_agent(name: str, *, model: str | None = None, **kwargs: Any) -> Assistant:
    """Build an agent; ``model`` (a path or hub id) is passed first for model-backed agents."""
    if name in ("hf", "openai", "chat") and model is None:
        raise ValueError(f"agent {name!r} needs a model: pass --model {'PATH' if name == 'hf' else 'NAME'}")
    cls = resolve_agent(name)
    agent = cls(model, **kwargs) if model is not None else cls(**kwargs)
    return agent
