"""Runner of the ``triton`` and ``cuda`` evaluators: ``python -m
evoforge.evaluators.kernels.kernelbench``.

One JSON request on stdin (see :mod:`evoforge.evaluators.kernels.kernelbench._evaluator`), one JSON
reply line on stdout. Processes, one fresh runner per candidate::

    runner (trusted)   imports torch (never initialises CUDA) and the task file; draws hidden
                       seeds; makes every trial's inputs and fingerprints them
     ├── candidate     forked in the shared sandbox (candidate_job): ModelNew on each trial;
     │                 on a GPU, timing against the task's Model; outputs as raw bytes
     └── reference     forked after the candidate exited (reference_job, trusted code only):
                       Model on the same inputs, float64 on the first trial, and (once per
                       evaluator and device) the trusted eager vs torch.compile baseline
    runner: compares (numpy), checks the timing, calls the spec's evaluate(metrics), replies.

No reference value exists in any process until the candidate has exited, and none is ever
sent to a candidate.
"""

from __future__ import annotations

import math
import os
import secrets
import sys
import time
from typing import Any

from evoforge.evaluators.sandbox import (
    Isolation,
    Limits,
    SandboxRun,
    prepare_request,
    read_request,
    reply,
    run_sandboxed,
)

NO_GPU_TIMING = "timing unavailable: no CUDA GPU (Triton interpreter checks correctness only)"
_SANITY_TOLERANCE = 0.10  # reference timed against itself: more than 10 % apart is noise
_BASELINE_DRIFT = 1.20  # the reference in the candidate's process vs in the trusted one
COMPILE_MEMORY_MB = 4096
"""Least memory (address space per process) of a run that calls ``torch.compile``: inductor,
its compile workers and GCC's ``cc1plus`` on large generated C++ (the baseline is trusted
code; the limit only stops a runaway)."""
COMPILE_FILE_MB = 512
"""Largest file a run that calls ``torch.compile`` may write (a shared object, a cubin);
inductor's precompiled header, the largest (over 64 MiB), is switched off
(:mod:`evoforge.evaluators.kernels.kernelbench._caches`)."""


def main() -> int:
    request = read_request()
    cuda = request["target"] == "cuda"
    if not cuda:  # before torch or triton are imported
        os.environ["CUDA_VISIBLE_DEVICES"] = ""
        if request["kind"] == "triton":
            os.environ["TRITON_INTERPRET"] = "1"
    isolation, notes = prepare_request(request)
    import torch

    if not cuda and request["kind"] == "triton":
        import triton.language  # noqa: F401 - imported once, shared by the forked candidate

    from evoforge.evaluators.kernels.kernelbench._harness import (
        Context,
        digest,
        load_task,
        make_inputs,
    )
    from evoforge.evaluators.kernels.kernelbench._placement import cuda_redirect
    from evoforge.evaluators.kernels.kernelbench._shrink import ShrinkError, shrink_task

    start = time.perf_counter()
    inputs_note = ""
    shrunk_record = None
    try:
        task = load_task(request["task_path"])
        function, inputs_note = "get_inputs", "get_inputs() (the task's shapes)"
        small = request.get("small_inputs") or ""
        if not cuda and hasattr(task, small):
            function, inputs_note = small, f"{small}(trial) (the task's shapes for CPUs)"
        elif not cuda:
            shrunk = shrink_task(request["task_path"], task, request.get("shrunk"))
            if shrunk is not None:
                task, inputs_note = shrunk.module, f"get_inputs() {shrunk.note}"
                shrunk_record = shrunk.record
        init_seed = secrets.randbits(62)  # hidden: drawn here, per evaluation
        torch.manual_seed(init_seed)
        with cuda_redirect("cpu"):  # CPU tensors: the runner never initialises CUDA
            init_inputs = list(task.get_init_inputs())
        trials = [
            make_inputs(task, function, secrets.randbits(62), t)
            for t in range(int(request["trials"]))
        ]
    except ShrinkError as exc:
        reply(_task_failed(request, f"its shapes are too large for the interpreter: {exc}"))
        return 0
    except Exception as exc:
        reply(_task_failed(request, f"{type(exc).__name__}: {exc}", inputs_note))
        return 0
    if torch.cuda.is_initialized():  # a forked child could not use CUDA any more
        reply(
            _task_failed(
                request,
                "get_inputs() or get_init_inputs() used the GPU in the runner, which must not "
                "initialise CUDA before it forks the candidate; return CPU tensors (the "
                "evaluator moves them to the device)",
            )
        )
        return 0
    digests = [[digest(x) for x in inputs] for inputs in trials]
    ctx = Context(
        source=request["source"],
        task=task,
        kind=request["kind"],
        cuda=cuda,
        init_seed=init_seed,
        init_inputs=init_inputs,
        trials=trials,
        timing=_timing_settings(request) if cuda else None,
        atol=request.get("atol"),
        rtol=request.get("rtol"),
        inputs_function="get_inputs" if cuda else function,
    )
    input_mb = _nbytes(trials) / 2**20
    answer = _evaluate(request, ctx, digests, isolation, input_mb, inputs_note)
    metrics = answer.setdefault("metrics", {})
    metrics["target"] = request["target"]
    if not answer.get("build_only"):  # a compile-only build never sees its inputs
        metrics.update(shapes=_shapes(trials), inputs=inputs_note)
    answer.setdefault("timings", {})["runner_s"] = time.perf_counter() - start
    answer["sandbox"] = notes
    if shrunk_record is not None:
        answer["shrunk"] = shrunk_record  # the evaluator hands it to the next runner
    reply(answer)
    return 0


def _evaluate(
    request: dict[str, Any],
    ctx: Any,
    digests: list[list[str]],
    isolation: Isolation,
    input_mb: float,
    inputs_note: str = "",
) -> dict[str, Any]:
    from evoforge.evaluators.kernels.kernelbench._harness import candidate_job

    cuda = ctx.cuda
    limits = Limits(
        timeout_s=float(request["timeout_s"]),
        memory_mb=None if cuda else request.get("memory_mb"),  # CUDA reserves huge VA ranges
        result_mb=int(16 + 4 * input_mb),
    )
    run = run_sandboxed(lambda: candidate_job(ctx), limits, isolation)
    timings = {
        "candidate_s": run.eval_s,
        "candidate_cpu_s": run.cpu_s,
        "max_rss_mb": run.max_rss_mb,
    }
    header = run.header
    artifacts = run.artifacts
    if header.get("compiler_output"):
        artifacts["compiler_output"] = str(header["compiler_output"])
    if run.status.value != "ok":
        if run.status.value == "runtime_error":
            # The candidate has exited. Is the task itself broken on these inputs (a reference
            # that fails on shrunk shapes, or at all)? Then no candidate is to blame.
            broken = _reference_fails(request, ctx, input_mb)
            if broken:
                failed = _task_failed(request, broken, inputs_note)
                failed["artifacts"]["candidate_error"] = artifacts.get("error", "")
                return {**failed, "timings": timings}
        return {"status": run.status.value, "artifacts": artifacts, "timings": timings}
    if header.get("violation"):
        artifacts["error"] = str(header["violation"])
        return {"status": "sandbox_violation", "artifacts": artifacts, "timings": timings}
    if header.get("rejected"):
        artifacts["error"] = str(header["rejected"])
        return {"status": "incorrect", "artifacts": artifacts, "timings": timings}
    if header.get("build_only"):
        note = str(header.get("note"))
        artifacts["note"] = note
        metrics = {"verdict": note, "compiled": True, "ran": False, "builds": header.get("builds")}
        return {
            "status": "ok",
            "build_only": True,
            "metrics": metrics,
            "artifacts": artifacts,
            "timings": timings,
        }

    # The candidate has exited: only now does any reference value come to exist.
    from evoforge.evaluators.kernels.kernelbench._harness import reference_job

    baseline = None
    if not request.get("baseline") and (cuda or request.get("cpu_baseline")):
        # the trusted eager vs torch.compile baseline, once per evaluator and device
        baseline = ctx.timing or _timing_settings(request)
    reference = run_sandboxed(
        lambda: reference_job(ctx, precision=True, baseline=baseline),
        _reference_limits(request, cuda, input_mb, compiles=baseline is not None),
    )
    timings["reference_s"] = reference.eval_s
    if reference.status.value != "ok":
        failed = _task_failed(request, _describe(reference), inputs_note)
        return {**failed, "timings": timings}
    answer = _judge(request, ctx, digests, run, reference)
    answer["timings"] = timings
    answer.setdefault("artifacts", {}).update(
        {k: v for k, v in artifacts.items() if k not in ("error", "traceback")}
    )
    if baseline is not None and "baseline" in reference.header:
        answer["baseline"] = reference.header["baseline"]
    return answer


def _reference_fails(request: dict[str, Any], ctx: Any, input_mb: float) -> str:
    """Why the task's ``Model`` fails on this evaluation's inputs ("" when it runs)."""
    from evoforge.evaluators.kernels.kernelbench._harness import reference_job

    reference = run_sandboxed(
        lambda: reference_job(ctx, precision=False, baseline=None),
        _reference_limits(request, ctx.cuda, input_mb, compiles=False),
    )
    return "" if reference.status.value == "ok" else _describe(reference)


def _reference_limits(
    request: dict[str, Any], cuda: bool, input_mb: float, *, compiles: bool
) -> Limits:
    """The reference run's limits; one that measures the trusted baseline also gets what
    ``torch.compile`` needs: its compile time (``baseline_timeout_s``), room for inductor's
    files and compilers (a C++ compiler on a CPU: at least :data:`COMPILE_MEMORY_MB`)."""
    timeout_s = float(request.get("reference_timeout_s", 300))
    memory_mb = None if cuda else request.get("memory_mb")
    if not compiles:
        return Limits(timeout_s=timeout_s, memory_mb=memory_mb, result_mb=int(16 + 12 * input_mb))
    if memory_mb is not None:
        memory_mb = max(int(memory_mb), COMPILE_MEMORY_MB)
    return Limits(
        timeout_s=timeout_s + float(request.get("baseline_timeout_s", 300)),
        memory_mb=memory_mb,
        file_size_mb=COMPILE_FILE_MB,
        result_mb=int(16 + 12 * input_mb),
    )


def _judge(
    request: dict[str, Any],
    ctx: Any,
    digests: list[list[str]],
    run: SandboxRun,
    reference: SandboxRun,
) -> dict[str, Any]:
    """Compare outputs, check inputs, precision and timing; then the spec's evaluate()."""
    from evoforge.evaluators.kernels.kernelbench._compare import (
        MalformedOutput,
        compare_outputs,
        decode,
        precision_check,
    )

    got, want = run.header.get("trials"), reference.header.get("trials")
    assert isinstance(want, list), "the reference run (our own harness) lists its trials"
    if not isinstance(got, list) or len(got) != len(ctx.trials):
        return _violation("the candidate's result does not describe every trial (tampering)")
    metrics: dict[str, Any] = {"trials": len(ctx.trials)}
    for key in ("bounds_checked", "notes", "builds"):
        if run.header.get(key):
            metrics[key] = run.header[key]
    worst = 0.0
    try:
        for t, (have, expected) in enumerate(zip(got, want, strict=True)):
            after = have.get("input_digests")
            if not isinstance(after, list) or len(after) != len(digests[t]):
                return _violation(f"trial {t}: no fingerprint of the inputs after the call")
            for i, (before, now) in enumerate(zip(digests[t], after, strict=True)):
                if before != now:
                    return _incorrect(
                        f"trial {t}: forward() modified its input {i}; kernels must not write "
                        "to their inputs (the reference would see different values)",
                        metrics,
                    )
            why, error = compare_outputs(
                t,
                expected["outputs"],
                reference.payload,
                have["outputs"],
                run.payload,
                atol=request.get("atol"),
                rtol=request.get("rtol"),
            )
            if why:
                if math.isfinite(error):
                    metrics["max_abs_error"] = error
                return _incorrect(why, metrics)
            worst = max(worst, error)
        metrics["max_abs_error"] = worst
        float64 = reference.header.get("float64") or {}
        if "outputs" in float64:
            for index, meta in enumerate(float64["outputs"]):
                dtype = str(want[0]["outputs"][index]["dtype"])
                if not dtype.startswith(("float", "bfloat")):
                    continue
                why, measured = precision_check(
                    decode(want[0]["outputs"][index], reference.payload),
                    decode(meta, reference.payload),
                    decode(got[0]["outputs"][index], run.payload),
                    dtype,
                    request.get("precision_floor"),
                )
                metrics.update(measured)
                if why:
                    return _incorrect(f"trial 0, output {index}: {why}", metrics)
        else:
            metrics["precision_check"] = float64.get("unavailable", "not run")
    except (MalformedOutput, KeyError, TypeError, ValueError) as exc:
        return _violation(f"the candidate's result is malformed ({exc}) (tampering)")

    artifacts: dict[str, str] = {}
    if ctx.cuda:
        try:
            why = _timing_metrics(request, ctx, run, reference, metrics, artifacts)
        except (KeyError, TypeError, ValueError, ZeroDivisionError) as exc:
            return _violation(f"the candidate's timing record is malformed ({exc!r})")
        if why:
            return {**_incorrect(why, metrics), "artifacts": {**artifacts, "error": why}}
        if run.header.get("profile"):  # torch.profiler's top kernels, for the next prompt
            artifacts["profile"] = str(run.header["profile"])[:4000]
    else:
        metrics["timing"] = NO_GPU_TIMING
        baseline = request.get("baseline") or reference.header.get("baseline")
        if isinstance(baseline, dict):
            metrics.update(cpu_baseline_metrics(baseline))
    metrics["correct"] = True
    return _score(request, metrics, artifacts)


def _timing_metrics(
    request: dict[str, Any],
    ctx: Any,
    run: SandboxRun,
    reference: SandboxRun,
    metrics: dict[str, Any],
    artifacts: dict[str, str],
) -> str:
    """Speedups from the candidate's interleaved timing, cross-checked with the trusted
    baseline; returns why the timing is impossible, or ""."""
    timing = run.header.get("timing") or {}
    baseline = request.get("baseline") or reference.header.get("baseline") or {}
    if "error" in baseline:
        return str(baseline["error"])
    cand = float(timing["candidate"]["median_ms"])
    ref = float(timing["reference"]["median_ms"])
    trusted_eager = float(baseline["eager"]["median_ms"])
    trusted_compile = float(baseline["compile"]["median_ms"])
    speedup = ref / cand
    notes = []
    if ref > _BASELINE_DRIFT * trusted_eager:
        notes.append(
            f"the reference ran {ref / trusted_eager:.2f}x slower in the candidate's process "
            f"than in the trusted one ({ref:.4f} vs {trusted_eager:.4f} ms): the speedup "
            "uses the trusted time"
        )
        speedup = min(speedup, trusted_eager / cand)
    sanity = float(timing.get("reference_vs_itself", 1.0))
    if abs(math.log(sanity)) > math.log1p(_SANITY_TOLERANCE):
        notes.append(f"timing unstable: the reference timed against itself gave {sanity:.3f}")
    moved = _nbytes([ctx.trials[0]]) + sum(
        o["nbytes"] for o in reference.header["trials"][0]["outputs"]
    )
    floor_ms = moved / (float(request.get("peak_bandwidth_gbs", 10000.0)) * 1e9) * 1e3
    if cand < floor_ms:
        return (
            f"the kernel's measured time {cand * 1e3:.2f} us is below the {floor_ms * 1e3:.2f} us "
            f"it takes to read its inputs and write its outputs ({moved / 2**20:.1f} MiB) at "
            f"{request.get('peak_bandwidth_gbs', 10000)} GB/s: the measurement was faked"
        )
    metrics.update(
        speedup_vs_eager=speedup,
        speedup_vs_compile=speedup * trusted_compile / trusted_eager,
        time_ms=cand,
        time_iqr_ms=float(timing["candidate"]["iqr_ms"]),
        time_cv=float(timing["candidate"]["cv"]),
        reference_time_ms=ref,
        trusted_eager_ms=trusted_eager,
        trusted_compile_ms=trusted_compile,
        reference_vs_itself=sanity,
        timing_samples=int(timing["candidate"]["n"]),
        timed_device=str(timing.get("device_name", "")),
    )
    limit = float(request.get("suspicious_speedup", 10.0))
    metrics["suspicious"] = speedup > limit
    if speedup > limit:
        notes.append(
            f"speedup {speedup:.1f}x over eager exceeds {limit:g}x: suspicious; check that "
            "the kernel does all the work"
        )
    if notes:
        artifacts["timing_notes"] = "; ".join(notes)
        metrics["timing_notes"] = notes
    return ""


def cpu_baseline_metrics(baseline: dict[str, Any]) -> dict[str, Any]:
    """The trusted eager vs ``torch.compile`` baseline measured on the CPU, as metrics (the
    candidate itself is not timed there: the interpreter says nothing about speed)."""
    if "error" in baseline:
        return {"trusted_baseline_error": str(baseline["error"])}
    eager, compiled = baseline["eager"], baseline["compile"]
    return {
        "trusted_eager_ms": float(eager["median_ms"]),
        "trusted_compile_ms": float(compiled["median_ms"]),
        "trusted_eager_cv": float(eager["cv"]),
        "trusted_compile_cv": float(compiled["cv"]),
        "trusted_compile_s": float(baseline.get("compile_s", 0.0)),
        "trusted_device": str(baseline.get("device", "cpu")),
    }


def _score(request: dict[str, Any], metrics: dict[str, Any], artifacts: dict[str, str]) -> dict:
    """The spec's ``evaluate(metrics)`` (imported only now, after the candidate exited)."""
    from pathlib import Path

    from evoforge.problems import import_spec

    try:
        evaluate = import_spec(Path(request["spec_path"])).evaluate
        scored = evaluate(dict(metrics))
        if not isinstance(scored, dict):
            raise TypeError(f"it returned a {type(scored).__name__}, not a dict of metrics")
    except Exception as exc:
        artifacts["error"] = f"the problem's evaluate(metrics) failed: {type(exc).__name__}: {exc}"
        return {"status": "incorrect", "metrics": metrics, "artifacts": artifacts}
    return {"status": "ok", "metrics": scored, "artifacts": artifacts}


def _incorrect(why: str, metrics: dict[str, Any]) -> dict[str, Any]:
    return {"status": "incorrect", "metrics": metrics, "artifacts": {"error": why}}


def _violation(why: str) -> dict[str, Any]:
    return {"status": "sandbox_violation", "artifacts": {"error": why}}


def _task_failed(request: dict[str, Any], why: str, inputs_note: str = "") -> dict[str, Any]:
    """The reply when the task's own code failed: no candidate can be judged against it."""
    where = f" on the inputs of {inputs_note}" if "shrunk" in inputs_note else ""
    fix = "; fix the task file"
    if "get_inputs_small" in why:
        fix = ""
    elif where:
        fix = "; add get_inputs_small(trial) to the task with shapes its Model accepts"
    reference = f"the task's reference ({request['task_path']}) failed{where}: {why}{fix}"
    return {
        "status": "crashed",
        "task_failed": True,
        "artifacts": {
            "error": f"not the candidate's fault: {reference}",
            "reference_error": reference,
        },
    }


def _describe(run: SandboxRun) -> str:
    text = run.error or run.status.value
    if run.header.get("traceback"):
        text += "\n" + str(run.header["traceback"])[-1500:]
    elif run.stderr_tail:
        text += "\n" + run.stderr_tail[-1500:]
    return text


def _timing_settings(request: dict[str, Any]) -> Any:
    from evoforge.evaluators.kernels.kernelbench._timing import TimingSettings

    return TimingSettings(**(request.get("timing") or {}))


def _nbytes(trials: list[list[Any]]) -> int:
    return sum(
        x.numel() * x.element_size() for inputs in trials for x in inputs if hasattr(x, "numel")
    )


def _shapes(trials: list[list[Any]]) -> list[str]:
    return [
        ", ".join("x".join(map(str, x.shape)) if hasattr(x, "shape") else repr(x) for x in inputs)
        for inputs in trials
    ]


if __name__ == "__main__":
    sys.exit(main())
