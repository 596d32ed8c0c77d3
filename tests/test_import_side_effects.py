"""Importing any library module has no side effects (pytest imports them all for their doctests)."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("situ_gym", "recrm", "agents", "eval", "train")
# Benchmark scripts pin thread counts on import on purpose; pyproject keeps them out of collection.
SCRIPTS = {"situ_gym.bench", "situ_gym.bench_env"}

# Imports every module after the third-party packages they import at module level (those may
# touch the process themselves: OpenCV sets Qt variables, gymnasium adds warning filters), and
# reports each module that changes the environment, logging, warning filters, sys.path or the
# working directory.
PROBE = r"""
import importlib, json, logging, os, sys, warnings
modules, third_party = json.loads(sys.argv[1])
for name in third_party:
    importlib.import_module(name)
def state():
    return (dict(os.environ), list(logging.root.handlers), logging.root.level,
            list(warnings.filters), list(sys.path), sorted(os.listdir(".")))
changed, before = [], state()
for name in modules:
    importlib.import_module(name)
    after = state()
    if after != before:
        changed.append(name)
    before = after
print(json.dumps(changed))
"""


def _library_modules() -> list[str]:
    names = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if parts[-1] == "__main__":
                continue  # running it is the point of a __main__ module
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            if name not in SCRIPTS:
                names.append(name)
    return names


def _third_party(modules: list[str]) -> list[str]:
    """Top-level packages imported at module level that are not ours."""
    found = set()
    for name in modules:
        path = ROOT.joinpath(*name.split("."))
        path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.Import):
                found |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.split(".")[0])
    return sorted(found - set(PACKAGES) - {"__future__"})


def test_importing_a_library_module_changes_nothing_in_the_process(tmp_path):
    modules = _library_modules()
    assert len(modules) > 100 and "recrm.wrapper" in modules and "eval.__main__" not in modules
    result = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps([modules, _third_party(modules)])],
        cwd=tmp_path, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
        capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert json.loads(result.stdout.splitlines()[-1]) == []
