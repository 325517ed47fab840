"""Runner of the ``tpu`` evaluator: ``python -m evoforge.evaluators.kernels.tpu`` (see
:mod:`evoforge.evaluators.kernels.tpu._evaluator`).

One JSON request on stdin, one JSON reply line on stdout. Processes::

    runner (trusted)   draws hidden seeds, makes the inputs, imports jax (no backend yet)
     └── candidate     forked in the shared sandbox: runs the kernel on every trial's inputs
                       (and times it against the reference on a TPU); outputs as .npz bytes
    runner, after the candidate exited: the reference on its own copies of the inputs
    (float64 by default), the comparison, the spec's evaluate(metrics).

jax is imported before the fork but initialises no backend (no threads yet); the candidate
initialises its own. The spec module is imported only after the candidate has exited.
"""

from __future__ import annotations

import io
import linecache
import math
import os
import sys
import time
import traceback
import types
from pathlib import Path
from typing import Any

from evoforge.evaluators.kernels import compare_arrays, digest, make_inputs
from evoforge.evaluators.sandbox import Limits, prepare_request, read_request, reply, run_sandboxed

CANDIDATE_FILENAME = "<candidate>"
_TAIL = 4000
_SUSPICIOUS_SPEEDUP = 10.0


def main() -> int:
    request = read_request()
    interpret = bool(request["interpret"])
    # Before jax is imported: interpret mode must never grab a TPU or GPU of this host.
    os.environ["JAX_PLATFORMS"] = "cpu" if interpret else "tpu"
    isolation, notes = prepare_request(request)
    import jax  # noqa: F401 - imported once here, shared by the forked candidate
    import jax.experimental.pallas  # noqa: F401
    import numpy as np

    start = time.perf_counter()
    trials = make_inputs(request["cases"], int(request["trials"]))
    digests = [[digest(a) for a in arrays] for _, arrays in trials]
    total_mb = sum(a.nbytes for _, arrays in trials for a in arrays) / 2**20
    limits = Limits(
        timeout_s=float(request["timeout_s"]),
        memory_mb=request.get("memory_mb"),
        result_mb=int(16 + 4 * total_mb),
    )
    run = run_sandboxed(lambda: _candidate(request, trials), limits, isolation)
    timings = {
        "candidate_s": run.eval_s,
        "candidate_cpu_s": run.cpu_s,
        "max_rss_mb": run.max_rss_mb,
    }
    if run.status.value != "ok":
        reply(
            {
                "status": run.status.value,
                "artifacts": run.artifacts,
                "timings": timings,
                "sandbox": notes,
            }
        )
        return 0
    header = run.header
    outputs = np.load(io.BytesIO(run.payload), allow_pickle=False)
    reference_start = time.perf_counter()
    answer = _check(request, trials, digests, header, outputs)
    timings["reference_s"] = time.perf_counter() - reference_start
    timings["runner_s"] = time.perf_counter() - start
    answer.update(timings=timings, sandbox=notes)
    reply(answer)
    return 0


# --- inputs ----------------------------------------------------------------------------------


# --- the candidate side (runs in the sandboxed child) ------------------------------------------


def _candidate(request: dict[str, Any], trials: list[tuple[int, list[Any]]]) -> tuple[dict, bytes]:
    try:
        return _run_candidate(request, trials)
    except MemoryError as exc:
        return {"status": "memory_limit", "error": "ran out of memory", "traceback": _tb(exc)}, b""
    except BaseException as exc:  # SystemExit and KeyboardInterrupt are failures here too
        return {
            "status": "runtime_error",
            "error": f"{type(exc).__name__}: {exc}"[:_TAIL],
            "traceback": _tb(exc),
        }, b""


def _run_candidate(
    request: dict[str, Any], trials: list[tuple[int, list[Any]]]
) -> tuple[dict[str, Any], bytes]:
    import jax
    import numpy as np
    from jax.experimental import pallas as pl

    clock, block = time.perf_counter, jax.block_until_ready  # before the candidate's code runs
    calls = [0]
    pallas_call = pl.pallas_call

    def counted_pallas_call(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        return pallas_call(*args, **kwargs)

    pl.pallas_call = counted_pallas_call
    source, entry = request["source"], request["entry"]
    linecache.cache[CANDIDATE_FILENAME] = (
        len(source),
        None,
        source.splitlines(True),
        CANDIDATE_FILENAME,
    )
    try:
        code = compile(source, CANDIDATE_FILENAME, "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as exc:
        return {"status": "syntax_error", "error": f"{type(exc).__name__}: {exc}"}, b""
    module = types.ModuleType("candidate")
    module.__dict__.update(__file__=CANDIDATE_FILENAME, INTERPRET=bool(request["interpret"]))
    sys.modules["candidate"] = module
    exec(code, module.__dict__)
    function = module.__dict__.get(entry)
    if not callable(function):
        return {
            "status": "runtime_error",
            "error": f"the program defines no function `{entry}(...)`; the problem calls it "
            "with the input arrays",
        }, b""
    outputs: dict[str, Any] = {}
    changed: list[str] = []
    for t, (_, arrays) in enumerate(trials):
        args = [jax.numpy.asarray(a) for a in arrays]
        before = [digest(np.asarray(x)) for x in args]
        result = block(function(*args))
        leaves = result if isinstance(result, tuple | list) else (result,)
        for j, leaf in enumerate(leaves):
            if type(leaf).__module__.split(".")[0] not in ("jax", "jaxlib") or not isinstance(
                leaf, jax.Array
            ):
                return {
                    "status": "runtime_error",
                    "error": f"{entry}() must return a jax.Array (or a tuple of them); output "
                    f"{j} is a {type(leaf).__module__}.{type(leaf).__qualname__}",
                }, b""
            outputs[f"t{t}_o{j}"] = np.asarray(leaf)
        outputs[f"t{t}_n"] = np.asarray(len(leaves))
        for i, (x, before_digest) in enumerate(zip(args, before, strict=True)):
            if x.is_deleted() or digest(np.asarray(x)) != before_digest:
                changed.append(f"trial {t} input {i}")
    header: dict[str, Any] = {"status": "ok", "pallas_calls": calls[0], "inputs_changed": changed}
    if request.get("time"):
        header["timing"] = _time_kernel(request, trials, function, clock, block)
    buffer = io.BytesIO()
    np.savez(buffer, **outputs)
    return header, buffer.getvalue()


def _time_kernel(
    request: dict[str, Any],
    trials: list[tuple[int, list[Any]]],
    function: Any,
    clock: Any,
    block: Any,
) -> dict[str, Any]:
    """Kernel vs reference on this device: interleaved, warmed up, fresh inputs each call."""
    import jax

    from evoforge.evaluators.timing import interleaved_wall
    from evoforge.problems import import_spec

    reference = jax.jit(import_spec(Path(request["spec_path"])).reference)
    largest = max(trials, key=lambda t: sum(a.nbytes for a in t[1]))[0]
    sets = [[jax.device_put(a) for a in arrays] for i, arrays in trials if i == largest]
    block(sets)
    turn = {"a": 0, "b": 0}

    def next_inputs(who: str) -> list[Any]:
        turn[who] += 1
        return sets[turn[who] % len(sets)]

    comparison = interleaved_wall(
        lambda: block(function(*next_inputs("a"))),
        lambda: block(reference(*next_inputs("b"))),
        repeats=int(request.get("repeats", 20)),
        warmups=int(request.get("warmups", 3)),
        timer=clock,
    )
    return {
        "kernel_us": comparison.median_a_s * 1e6,
        "kernel_iqr_us": comparison.iqr_a_s * 1e6,
        "reference_us": comparison.median_b_s * 1e6,
        "speedup": comparison.speedup,
        "speedup_significant": comparison.significant,
        "timed_device": str(jax.devices()[0].device_kind),
    }


def _tb(exc: BaseException) -> str:
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename == __file__:
        tb = tb.tb_next
    try:
        return "".join(traceback.format_exception(type(exc), exc, tb))[-_TAIL:]
    except BaseException:
        return f"{type(exc).__name__}: (traceback unavailable)"


# --- the check (runner, after the candidate exited) ------------------------------------------


def _check(
    request: dict[str, Any],
    trials: list[tuple[int, list[Any]]],
    digests: list[list[str]],
    header: dict[str, Any],
    outputs: Any,
) -> dict[str, Any]:
    import jax
    import numpy as np

    from evoforge.problems import import_spec

    spec = import_spec(Path(request["spec_path"]))
    atol, rtol = float(request["atol"]), float(request["rtol"])
    metrics: dict[str, Any] = {
        "trials": len(trials),
        "pallas_calls": int(header.get("pallas_calls", 0)),
    }
    timing = header.get("timing") or {}
    failures: list[str] = []
    if header.get("inputs_changed"):
        failures.append(
            f"the kernel modified its inputs ({', '.join(header['inputs_changed'][:5])}); "
            "write results to the output refs only"
        )
    if metrics["pallas_calls"] == 0:
        failures.append(
            f"{request['entry']}() never called pl.pallas_call: write the computation as a "
            "Pallas kernel"
        )
    expected = [
        jax.eval_shape(spec.reference, *(jax.ShapeDtypeStruct(a.shape, a.dtype) for a in arrays))
        for _, arrays in trials
    ]
    jax.config.update("jax_enable_x64", request.get("reference_precision") == "float64")
    worst_abs = worst_ratio = 0.0
    for t, (_, arrays) in enumerate(trials):
        for i, array in enumerate(arrays):
            if digest(array) != digests[t][i]:  # cannot happen: the runner's own copy
                failures.append(f"internal error: the runner's input {i} of trial {t} changed")
        leaves = expected[t] if isinstance(expected[t], tuple | list) else (expected[t],)
        got_n = int(outputs[f"t{t}_n"])
        shapes = ", ".join(f"{a.shape} {a.dtype}" for a in arrays)
        if got_n != len(leaves):
            failures.append(
                f"trial {t} (inputs {shapes}): returned {got_n} outputs, expected {len(leaves)}"
            )
            continue
        args = [_upcast(a, request) for a in arrays]
        reference = spec.reference(*(jax.numpy.asarray(a) for a in args))
        values = reference if isinstance(reference, tuple | list) else (reference,)
        for j, (want, ref) in enumerate(zip(leaves, values, strict=True)):
            got = outputs[f"t{t}_o{j}"]
            where = f"trial {t} (inputs {shapes}), output {j}"
            if got.shape != tuple(want.shape) or got.dtype != np.dtype(want.dtype):
                failures.append(
                    f"{where}: got {got.shape} {got.dtype}, expected {tuple(want.shape)} "
                    f"{np.dtype(want.dtype)}"
                )
                continue
            err_abs, ratio, detail = compare_arrays(np.asarray(got), np.asarray(ref), atol, rtol)
            worst_abs, worst_ratio = max(worst_abs, err_abs), max(worst_ratio, ratio)
            if detail:
                failures.append(f"{where}: {detail}")
    # JSON has no infinity: a NaN or infinity mismatch leaves the errors unset.
    metrics.update(
        max_abs_error=worst_abs if math.isfinite(worst_abs) else None,
        error_ratio=worst_ratio if math.isfinite(worst_ratio) else None,
    )
    for key in ("kernel_us", "kernel_iqr_us", "reference_us", "speedup", "speedup_significant"):
        if key in timing:
            metrics[key] = timing[key]
    artifacts: dict[str, str] = {}
    if timing.get("speedup", 0) > _SUSPICIOUS_SPEEDUP:
        artifacts["timing_warning"] = (
            f"speedup {timing['speedup']:.1f}x over the reference is suspicious; check that the "
            "kernel does all the work"
        )
    if timing.get("timed_device"):
        artifacts["timed_device"] = timing["timed_device"]
    try:
        scored = spec.evaluate(dict(metrics))
        if not isinstance(scored, dict):
            raise TypeError(f"evaluate() returned a {type(scored).__name__}, not a dict")
    except Exception as exc:
        return {
            "status": "incorrect",
            "error": f"the problem's evaluate(metrics) failed: {type(exc).__name__}: {exc}",
            "metrics": metrics,
            "artifacts": artifacts,
        }
    if failures:
        artifacts["failing_input"] = "\n".join(failures[:10])[:_TAIL]
        return {
            "status": "incorrect",
            "error": failures[0][:_TAIL],
            "metrics": scored,
            "artifacts": artifacts,
        }
    return {"status": "ok", "metrics": scored, "artifacts": artifacts}


def _upcast(array: Any, request: dict[str, Any]) -> Any:
    import numpy as np

    floating = array.dtype.kind == "f" or array.dtype.name == "bfloat16"
    if request.get("reference_precision") == "float64" and floating:
        return array.astype(np.float64)
    return array


if __name__ == "__main__":
    sys.exit(main())
