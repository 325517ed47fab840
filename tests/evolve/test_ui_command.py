"""``evoforge ui`` without the dashboard's dependencies says how to install them."""

from __future__ import annotations

import sys

from click.testing import CliRunner

from evoforge.evolve.cli import cli


def test_ui_without_its_extra_names_the_install_command(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "starlette", None)  # import starlette now fails
    result = CliRunner().invoke(cli, ["ui", "--db", str(tmp_path / "x.db")])
    assert result.exit_code == 1
    assert 'pip install "evoforge[ui]"' in result.output and "starlette" in result.output
    assert "Traceback" not in result.output
