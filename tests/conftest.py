"""Fixtures every test gets."""

import pytest


@pytest.fixture(autouse=True)
def _fresh_llm_process_state():
    """Each test starts with this process's LLM state as a new process has it: no endpoint
    marked dead, no learnt format downgrade or rate window, default settings, no backends
    kept by the factory (tests reuse loopback ports, so state must not carry over)."""
    from situ_gym.llm import clear_backends, configure
    from situ_gym.llm.openai_backend import reset_endpoints
    from situ_gym.llm.settings import SETTINGS

    yield
    clear_backends()
    reset_endpoints()
    configure(SETTINGS)
