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

from tests.packaging.test_layers import _layer

ROOT = Path(__file__).resolve().parents[2]
LAZY = {
    "evoforge.archive": ROOT / "archive" / "__init__.py",
    "evoforge.evaluators": ROOT / "evaluators" / "__init__.py",
    "evoforge.islands": ROOT / "islands" / "__init__.py",
    "evoforge.problems": ROOT / "problems" / "__init__.py",
    "evoforge.evolve": ROOT / "evolve" / "__init__.py",
    "evoforge.evolve.models": ROOT / "evolve" / "models" / "__init__.py",
    "evoforge.evolve.mining": ROOT / "evolve" / "mining" / "__init__.py",
    "evoforge.evaluators.devices": ROOT / "evaluators" / "devices" / "__init__.py",
}
HEAVY = (
    "litellm", "numpy", "pandas", "sqlite_utils", "pydantic", "plotly", "starlette", "torch",
    "asyncio",
)  # fmt: skip
"""Modules ``evoforge --help`` must not import."""


def _type_checking_imports(path: Path) -> dict[str, str]:
    """name -> module for the imports under ``if TYPE_CHECKING:`` of ``path``."""
    found = {}
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for stmt in node.body:
                assert isinstance(stmt, ast.ImportFrom) and stmt.module
                found.update({alias.name: stmt.module for alias in stmt.names})
    return found


@pytest.mark.parametrize("package", sorted(LAZY))
def test_lazy_exports_match_the_typed_imports_and_all(package: str) -> None:
    module = importlib.import_module(package)
    exports = module._EXPORTS
    # What type checkers and editors see is what the package serves at run time.
    assert _type_checking_imports(LAZY[package]) == exports
    assert sorted(exports) == sorted(module.__all__)
    for name, source in exports.items():
        assert _layer(source) <= _layer(package), f"{package}.{name} comes from {source}"
        assert getattr(module, name) is getattr(importlib.import_module(source), name)
    with pytest.raises(AttributeError, match="has no attribute 'nonexistent'"):
        module.nonexistent  # noqa: B018


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
