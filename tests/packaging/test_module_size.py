"""No module over :data:`MAX_LINES` lines: past that a module holds more than one concept
(the engine's rule since the first structure round; this test keeps it)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MAX_LINES = 600
FOLDERS = ("evoforge", "archive", "evaluators", "evolve", "islands", "plugins", "problems")


def _python_files() -> list[Path]:
    found = []
    for folder in (*FOLDERS, "tests", "bench"):
        for path in (ROOT / folder).rglob("*.py"):
            if path.is_symlink() or any(p.is_symlink() for p in path.parents if p != ROOT):
                continue  # evoforge/<layer> links to the top-level folders: counted there
            if "builtin" in path.relative_to(ROOT).parts:  # problem folders: data, not code
                continue
            found.append(path)
    return found


def test_no_module_over_the_limit() -> None:
    files = _python_files()
    assert len(files) > 100
    over = {
        str(path.relative_to(ROOT)): n
        for path in files
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert not over, f"split these by concept (over {MAX_LINES} lines): {over}"
