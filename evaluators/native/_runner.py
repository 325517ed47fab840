"""The trusted runner of one native evaluation: ``python -m evoforge.evaluators.native``.

Reads one JSON request on stdin and replies one JSON line. Steps, each a sandboxed job
(:mod:`evoforge.evaluators.native._jobs`): compile (``compile_error`` with the first
diagnostics), run every test and compare its output here (``incorrect`` with the first failing
input, expected and actual output, cut; ``timeout``, ``crashed``, ``runtime_error`` for a
non-zero exit or an output flood), then measure. A request with ``sanitize`` builds the
candidate instrumented and fails at the first sanitizer report
(:mod:`~evoforge.evaluators.native._sanitize`); ``qemu:<arch>`` cross-compiles it and runs
its tests under the emulator (:mod:`~evoforge.evaluators.native._qemu`). The runner itself
never runs candidate code.
"""

from __future__ import annotations

import dataclasses
import signal
import time
from collections.abc import Callable
from typing import Any

from evoforge.evaluators.native import _jobs, _qemu
from evoforge.evaluators.native._sanitize import (
    REPORT_CHARS,
    first_report,
    sanitizer_env,
    sanitizer_flags,
)
from evoforge.evaluators.native._tools import rust_sysroot
from evoforge.evaluators.sandbox import (
    Isolation,
    Limits,
    SandboxRun,
    prepare_request,
    read_request,
    reply,
    run_sandboxed,
)
from evoforge.evaluators.timing import compare

_CUT = 600  # characters of an input or output shown in artifacts
_VALGRIND_MEMORY_MB = 1024
_COMPILE_MEMORY_MB = 4096
_QEMU_MEMORY_MB = 1024  # qemu-user's own code cache and maps, beside the guest's


class Verdict(Exception):  # noqa: N818 - a verdict about the candidate, not a bug
    """The evaluation ended early with ``status``; artifacts say why."""

    def __init__(self, status: str, error: str, artifacts: dict[str, str] | None = None) -> None:
        super().__init__(error)
        self.status, self.error, self.artifacts = status, error, artifacts or {}


def main() -> int:
    request = read_request()
    isolation, notes = prepare_request(request)
    isolation = dataclasses.replace(isolation, hidden_paths=tuple(request.get("hidden", ())))
    sysroot = rust_sysroot() if request.get("language") == "rust" else None
    if sysroot is not None:  # a rustup toolchain under ~/.rustup: bound into the root
        isolation = dataclasses.replace(isolation, keep=(*isolation.keep, sysroot))
    timings: dict[str, float] = {}
    try:
        answer = evaluate(request, isolation, timings)
    except Verdict as verdict:
        answer = {"status": verdict.status, "error": verdict.error, "artifacts": verdict.artifacts}
    answer["timings"] = timings
    answer["sandbox"] = notes
    reply(answer)
    return 0


def cross_arch(request: dict[str, Any]) -> str:
    """The architecture to cross-build for (``qemu:<arch>``), or "" for a native build.

    Only when the measure can run: without qemu or the cross libraries (the engine says which
    to install, and the run checks correctness only) the candidate is built for this host and
    its tests run here, instead of every candidate failing to compile."""
    kind, _, argument = str(request["measure"]).partition(":")
    return argument if kind == "qemu" and request.get("measure_enabled", True) else ""


def evaluate(
    request: dict[str, Any], isolation: Isolation, timings: dict[str, float]
) -> dict[str, Any]:
    """Compile, check and measure one candidate (see the module docstring)."""
    measure = str(request["measure"])
    kind, _, argument = measure.partition(":")
    sanitizers = list(request.get("sanitize", ()))
    start = time.perf_counter()
    cross = cross_arch(request)
    binary, header = compile_source(
        request,
        request["source"],
        [*request["flags"], *sanitizer_flags(sanitizers)],
        isolation,
        asm_cpu=argument if kind == "mca" else "",
        cross=cross,
        asm_source=str(request.get("asm_source", "")) if kind == "mca" else "",
    )
    timings["compile_s"] = time.perf_counter() - start
    start = time.perf_counter()
    check_tests(request, binary, isolation, cross=cross)
    timings["tests_s"] = time.perf_counter() - start
    start = time.perf_counter()
    if kind == "none" or not request.get("measure_enabled", True):
        return {"status": "ok", "metrics": {"passed": 1.0}}
    metrics, artifacts = _MEASURES[kind](request, binary, header, isolation)
    timings["measure_s"] = time.perf_counter() - start
    return {"status": "ok", "metrics": metrics, "artifacts": artifacts}


def _sandboxed(
    job: Callable[[], tuple[dict[str, Any], bytes]], limits: Limits, iso: Isolation, what: str
) -> SandboxRun:
    run = run_sandboxed(job, limits, iso)
    if run.status.value != "ok":
        detail = run.error or run.header.get("error") or "no reason given"
        artifacts = {k: v[-1500:] for k, v in run.artifacts.items() if k != "error"}
        raise Verdict(run.status.value, f"{what}: {detail}", artifacts)
    return run


def compile_source(
    request: dict[str, Any],
    source: str,
    flags: list[str],
    iso: Isolation,
    *,
    asm_cpu: str = "",
    cross: str = "",
    asm_source: str = "",
) -> tuple[bytes, dict[str, Any]]:
    """The binary of ``source`` (for the ``cross`` architecture when given), and the compile
    job's header (the assembly with ``asm_cpu``, of ``asm_source`` where it compiles)."""
    timeout = float(request["compile_timeout_s"])
    limits = Limits(
        timeout_s=timeout + 10, memory_mb=_COMPILE_MEMORY_MB, file_size_mb=256, result_mb=64
    )
    language = request["language"]
    run = _sandboxed(
        lambda: _jobs.compile_job(language, source, flags, timeout, asm_cpu, cross, asm_source),
        limits,
        iso,
        "compiling",
    )
    return run.payload, run.header


def _limits(request: dict[str, Any], runs: int, per_run_s: float, extra_mb: int = 0) -> Limits:
    """A job's limits. Processes: threads count too (one per core for OpenMP). Address
    space: none for a TSan or ASan build, which cannot start under ``RLIMIT_AS``
    (:mod:`~evoforge.evaluators.native._sanitize`)."""
    shadow = {"thread", "address"} & set(request.get("sanitize", ()))
    return Limits(
        timeout_s=min(float(request["timeout_s"]), per_run_s * runs + 5),
        memory_mb=None if shadow else int(request["memory_mb"]) + extra_mb,
        file_size_mb=int(request["output_mb"]),
        max_procs=int(request.get("max_procs", 64)),
    )


def check_tests(request: dict[str, Any], binary: bytes, iso: Isolation, *, cross: str = "") -> None:
    """Run every test (under qemu-``cross`` for a cross build); raise a :class:`Verdict` at
    the first that fails."""
    tests = request["tests"]
    inputs = [stdin for stdin, _ in tests]
    keep = [len(expected) + 256 for _, expected in tests]
    per = float(request["test_timeout_s"]) * (_qemu.SLOWDOWN if cross else 1)
    prefix = _qemu.launcher(cross) if cross else []
    sanitizers = list(request.get("sanitize", ()))
    env = {**thread_env(request), **sanitizer_env(sanitizers, str(request.get("archer", "")))}
    head = REPORT_CHARS * 4 if sanitizers else 0
    run = _sandboxed(
        lambda: _jobs.tests_job(binary, inputs, keep, per, env, head, prefix),
        _limits(request, len(tests), per, _QEMU_MEMORY_MB if cross else 0),
        iso,
        "running the tests",
    )
    for index, result in enumerate(run.header["results"]):
        stdin, expected = tests[index]
        if report := first_report(result.get("stderr_head", "")):
            kind, headline, text = report
            raise Verdict(
                "crashed" if " SEGV " in f"{headline} " else "runtime_error",
                f"test {index}: {headline} (the {'+'.join(sanitizers)} sanitizer build)",
                {kind: text, "input": _cut(stdin)},
            )
        _check_run(result, stdin, per, request, f"test {index}")
        if _normal(result["stdout"]) != _normal(expected):
            raise Verdict(
                "incorrect",
                f"wrong output on test {index}",
                {
                    "input": _cut(stdin),
                    "expected": _cut(expected),
                    "actual": _cut(result["stdout"]),
                    "stderr_tail": result.get("stderr", "")[-800:],
                },
            )


def _check_run(
    result: dict[str, Any], stdin: str, per_s: float, request: dict[str, Any], what: str
) -> None:
    if result.get("timeout"):
        raise Verdict("timeout", f"{what} ran over {per_s:g} s", {"input": _cut(stdin)})
    code = int(result["rc"])
    artifacts = {"input": _cut(stdin), "stderr_tail": result.get("stderr", "")[-800:]}
    if _jobs.flood_signal(code):
        raise Verdict(
            "runtime_error",
            f"{what}: output flood: wrote more than {request['output_mb']} MiB",
            artifacts,
        )
    if code < 0:
        name = (
            signal.Signals(-code).name
            if -code in signal.Signals.__members__.values()
            else str(-code)
        )
        raise Verdict("crashed", f"{what}: killed by signal {name}", artifacts)
    if code != 0:
        raise Verdict("runtime_error", f"{what}: exited with code {code}", artifacts)


def thread_env(request: dict[str, Any]) -> dict[str, str]:
    """The candidate's thread count (the sandbox sets ``OMP_NUM_THREADS=1`` for everyone)."""
    return {"OMP_NUM_THREADS": str(int(request.get("threads", 1)))}


def _normal(text: str) -> list[str]:
    """Output compared line by line, trailing spaces and blank lines ignored."""
    lines = [line.rstrip() for line in text.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def _cut(text: str) -> str:
    return text if len(text) <= _CUT else text[:_CUT] + f"… ({len(text)} characters)"


# --- measures ------------------------------------------------------------------------------


def _valgrind(tool: str) -> Callable[..., tuple[dict[str, Any], dict[str, str]]]:
    def measure(
        request: dict[str, Any], binary: bytes, _header: dict[str, Any], iso: Isolation
    ) -> tuple[dict[str, Any], dict[str, str]]:
        inputs = request["inputs"]
        per = float(request["test_timeout_s"]) * 60  # valgrind runs programs ~50x slower
        source = (request["source_name"], request["source"])
        profile = bool(request.get("profile", True))
        limits = _limits(request, len(inputs), per, _VALGRIND_MEMORY_MB)
        limits = dataclasses.replace(limits, timeout_s=max(limits.timeout_s, per * len(inputs)))
        run = _sandboxed(
            lambda: _jobs.valgrind_job(
                binary, inputs, tool, per, source, profile, thread_env(request)
            ),
            limits,
            iso,
            f"under {tool}",
        )
        header = run.header
        if header.get("timeout"):
            raise Verdict(
                "timeout", f"measure input {header['input']} ran over {per:g} s under {tool}"
            )
        if "failed" in header:
            index = int(header["input"])
            _check_run(
                header["failed"], inputs[index], per, request, f"measure input {index} under {tool}"
            )
        artifacts = {"profile": header["profile"]} if header.get("profile") else {}
        return header["metrics"], artifacts

    return measure


def _mca(
    request: dict[str, Any], _binary: bytes, header: dict[str, Any], iso: Isolation
) -> tuple[dict[str, float], dict[str, str]]:
    cpu = str(request["measure"]).partition(":")[2]
    limits = Limits(timeout_s=300, memory_mb=_COMPILE_MEMORY_MB)
    hot = list(request.get("hot_functions", ()))
    evolved = list(request.get("evolved_functions", ()))
    kept = bool(header.get("asm_out_of_line"))
    run = _sandboxed(
        lambda: _jobs.mca_job(header["asm"], cpu, hot, evolved, kept), limits, iso, "llvm-mca"
    )
    lines = [
        f"{name}: {values['mca_cycles']:.0f} cycles / 100 iterations, block "
        f"rthroughput {values['mca_rthroughput']:.2f}"
        for name, values in run.header["functions"].items()
    ]
    analysed = str(run.header.get("analysed", ""))
    return run.header["metrics"], {
        "profile": f"llvm-mca -mcpu={cpu}, per function:\n" + "\n".join(lines),
        "mca_functions": analysed,
    }


def _wall(
    request: dict[str, Any], binary: bytes, _header: dict[str, Any], iso: Isolation
) -> tuple[dict[str, float], dict[str, str]]:
    """The candidate against the seed (and the seed at -O3), interleaved."""
    seed = request["seed_source"]
    references = [
        compile_source(request, seed, flags, iso)[0] for flags in request["reference_flags"]
    ]
    repeats, warmups = int(request.get("repeats", 10)), int(request.get("warmups", 2))
    inputs, per = request["inputs"], float(request["test_timeout_s"])
    binaries = [binary, *references]
    limits = _limits(request, len(inputs) * len(binaries) * (repeats + warmups), per)
    run = _sandboxed(
        lambda: _jobs.wall_job(binaries, inputs, per, repeats, warmups, thread_env(request)),
        limits,
        iso,
        "timing",
    )
    if "failed" in run.header:
        index = int(run.header["binary"])
        failed = run.header["failed"]
        _check_run(
            failed, "", per, request, "a timed run" if index == 0 else "the seed's timed run"
        )
    samples = run.header["samples"]
    metrics: dict[str, float] = {"wall_s": sorted(samples[0])[len(samples[0]) // 2]}
    artifacts = {}
    for label, reference in zip(request["reference_labels"], samples[1:], strict=True):
        comparison = compare(samples[0], reference)
        metrics[f"speedup_vs_{label}"] = comparison.speedup
        metrics[f"significant_vs_{label}"] = float(comparison.significant)
        artifacts[f"wall_vs_{label}"] = (
            f"median {comparison.median_a_s * 1e3:.3f} ms vs {comparison.median_b_s * 1e3:.3f} ms "
            f"(speedup {comparison.speedup:.3f}, stderr {comparison.stderr:.3f}, "
            f"{'significant' if comparison.significant else 'within noise'})"
        )
    return metrics, artifacts


def _qemu_measure(
    request: dict[str, Any], binary: bytes, _header: dict[str, Any], iso: Isolation
) -> tuple[dict[str, float], dict[str, str]]:
    """Guest instructions under qemu-user's counting plugin (see
    :mod:`~evoforge.evaluators.native._qemu`)."""
    arch = str(request["measure"]).partition(":")[2]
    inputs = request["inputs"]
    per = float(request["test_timeout_s"]) * _qemu.SLOWDOWN
    limits = _limits(request, len(inputs), per, _QEMU_MEMORY_MB)
    limits = dataclasses.replace(limits, timeout_s=max(limits.timeout_s, per * len(inputs) + 30))
    run = _sandboxed(
        lambda: _jobs.qemu_job(binary, inputs, arch, per), limits, iso, f"under qemu-{arch}"
    )
    header = run.header
    if header.get("timeout"):
        raise Verdict("timeout", f"measure input {header['input']} ran over {per:g} s under qemu")
    if "failed" in header:
        index = int(header["input"])
        _check_run(header["failed"], inputs[index], per, request, f"measure input {index}")
    counts = ", ".join(f"{c:,}" for c in header["counts"])
    return header["metrics"], {"profile": f"qemu-{arch} guest instructions per input: {counts}"}


_MEASURES: dict[str, Callable[..., tuple[dict[str, Any], dict[str, str]]]] = {
    "callgrind": _valgrind("callgrind"),
    "cachegrind": _valgrind("cachegrind"),
    "mca": _mca,
    "wall": _wall,
    "qemu": _qemu_measure,
}
"""Each measure's function (``none`` never gets here: compile and tests only)."""
