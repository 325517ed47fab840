"""The installed layout: every package folder of the design is listed for setuptools, so an
install (editable or not) ships all of it under the one ``evoforge`` namespace."""

from __future__ import annotations

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
    assert setuptools["package-dir"] == {
        "evoforge": "evoforge",
        **{f"evoforge.{f}": f for f in FOLDERS},
    }
