"""As a user would: a notebook-style script in a folder holding a ``problems/`` package and a
``plugins.py`` of the user's own (names our subpackages once shadowed), run in a fresh
interpreter."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("pandas")

SCRIPT = """
import json, signal, threading

import evoforge

def host_handler(signum, frame):
    pass

signal.signal(signal.SIGTERM, host_handler)  # the host program's own handler
out = {}

def work():
    out["result"] = evoforge.run("circle_packing", budget=50, workers=2, seed=1, db="nb.db")

thread = threading.Thread(target=work)
thread.start()
thread.join()
result = out["result"]
with evoforge.open_archive("nb.db") as archive:
    top = evoforge.to_frame(archive.top(result.run_id, k=3))
print(json.dumps({
    "status": result.status,
    "evaluations": result.evaluations,
    "rows": len(top),
    "columns": sorted(c for c in top.columns if c.startswith("objectives.")),
    "scores_sorted": top["score"].tolist() == sorted(top["score"], reverse=True),
    "best_is_first": top.index[0] == result.best.id,
    "sigterm_kept": signal.getsignal(signal.SIGTERM) is host_handler,
}))
"""


@pytest.fixture
def users_folder(tmp_path):
    """A working directory with the user's own ``problems`` package and ``plugins.py``."""
    (tmp_path / "problems").mkdir()
    (tmp_path / "problems" / "__init__.py").write_text("raise ImportError('the users own')\n")
    (tmp_path / "plugins.py").write_text("raise ImportError('the users own plugins.py')\n")
    (tmp_path / "archive").mkdir()
    (tmp_path / "archive" / "__init__.py").write_text("raise ImportError('the users own')\n")
    return tmp_path


def python(folder, *args, timeout=600):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run(
        [sys.executable, *args],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.mark.slow
def test_notebook_style_script_runs_circle_packing_from_a_thread(users_folder):
    (users_folder / "notebook.py").write_text(textwrap.dedent(SCRIPT))
    done = python(users_folder, "notebook.py")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert summary == {
        "status": "finished",
        "evaluations": 50,
        "rows": 3,
        "columns": ["objectives.sum_radii"],
        "scores_sorted": True,
        "best_is_first": True,
        "sigterm_kept": True,
    }


def test_the_api_and_the_cli_work_beside_the_users_own_modules(users_folder):
    shown = python(users_folder, "-c", "import evoforge; help(evoforge)")
    assert shown.returncode == 0, shown.stderr
    for name in ("run(", "resume(", "open_archive(", "to_frame(", "define_problem(", "hookimpl"):
        assert name in shown.stdout
    cli = python(users_folder, "-m", "evoforge", "run", "trivial", "--budget", "3", "-q")
    assert cli.returncode == 0, cli.stderr
    assert "finished" in cli.stdout


def test_importing_the_archive_does_not_load_the_evaluators(users_folder):
    probe = (
        "import json, sys, evoforge.archive\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('evoforge.'))))"
    )
    done = python(users_folder, "-c", probe)
    assert done.returncode == 0, done.stderr
    loaded = json.loads(done.stdout)
    assert not [m for m in loaded if m.startswith(("evoforge.evaluators", "evoforge.evolve"))]
