"""The import graph of the library: no cycle between modules or packages, and data flows
down the layers of ARCHITECTURE.md (situ_gym, recrm, agents, eval, train; benchmarks and
tests are never imported). Imports inside functions count: a lazy import still ties two
modules together."""

from __future__ import annotations

import ast
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ("situ_gym", "recrm", "agents", "eval", "train")  # each may import only those before it


def modules(root: Path, packages: tuple[str, ...]) -> dict[str, Path]:
    """Dotted module name -> file, for every ``.py`` file of ``packages`` under ``root``."""
    found = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def imported(name: str, path: Path, known: set[str]) -> set[str]:
    """The modules named by ``name``'s import statements (anywhere in the file) that are either
    in ``known`` or start with one of ``known``'s top-level names (so that imports of modules
    outside ``known``, such as ``benchmarks`` or ``tests``, are kept as edges too)."""
    tops = {m.split(".")[0] for m in known} | {"benchmarks", "tests"}
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    targets = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: resolved against this module's package
                anchor = package[: len(package) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:  # "from pkg import mod" names the module pkg.mod
                targets.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base)
    return {t for t in targets if t.split(".")[0] in tops and t != name}


def import_graph(root: Path, packages: tuple[str, ...]) -> dict[str, set[str]]:
    found = modules(root, packages)
    return {name: imported(name, path, set(found)) for name, path in found.items()}


def package_of(module: str) -> str:
    """situ_gym's subpackages and top-level modules are units of their own; the other
    packages are one unit each."""
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "situ_gym" and len(parts) > 1 else parts[0]


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    try:
        TopologicalSorter(graph).prepare()
    except CycleError as exc:
        return exc.args[1]
    return None


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return import_graph(ROOT, LAYERS)


def test_no_cycle_between_modules(graph):
    cycle = find_cycle(graph)
    assert cycle is None, f"import cycle: {' -> '.join(cycle)}"


def test_no_cycle_between_packages(graph):
    packages: dict[str, set[str]] = {}
    for module, targets in graph.items():
        edges = packages.setdefault(package_of(module), set())
        edges.update(package_of(t) for t in targets if package_of(t) != package_of(module))
    cycle = find_cycle(packages)
    assert cycle is None, f"package cycle: {' -> '.join(cycle)}"


def test_imports_flow_down_the_layers(graph):
    rank = {layer: i for i, layer in enumerate(LAYERS)}
    upward = sorted(
        f"{module} -> {target}"
        for module, targets in graph.items()
        for target in targets
        if rank.get(target.split(".")[0], len(LAYERS)) > rank[module.split(".")[0]]
    )
    assert not upward, f"imports of a higher layer (or of benchmarks/tests): {upward}"
    assert "situ_gym.bench" not in graph and "recrm.bench" not in graph  # benchmarks live in benchmarks/


def test_the_checks_see_a_lazy_cycle_and_a_benchmarks_import(tmp_path):
    """The same functions on a made-up tree: a lazy two-module circle, a relative import and
    an import of benchmarks are all seen."""
    low, high = tmp_path / "low", tmp_path / "high"
    for folder in (low, high):
        folder.mkdir()
        (folder / "__init__.py").write_text("")
    (low / "a.py").write_text("from low import b\n")
    (low / "b.py").write_text("def f():\n    from . import a\n")
    (high / "c.py").write_text("import low.a\nimport benchmarks.frames\n")
    fake = import_graph(tmp_path, ("low", "high"))
    assert fake["high.c"] == {"low.a", "benchmarks.frames"}
    assert sorted(find_cycle(fake)[:2]) == ["low.a", "low.b"]
    assert find_cycle({"low.a": {"low.b"}, "low.b": set()}) is None
