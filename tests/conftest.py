"""Fixtures every test gets, and the Hypothesis profiles of the property tests (tests/fuzz)."""

import pytest
from hypothesis import HealthCheck, settings

# "ci" (the default): derandomised, so every run tries the same examples and a red CI is
# reproducible; no example database (nothing written beside the clone); no per-example
# deadline (the shared 2-core machines make times noisy: speed is benchmarks' business).
# "long": random and many times more examples (tests/fuzz/strategies.budget), for soaks:
#   python -m pytest tests/fuzz --hypothesis-profile=long
_COMMON = dict(deadline=None, print_blob=True,
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                      HealthCheck.large_base_example])
settings.register_profile("ci", derandomize=True, database=None, **_COMMON)
settings.register_profile("long", **_COMMON)


def pytest_configure(config):
    if not config.getoption("hypothesis_profile", default=None):
        settings.load_profile("ci")


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
