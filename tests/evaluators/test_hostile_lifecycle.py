"""Hostile candidates, third round: how a candidate's run ends (harness: ``hostile.py``).

A fork server whose engine was killed exits without a word; a tree the kernel killed for its
memory is ``memory_limit`` with the peak, even when the rest of the tree sat blocked until
the deadline.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap

import pytest

from evoforge.evaluators import Status
from evoforge.evaluators.python._evaluator import PythonEvaluator
from evoforge.problems import load_problem
from tests.conftest import ROOT
from tests.evaluators.conftest import PROBE_SPEC, SEED, dedent
from tests.evaluators.hostile import ROOT_OPTIONS

ENGINE = """
import asyncio, os, signal, sys
from evoforge.evaluators.python._evaluator import PythonEvaluator
from evoforge.problems import load_problem

SOURCE = "import time\\ndef main():\\n    time.sleep(0.5)\\n    return [1.0]\\n"

async def main():
    evaluator = PythonEvaluator(load_problem(sys.argv[1]))
    await evaluator.start()
    pid_file = os.path.join(evaluator.sandbox_info["workdir_root"], "candidate.pid")
    asyncio.ensure_future(evaluator.evaluate(SOURCE))
    for _ in range(2000):  # until the server runs the candidate: then its reply has no reader
        with open(pid_file, "rb") as f:
            if int(f.read() or 0):
                break
        await asyncio.sleep(0.005)
    else:
        sys.exit("the candidate never started")
    os.kill(os.getpid(), signal.SIGKILL)  # as kill -9 of the engine does

asyncio.run(main())
"""


def test_a_fork_server_whose_engine_was_killed_exits_without_a_traceback(tmp_path):
    folder = tmp_path / "problem"
    folder.mkdir()
    spec = PROBE_SPEC.format(preload=[], timeout_s=20, memory_mb=512, options={})
    (folder / "problem.py").write_text(spec)
    (folder / "seed.py").write_text(SEED)
    (tmp_path / "engine.py").write_text(textwrap.dedent(ENGINE))
    # Returns once every holder of the stderr pipe is gone: the engine, then its server.
    done = subprocess.run(
        [sys.executable, str(tmp_path / "engine.py"), str(folder)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert done.returncode == -9, done.stderr
    assert "Traceback" not in done.stderr and "Error" not in done.stderr, done.stderr


BLOCKED_PARENT = """
import os, time
def main():
    for _ in range(6):  # 6 x 160 MiB under 512 MiB: the kernel kills one (or all)
        if os.fork() == 0:
            block = bytearray(160 * 2**20)
            for i in range(0, len(block), 4096):
                block[i] = 1
            time.sleep(60)
            os._exit(0)
    time.sleep(60)  # the parent waits on nothing the kernel's kill will end
"""


def test_a_tree_killed_for_its_memory_is_memory_limit_even_when_its_parent_blocks(quick, outside):
    info = quick.evaluator.sandbox_info
    if info["memory"].startswith("per process only"):
        pytest.skip(f"no cgroup here: {info['memory']}")
    with outside:
        result = quick.run(BLOCKED_PARENT)
    assert result.status is Status.MEMORY_LIMIT, (result.status, result.artifacts)
    assert "peak" in result.artifacts["error"]
    assert result.timings["max_rss_mb"] >= 400  # the tree's peak, not one process's


FORKS_AND_RETURNS = """
import os, time
def main():
    pids = []
    for _ in range(20):  # sleepers it never waits for: killed and reaped after it returns
        pid = os.fork()
        if pid == 0:
            time.sleep(60)
            os._exit(0)
        pids.append(pid)
    return {"metrics": {"score": 1.0, "size": 1.0}, "pids": pids}
"""


def test_leftovers_are_reaped_at_once_and_without_a_warning(probe, capfd):
    """The namespace's first process reaps what it killed; the server does not wait on
    zombies until it gives up (it once took 10 s and warned "gave up killing leftovers")."""
    evaluator = PythonEvaluator(load_problem(probe(options=ROOT_OPTIONS)))
    loop = asyncio.new_event_loop()
    try:
        loop.run_until_complete(evaluator.start())  # its stderr is this test's (capfd)
        results = [
            loop.run_until_complete(evaluator.evaluate(dedent(FORKS_AND_RETURNS))) for _ in range(2)
        ]
    finally:
        loop.run_until_complete(evaluator.close())
        loop.close()
    assert [r.status for r in results] == [Status.OK] * 2, [r.artifacts for r in results]
    assert "leftovers" not in capfd.readouterr().err
