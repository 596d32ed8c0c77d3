"""The README names only what exists: every repository path it mentions, and every module
it runs with ``python -m`` (the flags of those commands: tests/test_cli_help.py)."""

from __future__ import annotations

import glob
import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")

# A path starts in one of the repository's top folders, or is a top-level document.
TOPS = ("situ_gym/", "recrm/", "agents/", "eval/", "train/", "benchmarks/", "tests/", "docs/", ".ci/")
TOP_FILE = re.compile(r"[A-Z][A-Z_]*\.md|pyproject\.toml|LICENSE")
# Words of that shape that are not paths.
NOT_PATHS = {"recrm/total"}  # a reward component's key (info["recrm"], TurnRecord.reward)
PLACEHOLDER = re.compile(r"[A-Z]{3,}|<|\{")  # python -m benchmarks.NAME, runs/<name>, ...


def readme_paths() -> list[str]:
    """Repository paths in code spans, links, image sources and the prose."""
    words = set()
    for span in re.findall(r"`([^`\n]+)`", README):
        words.update(span.split())
    words.update(a or b for a, b in re.findall(r"\]\(([^)\s]+)\)|src=\"([^\"]+)\"", README))
    words.update(re.findall(r"[\w./*-]+\.(?:md|py|toml|yaml|json|png|jsonl)\b", README))
    paths = set()
    for word in words:
        word = word.strip("(),;:'\"").split("::")[0]
        if word in NOT_PATHS or word.startswith(("http", "#")):
            continue
        if TOP_FILE.fullmatch(word) or (word.startswith(TOPS) and not PLACEHOLDER.search(word)):
            paths.add(word)
    return sorted(paths)


def readme_modules() -> list[str]:
    """Modules the README runs as ``python -m MODULE`` (pytest and placeholders aside)."""
    found = set(re.findall(r"python -m ([A-Za-z_][\w.]*)", README))
    return sorted(m for m in found if m != "pytest" and not PLACEHOLDER.search(m))


def test_the_readme_names_paths_and_modules():
    assert len(readme_paths()) > 50 and "docs/protocol.md" in readme_paths()
    assert "eval.rollout" in readme_modules() and "recrm.train" in readme_modules()


@pytest.mark.parametrize("path", readme_paths())
def test_every_path_the_readme_names_exists(path):
    hits = glob.glob(str(ROOT / path)) if "*" in path else [p for p in [ROOT / path] if p.exists()]
    assert hits, f"README.md names {path!r}, which is not in the repository"


@pytest.mark.parametrize("module", readme_modules())
def test_every_module_the_readme_runs_exists(module):
    spec = importlib.util.find_spec(module)
    assert spec is not None, f"README.md runs python -m {module}, which does not exist"
    if spec.submodule_search_locations is not None:  # a package runs its __main__
        assert importlib.util.find_spec(f"{module}.__main__") is not None, f"{module} has no __main__"
