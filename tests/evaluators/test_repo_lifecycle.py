"""The repository copies' root outlives every evaluation that uses it, on a loaded machine.

Seen once: a repository run with both cores busy, after 7 evaluations every evaluation
crashed (``FileNotFoundError: .../slot0/manifest.json``), the copies' root gone while the run
went on. What removes copies, and when, is checked here with two busy loops holding the
cores (bounded in time, killed at the end): a ``close`` while evaluations are in flight waits
for them and never hands a removed copy to a later evaluation; a copy removed from outside
(a temp-folder cleaner) is prepared again instead of failing every evaluation after it.
"""

from __future__ import annotations

import asyncio
import logging
import shutil
import subprocess
import sys
import time

import pytest

from evoforge.evaluators import Status
from evoforge.evaluators.repo import RepoEvaluator
from evoforge.problems import make_bundle, split_bundle
from evoforge.problems.adapters import adapt
from tests.repo_helpers import OPS, make_repo

pytestmark = pytest.mark.slow  # the busy loops slow every evaluation down (10-50 s a test)


@pytest.fixture
def busy_cores():
    """Two processes spinning on the CPU for the test's duration (at most 120 s each).

    Each loop bounds itself (a deadline in its own code, not a ``timeout`` wrapper whose
    SIGKILL would orphan the loop), and is killed at the end of the test.
    """
    spin = "import time\nend = time.monotonic() + 120\nwhile time.monotonic() < end: pass"
    loops = [subprocess.Popen([sys.executable, "-c", spin]) for _ in range(2)]
    try:
        yield
    finally:
        for proc in loops:
            proc.kill()
            proc.wait()


@pytest.fixture
def problem(tmp_path, monkeypatch):
    repo = make_repo(tmp_path / "calc")
    # the check sleeps, so an evaluation is surely in flight when the test acts
    monkeypatch.setenv("CHECK_PAUSE_S", "0.5")
    with (repo / "evoforge.toml").open("a") as toml:
        toml.write('\n[options]\nsandbox_env = ["CHECK_PAUSE_S"]\n')
    return adapt(repo).problems[0]


def candidate(problem, mark: str) -> str:
    files = split_bundle(problem.seed_source)
    files["calc/ops.py"] = OPS.replace('MARK = "base"', f"MARK = {mark!r}")
    return make_bundle(files)


def errors(results) -> list[str]:
    return [r.artifacts.get("error", "") for r in results if r.status is not Status.OK]


def test_close_waits_for_evaluations_in_flight_and_a_restart_gets_new_copies(problem, busy_cores):
    async def main():
        evaluator = RepoEvaluator(problem, workers=2)
        await evaluator.start()
        first = evaluator._root
        running = [asyncio.create_task(evaluator.evaluate(candidate(problem, m))) for m in "ab"]
        await asyncio.sleep(0)  # both have taken a slot
        await evaluator.close()  # a restart path: close with evaluations in flight
        assert all(task.done() for task in running)  # close waited for them
        assert first is not None and not first.exists()
        # used again after the close: new copies, none of the removed ones
        later = await asyncio.gather(
            *(evaluator.evaluate(candidate(problem, m)) for m in ("c", "dd", "eee", "ffff"))
        )
        second = evaluator._root
        await evaluator.close()
        return [task.result() for task in running], later, first, second

    before, after, first, second = asyncio.run(main())
    assert errors(before) == [] and errors(after) == []
    assert [r.metrics["mark"] for r in after] == [1, 2, 3, 4]
    assert second != first


def test_concurrent_first_evaluations_prepare_the_copies_once(problem, busy_cores):
    async def main():
        evaluator = RepoEvaluator(problem, workers=2)
        results = await asyncio.gather(
            *(evaluator.evaluate(candidate(problem, m)) for m in ("a", "bb", "ccc"))
        )
        slots = len(list(evaluator._root.iterdir()))
        await evaluator.close()
        return results, slots

    results, slots = asyncio.run(main())
    assert errors(results) == []
    assert slots == 2


def test_a_copy_removed_from_outside_is_prepared_again(problem, busy_cores, caplog):
    async def main():
        async with RepoEvaluator(problem, workers=1) as evaluator:
            assert evaluator._root is not None
            first = await evaluator.evaluate(candidate(problem, "a"))
            shutil.rmtree(evaluator._root)  # a temp-folder cleaner, say
            later = [await evaluator.evaluate(candidate(problem, m)) for m in ("bb", "ccc")]
            return [first, *later]

    with caplog.at_level(logging.WARNING, logger="evoforge"):
        results = asyncio.run(main())
    assert errors(results) == []
    assert [r.metrics["mark"] for r in results] == [1, 2, 3]
    assert "removed from outside" in caplog.text


def test_a_copy_removed_during_an_evaluation_does_not_judge_the_candidate(
    problem, busy_cores, caplog, monkeypatch
):
    """Removed while the check runs (after the runner reset the copy, so no check before the
    run can see it): that run's verdict is not the candidate's, which is evaluated again."""
    monkeypatch.setenv("CHECK_PAUSE_S", "2")  # the check is surely running when it goes

    async def main():
        async with RepoEvaluator(problem, workers=1) as evaluator:
            assert evaluator._root is not None
            stamp = evaluator._root / "slot0" / "stamp"
            before = stamp.stat().st_mtime_ns
            running = asyncio.create_task(evaluator.evaluate(candidate(problem, "a")))
            deadline = time.monotonic() + 60
            while stamp.stat().st_mtime_ns == before:  # the runner touches it after the reset
                assert time.monotonic() < deadline and not running.done(), "no reset seen"
                await asyncio.sleep(0.005)
            shutil.rmtree(evaluator._root)
            return await running

    with caplog.at_level(logging.WARNING, logger="evoforge"):
        result = asyncio.run(main())
    assert result.status is Status.OK, result.artifacts
    assert result.metrics["mark"] == 1
    assert "removed from outside the run during an evaluation" in caplog.text
