"""The python evaluator end to end: statuses, limits, hostile candidates, pool behaviour."""

from __future__ import annotations

import asyncio
import math
import os
import signal
import time
from pathlib import Path

import pytest

from evoforge.evaluators import PythonEvaluator, Status, classify_metrics
from evoforge.evaluators.sandbox import SandboxError
from evoforge.evaluators.sandbox._host import children
from evoforge.problems import Descriptor, Objective, Problem, load_problem
from tests.evaluators.conftest import (
    dedent,
    gone,
    run_candidates,
    wait_until,
    wait_until_sync,
)

# Candidates that report their pids through a file under tmp_path: as root, without the
# read-only filesystem (test_hostile.py covers that).
WRITES_TMP_PATH = {"sandbox_user": None, "sandbox_allow_root": True, "sandbox_filesystem": False}

OK_SOURCE = """
def main():
    return {"metrics": {"score": 2.5, "size": 3.0, "note": "fine"}}
"""


# --- scoring ----------------------------------------------------------------------------------


def test_ok_fills_objectives_descriptors_timings_and_device(probe):
    (result,) = run_candidates(probe(), OK_SOURCE)
    assert result.status is Status.OK, result.artifacts
    assert result.objectives == {"score": 2.5}
    assert result.descriptors == {"size": 3.0}
    assert result.metrics["note"] == "fine"
    assert {"eval_s", "score_s", "total_s", "cpu_s", "max_rss_mb", "caller_s"} <= set(
        result.timings
    )
    assert result.timings["eval_s"] <= result.timings["total_s"] <= result.timings["caller_s"]
    assert result.device["logical_cores"] == str(os.cpu_count())
    assert result.artifacts == {}


def test_numpy_output_arrives_as_plain_json(probe):
    source = """
        import numpy as np
        def main():
            return {"arr": np.arange(3).reshape(1, 3), "x": np.float32(0.5), "n": np.int64(7)}
    """
    (result,) = run_candidates(probe(preload=("numpy",)), source)
    assert result.status is Status.OK, result.artifacts
    assert result.metrics["echo"] == {"arr": [[0, 1, 2]], "x": 0.5, "n": 7}


@pytest.mark.parametrize(
    ("metrics", "expected_error"),
    [
        ({"correct": False, "error": "overlap of 0.3"}, "overlap of 0.3"),
        ({"correct": False}, "correct=False"),
        ({"size": 1.0}, "no objective 'score'"),
        ({"score": 1.0}, "no descriptor 'size'"),
        ({"score": float("nan"), "size": 1.0}, "objective 'score' is nan"),
        ({"score": "high", "size": 1.0}, "objective 'score' is 'high'"),
    ],
    ids=[
        "correct-false",
        "correct-false-no-reason",
        "missing-objective",
        "missing-descriptor",
        "nan-objective",
        "string-objective",
    ],
)
def test_metrics_that_fail_the_declaration_are_incorrect(probe, metrics, expected_error):
    source = f"def main():\n    return {{'metrics': {metrics!r}}}\n".replace("nan", "float('nan')")
    (result,) = run_candidates(probe(), source)
    assert result.status is Status.INCORRECT
    assert expected_error in result.artifacts["error"]
    assert result.objectives == {}


def test_evaluate_raising_is_incorrect_and_names_the_exception(probe):
    (result,) = run_candidates(probe(), "def main():\n    return {'raise': 'bad shape'}\n")
    assert result.status is Status.INCORRECT
    assert result.artifacts["error"] == "evaluate() raised ValueError: bad shape"


def test_evaluate_that_hangs_is_cut_off_and_the_scorer_restarts(probe):
    folder = probe(options={"score_timeout_s": 0.5})
    hang, ok = run_candidates(folder, "def main():\n    return {'sleep': 30}\n", OK_SOURCE)
    assert hang.status is Status.INCORRECT
    assert "did not finish within 0.5 s" in hang.artifacts["error"]
    assert ok.status is Status.OK


def test_classify_metrics_accepts_ints_and_rejects_bools():
    problem = Problem("p", Path("p.py"), "", (Objective("score"),), (Descriptor("d", 0, 1, 2),))
    assert classify_metrics(problem, {"score": 3, "d": 0.5})[:2] == (Status.OK, "")
    status, error, _, _ = classify_metrics(problem, {"score": True, "d": 0.5})
    assert status is Status.INCORRECT and "score" in error
    assert classify_metrics(problem, {"score": math.inf, "d": 0})[0] is Status.INCORRECT


# --- candidate failures -----------------------------------------------------------------------


def test_syntax_error_reports_line_and_column(probe):
    (result,) = run_candidates(probe(), "def main():\n    return (1,\n\nx = = 2\n")
    assert result.status is Status.SYNTAX_ERROR
    assert "line" in result.artifacts["error"] and "column" in result.artifacts["error"]


def test_runtime_error_carries_the_candidates_traceback(probe):
    source = """
        def helper(values):
            return values[10]

        def main():
            return helper([1, 2, 3])
    """
    (result,) = run_candidates(probe(), source)
    assert result.status is Status.RUNTIME_ERROR
    assert result.artifacts["error"] == "IndexError: list index out of range"
    traceback = result.artifacts["traceback"]
    assert 'File "<candidate>", line 2, in helper' in traceback
    assert "return values[10]" in traceback  # the candidate's own line is shown
    assert "_forkserver" not in traceback  # no sandbox frames


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("x = 1\n", "defines no function `main()`"),
        ("def main():\n    return 1 + 2j\n", "cannot be stored or sent as JSON"),
        ("import sys\ndef main():\n    sys.exit(0)\n", "SystemExit"),
    ],
    ids=["no-entry", "complex-output", "sys-exit"],
)
def test_other_candidate_mistakes_are_runtime_errors(probe, source, expected):
    (result,) = run_candidates(probe(), source)
    assert result.status is Status.RUNTIME_ERROR
    assert expected in result.artifacts["error"]


def test_infinite_loop_times_out_and_the_evaluator_continues(probe):
    start = time.perf_counter()
    loop, ok = run_candidates(
        probe(timeout_s=1), "def main():\n    while True:\n        pass\n", OK_SOURCE
    )
    assert loop.status is Status.TIMEOUT
    assert "wall-clock limit of 1 s" in loop.artifacts["error"]
    assert 0.9 < loop.timings["eval_s"] < 2.0
    assert ok.status is Status.OK
    assert time.perf_counter() - start < 6


def test_sleeping_candidate_times_out_on_the_wall_clock(probe):
    (result,) = run_candidates(probe(timeout_s=1), "import time\ndef main():\n    time.sleep(60)\n")
    assert result.status is Status.TIMEOUT
    assert result.timings["cpu_s"] < 0.5  # it was the wall clock, not RLIMIT_CPU


@pytest.mark.parametrize(
    "source",
    [
        "def main():\n    return len(bytearray(50 * 10**9))\n",
        "def main():\n    chunks = []\n    while True:\n        chunks.append(bytearray(10**7))\n",
        "import numpy as np\ndef main():\n    return float(np.ones(50 * 10**9 // 8).sum())\n",
    ],
    ids=["bytearray-50GB", "growing-list", "numpy-50GB"],
)
def test_allocating_too_much_is_memory_limit(probe, source):
    (result,) = run_candidates(probe(preload=("numpy",), memory_mb=512), source)
    assert result.status is Status.MEMORY_LIMIT, result.artifacts
    assert "MemoryError" in result.artifacts["traceback"]


def test_exit_without_result_is_crashed_with_the_exit_code(probe):
    (result,) = run_candidates(probe(), "import os\ndef main():\n    os._exit(3)\n")
    assert result.status is Status.CRASHED
    assert result.artifacts["error"] == "exited with code 3 before returning a result"


def test_segfault_is_crashed_with_the_signal_name(probe):
    (result,) = run_candidates(probe(), "import ctypes\ndef main():\n    ctypes.string_at(0)\n")
    assert result.status is Status.CRASHED
    assert result.artifacts["error"] == "killed by signal SIGSEGV"


def test_huge_stdout_is_capped_and_the_run_completes(probe):
    source = """
        import sys
        def main():
            chunk = "x" * (1 << 20)
            for _ in range(100):
                sys.stdout.write(chunk)
            print("the end")
            print("to stderr", file=sys.stderr)
            return {"metrics": {"score": 1.0, "size": 1.0}}
    """
    (result,) = run_candidates(probe(timeout_s=20), source)
    assert result.status is Status.OK, result.artifacts
    tail = result.artifacts["stdout_tail"]
    assert tail.endswith("xxthe end\n")
    assert f"{100 * 2**20 + len('the end') + 1} bytes" in tail and len(tail) < 4100
    assert result.artifacts["stderr_tail"] == "to stderr\n"


def test_output_over_the_cap_is_a_runtime_error(probe):
    (result,) = run_candidates(probe(), "def main():\n    return 'x' * (17 * 2**20)\n")
    assert result.status is Status.RUNTIME_ERROR
    assert "output too large" in result.artifacts["error"]


def test_tampering_with_the_result_channel_is_a_sandbox_violation(probe):
    source = "import os\ndef main():\n    os.write(3, b'not json\\n')\n    os._exit(0)\n"
    (result,) = run_candidates(probe(), source)
    assert result.status is Status.SANDBOX_VIOLATION


# --- the pool ---------------------------------------------------------------------------------


def test_two_workers_run_two_slow_candidates_concurrently(probe):
    source = dedent("""
        import time
        def main():
            time.sleep(1)
            return {"metrics": {"score": 1, "size": 1}}
    """)

    async def go():
        async with PythonEvaluator(load_problem(probe()), workers=2) as evaluator:
            start = time.perf_counter()
            results = await asyncio.gather(evaluator.evaluate(source), evaluator.evaluate(source))
            return results, time.perf_counter() - start

    results, elapsed = asyncio.run(go())
    assert [r.status for r in results] == [Status.OK, Status.OK]
    assert elapsed < 1.7, elapsed


def test_candidate_killing_its_server_is_crashed_and_the_next_one_works(probe, tmp_path):
    pid_file = tmp_path / "grandchild.pid"
    killer = f"""
        import os, time
        def main():
            pid = os.fork()
            if pid == 0:  # a grandchild in the candidate's group must die too
                time.sleep(60)
                os._exit(0)
            with open({str(pid_file)!r}, "w") as f:
                f.write(str(pid))
            os.kill(os.getppid(), 9)
            time.sleep(60)
    """
    crashed, ok = run_candidates(probe(options=WRITES_TMP_PATH), killer, OK_SOURCE)
    assert crashed.status is Status.CRASHED
    assert "sandbox worker died" in crashed.artifacts["error"]
    assert "SIGKILL" in crashed.artifacts["error"]
    assert ok.status is Status.OK
    # the sleeper would live 60 s: gone well before that, with room for a loaded machine
    assert wait_until_sync(lambda: gone(int(pid_file.read_text())), timeout_s=30)


def _sleeper(pid_file) -> str:
    """A candidate that writes its pid to ``pid_file``, then sleeps for a minute."""
    return f"""
        import os, time
        def main():
            with open({str(pid_file)!r}, "w") as f:
                f.write(str(os.getpid()))
            time.sleep(60)
    """


def test_cancelling_an_evaluation_kills_the_candidate_and_keeps_the_evaluator(probe, tmp_path):
    pid_file = tmp_path / "candidate.pid"
    source = _sleeper(pid_file)

    async def go():
        folder = probe(timeout_s=30, options=WRITES_TMP_PATH)
        async with PythonEvaluator(load_problem(folder)) as evaluator:
            task = asyncio.create_task(evaluator.evaluate(dedent(source)))
            assert await wait_until(lambda: pid_file.exists() and pid_file.read_text())
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            pid = int(pid_file.read_text())
            assert await wait_until(lambda: gone(pid))
            return await evaluator.evaluate(dedent(OK_SOURCE))

    assert asyncio.run(go()).status is Status.OK


def test_a_server_that_does_not_answer_is_replaced(probe):
    slow = "import time\ndef main():\n    time.sleep(3)\n    return 1\n"

    async def go():
        async with PythonEvaluator(load_problem(probe(timeout_s=10))) as evaluator:
            evaluator._safety_s = 0.5  # stands in for a server stuck for any reason
            stuck = await evaluator.evaluate(slow)
            evaluator._safety_s = 30
            return stuck, await evaluator.evaluate(dedent(OK_SOURCE))

    stuck, ok = asyncio.run(go())
    assert stuck.status is Status.CRASHED
    assert "did not answer within 0.5 s" in stuck.artifacts["error"]
    assert ok.status is Status.OK


def test_server_survives_its_helpers_being_killed_from_outside(probe):
    # The scorer, the pre-forked child of the server and, where there is one, the first process
    # of the candidates' PID namespace are SIGKILLed by someone else.
    def first_of_a_namespace(pid: int) -> bool:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return b"evoforge sandbox: the first process" in f.read()

    async def go():
        async with PythonEvaluator(load_problem(probe())) as evaluator:
            server = next(iter(evaluator._servers)).proc.pid
            helpers = children(server)
            others = {pid for pid in helpers if not first_of_a_namespace(pid)}
            assert len(others) == 2  # the scorer and the prepared child
            for pid in helpers:
                os.kill(pid, signal.SIGKILL)
            # (a namespace's first process ends once the server has reaped the prepared child)
            assert await wait_until(lambda: all(gone(pid) for pid in others))
            first = await evaluator.evaluate(dedent(OK_SOURCE))
            second = await evaluator.evaluate(dedent(OK_SOURCE))
            assert all(gone(pid) for pid in helpers)
            return first, second

    first, second = asyncio.run(go())
    assert first.status is Status.INCORRECT  # ran in a fresh child; the scorer was gone
    assert "crashed the scoring process" in first.artifacts["error"]
    assert second.status is Status.OK


def test_cancel_then_close_at_once_leaves_nothing_behind(probe, tmp_path):
    # What the controller does on SIGINT: cancel evaluations in flight, then close.
    pid_file = tmp_path / "candidate.pid"
    source = _sleeper(pid_file)

    async def go():
        evaluator = PythonEvaluator(load_problem(probe(options=WRITES_TMP_PATH)))
        await evaluator.start()
        roots = [s.workdir_root for s in evaluator._servers]
        task = asyncio.create_task(evaluator.evaluate(dedent(source)))
        assert await wait_until(lambda: pid_file.exists() and pid_file.read_text())
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await evaluator.close()
        return roots, int(pid_file.read_text())

    roots, pid = asyncio.run(go())
    assert [root for root in roots if Path(root).exists()] == []
    assert wait_until_sync(lambda: gone(pid))


def test_out_of_order_calls_raise(probe):
    evaluator = PythonEvaluator(load_problem(probe()))

    async def go():
        with pytest.raises(RuntimeError, match="start"):
            await evaluator.evaluate(OK_SOURCE)
        await evaluator.start()
        with pytest.raises(RuntimeError, match="already"):
            await evaluator.start()
        await evaluator.close()
        await evaluator.close()  # idempotent
        with pytest.raises(RuntimeError, match="closed"):
            await evaluator.evaluate(OK_SOURCE)

    asyncio.run(go())


def test_a_server_that_cannot_start_raises_sandbox_error(probe):
    folder = probe(preload=("no_such_module_for_evoforge",))

    async def go():
        async with PythonEvaluator(load_problem(folder)):
            pass

    with pytest.raises(SandboxError, match="no_such_module_for_evoforge"):
        asyncio.run(go())


def test_bad_sandbox_option_is_a_spec_error(probe):
    from evoforge.problems import ProblemSpecError

    with pytest.raises(ProblemSpecError, match="sandbox_network"):
        PythonEvaluator(load_problem(probe(options={"sandbox_network": "vpn"})))


def test_secrets_are_not_passed_to_candidates(probe, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-do-not-leak")
    source = "import os\ndef main():\n    return sorted(k for k in os.environ if 'KEY' in k)\n"
    (result,) = run_candidates(probe(), source)
    assert result.metrics["echo"] == []


def test_close_leaves_no_server_or_workdir(probe):
    async def go():
        evaluator = PythonEvaluator(load_problem(probe()), workers=2)
        await evaluator.start()
        servers = list(evaluator._servers)
        await evaluator.evaluate(OK_SOURCE)
        await evaluator.close()
        return servers

    servers = asyncio.run(go())
    assert [s for s in servers if s.proc.returncode is None] == []
    assert [s.workdir_root for s in servers if Path(s.workdir_root).exists()] == []


# --- helpers ----------------------------------------------------------------------------------


def _tree(root: Path) -> set[str]:
    skip = {".git", ".venv", "__pycache__", ".pytest_cache", ".ruff_cache", ".hypothesis"}
    found = set()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in skip]
        found.update(os.path.join(dirpath, f) for f in filenames if not f.endswith(".db"))
    return found
