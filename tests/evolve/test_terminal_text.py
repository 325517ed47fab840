"""Terminal-safe text: escape sequences from a candidate never reach the user's terminal.

A hostile seed puts OSC 52 (clipboard), OSC 8 (hyperlink), DCS, 8-bit C1 controls, backspaces
and a carriage return in its exception and its stdout. The run's seed error, ``status``,
``failures``, ``show`` and ``lineage`` print them written out (``\\x1b``), and the archive keeps
them as they were.
"""

from __future__ import annotations

import json
import re
import sqlite3

from click.testing import CliRunner
from hypothesis import given, strategies as st

from evoforge.base.terminal import terminal_safe
from evoforge.evolve.cli import cli
from tests.conftest import TRIVIAL_SPEC

EVIL = (
    "\x1b]52;c;ZXZpbA==\x07\x1b]8;;http://x\x1b\\\x1bPq#0\x1b\\\x9b2J\x9d0;t\x07\x08\x08\rX\u202e"
)
SEED = f"""
# EVOLVE-BLOCK-START
EVIL = {EVIL!r}
def main():
    print("out" + EVIL)
    raise ValueError("boom" + EVIL)
# EVOLVE-BLOCK-END
"""
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


@given(st.text())
def test_safe_text_has_no_control_characters_but_newline_and_tab(text):
    safe = terminal_safe(text)
    assert UNSAFE.search(safe) is None
    assert terminal_safe(safe) == safe
    if UNSAFE.search(text.replace("\r\n", "\n")) is None:
        assert safe == text.replace("\r\n", "\n")


def test_escapes_are_written_out_not_dropped():
    assert terminal_safe("a\x1b]52;c;x\x07\tb\r\nc\x9b") == "a\\x1b]52;c;x\\x07\tb\nc\\x9b"


def test_a_candidates_escapes_never_reach_the_terminal(tmp_path):
    (tmp_path / "tiny").mkdir()
    (tmp_path / "tiny" / "problem.py").write_text(TRIVIAL_SPEC.replace("\n    ", "\n"))
    (tmp_path / "tiny" / "seed.py").write_text(SEED)
    db = str(tmp_path / "a.db")
    runner = CliRunner()
    run = runner.invoke(cli, ["run", str(tmp_path / "tiny"), "--budget", "3", "--db", db, "-q"])
    assert run.exit_code == 1 and "boom" in run.output, run.output
    (program_id,) = sqlite3.connect(db).execute("SELECT id FROM programs").fetchone()
    outputs = [run.output]
    for args in (["status"], ["failures"], ["show", program_id], ["lineage", program_id]):
        result = runner.invoke(cli, [*args, "--db", db])
        assert result.exit_code == 0, result.output
        outputs.append(result.output)
    for output in outputs:
        assert UNSAFE.search(output) is None, output
    assert "\\x1b]52" in outputs[3]  # show: written out, so the user sees it was there
    stored = sqlite3.connect(db).execute("SELECT artifacts_json FROM programs").fetchone()[0]
    error = json.loads(stored)["error"]
    assert "\x1b]52;c;" in error and "\x9b" in error  # the archive keeps what happened
