"""What runs inside the sandboxed children of a KernelBench runner (imports torch).

Two jobs, each forked by the runner (:mod:`evoforge.evaluators.kernels.kernelbench`) into the shared
sandbox, and each returning ``(header, payload)``: the header describes the outputs, the
payload holds their raw bytes.

- :func:`candidate_job` (hostile code): executes the candidate's source, builds ``ModelNew``
  from the task's ``get_init_inputs()`` after seeding, and calls it on every trial's inputs, each
  placed between canaries; the output is read at once on the current stream (work left on a side
  stream or in a thread is not there yet). Guards from
  :mod:`evoforge.evaluators.kernels.kernelbench._guards` run around each call. On a GPU it then
  times the kernel against the task's ``Model``
  (:mod:`evoforge.evaluators.kernels.kernelbench._timing`).
- :func:`reference_job` (trusted code only: the task's ``Model``): runs after the candidate
  exited, on the same inputs, plus a float64 evaluation of the first trial for the precision
  check, plus (when asked) the trusted eager vs ``torch.compile`` baseline timing.

Neither job touches CUDA before it is forked: the runner imports torch but never initialises
CUDA, so each child initialises its own context.
"""

from __future__ import annotations

import copy
import hashlib
import importlib.util
import inspect
import linecache
import os
import secrets
import sys
import threading
import traceback
import types
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evoforge.evaluators.kernels.kernelbench._build import NOT_RUN, BuildHooks, CompileFailed
from evoforge.evaluators.kernels.kernelbench._caches import private_caches
from evoforge.evaluators.kernels.kernelbench._guards import (
    Canaries,
    InterpreterBounds,
    OutOfBounds,
    PersistingL2Guard,
    Rejected,
    TimerWatch,
    Violation,
    new_threads,
)
from evoforge.evaluators.kernels.kernelbench._profile import candidate_profile
from evoforge.evaluators.kernels.kernelbench._timing import TimingSettings

CANDIDATE_FILENAME = "<candidate>"
_TAIL = 4000


@dataclass
class Context:
    """Everything a job needs, prepared by the runner before it forks.

    Attributes:
        source: the candidate program (defines ``ModelNew``).
        task: the imported task module (``Model``, ``get_inputs``, ``get_init_inputs``).
        kind: ``"triton"`` or ``"cuda"`` (which build hooks and guards apply).
        cuda: run on the GPU (else CPU, with the Triton interpreter for Triton kernels).
        init_seed: the seed set before each constructor.
        init_inputs: the constructor arguments.
        trials: each trial's inputs, CPU tensors made from a hidden seed.
        timing: how to time (``None``: correctness only).
        inputs_function: the task's function that makes the trusted baseline's inputs
            (``get_inputs``; on a CPU the one the trials come from, reduced shapes).
        atol, rtol: the declared tolerances (``None``: by dtype), for the check while timing.
    """

    source: str
    task: types.ModuleType
    kind: str
    cuda: bool
    init_seed: int
    init_inputs: list[Any]
    trials: list[list[Any]]
    timing: TimingSettings | None = None
    atol: float | None = None
    rtol: float | None = None
    notes: dict[str, str] = field(default_factory=dict)
    inputs_function: str = "get_inputs"


# ---------------------------------------------------------------------------------------------
# Task files and inputs (also used by the runner)


def load_task(path: str | Path) -> types.ModuleType:
    """Import a KernelBench task file as the module ``kernelbench_task``.

    Raises:
        ValueError: it lacks ``Model``, ``get_inputs`` or ``get_init_inputs``.
    """
    spec = importlib.util.spec_from_file_location("kernelbench_task", path)
    if spec is None or spec.loader is None:
        raise ValueError(f"{path} cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules["kernelbench_task"] = module
    spec.loader.exec_module(module)
    missing = [n for n in ("Model", "get_inputs", "get_init_inputs") if not hasattr(module, n)]
    if missing:
        raise ValueError(
            f"{path} defines no {', '.join(missing)}; a KernelBench task defines class "
            "Model(nn.Module), get_inputs() and get_init_inputs()"
        )
    return module


def make_inputs(task: types.ModuleType, function: str, seed: int, trial: int) -> list[Any]:
    """``task.<function>()`` (given ``trial`` if it takes an argument) after seeding torch, as
    CPU tensors (see :mod:`evoforge.evaluators.kernels.kernelbench._placement`)."""
    import torch

    from evoforge.evaluators.kernels.kernelbench._placement import cuda_redirect

    make = getattr(task, function)
    torch.manual_seed(seed)
    takes_trial = bool(inspect.signature(make).parameters)
    with cuda_redirect("cpu"):  # `.cuda()` in a task: CPU tensors; callers move them
        inputs = make(trial) if takes_trial else make()
    return list(inputs)


def digest(x: Any) -> str:
    """A fingerprint of one input's exact bytes (or of its repr for a non-tensor)."""
    import torch

    if not isinstance(x, torch.Tensor):
        return "repr:" + hashlib.blake2b(repr(x).encode(), digest_size=16).hexdigest()
    data = x.detach().to("cpu").contiguous().reshape(-1).view(torch.uint8).numpy()
    return hashlib.blake2b(data.tobytes(), digest_size=16).hexdigest()


# ---------------------------------------------------------------------------------------------
# The candidate job


def candidate_job(ctx: Context) -> tuple[dict[str, Any], bytes]:
    """Run the candidate on every trial (and time it on a GPU); see the module docstring.

    Without a GPU, the candidate's CUDA placements (``.cuda()``, ``device="cuda"``,
    ``assert x.is_cuda``) refer to the CPU, so a solution written for a GPU runs unmodified in
    the interpreter (:mod:`evoforge.evaluators.kernels.kernelbench._placement`).
    """
    try:
        private_caches(os.getcwd())  # before any of the candidate's code runs
        if ctx.cuda:
            return _candidate(ctx)
        from evoforge.evaluators.kernels.kernelbench._placement import (
            cuda_redirect,
            report_cpu_as_cuda,
        )

        report_cpu_as_cuda()
        with cuda_redirect("cpu"):
            return _candidate(ctx)
    except CompileFailed as exc:
        return {"status": "compile_error", "error": str(exc), "compiler_output": exc.output}, b""
    except Violation as exc:
        return {"status": "ok", "violation": str(exc)}, b""
    except Rejected as exc:
        return {"status": "ok", "rejected": str(exc)}, b""
    except BaseException as exc:
        return _failure(exc), b""


def _candidate(ctx: Context) -> tuple[dict[str, Any], bytes]:
    import torch

    watch = TimerWatch()  # before any candidate code
    device = torch.device("cuda" if ctx.cuda else "cpu")
    bounds = l2 = timer = None
    if ctx.cuda:
        torch.cuda.init()
        l2 = PersistingL2Guard()
        if l2.note:
            ctx.notes["l2"] = l2.note
        if ctx.timing is not None:
            from evoforge.evaluators.kernels.kernelbench._timing import CudaTimer

            timer = CudaTimer(ctx.timing, l2)
    elif os.environ.get("TRITON_INTERPRET") == "1" and ctx.kind == "triton":
        bounds = InterpreterBounds().install()
    build = None
    if ctx.kind == "cuda":
        build = BuildHooks(compile_only=not ctx.cuda, workdir=os.getcwd()).install()

    module = _exec_candidate(ctx.source)
    if isinstance(module, dict):
        return module, b""
    watch.check()
    if build is not None and build.compile_only:
        note = NOT_RUN if build.builds else "nothing to compile; not run: no CUDA GPU"
        return {"status": "ok", "build_only": True, "note": note, "builds": build.builds}, b""
    model_class = module.__dict__.get("ModelNew")
    if not isinstance(model_class, type):
        return {
            "status": "runtime_error",
            "error": "the program defines no class `ModelNew(nn.Module)`; the evaluator builds "
            "ModelNew(*get_init_inputs()) and calls it like the task's Model",
        }, b""
    torch.manual_seed(ctx.init_seed)
    model = model_class(*ctx.init_inputs)
    if isinstance(model, torch.nn.Module):
        model = model.to(device)

    header: dict[str, Any] = {"status": "ok", "trials": []}
    payload = bytearray()
    for cpu_inputs in ctx.trials:
        canaries = Canaries()
        inputs = canaries.pad([_to(x, device) for x in cpu_inputs])
        before = set(threading.enumerate())
        try:
            with torch.no_grad():
                out = model(*inputs)
        except OutOfBounds:
            raise Rejected(bounds.violation if bounds else "out-of-bounds access") from None
        except Exception:
            if bounds is not None and bounds.violation:
                raise Rejected(bounds.violation) from None
            raise
        if bounds is not None and bounds.violation:  # raised inside, caught by the candidate
            raise Rejected(bounds.violation)
        leaves = _leaves(out)
        # Read now, on the current stream, before any device-wide synchronisation.
        copies = [leaf.detach().to("cpu", copy=True) for leaf in leaves]
        running = new_threads(before)
        if running:
            raise Rejected(
                f"forward() returned while {len(running)} thread(s) it started were still "
                f"running ({', '.join(running[:3])}); all work must finish before it returns"
            )
        if ctx.cuda:
            torch.cuda.synchronize()
        canaries.check()
        watch.check()
        if l2 is not None:
            l2.check()
        outputs = [
            _encode(copy_, leaf, payload) for copy_, leaf in zip(copies, leaves, strict=True)
        ]
        digests = [digest(x) for x in inputs]
        header["trials"].append({"outputs": outputs, "input_digests": digests})
        del out, leaves, copies, inputs
    if bounds is not None:
        header["bounds_checked"] = bounds.checked
    if timer is not None and ctx.timing is not None:
        header["timing"] = _time(ctx, model, timer, device)
        watch.check()
        if l2 is not None:
            l2.check()
        header["profile"] = candidate_profile(  # after the checks: feedback, not a metric
            model,
            lambda: [_to(x, device) for x in make_inputs(ctx.task, "get_inputs", 0, 0)],
            device,
        )
    if build is not None:
        header["builds"] = build.builds
    header["notes"] = ctx.notes
    return header, bytes(payload)


def _exec_candidate(source: str) -> types.ModuleType | dict[str, Any]:
    """The candidate's module, or the failure header (syntax, compile or runtime error)."""
    lines = source.splitlines(True)
    linecache.cache[CANDIDATE_FILENAME] = (len(source), None, lines, CANDIDATE_FILENAME)
    try:
        code = compile(source, CANDIDATE_FILENAME, "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as exc:
        return {"status": "syntax_error", "error": f"{type(exc).__name__}: {exc}"}
    module = types.ModuleType("candidate")
    module.__file__ = CANDIDATE_FILENAME
    sys.modules["candidate"] = module
    exec(code, module.__dict__)
    return module


def _time(ctx: Context, model: Any, timer: Any, device: Any) -> dict[str, Any]:
    import torch

    from evoforge.evaluators.kernels.kernelbench._timing import FreshInputs, interleave, summarize

    assert ctx.timing is not None
    settings = ctx.timing
    torch.manual_seed(ctx.init_seed)
    reference = ctx.task.Model(*ctx.init_inputs).to(device)
    salt = secrets.randbits(62)  # timing inputs: new values, unknown to the candidate
    inputs = FreshInputs(
        lambda i: make_inputs(ctx.task, "get_inputs", salt + i, i), device, settings.pool
    )
    allclose = torch.allclose  # the original (TimerWatch checks it stays so)

    def same(out: Any, ref: Any) -> str:
        a, b = _leaves(out), _leaves(ref)
        if len(a) != len(b) or any(x.shape != y.shape for x, y in zip(a, b, strict=True)):
            return "a different number or shape of outputs"
        atol = 1e-2 if ctx.atol is None else ctx.atol
        rtol = 1e-2 if ctx.rtol is None else ctx.rtol
        for x, y in zip(a, b, strict=True):
            if not allclose(x.float(), y.float(), atol=atol, rtol=rtol, equal_nan=True):
                return "values differ"
        return ""

    with torch.no_grad():
        sanity = interleave(
            timer,
            {"a": reference, "b": reference},
            inputs,
            warmups=settings.warmups,
            repeats=settings.sanity_repeats,
        )
        samples = interleave(
            timer,
            {"candidate": model, "reference": reference},
            inputs,
            warmups=settings.warmups,
            repeats=settings.repeats,
            same_output=same,
        )
    a, b = summarize(sanity["a"]), summarize(sanity["b"])
    return {
        "candidate": summarize(samples["candidate"]),
        "reference": summarize(samples["reference"]),
        "reference_vs_itself": a["median_ms"] / b["median_ms"],
        "device_name": torch.cuda.get_device_name(),
    }


# ---------------------------------------------------------------------------------------------
# The reference job (trusted)


def reference_job(
    ctx: Context, *, precision: bool, baseline: TimingSettings | None
) -> tuple[dict[str, Any], bytes]:
    """The task's ``Model`` on every trial, float64 on the first, and the trusted baseline."""
    try:
        private_caches(os.getcwd())  # nothing a candidate left anywhere is loaded here
        if ctx.cuda:
            return _reference(ctx, precision, baseline)
        from evoforge.evaluators.kernels.kernelbench._placement import cuda_redirect

        with cuda_redirect("cpu"):
            return _reference(ctx, precision, baseline)
    except BaseException as exc:
        return _failure(exc), b""


def _reference(
    ctx: Context, precision: bool, baseline: TimingSettings | None
) -> tuple[dict[str, Any], bytes]:
    import torch

    device = torch.device("cuda" if ctx.cuda else "cpu")
    torch.manual_seed(ctx.init_seed)
    model = ctx.task.Model(*ctx.init_inputs).to(device)
    header: dict[str, Any] = {"status": "ok", "trials": []}
    payload = bytearray()
    with torch.no_grad():
        for cpu_inputs in ctx.trials:
            leaves = _leaves(model(*[_to(x, device) for x in cpu_inputs]), who="Model")
            outputs = [_encode(leaf.detach().to("cpu"), leaf, payload) for leaf in leaves]
            header["trials"].append({"outputs": outputs})
        if precision:
            header["float64"] = _float64(model, ctx.trials[0], device, payload)
    if baseline is not None:
        header["baseline"] = _baseline(ctx, model, baseline, device)
    return header, bytes(payload)


def _float64(model: Any, cpu_inputs: Sequence[Any], device: Any, payload: bytearray) -> Any:
    import torch

    try:
        model64 = copy.deepcopy(model).to(torch.float64)
        inputs = [
            _to(x, device).to(torch.float64)
            if isinstance(x, torch.Tensor) and torch.is_floating_point(x)
            else _to(x, device)
            for x in cpu_inputs
        ]
        leaves = _leaves(model64(*inputs), who="Model")
    except Exception as exc:
        return {"unavailable": f"the task's Model does not run in float64 ({exc!r})"[:_TAIL]}
    return {"outputs": [_encode(leaf.detach().to("cpu"), leaf, payload) for leaf in leaves]}


def _baseline(ctx: Context, model: Any, settings: TimingSettings, device: Any) -> dict[str, Any]:
    """Eager ``Model`` vs ``torch.compile(Model)``, interleaved (trusted process): CUDA events
    on a GPU, the CPU's clock without one (torch's CPU build; inductor's C++ backend)."""
    import time

    import torch

    from evoforge.evaluators.kernels.kernelbench._timing import (
        CpuTimer,
        CudaTimer,
        FreshInputs,
        interleave,
        summarize,
    )

    cuda = device.type == "cuda"
    timer = CudaTimer(settings, PersistingL2Guard()) if cuda else CpuTimer(settings)
    salt = secrets.randbits(62)
    inputs = FreshInputs(
        lambda i: make_inputs(ctx.task, ctx.inputs_function, salt + i, i), device, settings.pool
    )
    start = time.perf_counter()
    try:
        compiled = torch.compile(model)
        with torch.no_grad():
            compiled(*inputs())  # compiles here, outside the timed calls
    except Exception as exc:
        return {"error": f"torch.compile failed on the task's Model: {exc!r}"[:_TAIL]}
    compile_s = time.perf_counter() - start
    with torch.no_grad():
        samples = interleave(
            timer,
            {"eager": model, "compile": compiled},
            inputs,
            warmups=settings.warmups,
            repeats=settings.repeats,
        )
    measured: dict[str, Any] = {name: summarize(values) for name, values in samples.items()}
    measured.update(device="cuda" if cuda else "cpu", compile_s=compile_s)
    return measured


# ---------------------------------------------------------------------------------------------
# Shared helpers


def _to(x: Any, device: Any) -> Any:
    import torch

    return x.to(device) if isinstance(x, torch.Tensor) else x


def _leaves(out: Any, who: str = "ModelNew") -> list[Any]:
    """The output tensors; exactly ``torch.Tensor`` (no subclass, no lazy wrapper)."""
    import torch

    leaves = list(out) if isinstance(out, tuple | list) else [out]
    for index, leaf in enumerate(leaves):
        if type(leaf) is not torch.Tensor:
            kind = f"{type(leaf).__module__}.{type(leaf).__qualname__}"
            raise Rejected(
                f"{who}.forward() output {index} is a {kind}; it must be exactly a "
                "torch.Tensor (not a subclass or a lazy wrapper), or a tuple of them"
            )
    return leaves


_WIRE = {
    "float64": "float64",
    "float32": "float32",
    "float16": "float16",
    "bfloat16": "float32",  # widened exactly: numpy has no bfloat16
    "int64": "int64",
    "int32": "int32",
    "int16": "int16",
    "int8": "int8",
    "uint8": "uint8",
    "bool": "bool",
}


def _encode(cpu: Any, original: Any, payload: bytearray) -> dict[str, Any]:
    """Append a CPU copy's bytes to ``payload``; its description for the runner."""
    import torch

    dtype = str(original.dtype).removeprefix("torch.")
    wire = _WIRE.get(dtype)
    if wire is None:
        raise Rejected(f"output dtype {dtype} is not supported; return one of {sorted(_WIRE)}")
    if dtype == "bfloat16":
        cpu = cpu.to(torch.float32)
    data = cpu.contiguous().numpy().tobytes()
    meta = {
        "shape": list(original.shape),
        "dtype": dtype,
        "device": original.device.type,
        "wire": wire,
        "offset": len(payload),
        "nbytes": len(data),
    }
    payload += data
    return meta


def _failure(exc: BaseException) -> dict[str, Any]:
    status = "runtime_error"
    if isinstance(exc, MemoryError) or type(exc).__name__ == "OutOfMemoryError":
        status = "memory_limit"
    elif type(exc).__name__ == "CompilationError" and "triton" in type(exc).__module__:
        status = "compile_error"
    return {
        "status": status,
        "error": f"{type(exc).__name__}: {exc}"[:_TAIL],
        "traceback": _traceback_tail(exc),
    }


def _traceback_tail(exc: BaseException) -> str:
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename == __file__:
        tb = tb.tb_next
    try:
        text = "".join(traceback.format_exception(type(exc), exc, tb))
    except BaseException:
        text = f"{type(exc).__name__}: (traceback unavailable)"
    return text[-_TAIL:]
