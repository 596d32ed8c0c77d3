"""Where the pharmacy store folder is (its registered session copy: ``pharmacy_folder`` in
tests/conftest.py)."""

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PHARMACY = REPO / "stores" / "pharmacy"
