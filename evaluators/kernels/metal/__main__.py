"""Runner of the ``metal`` evaluator: ``python -m evoforge.evaluators.kernels.metal`` (macOS; see
:mod:`evoforge.evaluators.kernels.metal._evaluator` for the calling convention and what is checked).

One JSON request on stdin, one JSON reply line on stdout. Needs pyobjc-framework-Metal and a
Metal device; elsewhere it replies ``runtime_error`` saying so (the evaluator never starts it
there).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

from evoforge.evaluators.kernels import compare_arrays, digest, make_inputs, numpy_reference
from evoforge.evaluators.sandbox import RunnerFailure, read_request, reply
from evoforge.evaluators.timing import compare

CANARY = 0xA5
CANARY_BYTES = 4096


def main() -> int:
    request = read_request()
    start = time.perf_counter()
    try:
        answer = _evaluate(request)
    except RunnerFailure as failed:
        answer = failed.reply()
    answer.setdefault("timings", {})["runner_s"] = time.perf_counter() - start
    reply(answer)
    return 0


def _evaluate(request: dict[str, Any]) -> dict[str, Any]:
    try:
        import Metal
    except ImportError:
        raise RunnerFailure("runtime_error", "pyobjc-framework-Metal is not installed") from None
    import numpy as np

    from evoforge.problems import import_spec

    device = Metal.MTLCreateSystemDefaultDevice()
    if device is None:
        raise RunnerFailure("runtime_error", "no Metal device (MTLCreateSystemDefaultDevice)")
    spec = import_spec(Path(request["spec_path"]))
    kernel = _Kernel(Metal, device, request["source"], request["entry"])
    trials = make_inputs(request["cases"], int(request["trials"]))
    failures: list[str] = []
    worst_abs = worst_ratio = 0.0
    for t, (_, arrays) in enumerate(trials):
        structure, expected = numpy_reference(
            spec.reference, arrays, request["reference_precision"]
        )
        outputs, problems, _ = kernel.run(arrays, structure)
        failures += [f"trial {t}: {p}" for p in problems]
        for j, (got, want) in enumerate(zip(outputs, expected, strict=True)):
            err, ratio, detail = compare_arrays(got, want, request["atol"], request["rtol"])
            worst_abs, worst_ratio = max(worst_abs, err), max(worst_ratio, ratio)
            if detail:
                failures.append(f"trial {t}, output {j}: {detail}")
    metrics: dict[str, Any] = {
        "trials": len(trials),
        "max_abs_error": worst_abs if np.isfinite(worst_abs) else None,
        "error_ratio": worst_ratio if np.isfinite(worst_ratio) else None,
    }
    if failures:
        return {
            "status": "incorrect",
            "error": failures[0],
            "metrics": metrics,
            "artifacts": {"failing_input": "\n".join(failures[:10])},
        }
    metrics.update(_time_against_seed(Metal, device, kernel, request, trials))
    return {"status": "ok", "metrics": spec.evaluate(metrics), "artifacts": {}}


class _Kernel:
    """One compiled MSL kernel and a queue to dispatch it."""

    def __init__(self, metal: Any, device: Any, source: str, entry: str) -> None:
        self.metal, self.device = metal, device
        library, error = device.newLibraryWithSource_options_error_(source, None, None)
        if library is None:
            raise RunnerFailure("compile_error", f"the Metal compiler rejected the source: {error}")
        function = library.newFunctionWithName_(entry)
        if function is None:
            raise RunnerFailure("compile_error", f"the source defines no kernel function {entry!r}")
        self.pipeline, error = device.newComputePipelineStateWithFunction_error_(function, None)
        if self.pipeline is None:
            raise RunnerFailure("compile_error", f"no compute pipeline for {entry!r}: {error}")
        self.queue = device.newCommandQueue()

    def run(
        self, arrays: list[Any], structure: list[tuple[tuple[int, ...], Any]]
    ) -> tuple[list[Any], list[str], float]:
        """Dispatch once; ``(outputs, problems found, GPU seconds)``."""
        import numpy as np

        metal, device = self.metal, self.device
        shared = metal.MTLResourceStorageModeShared
        before = [digest(a) for a in arrays]
        inputs = [
            device.newBufferWithBytes_length_options_(a.tobytes(), max(a.nbytes, 1), shared)
            for a in arrays
        ]
        sizes = [int(np.prod(shape)) * np.dtype(dtype).itemsize for shape, dtype in structure]
        canary = bytes([CANARY]) * CANARY_BYTES
        outputs = []
        for size in sizes:
            buffer = device.newBufferWithLength_options_(size + CANARY_BYTES, shared)
            buffer.contents().as_buffer(size + CANARY_BYTES)[size:] = canary
            outputs.append(buffer)
        count = int(np.prod(structure[0][0]))
        n = np.array([count], dtype=np.uint32).tobytes()
        command = self.queue.commandBuffer()
        encoder = command.computeCommandEncoder()
        encoder.setComputePipelineState_(self.pipeline)
        for index, buffer in enumerate([*inputs, *outputs]):
            encoder.setBuffer_offset_atIndex_(buffer, 0, index)
        encoder.setBytes_length_atIndex_(n, len(n), len(inputs) + len(outputs))
        group = min(int(self.pipeline.maxTotalThreadsPerThreadgroup()), 256)
        encoder.dispatchThreads_threadsPerThreadgroup_(
            metal.MTLSizeMake(count, 1, 1), metal.MTLSizeMake(group, 1, 1)
        )
        encoder.endEncoding()
        command.commit()
        command.waitUntilCompleted()
        if command.error() is not None:
            raise RunnerFailure("runtime_error", f"the command buffer failed: {command.error()}")
        problems, results = [], []
        for j, ((shape, dtype), buffer, size) in enumerate(
            zip(structure, outputs, sizes, strict=True)
        ):
            raw = bytes(buffer.contents().as_buffer(size + CANARY_BYTES))
            if raw[size:] != canary:
                problems.append(f"output {j}: wrote past its end (canary overwritten)")
            results.append(np.frombuffer(raw[:size], dtype=dtype).reshape(shape).copy())
        for i, (buffer, array, old) in enumerate(zip(inputs, arrays, before, strict=True)):
            now = np.frombuffer(bytes(buffer.contents().as_buffer(array.nbytes)), array.dtype)
            if digest(now.reshape(array.shape)) != old:
                problems.append(f"input {i} was modified; write to the output buffers only")
        return results, problems, float(command.GPUEndTime() - command.GPUStartTime())


def _time_against_seed(
    metal: Any, device: Any, kernel: _Kernel, request: dict[str, Any], trials: list[Any]
) -> dict[str, Any]:
    """Candidate and seed kernels alternately, GPU timestamps, fresh inputs in turn."""
    from evoforge.problems import import_spec

    spec = import_spec(Path(request["spec_path"]))
    seed = _Kernel(metal, device, request["seed_source"], request["entry"])
    sets = [(arrays, numpy_reference(spec.reference, arrays, "input")[0]) for _, arrays in trials]
    a: list[float] = []
    b: list[float] = []
    warmups, repeats = int(request.get("warmups", 3)), int(request.get("repeats", 20))
    for i in range(warmups + repeats):
        arrays, structure = sets[i % len(sets)]
        gpu_a = kernel.run(arrays, structure)[2]
        gpu_b = seed.run(arrays, structure)[2]
        if i >= warmups:
            a.append(gpu_a)
            b.append(gpu_b)
    result = compare(a, b)
    return {
        "kernel_us": result.median_a_s * 1e6,
        "kernel_iqr_us": result.iqr_a_s * 1e6,
        "seed_us": result.median_b_s * 1e6,
        "speedup": result.speedup,
        "speedup_significant": result.significant,
    }


if __name__ == "__main__":
    sys.exit(main())
