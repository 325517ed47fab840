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


def test_the_problem_folder_and_declared_paths_are_hidden_and_said_so(probe, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "reference.txt").write_text("42")
    (tmp_path / "visible.txt").write_text("fine")
    # As root: as nobody the test's tmp dir (0700) would hide everything anyway.
    folder = probe(options={**ROOT_OPTIONS, "sandbox_hidden_paths": ["../data"]})  # rel. to spec
    info = sandbox_info(folder)
    require_filesystem(info)
    assert str(folder) in info["hidden"] and str(data) in info["hidden"]
    assert {"filesystem", "hidden", "devices", "capabilities"} <= set(info)
    paths = [str(folder), str(data), str(tmp_path / "visible.txt")]
    source = LISTS.replace("PATHS", repr(paths))
    (result,) = run_candidates(folder, source)
    assert result.status is Status.OK, result.artifacts
    seen = result.metrics["echo"]
    assert seen == {str(folder): [], str(data): [], str(tmp_path / "visible.txt"): "fine"}
    assert (folder / "problem.py").exists() and (data / "reference.txt").exists()


def test_a_one_file_problem_hides_its_spec_file_only(tmp_path):
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
    # Covered by a device node on a nodev mount: it cannot be opened at all.
    neighbour = str(tmp_path / "neighbour.txt")
    assert result.metrics["echo"] == {str(spec): "PermissionError", neighbour: "fine"}


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
