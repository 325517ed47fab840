"""Types that tools can see (issue 25): with the README's editable install, mypy finds every
``evoforge`` module and reports nothing, a user's script gets evoforge's real types (``py.typed``),
and jedi (editors' go-to-definition) resolves ``evoforge.archive.Archive``."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = Path(__file__).with_name("typecheck_sample.py")


def _mypy(*args: str, cwd: Path, cache: Path) -> subprocess.CompletedProcess[str]:
    pytest.importorskip("mypy", reason="mypy is in the test extra: pip install -e '.[test]'")
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(cache), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.mark.slow
def test_mypy_checks_every_module_of_the_package_and_finds_nothing(tmp_path):
    done = _mypy("-p", "evoforge", cwd=ROOT, cache=tmp_path / "cache")
    assert done.returncode == 0, done.stdout + done.stderr
    # Every module, not only evoforge/'s own files: the design folders are subpackages.
    checked = int(done.stdout.split("no issues found in ")[1].split()[0])
    on_disk = sum(
        1
        for folder in (
            "evoforge",
            "archive",
            "evaluators",
            "evolve",
            "islands",
            "plugins",
            "problems",
        )
        for path in (ROOT / folder).rglob("*.py")
        if "builtin" not in path.relative_to(ROOT).parts
    )
    # (mypy also counts data folders, such as the dashboard's templates, as namespace packages)
    assert checked >= on_disk, done.stdout


@pytest.mark.slow
def test_a_users_script_gets_the_real_types_of_the_installed_package(tmp_path):
    """Run as a user would, outside the repository and without its mypy config: evoforge is
    found through the install, and ``assert_type`` in the sample fails if it is ``Any``."""
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(SAMPLE, project / "script.py")
    done = _mypy("--strict", "script.py", cwd=project, cache=tmp_path / "cache")
    assert done.returncode == 0, done.stdout + done.stderr


def test_jedi_resolves_the_archive_from_outside_and_inside_the_repository(tmp_path):
    jedi = pytest.importorskip("jedi", reason="jedi is in the test extra: pip install -e '.[test]'")
    code = "import evoforge.archive\nevoforge.archive.Archive"
    for path in (tmp_path / "script.py", ROOT / "tests" / "script.py"):  # never written
        names = jedi.Script(code, path=path).infer(2, 20)
        assert [n.full_name for n in names] == ["evoforge.archive._archive.Archive"], path
