"""Packages whose names load on first use, and what the ``evoforge`` command imports.

``evoforge --help`` used to import the controller, the evaluators, pandas (through
sqlite-utils) and pydantic's models: ~0.76 s of CPU before printing anything (issue 25).
These tests fail when an eager import comes back.
"""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

from evoforge.base.lazy import LazyPackageError, typed_exports
from tests.packaging.test_layers import LAYERS, _layer

ROOT = Path(__file__).resolve().parents[2]
LAZY = {
    ".".join(("evoforge", *init.parent.relative_to(ROOT).parts)).replace(
        "evoforge.evoforge", "evoforge"
    ): init
    for folder in (*LAYERS, "evoforge")
    for init in sorted((ROOT / folder).rglob("__init__.py"))
    if "builtin" not in init.parts and "lazy_package(__name__)" in init.read_text()
}
"""Every package built with evoforge.base.lazy.lazy_package, by its ``__init__``."""
HEAVY = (
    "litellm", "numpy", "pandas", "sqlite_utils", "pydantic", "plotly", "starlette", "torch",
    "asyncio",
)  # fmt: skip
"""Modules ``evoforge --help`` must not import."""


def test_the_main_packages_are_lazy() -> None:
    for package in ("evoforge", "evoforge.archive", "evoforge.evolve", "evoforge.problems"):
        assert package in LAZY


@pytest.mark.parametrize("package", sorted(LAZY))
def test_each_export_is_written_once_and_served_as_typed(package: str) -> None:
    module = importlib.import_module(package)
    tree = ast.parse(LAZY[package].read_text())
    typed = [
        (alias, stmt.module)
        for node in tree.body
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        for stmt in node.body
        if isinstance(stmt, ast.ImportFrom)
        for alias in stmt.names
    ]
    # `from m import Name as Name`: PEP 484's explicit re-export, what mypy --strict, pyright
    # and editors read as the package's own name; and the only place the name is written.
    assert all(alias.asname == alias.name for alias, _ in typed), package
    names = [alias.name for alias, _ in typed]
    assert len(names) == len(set(names)), f"{package} exports a name twice"
    assert [n for n in module.__all__ if n != "__version__"] == names
    missing = set()  # optional extras not installed (the dashboard's starlette, say)
    for alias, source in typed:
        assert _layer(source) <= _layer(package), f"{package}.{alias.name} comes from {source}"
        try:
            defined = importlib.import_module(source)
        except ModuleNotFoundError as exc:
            if (exc.name or "evoforge").startswith("evoforge"):
                raise
            missing.add(exc.name)
            continue
        assert getattr(module, alias.name) is getattr(defined, alias.name)
    with pytest.raises(AttributeError, match="has no attribute 'nonexistent'"):
        module.nonexistent  # noqa: B018
    assert set(names) <= set(dir(module))
    if missing:
        pytest.skip(f"{package}: its exports' modules need {', '.join(sorted(missing))} (an extra)")


def test_a_typed_block_holding_anything_but_exports_is_refused() -> None:
    with pytest.raises(LazyPackageError, match="only hold absolute `from module import name`"):
        typed_exports("if TYPE_CHECKING:\n    import os\n", "pkg/__init__.py")
    assert typed_exports("if TYPE_CHECKING:\n    from a.b import C as C, d as e\n") == {
        "C": ("a.b", "C"),
        "e": ("a.b", "d"),
    }


def _imported_by(code: str) -> set[str]:
    """Top-level names of the modules a fresh interpreter has imported after ``code``."""
    lines = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport sys\nprint('\\n'.join(sys.modules))"],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    ).stdout.splitlines()
    return {line.split(".")[0] for line in lines}


def test_evoforge_help_imports_no_heavy_module() -> None:
    code = (
        "import contextlib, io\n"
        "from evoforge.evolve.cli import main\n"
        "import sys\n"
        "sys.argv = ['evoforge', '--help']\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
        "    main()\n"
    )
    imported = _imported_by(code)
    assert not imported & set(HEAVY), sorted(imported & set(HEAVY))


def test_reading_a_current_archive_imports_no_sqlite_utils(tmp_path: Path) -> None:
    from evoforge.archive import Archive

    with Archive(tmp_path / "a.db"):
        pass  # created and migrated here
    code = (
        "from evoforge.archive import Archive\n"
        f"with Archive({str(tmp_path / 'a.db')!r}) as a:\n"
        "    a.runs()\n"
        f"with Archive({str(tmp_path / 'a.db')!r}, read_only=True) as a:\n"
        "    assert a.pending_migrations == ()\n"
    )
    imported = _imported_by(code)
    assert "sqlite_utils" not in imported and "pandas" not in imported
