"""The python evaluator's containment settings: the workdir, what it hides, how it says so.

The attacks themselves are in ``test_hostile.py``.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from evoforge.evaluators import PythonEvaluator, Status
from evoforge.problems import ProblemSpecError, load_problem
from tests.conftest import ROOT
from tests.evaluators.conftest import IS_ROOT, SEED, run_candidates
from tests.evaluators.hostile import ROOT_OPTIONS
from tests.evaluators.test_hostile import require_filesystem

LISTS = """
import os
def main():
    out = {}
    for path in PATHS:
        try:
            out[path] = sorted(os.listdir(path)) if os.path.isdir(path) else open(path).read()
        except OSError as exc:
            out[path] = type(exc).__name__
    return out
"""


def sandbox_info(folder: Path) -> dict:
    async def go() -> dict:
        async with PythonEvaluator(load_problem(folder)) as evaluator:
            return evaluator.sandbox_info

    return asyncio.run(go())


def test_writes_land_in_a_private_workdir_that_is_emptied(probe):
    source = """
        import os, tempfile
        def main():
            with open("evoforge-escape-probe.txt", "w") as f:
                f.write("x")
            return {"cwd": os.getcwd(), "home": os.environ["HOME"], "tmp": tempfile.mkstemp()[1]}
    """
    (result,) = run_candidates(probe(), source)
    paths = result.metrics["echo"]
    cwd = Path(paths["cwd"])
    assert paths["home"] == paths["cwd"] and Path(paths["tmp"]).parent == cwd
    assert not cwd.is_relative_to(ROOT)
    assert not (ROOT / "evoforge-escape-probe.txt").exists()
    assert not (cwd / "evoforge-escape-probe.txt").exists()


def test_the_problem_folder_and_host_tmp_are_absent_and_declared_files_bound(probe, tmp_path):
    """The minimal root holds nothing of the host's /tmp (where this problem, its hidden data
    and its neighbours live) but the file the problem declares visible, read-only."""
    data = tmp_path / "data"
    data.mkdir()
    (data / "reference.txt").write_text("42")
    (tmp_path / "visible.txt").write_text("fine")
    (tmp_path / "neighbour.txt").write_text("secret")
    # As root: as nobody the test's tmp dir (0700) would hide everything anyway.
    options = {
        **ROOT_OPTIONS,
        "sandbox_hidden_paths": ["../data"],  # relative to the spec
        "sandbox_visible_paths": ["../visible.txt"],
    }
    folder = probe(options=options)
    info = sandbox_info(folder)
    require_filesystem(info)
    assert {"filesystem", "hidden", "devices", "capabilities"} <= set(info)
    visible, neighbour = str(tmp_path / "visible.txt"), str(tmp_path / "neighbour.txt")
    paths = [str(folder), str(data), visible, neighbour]
    source = LISTS.replace("PATHS", repr(paths))
    (result,) = run_candidates(folder, source)
    assert result.status is Status.OK, result.artifacts
    absent = "FileNotFoundError"
    assert result.metrics["echo"] == {
        str(folder): absent,
        str(data): absent,
        visible: "fine",
        neighbour: absent,
    }
    assert (folder / "problem.py").exists() and (data / "reference.txt").exists()


def test_a_one_file_problem_and_its_neighbours_are_absent(tmp_path):
    spec = tmp_path / "single.py"
    spec.write_text(
        "name = 'single'\nobjectives = {'score': 'maximize'}\npreload = []\n"
        f"seed_source = {SEED!r}\ntimeout_s = 5\nmemory_mb = 512\noptions = {ROOT_OPTIONS!r}\n"
        "def evaluate(output):\n    return {'score': 1.0, 'echo': output}\n"
    )
    (tmp_path / "neighbour.txt").write_text("fine")
    require_filesystem(sandbox_info(spec))
    source = LISTS.replace("PATHS", repr([str(spec), str(tmp_path / "neighbour.txt")]))
    (result,) = run_candidates(spec, source)
    assert result.status is Status.OK, result.artifacts
    # The host's /tmp is not in the minimal root: neither the spec nor its neighbour exists.
    neighbour = str(tmp_path / "neighbour.txt")
    assert result.metrics["echo"] == {
        str(spec): "FileNotFoundError",
        neighbour: "FileNotFoundError",
    }


@pytest.mark.skipif(not IS_ROOT, reason="as another user, writes to root's files fail anyway")
def test_sandbox_filesystem_false_turns_it_off_and_says_so(probe, tmp_path):
    target = tmp_path / "written-by-candidate"
    folder = probe(options={**ROOT_OPTIONS, "sandbox_filesystem": False})
    source = f"def main():\n    open({str(target)!r}, 'w').write('x')\n    return 1\n"
    (result,) = run_candidates(folder, source)
    assert result.status is Status.OK and target.exists()  # the option really is what blocks it
    assert sandbox_info(folder)["filesystem"] == "off: not asked"


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"sandbox_filesystem": "yes"}, "sandbox_filesystem"),
        ({"sandbox_hidden_paths": "data"}, "sandbox_hidden_paths"),
        ({"sandbox_hidden_paths": [3]}, "sandbox_hidden_paths"),
    ],
    ids=["filesystem-not-bool", "hidden-a-string", "hidden-not-paths"],
)
def test_bad_filesystem_options_are_spec_errors(probe, options, field):
    with pytest.raises(ProblemSpecError, match=field):
        PythonEvaluator(load_problem(probe(options=options)))
