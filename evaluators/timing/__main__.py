"""Runner of the CPU timing option: ``python -m evoforge.evaluators.timing`` (see
:mod:`evoforge.evaluators.timing._cpu`). Reads one JSON request on stdin, replies one JSON line:
``{"status": "ok", "metrics": {...}, "valgrind": ...}`` or ``{"status": ..., "error": ...}``.
"""

from __future__ import annotations

import importlib
import json
import os
import signal
import subprocess
import sys
import time
import types
from pathlib import Path
from typing import Any

from evoforge.evaluators.sandbox import (
    Isolation,
    Limits,
    RunnerFailure,
    SandboxRun,
    prepare_request,
    read_request,
    reply,
    run_sandboxed,
)
from evoforge.evaluators.timing import _lines
from evoforge.evaluators.timing._cpu import CallgrindError, callgrind_instructions
from evoforge.evaluators.timing._wall import interleaved_wall

CANDIDATE_FILE = "candidate.py"
_VALGRIND_MEMORY_MB = 1024  # valgrind's own address space, on top of the candidate's limit

# Runs under valgrind: imports the candidate, and calls its entry only when asked, so
# "call" minus "import" is the entry's own instructions.
HARNESS = """
import sys, types
mode, entry, preload = sys.argv[1], sys.argv[2], [m for m in sys.argv[3].split(",") if m]
for name in preload:
    __import__(name)
source = open("candidate.py").read()
module = types.ModuleType("candidate")
exec(compile(source, "<candidate>", "exec"), module.__dict__)
if mode == "call":
    module.__dict__[entry]()
"""


def main() -> int:
    request = read_request()
    isolation, notes = prepare_request(request)
    for name in request.get("preload", ()):
        importlib.import_module(name)  # once here, not in every forked run
    try:
        if request["mode"] == "callgrind":
            answer = _callgrind(request, isolation)
        else:
            answer = _wall(request, isolation)
    except RunnerFailure as failed:
        answer = failed.reply()
    answer["sandbox"] = notes
    reply(answer)
    return 0


def _check(run: SandboxRun, what: str) -> dict[str, Any]:
    if run.status.value != "ok":
        detail = run.error or run.header.get("error") or "no reason given"
        tail = run.stderr_tail.strip()[-500:]
        raise RunnerFailure(run.status.value, f"{what}: {detail}" + (f"\n{tail}" if tail else ""))
    return run.header


# --- callgrind -----------------------------------------------------------------------------


def _callgrind(request: dict[str, Any], isolation: Isolation) -> dict[str, Any]:
    source, entry = request["source"], request["entry"]
    timeout_s = float(request["timeout_s"])
    preload = ",".join(request.get("preload", ()))
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "PYTHONHASHSEED": "0",  # str hashes, and so dict and set orders, are repeatable
        "PYTHONDONTWRITEBYTECODE": "1",
        **{k: "1" for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")},
    }

    def job() -> tuple[dict[str, Any], bytes]:
        cwd = os.getcwd()
        env.update(HOME=cwd, TMPDIR=cwd)
        Path(CANDIDATE_FILE).write_text(source)
        counts = {}
        try:
            for mode in ("import", "call"):
                argv = [sys.executable, "-c", HARNESS, mode, entry, preload]
                counts[mode] = callgrind_instructions(argv, cwd=cwd, env=env, timeout_s=timeout_s)
        except CallgrindError as exc:  # a child reports no timeout status: say it apart
            return {"status": "runtime_error", "error": str(exc), "overran": exc.overran}, b""
        profile = _line_profile(source, entry, preload, cwd, env, timeout_s)
        return {"status": "ok", "counts": counts, "profile": profile}, b""

    memory = request.get("memory_mb")
    limits = Limits(
        timeout_s=2 * timeout_s + 30,
        memory_mb=None if memory is None else int(memory) + _VALGRIND_MEMORY_MB,
    )
    run = run_sandboxed(job, limits, isolation)
    if run.header.get("overran") is True:
        raise RunnerFailure("timeout", f"under callgrind: {run.error}")
    header = _check(run, "under callgrind")
    counts = header["counts"]
    total, baseline = int(counts["call"]), int(counts["import"])
    profile = header.get("profile")
    return {
        "status": "ok",
        "profile": profile if isinstance(profile, str) else "",
        "metrics": {
            "instructions": float(max(total - baseline, 0)),
            "instructions_total": float(total),
            "instructions_baseline": float(baseline),
        },
        "valgrind": _valgrind_version(),
    }


def _line_profile(
    source: str, entry: str, preload: str, cwd: str, env: dict[str, str], timeout_s: float
) -> str:
    """The candidate's costliest lines (:mod:`._lines`), from one more traced call of its
    entry; "" when that run fails or overruns (the profile is feedback, never a verdict)."""
    argv = [sys.executable, "-c", _lines.HARNESS, entry, preload, _lines.COUNTS_FILE]
    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # so an overrun kills all it started
    )
    try:
        finished = proc.wait(timeout=timeout_s) == 0
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        return ""
    counts = _lines.read_counts(cwd) if finished else None
    return _lines.line_profile(source, counts, entry) if counts else ""


def _valgrind_version() -> str:
    try:
        return subprocess.run(
            ["valgrind", "--version"], capture_output=True, text=True, timeout=30
        ).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"


# --- wall time -----------------------------------------------------------------------------


def _wall(request: dict[str, Any], isolation: Isolation) -> dict[str, Any]:
    limits = Limits(timeout_s=float(request["timeout_s"]), memory_mb=request.get("memory_mb"))
    entry = request["entry"]

    def timed(source: str, what: str) -> Any:
        def job() -> tuple[dict[str, Any], bytes]:
            return _time_entry(source, entry)

        def run() -> float:
            sandboxed = run_sandboxed(job, limits, isolation)
            header = _check(sandboxed, what)
            seconds = header.get("seconds")
            if not isinstance(seconds, float) or not 0 < seconds <= sandboxed.eval_s:
                raise RunnerFailure(
                    "sandbox_violation",
                    f"{what}: reported {seconds!r} s for a run that took {sandboxed.eval_s:.6f} s "
                    "from outside (the timer was tampered with)",
                )
            return seconds

        return run

    comparison = interleaved_wall(
        timed(request["source"], "the candidate"),
        timed(request["seed_source"], "the seed program"),
        repeats=int(request.get("repeats", 10)),
        warmups=int(request.get("warmups", 2)),
        self_timed=True,
    )
    return {
        "status": "ok",
        "metrics": {
            "wall_s": comparison.median_a_s,
            "wall_iqr_s": comparison.iqr_a_s,
            "wall_seed_s": comparison.median_b_s,
            "wall_speedup": comparison.speedup,
            "wall_significant": comparison.significant,
        },
        "comparison": json.loads(json.dumps(comparison.to_dict())),
    }


def _time_entry(source: str, entry: str) -> tuple[dict[str, Any], bytes]:
    """In the sandboxed child: import ``source``, time one call of ``entry()``."""
    clock = time.perf_counter  # taken before the candidate's code can replace it
    try:
        module = types.ModuleType("candidate")
        exec(compile(source, "<candidate>", "exec", dont_inherit=True), module.__dict__)
        function = module.__dict__[entry]
        start = clock()
        function()
        seconds = clock() - start
    except BaseException as exc:
        return {"status": "runtime_error", "error": f"{type(exc).__name__}: {exc}"[:2000]}, b""
    return {"status": "ok", "seconds": seconds}, b""


if __name__ == "__main__":
    sys.exit(main())
