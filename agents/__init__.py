"""Assistants that play SituRec episodes; build one by name with ``agents.registry.make_agent``."""

__all__: list[str] = []
