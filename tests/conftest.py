"""Fixtures every test gets, and the Hypothesis profiles of the property tests (tests/fuzz)."""

import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

PHARMACY = Path(__file__).resolve().parents[1] / "stores" / "pharmacy"

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


@pytest.fixture(scope="session")
def pharmacy_folder(tmp_path_factory) -> Path:
    """A registered pharmacy folder: a session copy of stores/pharmacy, or the folder some other
    test (or $SITUREC_STORES) registered first. A store id names one folder per process
    (``situ_gym.stores``), so the tests that register the pharmacy share this copy; the ones
    that build a fresh copy do it in a subprocess."""
    from situ_gym.stores import register_store_folder, registered_stores, store_folder

    if "pharmacy" in registered_stores():
        return store_folder("pharmacy")
    folder = tmp_path_factory.mktemp("stores") / "pharmacy"
    shutil.copytree(PHARMACY, folder)
    register_store_folder(folder)
    return folder
