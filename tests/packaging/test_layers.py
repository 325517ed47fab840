"""The design's layering, checked on the source: lower packages never import higher ones, and no
package reaches into another's private modules.

Layers, lowest first: the base layer (``evoforge.base``: helpers every layer may import, which
imports no other evoforge module), plugins, problems, archive, evaluators, islands, evolve; the
``evoforge`` package itself is the public API on top, which no layer imports. The base layer's
modules are public and import nothing of evoforge but each other.

Inside ``evolve`` (a third of the engine) the subpackages are floors (:data:`EVOLVE_FLOORS`): a
floor imports only lower floors, never a sibling on its own floor, and none imports the
``evoforge.evolve`` package itself (its names are the public API of all of them).

A module imports only the public names of any package but its own: its own package's private
modules, never its parent's (a built-in evaluator imports ``evoforge.evaluators`` as a
third-party plugin does, not ``evoforge.evaluators._base``). Imports inside
``if TYPE_CHECKING:`` only name types for annotations and do not count.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LAYERS = ("plugins", "problems", "archive", "evaluators", "islands", "evolve")
BASE = "base"  # evoforge.base, the lowest layer
EVOLVE_FLOORS = (
    ("checks", "mining"),
    ("models", "prompts", "edits"),
    ("offline", "proposals"),
    ("search",),
    ("config",),
    ("run",),
    ("dashboard",),
    ("cli",),
)
"""``evolve``'s subpackages, lowest floor first."""


def _modules(root: Path = ROOT) -> list[tuple[str, Path]]:
    found = []
    for package in (*LAYERS, "evoforge"):
        for path in sorted((root / package).rglob("*.py")):
            if "builtin" in path.relative_to(root).parts:  # problem folders: data, not code
                continue
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            if package != "evoforge":
                parts.insert(0, "evoforge")
            found.append((".".join(parts), path))
    return found


def _runtime_imports(tree: ast.Module, module: str, is_package: bool) -> list[tuple[int, str]]:
    """``(line, imported module)`` for every import that runs (not under TYPE_CHECKING)."""
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip.update(id(child) for stmt in node.body for child in ast.walk(stmt))
    package = module if is_package else module.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            if base == "evoforge":  # `from evoforge import plugins`: the subpackage, not the API
                found += [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
                continue
            found.append((node.lineno, base))
            # `from evoforge.archive import _json` imports the module evoforge.archive._json
            found += [(node.lineno, f"{base}.{a.name}") for a in node.names if a.name[0] == "_"]
    return [(line, name) for line, name in found if name.split(".")[0] == "evoforge"]


def _layer(module: str) -> int:
    parts = module.split(".")
    if len(parts) > 1 and parts[1] == BASE:
        return -1
    if len(parts) == 1 or parts[1] not in LAYERS:
        return len(LAYERS)  # the API
    return LAYERS.index(parts[1])


def _floor(module: str) -> int | None:
    """The floor of an ``evolve`` module (its subpackage's index in :data:`EVOLVE_FLOORS`;
    the ``evoforge.evolve`` package itself is above them all); None outside ``evolve``."""
    parts = module.split(".")
    if parts[:2] != ["evoforge", "evolve"]:
        return None
    if len(parts) == 2:
        return len(EVOLVE_FLOORS)
    for index, floor in enumerate(EVOLVE_FLOORS):
        if parts[2] in floor:
            return index
    raise AssertionError(f"{module}: evolve/{parts[2]} is on no floor; add it to EVOLVE_FLOORS")


def _private_owner(imported: str) -> str | None:
    """The package a private module belongs to (``evoforge.archive`` for
    ``evoforge.archive._json``); None for a public module."""
    parts = imported.split(".")
    for index, part in enumerate(parts):
        if part.startswith("_") and not part.startswith("__"):
            return ".".join(parts[:index])
    return None


def _violation(module: str, imported: str, is_package: bool = False) -> str | None:
    """Why ``module`` may not import ``imported``; None when it may."""
    if _layer(imported) > _layer(module):
        return f"{module} (a lower layer) imports {imported}"
    here, there = _floor(module), _floor(imported)
    if here is not None and there is not None and here < len(EVOLVE_FLOORS):
        if there > here:
            return f"{module} (a lower floor of evolve) imports {imported}"
        own, other = module.split(".")[2], imported.split(".")
        if there == here and len(other) > 2 and other[2] != own:
            return f"{module} imports {imported}, a sibling on its own floor of evolve"
    package = module if is_package else module.rpartition(".")[0]
    owner = _private_owner(imported)
    if owner and owner != "evoforge" and owner != package:
        return (
            f"{module} imports {imported}, a private module of {owner}; "
            f"export what it needs from {owner}"
        )
    return None


def _violations(root: Path = ROOT) -> list[str]:
    found = []
    for module, path in _modules(root):
        tree = ast.parse(path.read_text(), str(path))
        is_package = path.name == "__init__.py"
        for line, imported in _runtime_imports(tree, module, is_package):
            if why := _violation(module, imported, is_package):
                found.append(f"{path.relative_to(root)}:{line}: {why}")
    return found


def test_packages_import_only_lower_layers_and_public_names() -> None:
    problems = _violations()
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(
    ("module", "imported", "allowed"),
    [
        ("evoforge.archive._grids", "evoforge.evaluators", False),
        ("evoforge.evolve.run._session", "evoforge.archive", True),
        ("evoforge.evolve.run._session", "evoforge.archive._json", False),
        ("evoforge.archive._archive", "evoforge.archive._json", True),
        ("evoforge.evaluators", "evoforge.evaluators.python._evaluator", False),
        ("evoforge.evaluators.kernels.tpu._evaluator", "evoforge.evaluators.kernels._io", False),
        ("evoforge.evaluators.kernels.tpu._evaluator", "evoforge.evaluators.kernels", True),
        ("evoforge.archive._grids", "evoforge.base.settings", True),
        ("evoforge.base.settings", "evoforge.archive", False),
        ("evoforge._api", "evoforge.evolve", True),
        ("evoforge.plugins._manager", "evoforge.base.frames", True),
        ("evoforge.evolve.proposals._frames", "evoforge.base.frames", True),
        ("evoforge.base.jsonio", "evoforge.base.frames", True),
        ("evoforge.base.settings", "evoforge.base.redaction", True),
        ("evoforge.base.frames", "evoforge.plugins", False),
        ("evoforge.evaluators.sandbox._protocol", "evoforge.base._private", False),
        ("evoforge.evaluators.sandbox._protocol", "evoforge._dataframes", False),
        ("evoforge.evolve.run._controller", "evoforge.evolve.proposals", True),
        ("evoforge.evolve.proposals._pool", "evoforge.evolve.run", False),
        ("evoforge.evolve.edits._parse", "evoforge.evolve.models", False),
        ("evoforge.evolve.run._recorder", "evoforge.evolve", False),
        ("evoforge.evolve", "evoforge.evolve.run", True),
        ("evoforge.evolve.cli._run", "evoforge.evolve.run._session", False),
        ("evoforge.evolve.run._session", "evoforge.evolve.run._controller", True),
    ],
    ids=[
        "lower-imports-higher",
        "higher-imports-lower",
        "private-of-another-package",
        "own-private",
        "parent-into-child-private",
        "child-into-parent-private",
        "child-imports-parent-public",
        "a-layer-imports-base",
        "base-imports-archive",
        "api-uses-every-layer",
        "lowest-layer-imports-base",
        "highest-layer-imports-base",
        "base-module-imports-base-module",
        "base-imports-base",
        "base-imports-a-layer",
        "private-module-of-base",
        "api-module-other-than-base",
        "evolve-floor-imports-lower-floor",
        "evolve-floor-imports-higher-floor",
        "evolve-floor-imports-sibling",
        "evolve-floor-imports-evolve-itself",
        "evolve-api-imports-a-floor",
        "evolve-floor-imports-private-of-lower-floor",
        "evolve-own-private",
    ],
)
def test_the_check_itself(module: str, imported: str, allowed: bool) -> None:
    assert (_violation(module, imported) is None) is allowed


def test_a_planted_upward_import_inside_evolve_fails(tmp_path: Path) -> None:
    """The check runs on real files: a lower floor of evolve importing the run is caught."""
    planted = tmp_path / "evolve" / "checks" / "_planted.py"
    planted.parent.mkdir(parents=True)
    (planted.parent / "__init__.py").write_text("")
    planted.write_text("from evoforge.evolve.run import start_run\n")
    (tmp_path / "evolve" / "__init__.py").write_text("")
    assert _violations(tmp_path) == [
        "evolve/checks/_planted.py:1: evoforge.evolve.checks._planted (a lower floor of evolve) "
        "imports evoforge.evolve.run"
    ]


def test_every_evolve_subpackage_is_on_a_floor() -> None:
    on_floors = {name for floor in EVOLVE_FLOORS for name in floor}
    found = {path.parent.name for path in (ROOT / "evolve").glob("*/__init__.py")}
    assert found == on_floors
    assert [p.name for p in (ROOT / "evolve").glob("*.py")] == ["__init__.py"], (
        "evolve's root holds only its public API; a module belongs to one of its floors"
    )
