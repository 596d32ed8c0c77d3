"""The pharmacy store folder (stores/pharmacy), copied once per session and registered.

A store id names one folder per process (``situ_gym.stores``), so the tests that register the
pharmacy share this copy; the ones that build a fresh copy do it in a subprocess.
"""

import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PHARMACY = REPO / "stores" / "pharmacy"


@pytest.fixture(scope="session")
def pharmacy_folder(tmp_path_factory) -> Path:
    """A registered pharmacy folder: a session copy of stores/pharmacy, or the folder some other
    test (or $SITUREC_STORES) registered first."""
    from situ_gym.stores import register_store_folder, registered_stores, store_folder

    if "pharmacy" in registered_stores():
        return store_folder("pharmacy")
    folder = tmp_path_factory.mktemp("stores") / "pharmacy"
    shutil.copytree(PHARMACY, folder)
    register_store_folder(folder)
    return folder
