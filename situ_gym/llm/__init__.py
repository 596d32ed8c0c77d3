"""Chat backends for the LLM roles: OpenAI-compatible HTTP, local transformers (incl. GGUF), cache.

    >>> from situ_gym.llm import ChatRequest, make_backend                   # doctest: +SKIP
    >>> backend = make_backend("hf:gguf:smollm2", cache="runs/llm.sqlite")   # doctest: +SKIP
    >>> backend.chat(ChatRequest([{"role": "user", "content": "Hi"}], role="user")).text  # doctest: +SKIP

Heavy dependencies (openai, transformers, torch) are imported only when a backend of
that kind is built.
"""

from situ_gym.llm.cache import CachedBackend, ResponseCache, request_key
from situ_gym.llm.errors import EPISODE_CAUSES, EpisodeError, LLMError, SetupError, TransientError
from situ_gym.llm.factory import (
    BACKEND_KINDS,
    check_backend,
    clear_backends,
    default_cache_path,
    make_backend,
)
from situ_gym.llm.lockstep import GATE, LockstepGate, chat_lockstep
from situ_gym.llm.replies import extract_json
from situ_gym.llm.settings import LLMSettings, configure
from situ_gym.llm.types import ROLES, BackendUnavailable, ChatBackend, ChatRequest, ChatResult
from situ_gym.llm.usage import METER, UsageMeter, format_usage, read_usage, summarize_usage

__all__ = [
    "ROLES",
    "BACKEND_KINDS",
    "BackendUnavailable",
    "LLMError",
    "TransientError",
    "EpisodeError",
    "SetupError",
    "EPISODE_CAUSES",
    "LLMSettings",
    "configure",
    "ChatBackend",
    "ChatRequest",
    "ChatResult",
    "CachedBackend",
    "ResponseCache",
    "request_key",
    "make_backend",
    "check_backend",
    "clear_backends",
    "default_cache_path",
    "GATE",
    "LockstepGate",
    "chat_lockstep",
    "extract_json",
    "METER",
    "UsageMeter",
    "read_usage",
    "summarize_usage",
    "format_usage",
]
