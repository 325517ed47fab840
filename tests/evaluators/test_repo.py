"""The ``repo`` evaluator: each candidate in its own copy of a real git repository, the
repository's own check and measure commands, copies reset between candidates."""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from evoforge.evaluators import Status
from evoforge.evaluators.repo import RepoEvaluator, Slot
from evoforge.problems import ProblemSpecError, make_bundle, split_bundle
from evoforge.problems.adapters import adapt
from tests.repo_helpers import FMT, OPS, TOML, make_repo, tree_digest


@pytest.fixture
def repo(tmp_path):
    return make_repo(tmp_path / "calc")


def problem_of(repo: Path):
    return adapt(repo).problems[0]


def candidate(problem, mark: str = "base", *, fmt: str = FMT) -> str:
    files = split_bundle(problem.seed_source)
    files["calc/ops.py"] = OPS.replace('MARK = "base"', f"MARK = {mark!r}")
    files["calc/fmt.py"] = fmt
    return make_bundle(files)


def evaluate_all(problem, sources, workers=1):
    async def main():
        async with RepoEvaluator(problem, workers=workers) as evaluator:
            return await asyncio.gather(*(evaluator.evaluate(s) for s in sources))

    return asyncio.run(main())


def test_a_two_file_change_is_checked_and_measured(repo):
    problem = problem_of(repo)
    shorter = 'def label(x):\n    return f"value={x}"\n'
    base, changed = evaluate_all(problem, [problem.seed_source, candidate(problem, fmt=shorter)])
    assert base.status is Status.OK and changed.status is Status.OK
    assert changed.objectives["size"] < base.objectives["size"]
    assert changed.objectives["size"] == len(OPS) + len(shorter)


def test_a_failing_check_is_incorrect_with_its_last_lines(repo):
    problem = problem_of(repo)
    broken = candidate(problem, fmt='def label(x):\n    return "v=" + str(x)\n')
    (result,) = evaluate_all(problem, [broken])
    assert result.status is Status.INCORRECT
    assert result.artifacts["stage"] == "check"
    assert "exited with 1" in result.artifacts["error"]
    assert "v=3" in result.artifacts["error"]  # the assertion's message, from the output's end


def test_parallel_candidates_do_not_interfere_and_copies_are_reset(repo, monkeypatch):
    # The pause keeps two checks running at once; the problem passes it through the sandbox's
    # environment allow-list.
    monkeypatch.setenv("CHECK_PAUSE_S", "0.3")
    with (repo / "evoforge.toml").open("a") as toml:
        toml.write('\n[options]\nsandbox_env = ["CHECK_PAUSE_S"]\n')
    problem = problem_of(repo)
    marks = ["a", "bb", "ccc", "dddd", "eeeee", "ffffff"]
    results = evaluate_all(problem, [candidate(problem, m) for m in marks], workers=3)
    assert [r.metrics.get("pause") for r in results] == [0.3] * len(marks)
    # each check saw only its own scratch file: none left over, none overwritten
    assert [r.status for r in results] == [Status.OK] * len(marks), [
        r.artifacts.get("error") for r in results
    ]
    assert [r.metrics["mark"] for r in results] == [len(m) for m in marks]


def test_the_base_repository_is_byte_identical_after_evaluations(repo):
    before = tree_digest(repo)
    problem = problem_of(repo)
    hostile = candidate(problem, fmt=FMT + "open('../../../escape.txt', 'w').write('x')\n")
    evaluate_all(problem, [problem.seed_source, candidate(problem, "x"), hostile], workers=2)
    assert tree_digest(repo) == before


def test_a_candidate_cannot_write_outside_its_copy(repo, tmp_path):
    problem = problem_of(repo)
    target = repo / "calc" / "ops.py"
    attack = f"open({str(target)!r}, 'a').write('# pwned')\n" + FMT
    (result,) = evaluate_all(problem, [candidate(problem, fmt=attack)])
    assert result.status is not Status.OK
    assert "pwned" not in target.read_text()


def test_measure_without_json_is_a_runtime_error(tmp_path):
    repo = make_repo(tmp_path / "r", measure="print('fast enough')\n")
    problem = problem_of(repo)
    (result,) = evaluate_all(problem, [problem.seed_source])
    assert result.status is Status.RUNTIME_ERROR
    assert "no JSON object" in result.artifacts["error"]
    assert "fast enough" in result.artifacts["error"]


def test_a_bundle_with_other_files_is_refused(repo):
    problem = problem_of(repo)
    files = split_bundle(problem.seed_source)
    files["calc/extra.py"] = "x = 1\n"
    (result,) = evaluate_all(problem, [make_bundle(files)])
    assert result.status is Status.SYNTAX_ERROR
    assert "calc/extra.py" in result.artifacts["error"]


# --- resetting a copy ------------------------------------------------------------------------


def files_of(folder: Path) -> dict[str, tuple[bytes | str, int]]:
    found: dict[str, tuple[bytes | str, int]] = {}
    for path in sorted(folder.rglob("*")):
        rel = str(path.relative_to(folder))
        st = path.lstat()
        if path.is_symlink():
            found[rel] = (f"link:{os.readlink(path)}", st.st_mode)
        elif path.is_file():
            found[rel] = (path.read_bytes(), st.st_mode)
        else:
            found[rel] = ("dir", st.st_mode)
    return found


def test_reset_undoes_every_kind_of_change(repo, tmp_path):
    slot = Slot.prepare(tmp_path / "slot", repo)
    slot.reset()
    clean = files_of(slot.tree)
    tree = slot.tree
    sneaky = tree / "measure.py"
    stat = sneaky.stat()
    text = sneaky.read_text()
    sneaky.write_text(text.replace("json", "JSON"))  # same size, mtime put back: ctime tells
    os.utime(sneaky, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert sneaky.stat().st_size == stat.st_size
    (tree / "check.py").unlink()
    (tree / "new" / "deep").mkdir(parents=True)
    (tree / "new" / "deep" / "file").write_text("x")
    (tree / "calc" / "fmt.py").chmod(0o777)
    (tree / "calc" / "__init__.py").unlink()
    (tree / "calc" / "__init__.py").symlink_to("/etc/passwd")
    os.rename(tree / "calc", tree / "calc_moved")
    (tree / "calc").symlink_to(tmp_path)
    assert slot.reset() > 0
    assert files_of(slot.tree) == clean
    assert not (tmp_path / "ops.py").exists()  # the link was removed, never followed
    assert slot.reset() <= 2  # nothing changed since: at most a same-tick re-restore
    assert files_of(slot.tree) == clean


def test_write_then_reset_restores_the_base_files(repo, tmp_path):
    slot = Slot.prepare(tmp_path / "slot", repo)
    slot.reset()
    assert slot.write({"calc/ops.py": "X = 1\n", "calc/fmt.py": FMT}) == ["calc/ops.py"]
    assert (slot.tree / "calc" / "ops.py").read_text() == "X = 1\n"
    slot.reset()
    assert (slot.tree / "calc" / "ops.py").read_text() == OPS


def test_a_check_past_the_timeout_is_killed(tmp_path):
    toml = TOML.replace("timeout_s = 30", "timeout_s = 1")
    repo = make_repo(tmp_path / "r", toml=toml, check="while True:\n    pass\n")
    (result,) = evaluate_all(problem_of(repo), [problem_of(repo).seed_source])
    assert result.status is Status.TIMEOUT
    assert result.artifacts["stage"] == "check"


_names = st.sampled_from(["calc", "calc/ops.py", "calc/fmt.py", "check.py", "new", "new/x.py"])
_changes = st.lists(
    st.tuples(st.sampled_from(["write", "delete", "mkdir", "link", "chmod"]), _names),
    max_size=8,
)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(changes=_changes)
def test_any_changes_are_undone_by_one_reset(repo, tmp_path_factory, changes):
    slot = Slot.prepare(tmp_path_factory.mktemp("slot") / "s", repo)
    slot.reset()
    clean = files_of(slot.tree)
    for action, name in changes:
        path = slot.tree / name
        if action == "delete" and path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        elif action == "delete" and path.parent.is_dir():  # "calc/ops.py" once calc is a file
            path.unlink(missing_ok=True)
        elif action == "delete":
            continue
        elif path.parent.is_dir() and not path.parent.is_symlink():
            if action == "write" and not path.is_dir():
                path.write_text("changed")
            elif action == "mkdir" and not path.exists():
                path.mkdir()
            elif action == "link" and not path.exists():
                path.symlink_to("/")
            elif action == "chmod" and path.exists() and not path.is_symlink():
                path.chmod(0o700)
    slot.reset()
    assert files_of(slot.tree) == clean


def test_setup_runs_once_per_copy_and_its_products_survive_resets(tmp_path):
    toml = TOML + 'setup = "echo built > built.txt"\n'
    check = 'assert open("built.txt").read() == "built\\n"\n'
    repo = make_repo(tmp_path / "r", toml=toml, check=check)
    problem = problem_of(repo)
    results = evaluate_all(problem, [problem.seed_source] * 3, workers=1)
    assert [r.status for r in results] == [Status.OK] * 3
    assert not (repo / "built.txt").exists()  # it ran in the copy, not in the repository


def test_a_failing_setup_is_one_clear_error(tmp_path):
    repo = make_repo(tmp_path / "r", toml=TOML + 'setup = "echo missing tool >&2; exit 3"\n')
    with pytest.raises(
        ProblemSpecError, match="setup `echo missing tool.*` exited with 3: missing tool"
    ):
        evaluate_all(problem_of(repo), [problem_of(repo).seed_source])


FILLING_CHECK = """\
import os, sys
if os.environ.get("FILL") or open("calc/fmt.py").read().count("# fill"):
    with open("filler.bin", "wb") as f:  # far past the 32 MiB quota
        for _ in range(64):
            f.write(b"x" * (1 << 20))
open("scratch.txt", "w").write("each run's own")
"""


def test_a_check_that_fills_the_disk_stops_at_the_quota_and_the_copy_stays_clean(tmp_path):
    toml = TOML.replace("timeout_s = 30", "timeout_s = 30\noptions = { sandbox_disk_mb = 32 }")
    repo = make_repo(tmp_path / "calc", check=FILLING_CHECK, toml=toml)
    problem = problem_of(repo)
    filling = candidate(problem, fmt=FMT + "# fill\n")

    async def main():
        async with RepoEvaluator(problem, workers=1) as evaluator:  # one slot: the same copy
            results = [await evaluator.evaluate(s) for s in (filling, problem.seed_source)]
            (slot,) = evaluator._slots
            written = [p.name for p in slot.tree.rglob("*") if p.name in NAMES]
            return results, written

    (full, after), written = asyncio.run(main())
    assert full.status is Status.DISK_LIMIT, full.artifacts
    assert "disk quota of 32 MiB" in full.artifacts["error"]
    assert after.status is Status.OK, after.artifacts  # the next candidate, same slot
    assert written == []  # what the checks wrote went to their quota, not to the copy


NAMES = ("filler.bin", "scratch.txt")


def test_python_in_the_commands_is_the_engines_own_even_when_not_on_path(repo, monkeypatch):
    """`evoforge` run from a venv that is not activated: `python check.py` still finds the
    interpreter (and so the packages) evoforge runs on, not whatever PATH leads to."""
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # Debian has no `python` there
    problem = problem_of(repo)
    (result,) = evaluate_all(problem, [problem.seed_source])
    assert result.status is Status.OK, result.artifacts
