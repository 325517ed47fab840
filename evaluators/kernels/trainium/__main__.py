"""Runner of the ``trainium`` evaluator: ``python -m evoforge.evaluators.kernels.trainium`` (see
:mod:`evoforge.evaluators.kernels.trainium._evaluator` for the protocol). One JSON request on stdin,
one JSON reply line.

Each candidate run (correctness with ``nki.baremetal``, each timing round with
``nki.benchmark``) is a fresh sandboxed child that imports ``neuronxcc`` itself; this runner
never imports it, and computes the reference only after the correctness child has exited.
"""

from __future__ import annotations

import io
import statistics
import sys
import time
import types
from pathlib import Path
from typing import Any

from evoforge.evaluators.kernels import make_inputs, numpy_reference
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
from evoforge.evaluators.timing import compare

MAX_SPREAD = 0.01  # AccelOpt: measure again while rounds disagree by more than 1 %
_EXTRA_ROUNDS = 2


def main() -> int:
    request = read_request()
    isolation, notes = prepare_request(request)
    import numpy  # noqa: F401 - once here, shared by the forked children

    start = time.perf_counter()
    try:
        answer = _evaluate(request, isolation)
    except RunnerFailure as failed:
        answer = failed.reply()
    answer.update(sandbox=notes, timings={"runner_s": time.perf_counter() - start})
    reply(answer)
    return 0


def _evaluate(request: dict[str, Any], isolation: Isolation) -> dict[str, Any]:
    import numpy as np

    from evoforge.problems import import_spec

    trials = make_inputs(request["cases"], int(request["trials"]))
    limits = Limits(timeout_s=float(request["timeout_s"]), memory_mb=request.get("memory_mb"))
    run = _check(run_sandboxed(lambda: _outputs(request, trials), limits, isolation))
    outputs = np.load(io.BytesIO(run.payload), allow_pickle=False)
    spec = import_spec(Path(request["spec_path"]))
    bound, worst = float(request["rel_l2"]), 0.0
    failures = []
    for t, (_, arrays) in enumerate(trials):
        structure, expected = numpy_reference(spec.reference, arrays, "float64")
        for j, ((shape, dtype), want) in enumerate(zip(structure, expected, strict=True)):
            got = outputs.get(f"t{t}_o{j}")
            if got is None or got.shape != shape or got.dtype != dtype:
                found = "nothing" if got is None else f"{got.shape} {got.dtype}"
                failures.append(f"trial {t}, output {j}: got {found}, expected {shape} {dtype}")
                continue
            want64 = np.asarray(want, dtype=np.float64)
            norm = float(np.linalg.norm(want64)) or 1.0
            error = float(np.linalg.norm(got.astype(np.float64) - want64)) / norm
            worst = max(worst, error if np.isfinite(error) else float("inf"))
            if not error < bound:
                failures.append(
                    f"trial {t}, output {j}: relative L2 error {error:.3g} >= {bound:g}"
                )
    metrics: dict[str, Any] = {
        "trials": len(trials),
        "rel_l2_error": worst if np.isfinite(worst) else None,
    }
    if failures:
        return {"status": "incorrect", "error": failures[0], "metrics": metrics}
    metrics.update(_time_against_seed(request, trials[0][1], isolation, limits))
    return {"status": "ok", "metrics": spec.evaluate(metrics)}


def _check(run: SandboxRun) -> SandboxRun:
    if run.status.value != "ok":
        detail = run.error or run.header.get("error") or "no reason given"
        tail = run.header.get("traceback") or run.stderr_tail
        raise RunnerFailure(run.status.value, detail + (f"\n{tail[-2000:]}" if tail else ""))
    return run


def _load(source: str, entry: str) -> Any:
    """In a sandboxed child: the candidate's kernel function."""
    module = types.ModuleType("candidate")
    exec(compile(source, "<candidate>", "exec", dont_inherit=True), module.__dict__)
    kernel = module.__dict__.get(entry)
    if not callable(kernel):
        raise NameError(f"the program defines no kernel function `{entry}`")
    return kernel


def _guarded(job: Any) -> tuple[dict[str, Any], bytes]:
    try:
        return job()
    except SyntaxError as exc:
        return {"status": "syntax_error", "error": f"SyntaxError: {exc}"}, b""
    except MemoryError:
        return {"status": "memory_limit", "error": "ran out of memory"}, b""
    except BaseException as exc:
        return {"status": "runtime_error", "error": f"{type(exc).__name__}: {exc}"[:4000]}, b""


def _outputs(request: dict[str, Any], trials: list[Any]) -> tuple[dict[str, Any], bytes]:
    def job() -> tuple[dict[str, Any], bytes]:
        import numpy as np
        from neuronxcc import nki

        kernel = nki.baremetal(_load(request["source"], request["entry"]))
        found: dict[str, Any] = {}  # Any: np.savez reads **found as arrays, by key
        for t, (_, arrays) in enumerate(trials):
            result = kernel(*[np.array(a) for a in arrays])
            leaves = result if isinstance(result, tuple | list) else (result,)
            for j, leaf in enumerate(leaves):
                found[f"t{t}_o{j}"] = np.asarray(leaf)
        buffer = io.BytesIO()
        np.savez(buffer, **found)
        return {"status": "ok"}, buffer.getvalue()

    return _guarded(job)


def _bench(request: dict[str, Any], source: str, arrays: list[Any]) -> tuple[dict, bytes]:
    def job() -> tuple[dict[str, Any], bytes]:
        import numpy as np
        from neuronxcc import nki

        warmup, iters = int(request["warmups"]), int(request["repeats"])
        kernel = nki.benchmark(warmup=warmup, iters=iters)(_load(source, request["entry"]))
        kernel(*[np.array(a) for a in arrays])
        latency = kernel.benchmark_result.nc_latency
        return {"status": "ok", "p50_us": float(latency.get_latency_percentile(50))}, b""

    return _guarded(job)


def _time_against_seed(
    request: dict[str, Any], arrays: list[Any], isolation: Isolation, limits: Limits
) -> dict[str, Any]:
    """Rounds of (candidate, seed) benchmarks, each in a fresh child; more while they spread."""

    def p50(source: str, what: str) -> float:
        run = run_sandboxed(lambda: _bench(request, source, arrays), limits, isolation)
        try:
            return float(_check(run).header["p50_us"])
        except RunnerFailure as failed:
            raise RunnerFailure(failed.status, f"benchmarking {what}: {failed.error}") from None

    a: list[float] = []
    b: list[float] = []
    rounds = max(3, int(request.get("rounds", 3)))
    for _ in range(rounds + _EXTRA_ROUNDS):
        a.append(p50(request["source"], "the candidate"))
        b.append(p50(request["seed_source"], "the seed kernel"))
        if len(a) >= rounds and max(_spread(a), _spread(b)) <= MAX_SPREAD:
            break
    result = compare(a, b)
    return {
        "kernel_us": result.median_a_s,
        "seed_us": result.median_b_s,
        "speedup": result.speedup,
        "speedup_significant": result.significant,
        "latency_spread": max(_spread(a), _spread(b)),
    }


def _spread(samples: list[float]) -> float:
    middle = statistics.median(samples)
    return (max(samples) - min(samples)) / middle if middle > 0 else float("inf")


if __name__ == "__main__":
    sys.exit(main())
