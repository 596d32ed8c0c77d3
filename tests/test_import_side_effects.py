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
# Runs the third-party import statements of the modules first (a third-party package may touch
# the process itself, also when one of its lazily loaded names is first imported: OpenCV sets Qt
# variables, gymnasium and TRL add warning filters), then imports every module and reports each
# one that changes the environment, logging, warning filters, sys.path or the working directory.
PROBE = r"""
import importlib, json, logging, os, sys, warnings
modules, third_party = json.loads(sys.argv[1])
for module, names in third_party:
    try:
        loaded = importlib.import_module(module)
        for name in names:  # "from X import a" also loads what X provides lazily
            if not hasattr(loaded, name):
                importlib.import_module(f"{module}.{name}")
    except ImportError:  # an optional package the module guards itself
        pass
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
            names.append(name)
    return names


def _third_party(modules: list[str]) -> list[tuple[str, list[str]]]:
    """(package module, names imported from it) for the imports of other packages that run
    when the modules are imported."""
    found: set[tuple[str, tuple[str, ...]]] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                continue  # runs later, if at all
            if isinstance(child, ast.Import):
                found.update((a.name, ()) for a in child.names if a.name.split(".")[0] not in PACKAGES)
            elif isinstance(child, ast.ImportFrom) and child.level == 0 and child.module:
                if child.module.split(".")[0] not in (*PACKAGES, "__future__"):
                    found.add((child.module, tuple(a.name for a in child.names)))
            else:
                visit(child)

    for name in modules:
        path = ROOT.joinpath(*name.split("."))
        visit(ast.parse((path / "__init__.py" if path.is_dir() else path.with_suffix(".py")).read_text()))
    return [(module, list(names)) for module, names in sorted(found)]


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
