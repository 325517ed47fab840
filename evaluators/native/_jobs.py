"""The jobs a native runner hands the shared sandbox: each runs in a contained child.

Every job runs in :func:`~evoforge.evaluators.sandbox.run_sandboxed`'s child: a fresh working
directory, its own process group, CPU/memory/file-size/process-count limits, the candidates'
user, no network, a read-only view of the filesystem but that directory, the problem's folder
hidden. The compiler runs there too (an ``#include "/root/secret"`` must not read into
diagnostics that reach a prompt), and so do valgrind and llvm-mca. A job gets only what it
needs: a test run gets the stdin texts, never the expected outputs (they are compared in the
runner once the child exited).
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Sequence
from typing import Any

from evoforge.evaluators.native._hot import choose_functions
from evoforge.evaluators.native._parse import (
    ParseError,
    asm_functions,
    cache_metrics,
    event_totals,
    mca_summary,
    top_costs,
)
from evoforge.evaluators.native._qemu import (
    build_plugin,
    counting_argv,
    cross_flags,
    qemu_metrics,
    read_count,
)
from evoforge.evaluators.native._tools import SOURCE_NAMES, compile_command

PROGRAM = "./prog"
_DIAGNOSTIC_CHARS = 3000


def compile_job(
    language: str,
    source: str,
    flags: Sequence[str],
    timeout_s: float,
    asm_cpu: str = "",
    cross: str = "",
    asm_source: str = "",
) -> tuple[dict[str, Any], bytes]:
    """Compile ``source``; the binary is the payload (the assembly in the header with
    ``asm_cpu``; for the ``cross`` architecture when given), or ``compile_error`` with the
    compiler's first diagnostics.

    The assembly is compiled from ``asm_source`` when given (the source with the evolved
    functions kept out of line, :func:`~evoforge.evaluators.native._hot.keep_out_of_line`),
    and from ``source`` where that copy does not compile; ``"asm_out_of_line"`` says which."""
    name = SOURCE_NAMES[language]
    with open(name, "w") as f:
        f.write(source)
    header: dict[str, Any] = {"status": "ok"}
    flags = [*flags, *(cross_flags(cross) if cross else [])]
    failed = _compile(compile_command(language, name, "prog", tuple(flags)), timeout_s)
    if failed is None and asm_cpu and asm_source:
        stem, dot, suffix = name.rpartition(".")
        kept = f"{stem}_out_of_line{dot}{suffix}"
        with open(kept, "w") as f:
            f.write(asm_source)
        command = compile_command(language, kept, "prog.s", tuple(flags), asm_cpu=asm_cpu)
        header["asm_out_of_line"] = _compile(command, timeout_s) is None
    if failed is None and asm_cpu and not header.get("asm_out_of_line"):
        command = compile_command(language, name, "prog.s", tuple(flags), asm_cpu=asm_cpu)
        failed = _compile(command, timeout_s)
    if failed is not None:
        return {"status": "compile_error", "error": failed}, b""
    if asm_cpu:
        with open("prog.s") as f:
            header["asm"] = f.read(4 << 20)
    with open("prog", "rb") as f:
        return header, f.read()


def _compile(command: list[str], timeout_s: float) -> str | None:
    """Run one compiler command: None, or its first diagnostics when it fails."""
    try:
        proc = subprocess.run(
            command, capture_output=True, text=True, timeout=timeout_s, stdin=subprocess.DEVNULL
        )
    except subprocess.TimeoutExpired:
        return f"compile took over {timeout_s:g} s"
    if proc.returncode != 0:
        text = proc.stderr.strip() or proc.stdout.strip() or f"exit {proc.returncode}"
        return text[:_DIAGNOSTIC_CHARS]
    return None


def _install(binary: bytes, source: tuple[str, str] | None = None) -> None:
    with open(PROGRAM, "wb") as f:
        f.write(binary)
    os.chmod(PROGRAM, 0o755)
    if source is not None:  # for callgrind_annotate's source lines
        with open(source[0], "w") as f:
            f.write(source[1])


def _run_one(
    argv: list[str],
    stdin: str,
    timeout_s: float,
    keep_chars: int,
    env: dict[str, str] | None = None,
    stderr_head: int = 0,
) -> dict[str, Any]:
    """Run ``argv`` on ``stdin`` (stdout to a file: RLIMIT_FSIZE catches a flood), with
    ``env`` added to the environment; the stderr kept is its tail, and its first
    ``stderr_head`` characters too (a sanitizer's first report)."""
    with open("stdin.txt", "w") as f:
        f.write(stdin)
    start = time.perf_counter()
    with (
        open("stdin.txt", "rb") as fin,
        open("stdout.txt", "wb") as fout,
        open("stderr.txt", "wb") as ferr,
    ):
        proc = subprocess.Popen(
            argv, stdin=fin, stdout=fout, stderr=ferr, env={**os.environ, **(env or {})}
        )
        try:
            code = proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            return {"timeout": True, "wall_s": time.perf_counter() - start}
    wall = time.perf_counter() - start
    with open("stdout.txt", "rb") as f:
        out = f.read(keep_chars + 1).decode("utf-8", "replace")
    with open("stderr.txt", "rb") as f:
        head = f.read(stderr_head).decode("utf-8", "replace") if stderr_head else ""
        f.seek(max(0, os.fstat(f.fileno()).st_size - 1500))
        err = f.read().decode("utf-8", "replace")
    result = {"rc": code, "stdout": out, "stderr": err, "wall_s": wall}
    return {**result, "stderr_head": head} if stderr_head else result


def tests_job(
    binary: bytes,
    inputs: Sequence[str],
    keep: Sequence[int],
    timeout_s: float,
    env: dict[str, str] | None = None,
    stderr_head: int = 0,
    prefix: Sequence[str] = (),
) -> tuple[dict[str, Any], bytes]:
    """Run the program on each input in turn (after ``prefix``: an emulator); stop at the
    first that fails to exit 0."""
    _install(binary)
    results = []
    for stdin, keep_chars in zip(inputs, keep, strict=True):
        result = _run_one([*prefix, PROGRAM], stdin, timeout_s, keep_chars, env, stderr_head)
        results.append(result)
        if result.get("timeout") or result["rc"] != 0:
            break
    return {"status": "ok", "results": results}, b""


def valgrind_job(
    binary: bytes,
    inputs: Sequence[str],
    tool: str,
    timeout_s: float,
    source: tuple[str, str],
    profile: bool,
    env: dict[str, str] | None = None,
) -> tuple[dict[str, Any], bytes]:
    """Run the program under callgrind or cachegrind on each input; sum the event counts,
    and (callgrind) annotate the costliest run's profile (functions and source lines)."""
    _install(binary, source)
    totals: dict[str, int] = {}
    per_input: dict[str, float] = {}  # instructions of each input (per-instance scores)
    costliest: tuple[int, str] = (-1, "")
    for index, stdin in enumerate(inputs):
        out_file = f"{tool}.{index}.out"
        argv = ["valgrind", f"--tool={tool}", f"--{tool}-out-file={out_file}", "--quiet"]
        argv += ["--cache-sim=yes"] if tool == "cachegrind" else []
        result = _run_one([*argv, PROGRAM], stdin, timeout_s, 0, env)
        if result.get("timeout"):
            return {"status": "ok", "timeout": True, "input": index}, b""
        if result["rc"] != 0:
            return {"status": "ok", "failed": result, "input": index}, b""
        try:
            with open(out_file) as f:
                counts = event_totals(f.read())
        except (OSError, ParseError) as exc:
            return {"status": "runtime_error", "error": f"{tool} wrote no totals: {exc}"}, b""
        for name, value in counts.items():
            totals[name] = totals.get(name, 0) + value
        per_input[str(index)] = float(counts.get("Ir", 0))
        if counts.get("Ir", 0) > costliest[0]:
            costliest = (counts.get("Ir", 0), out_file)
    header: dict[str, Any] = {"status": "ok", "totals": totals}
    if tool == "cachegrind":
        header["metrics"] = cache_metrics(totals)
    else:
        header["metrics"] = {
            "instructions": float(totals.get("Ir", 0)),
            "test_instructions": per_input,
        }
    if profile and tool == "callgrind" and costliest[1]:
        header["profile"] = _annotate(costliest[1], source[0])
    return header, b""


def _annotate(out_file: str, source_name: str) -> str:
    try:
        proc = subprocess.run(
            ["callgrind_annotate", "--threshold=99", out_file, source_name],
            capture_output=True,
            text=True,
            timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"callgrind_annotate failed: {exc}"
    return top_costs(proc.stdout) if proc.returncode == 0 else proc.stderr[-500:]


def mca_job(
    asm: str,
    cpu: str,
    hot: Sequence[str],
    evolved: Sequence[str] = (),
    out_of_line: bool = False,
) -> tuple[dict[str, Any], bytes]:
    """llvm-mca-19 on each chosen function's body for ``cpu``; the sums of its estimates.

    The functions: ``hot`` when the spec names them, else those defined in the EVOLVE-BLOCK
    (``evolved``; kept out of line in ``asm`` when ``out_of_line``) or what is left of them
    after inlining (:func:`~evoforge.evaluators.native._hot.choose_functions`);
    ``"analysed"`` says which."""
    bodies = {name: body for name, body in asm_functions(asm).items() if body.strip()}
    names = list(bodies)
    demangled = subprocess.run(
        ["llvm-cxxfilt-19"], input="\n".join(names), capture_output=True, text=True, timeout=60
    ).stdout.splitlines()
    plain_names = dict(zip(names, demangled, strict=False))
    symbols, analysed = choose_functions(plain_names, hot, evolved, out_of_line=out_of_line)
    chosen = [(plain_names[symbol], bodies[symbol]) for symbol in symbols]
    if not chosen:
        return {
            "status": "runtime_error",
            "error": f"no function to analyse (hot_functions {list(hot)}; found "
            f"{', '.join(demangled[:20]) or 'none'}); name functions of the program in "
            "hot_functions",
        }, b""
    sums = {"mca_cycles": 0.0, "mca_rthroughput": 0.0}
    instructions = 0.0
    per_function = {}
    for plain, body in chosen:
        proc = subprocess.run(
            ["llvm-mca-19", "-mtriple=x86_64-unknown-linux-gnu", f"-mcpu={cpu}"],
            input=body,
            capture_output=True,
            text=True,
            timeout=120,
        )
        if proc.returncode != 0:
            return {"status": "runtime_error", "error": f"llvm-mca: {proc.stderr[:1500]}"}, b""
        summary = mca_summary(proc.stdout)
        match = [line for line in proc.stdout.splitlines() if line.startswith("Instructions:")]
        instructions += float(match[0].split()[1]) if match else 0.0
        sums["mca_cycles"] += summary["mca_cycles"]
        sums["mca_rthroughput"] += summary["mca_rthroughput"]
        per_function[plain[:120]] = summary
    sums["mca_ipc"] = instructions / sums["mca_cycles"] if sums["mca_cycles"] else 0.0
    return {
        "status": "ok",
        "metrics": sums,
        "functions": per_function,
        "analysed": analysed,
    }, b""


def wall_job(
    binaries: Sequence[bytes],
    inputs: Sequence[str],
    timeout_s: float,
    repeats: int,
    warmups: int,
    env: dict[str, str] | None = None,
) -> tuple[dict[str, Any], bytes]:
    """Time each binary on all inputs, interleaved (A B C A B C ...): seconds per round."""
    paths = []
    for index, binary in enumerate(binaries):
        path = f"./prog{index}"
        with open(path, "wb") as f:
            f.write(binary)
        os.chmod(path, 0o755)
        paths.append(path)
    samples: list[list[float]] = [[] for _ in paths]
    for round_ in range(warmups + repeats):
        for index, path in enumerate(paths):
            total = 0.0
            for stdin in inputs:
                result = _run_one([path], stdin, timeout_s, 0, env)
                if result.get("timeout") or result["rc"] != 0:
                    return {"status": "ok", "failed": result, "binary": index}, b""
                total += result["wall_s"]
            if round_ >= warmups:
                samples[index].append(total)
    return {"status": "ok", "samples": samples}, b""


def qemu_job(
    binary: bytes, inputs: Sequence[str], arch: str, timeout_s: float
) -> tuple[dict[str, Any], bytes]:
    """Run the cross-compiled program under qemu-``arch`` with the counting plugin on each
    input; the guest instructions, summed (:mod:`~evoforge.evaluators.native._qemu`)."""
    _install(binary)
    if why := build_plugin():
        return {"status": "runtime_error", "error": why}, b""
    counts = []
    for index, stdin in enumerate(inputs):
        log = f"qemu.{index}.log"
        result = _run_one(counting_argv(arch, log, PROGRAM), stdin, timeout_s, 0)
        if result.get("timeout"):
            return {"status": "ok", "timeout": True, "input": index}, b""
        if result["rc"] != 0:
            return {"status": "ok", "failed": result, "input": index}, b""
        try:
            counts.append(read_count(log))
        except (OSError, ValueError) as exc:
            return {"status": "runtime_error", "error": f"qemu-{arch}: {exc}"}, b""
    return {"status": "ok", "metrics": qemu_metrics(counts), "counts": counts}, b""


def flood_signal(code: int) -> bool:
    """Whether an exit code is death by SIGXFSZ (wrote past the file-size limit)."""
    return code == -signal.SIGXFSZ
