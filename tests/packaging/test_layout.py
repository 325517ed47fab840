"""The installed layout: every package folder of the design is listed for setuptools, so an
install (editable or not) ships all of it under the one ``evoforge`` namespace."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = ("archive", "evaluators", "evolve", "islands", "plugins", "problems")


def test_every_package_folder_is_installed_under_evoforge():
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(setuptools["packages"])
    on_disk = set()
    for init in (ROOT / "evoforge").rglob("__init__.py"):  # the API and the base layer
        on_disk.add(".".join(init.parent.relative_to(ROOT).parts))
    for folder in FOLDERS:
        for init in (ROOT / folder).rglob("__init__.py"):
            parts = init.parent.relative_to(ROOT).parts
            on_disk.add(".".join(("evoforge", *parts)))
    assert on_disk - listed == set(), "add these to [tool.setuptools] packages in pyproject.toml"
    assert listed - on_disk == set(), "these listed packages have no folder"
    assert setuptools["package-dir"] == {"": "src"}


def test_the_package_is_one_static_tree_through_relative_symlinks():
    """What an editable install puts on ``sys.path`` (src/) and what the repository root offers
    (python -m, mypy, editors put it first) are the same complete ``evoforge``: the design folders
    are reached through relative symlinks, not an import hook that static tools cannot follow."""
    assert (ROOT / "src").is_dir()
    assert [p.name for p in (ROOT / "src").iterdir() if p.name != "evoforge.egg-info"] == [
        "evoforge"
    ], "src/ holds only the evoforge link, so nothing else lands on sys.path"
    assert os.readlink(ROOT / "src" / "evoforge") == "../evoforge"
    for folder in FOLDERS:
        link = ROOT / "evoforge" / folder
        assert link.is_symlink(), f"evoforge/{folder} must be a symlink to ../{folder}"
        assert os.readlink(link) == f"../{folder}"
    assert (ROOT / "evoforge" / "py.typed").is_file(), "PEP 561 marker: users get the types"
