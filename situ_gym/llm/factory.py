"""Build chat backends from a spec string: ``hf:MODEL`` (local transformers) or ``openai:MODEL``.

``hf:`` takes anything :func:`situ_gym.llm.gguf.load_causal_lm` takes: ``hf:gguf:smollm2``
(the packaged SmolLM2 GGUF), ``hf:gguf:/path/model.gguf``, ``hf:/path/folder``,
``hf:org/name``. ``openai:MODEL`` talks to ``base_url`` (a vLLM, ``transformers serve`` or
llama.cpp server, or a hosted API when None). Backends are built once per process and
spec, so roles that name the same model share one loaded copy.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from situ_gym.llm.cache import CachedBackend, ResponseCache
from situ_gym.llm.settings import LLMSettings
from situ_gym.llm.settings import current as current_settings
from situ_gym.llm.types import ChatBackend

__all__ = ["BACKEND_KINDS", "default_cache_path", "make_backend", "check_backend", "clear_backends"]

logger = logging.getLogger(__name__)

BACKEND_KINDS = ("hf", "openai")
_BUILT: dict[tuple, ChatBackend] = {}


def default_cache_path() -> Path:
    """``$SITU_GYM_LLM_CACHE`` or ``~/.cache/situ_gym/llm_responses.sqlite``."""
    env = os.environ.get("SITU_GYM_LLM_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "situ_gym" / "llm_responses.sqlite"


def make_backend(
    spec: str | ChatBackend,
    *,
    base_url: str | None = None,
    api_key_env: str = "OPENAI_API_KEY",
    cache: str | os.PathLike | None = None,
    settings: LLMSettings | None = None,
    **kwargs: Any,
) -> ChatBackend:
    """A (cached, when ``cache`` names a file) backend for ``spec``; see the module docstring.

    ``settings`` (default: this process's ``situ_gym.llm.settings.current()``) sets the
    timeouts, retries, caps and rates of HTTP backends. A local model is loaded on the
    first request the cache cannot answer, so a run served wholly from the cache loads none.
    """
    if isinstance(spec, CachedBackend):
        return spec
    if isinstance(spec, ChatBackend):  # wrapped so that its usage is counted like any other
        return CachedBackend(spec, ResponseCache(cache) if cache is not None else None)
    if not isinstance(spec, str) or ":" not in spec:
        raise ValueError(f"model spec must be 'hf:MODEL' or 'openai:MODEL', got {spec!r}")
    kind, _, name = spec.partition(":")
    if kind not in BACKEND_KINDS or not name:
        raise ValueError(f"model spec must be 'hf:MODEL' or 'openai:MODEL', got {spec!r}")
    settings = settings or current_settings()
    key = (spec, base_url, api_key_env, str(cache), settings, tuple(sorted(kwargs.items())))
    if key in _BUILT:
        return _BUILT[key]
    if kind == "hf":
        from situ_gym.llm.hf_backend import HFChatBackend

        inner: ChatBackend = HFChatBackend(name, **kwargs)
    else:
        from situ_gym.llm.openai_backend import OpenAIChatBackend

        inner = OpenAIChatBackend(name, base_url=base_url, api_key_env=api_key_env, settings=settings)
    backend = CachedBackend(inner, ResponseCache(cache) if cache is not None else None, endpoint=base_url)
    _BUILT[key] = backend
    return backend


def clear_backends() -> None:
    """Close and forget every backend built in this process."""
    for backend in _BUILT.values():
        backend.close()
    _BUILT.clear()


def check_backend(spec: str | ChatBackend, *, base_url: str | None = None, **kwargs: Any) -> None:
    """Fail fast, before any episode, with one line (BackendUnavailable or ValueError):
    an ``openai:`` endpoint must answer ``GET /models``; an ``hf:`` GGUF file or local
    folder must exist (loading itself happens where the episodes run)."""
    from situ_gym.llm.gguf import parse_gguf_spec
    from situ_gym.llm.types import BackendUnavailable

    if isinstance(spec, ChatBackend):
        spec.check()
        return
    if not isinstance(spec, str) or spec.partition(":")[0] not in BACKEND_KINDS or not spec.partition(":")[2]:
        raise ValueError(f"model spec must be 'hf:MODEL' or 'openai:MODEL', got {spec!r}")
    kind, _, name = spec.partition(":")
    if kind == "openai":
        make_backend(spec, base_url=base_url, **kwargs).check()
        return
    try:
        gguf = parse_gguf_spec(name)
    except FileNotFoundError as exc:
        raise BackendUnavailable(str(exc)) from exc
    looks_local = name.startswith((".", "/", "~")) or name.count("/") > 1
    if gguf is None and looks_local and not Path(name).expanduser().exists():
        raise BackendUnavailable(f"model folder not found: {name!r}")
