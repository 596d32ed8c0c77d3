"""Assistants by study name: ``heuristic``, ``random``, ``KIND:MODEL`` (``hf:PATH``, ...), ``pkg.mod:Class``.

Every assistant of the study is built here, so a new agent kind registered in
``agents.registry.AGENTS`` (``openai``, ...) works as ``KIND:MODEL`` without changes.
"""

from __future__ import annotations

from typing import Any

from agents.base import Assistant
from agents.registry import AGENTS, make_agent

__all__ = ["split_assistant_name", "build_assistant", "parse_assistant_list", "check_assistants"]


def split_assistant_name(name: str) -> tuple[str, str | None]:
    """``"hf:runs/x"`` -> ``("hf", "runs/x")``; ``"heuristic"`` and import paths -> ``(name, None)``."""
    kind, sep, model = name.partition(":")
    if sep and kind in AGENTS:
        if not model:
            raise ValueError(f"assistant {name!r} needs a model after ':' (e.g. {kind}:PATH)")
        return kind, model
    return name, None


def build_assistant(name: str, **options: Any) -> Assistant:
    """A fresh assistant for one conversation (ValueError with the valid names when unknown);
    ``options`` go to its constructor (e.g. ``base_url`` of an OpenAI-compatible endpoint)."""
    kind, model = split_assistant_name(name)
    return make_agent(kind, model=model, **options)


def parse_assistant_list(spec: str) -> list[str]:
    """A comma list of assistant names, each checked to resolve (before any participant joins)."""
    from agents.registry import resolve_agent

    names = [s.strip() for s in spec.split(",") if s.strip()]
    if not names:
        raise ValueError(f"no assistants given in {spec!r}; e.g. --assistants heuristic,random")
    if len(set(names)) != len(names):
        raise ValueError(f"assistant names repeat in {spec!r}")
    for name in names:
        kind, model = split_assistant_name(name)
        if kind == "hf" and model is None:
            raise ValueError(f"assistant {name!r} needs a model: write hf:PATH")
        resolve_agent(kind)
    return names


def check_assistants(names: tuple[str, ...] | list[str], *, env_id: str, task_id: str, seed: int,
                     options: dict[str, dict[str, Any]] | None = None) -> None:
    """Build every assistant and reset it on one task, as a conversation would: the first
    that fails is a one-line ValueError naming it and the cause (a missing model path, a
    dead endpoint, a constructor that raises), so no participant meets it."""
    import gymnasium as gym

    import situ_gym  # noqa: F401 - registers the envs
    from agents.base import agent_info

    env = gym.make(env_id)
    try:
        obs, info = env.reset(seed=seed, options={"task_id": task_id})
        for name in names:
            try:
                agent = build_assistant(name, **(options or {}).get(name, {}))
                agent.reset(obs, agent_info(info), seed=seed)
            except Exception as exc:  # noqa: BLE001 - any failure: the study must not start with it
                cause = (str(exc).splitlines() or [""])[0][:200]
                raise ValueError(f"assistant {name!r} cannot play: {type(exc).__name__}: {cause}") from exc
    finally:
        env.close()
