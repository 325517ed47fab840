"""Hostile candidates, processes and resources: loops, bombs, crashes, floods, leftovers and
patched clocks, each contained and recorded with the right status (harness: ``hostile.py``)."""

from __future__ import annotations

import os

import pytest

from evoforge.evaluators import Status
from tests.evaluators.hostile import SET_NAME, marked_processes, require_filesystem


def test_the_candidates_run_as_root_with_every_protection_on(roomy):
    info = roomy.evaluator.sandbox_info
    require_filesystem(info)
    assert info["filesystem"].startswith("a minimal root, read-only except the workdir"), info
    # the problem's folder (in the host's /tmp) is not in the root at all
    bound = info["visible"].split("; ")[0].split(", ")
    assert not any(str(roomy.folder).startswith(path.rstrip("/") + "/") for path in bound), info
    assert "/tmp (private)" in info["visible"]
    assert info["capabilities"].startswith(("all dropped", "none held"))
    if os.geteuid() == 0:
        assert info["user"].startswith("uid 0 (root, as asked")


# --- processes and resources ------------------------------------------------------------------

SPINNING_BOMB = """
import os
def main():
    for _ in range(6):  # 64 processes, all spinning: it never returns
        os.fork()
    SET_NAME
    while True:
        pass
"""


@pytest.mark.parametrize(
    ("source", "error"),
    [
        ("def main():\n    while True:\n        pass\n", "wall-clock limit of 1 s"),
        (SPINNING_BOMB, "wall-clock limit of 1 s"),
    ],
    ids=["infinite-loop", "fork-bomb"],
)
def test_what_never_returns_times_out_and_is_killed_whole(quick, outside, source, error):
    # As root RLIMIT_NPROC does not hold, so the bomb is not refused: it times out, and the
    # group kill plus the subreaper sweep take every process with it.
    source = source.replace("SET_NAME", SET_NAME.format(mark=outside.mark))
    with outside:
        result = quick.run(source)
    assert result.status is Status.TIMEOUT, result.artifacts
    assert error in result.artifacts["error"]


@pytest.mark.parametrize(
    ("source", "status", "error"),
    [
        ("def main():\n    return len(bytearray(50 * 10**9))\n", Status.MEMORY_LIMIT, "memory"),
        ("import os\ndef main():\n    os._exit(3)\n", Status.CRASHED, "exited with code 3"),
        ("import ctypes\ndef main():\n    ctypes.string_at(0)\n", Status.CRASHED, "SIGSEGV"),
    ],
    ids=["memory-bomb", "exit-3", "segfault"],
)
def test_a_candidate_that_dies_is_classified(roomy, outside, source, status, error):
    with outside:
        result = roomy.run(source)
    assert result.status is status, result.artifacts
    assert error in result.artifacts["error"]


def test_100_mb_of_output_is_capped_and_the_run_completes(roomy, outside):
    source = """
        import sys
        def main():
            chunk = "x" * (1 << 20)
            for _ in range(100):
                sys.stdout.write(chunk)
            print("the end")
            return {"metrics": {"score": 1.0, "size": 1.0}}
    """
    with outside:
        result = roomy.run(source)
    assert result.status is Status.OK, result.artifacts
    tail = result.artifacts["stdout_tail"]
    assert tail.endswith("xxthe end\n") and len(tail) < 4100
    assert f"{100 * 2**20 + len('the end') + 1} bytes" in tail


LEFT_BEHIND = {
    "fork-sleep": """
        import os, time
        def main():
            pid = os.fork()
            if pid == 0:
                SET_NAME
                time.sleep(60)
                os._exit(0)
            return {"pids": [pid]}
    """,
    "double-fork-setsid": """
        import os, time
        def main():
            r, w = os.pipe()
            if os.fork() == 0:
                os.setsid()  # out of the candidate's session and group
                pid = os.fork()
                if pid == 0:
                    SET_NAME
                    time.sleep(60)
                    os._exit(0)
                os.write(w, b"%d" % pid)
                os._exit(0)
            return {"pids": [int(os.read(r, 32))]}
    """,
    "daemon": """
        import os, time
        def main():
            r, w = os.pipe()
            if os.fork() == 0:
                os.setsid()
                if os.fork() == 0:
                    os.chdir("/")
                    os.umask(0)
                    os.write(w, b"%d" % os.getpid())
                    for fd in range(3):
                        os.close(fd)
                    SET_NAME
                    while True:
                        time.sleep(1)
                os._exit(0)
            return {"pids": [int(os.read(r, 32))]}
    """,
    "exec-sleeper": """
        import subprocess, sys
        def main():
            code = "import time; time.sleep(60)"
            proc = subprocess.Popen([sys.executable, "-c", code, MARK], start_new_session=True)
            return {"pids": [proc.pid]}
    """,
}


@pytest.mark.parametrize("case", LEFT_BEHIND)
def test_processes_left_behind_are_killed_before_the_answer(roomy, outside, case):
    source = LEFT_BEHIND[case].replace("SET_NAME", SET_NAME.format(mark=outside.mark))
    source = source.replace("MARK", repr(outside.mark))
    with outside:
        result = roomy.run(source)
        assert result.status is Status.OK, result.artifacts
        assert result.metrics["echo"]["pids"]  # it did start them (pids of its namespace)
        assert marked_processes(outside.mark) == []  # already, not eventually


def test_fork_bomb_of_sleepers_is_swept_up(roomy, outside):
    source = """
        import os, time
        def main():
            r, w = os.pipe()
            root = os.getpid()
            for _ in range(7):  # 2**7 processes, each forking further
                os.fork()
            if os.getpid() != root:
                os.write(w, b"%8d" % os.getpid())
                SET_NAME
                time.sleep(60)
                os._exit(0)
            data = b""
            while len(data) < 8 * 127:
                data += os.read(r, 8 * 127 - len(data))
            flat = []
            for _ in range(200):
                pid = os.fork()
                if pid == 0:
                    SET_NAME
                    time.sleep(60)
                    os._exit(0)
                flat.append(pid)
            return {"pids": [int(p) for p in data.split()] + flat}
    """
    source = source.replace("SET_NAME", SET_NAME.format(mark=outside.mark))
    with outside:
        result = roomy.run(source)
        assert result.status is Status.OK, result.artifacts
        assert len(result.metrics["echo"]["pids"]) == 327
        assert marked_processes(outside.mark) == []  # already, not eventually


def test_patched_clocks_do_not_change_the_timings(roomy, outside):
    source = """
        import select, time
        def main():
            for name in ("perf_counter", "monotonic", "time", "process_time"):
                setattr(time, name, lambda: 0.0)
                setattr(time, name + "_ns", lambda: 0)
            select.select([], [], [], 0.3)  # 0.3 s, on the kernel's clock
            return {"metrics": {"score": 1.0, "size": 1.0}}
    """
    with outside:
        result = roomy.run(source)
    assert result.status is Status.OK, result.artifacts
    timings = result.timings  # measured by the server and this process, not the candidate
    assert 0.3 <= timings["eval_s"] < 5.0
    assert timings["eval_s"] <= timings["total_s"] <= timings["caller_s"]
