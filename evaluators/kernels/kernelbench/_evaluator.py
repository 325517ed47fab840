"""KernelBench-format kernel evaluation, shared by the ``triton`` and ``cuda`` evaluators.

A problem folder holds a KernelBench task file and a seed that defines ``ModelNew``::

    # task.py (the reference; trusted)
    class Model(nn.Module): ...              # the computation, in plain PyTorch
    def get_init_inputs(): return [...]      # constructor arguments of Model and ModelNew
    def get_inputs(): return [torch.randn(4096, 4093)]   # full shapes (GPU)
    def get_inputs_small(trial=0): ...       # optional: reduced shapes for the interpreter

    # problem.py
    name = "my_kernel"
    evaluator = "triton"                     # or "cuda"
    objectives = {"speedup_vs_eager": "maximize", "speedup_vs_compile": "maximize",
                  "max_abs_error": "minimize"}
    options = {"task_file": "task.py"}

    def evaluate(metrics):                   # gets the measurements below; returns the
        return metrics                       # metrics to record (add descriptors here)

Protocol, per candidate (a fresh runner, :mod:`evoforge.evaluators.kernels.kernelbench`):

- correctness: ``trials`` (>= 5) input sets from hidden seeds drawn per evaluation; the
  candidate runs first, in its own sandboxed process, on copies placed between canaries; the
  reference runs afterwards in another process; the runner compares (``atol = rtol = 1e-4``
  for float32, ``1e-2`` for float16/bfloat16), checks the inputs are unchanged, the output is
  exactly a ``torch.Tensor`` of the right shape, dtype and device, finite where the reference
  is, and as precise as its dtype (against float64). The Triton interpreter gets bounds checks.
- timing (GPU only): CUDA events, L2 flushed before every call, device-wide synchronisation,
  fresh inputs every call, candidate and reference interleaved, the reference timed against itself
  as a sanity check, speedups over eager and ``torch.compile`` (the latter from a trusted baseline
  measured once per evaluator and device), a speedup above 10x flagged as suspicious, a time below
  what the memory bandwidth allows rejected. One evaluation per GPU at a time
  (:class:`~evoforge.evaluators.DeviceSlots`); the device fingerprint goes with the result.

Metrics: ``max_abs_error``, ``relative_error_vs_float64``, ``trials``, ``shapes``, and on a
GPU ``speedup_vs_eager``, ``speedup_vs_compile``, ``time_ms``, ``time_iqr_ms``, ``time_cv``,
``reference_time_ms``, ``trusted_eager_ms``, ``trusted_compile_ms``, ``reference_vs_itself``,
``suspicious``; without one ``timing`` says why there is no timing, and those timing
objectives are :meth:`~KernelBenchEvaluator.unmeasurable`.

Options (``problem.options``): ``task_file`` ("task.py"), ``trials`` (5), ``small_inputs``
("get_inputs_small"), ``atol``/``rtol`` (by dtype), ``precision_floor`` (by dtype),
``timing_repeats`` (100), ``timing_warmups`` (3), ``flush_mib`` (256), ``sanity_repeats``
(20), ``gpu_timeout_s`` (max(timeout_s, 300)), ``reference_timeout_s`` (300),
``baseline_timeout_s`` (300: more time for the run that measures the trusted baseline,
``torch.compile`` included), ``cpu_baseline`` (False: without a GPU, also measure the trusted
eager vs ``torch.compile`` baseline on the CPU, once per evaluator, as the metrics
``trusted_eager_ms``, ``trusted_compile_ms``, ``trusted_eager_cv``, ``trusted_compile_cv``;
it checks that ``torch.compile`` works in the sandbox here, and costs one compile),
``suspicious_speedup`` (10), ``peak_bandwidth_gbs`` (10000), ``target`` ("auto",
"cpu-interpret"), ``sandbox_user`` ("nobody"), ``sandbox_network`` ("server").

What this does not prevent: the candidate's process is the candidate's. Code that takes it
over (replaces this harness's functions, writes its own result) can forge its timing record;
the bandwidth floor, the 10x flag and the trusted baseline bound how far. Output values it
cannot forge: they are compared outside, against a reference it never sees.
"""

from __future__ import annotations

import asyncio
import importlib.util
import re
import time
from collections.abc import Iterable, Mapping
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from evoforge.archive import EvalResult
from evoforge.evaluators import Evaluator, ResourceRequest
from evoforge.evaluators.devices import Device, DeviceSlots, fingerprint, inventory
from evoforge.evaluators.kernels import on_device
from evoforge.evaluators.sandbox import call_runner, reply_result, server_env
from evoforge.problems import ProblemSpecError

if TYPE_CHECKING:
    from evoforge.problems import Problem

TIMING_METRICS = (
    "speedup_vs_eager",
    "speedup_vs_compile",
    "time_ms",
    "time_iqr_ms",
    "time_cv",
    "reference_time_ms",
)
"""Metrics only a GPU can measure."""
CORRECTNESS_METRICS = ("max_abs_error", "relative_error_vs_float64")
"""Metrics that need the kernel to run (on a GPU, or in the Triton interpreter)."""
MIN_TRIALS = 5
_RUNNER_MARGIN_S = 120.0  # runner start-up (torch import), comparison, scoring
_DEFAULTS: Mapping[str, Any] = {
    "task_file": "task.py",
    "trials": MIN_TRIALS,
    "small_inputs": "get_inputs_small",
    "atol": None,
    "rtol": None,
    "precision_floor": None,
    "timing_repeats": 100,
    "timing_warmups": 3,
    "flush_mib": 256,
    "sanity_repeats": 20,
    "reference_timeout_s": 300.0,
    "baseline_timeout_s": 300.0,
    "cpu_baseline": False,
    "suspicious_speedup": 10.0,
    "peak_bandwidth_gbs": 10000.0,
    "target": "auto",
}


class KernelBenchEvaluator(Evaluator):
    """Evaluates KernelBench ``ModelNew`` candidates (see the module docstring)."""

    kind: ClassVar[str] = ""
    """``"triton"`` or ``"cuda"``: which build hooks and guards the harness installs."""

    @classmethod
    def default_resources(cls) -> ResourceRequest:
        """One GPU per evaluation on a Ray node: kernel timing needs the device to itself."""
        return ResourceRequest(num_gpus=1.0)

    def __init__(self, problem: Problem, *, workers: int = 1) -> None:
        super().__init__(problem, workers=workers)
        self.config = read_config(problem)
        self.target = self.target_for(problem)
        self._devices: tuple[Device, ...] = ()
        if self.target == "cuda":
            self._devices = inventory().of_kind("cuda")
        self._slots = DeviceSlots(self._devices) if self._devices else None
        self._running = asyncio.Semaphore(workers)
        self._baselines: dict[str, dict[str, Any]] = {}  # trusted eager/compile, per device
        self._shrunk: dict[str, Any] | None = None  # the runner's shrunk sizes for the task

    # --- what this host can do ---------------------------------------------------------------

    @classmethod
    def target_for(cls, problem: Problem) -> str:
        """``"cuda"`` when a CUDA GPU and a CUDA build of torch are here (and not overridden),
        else this evaluator's CPU mode."""
        wanted = problem.options.get("target", "auto")
        if wanted not in ("auto", "cuda", cls.cpu_target()):
            raise ProblemSpecError(
                problem.spec_path,
                "options['target']",
                f"found {wanted!r}; use 'auto', 'cuda' or {cls.cpu_target()!r}",
            )
        missing = gpu_missing()
        if wanted == "cuda" and missing:
            raise ProblemSpecError(
                problem.spec_path,
                "options['target']",
                f"is 'cuda' but this host has none usable ({missing}); use 'auto' to fall "
                f"back to {cls.cpu_target()!r}",
            )
        return cls.cpu_target() if wanted == cls.cpu_target() or missing else "cuda"

    @classmethod
    def cpu_target(cls) -> str:
        return cls.targets[-1]

    @classmethod
    def no_gpu_reason(cls, problem: Problem) -> str:
        """Why this host (or this problem's options) gives no GPU timing; "" when it does."""
        if problem.options.get("target") == cls.cpu_target():
            return f"options['target'] is {cls.cpu_target()!r}"
        return gpu_missing()

    @classmethod
    def unmeasurable(cls, problem: Problem) -> dict[str, str]:
        why = cls.no_gpu_reason(problem)
        if not why:
            return {}
        declared = {o.name for o in problem.objectives}
        return {name: cls.unmeasured_why(name, why) for name in cls.unmeasured(declared)}

    @classmethod
    def correctness_only(cls, problem: Problem) -> str:
        """Without a GPU the kernel still runs (the Triton interpreter): correctness only."""
        why = cls.no_gpu_reason(problem)
        return cls.unmeasured_why("", why) if why else ""

    @classmethod
    def unmeasured(cls, declared: set[str]) -> list[str]:
        return [name for name in TIMING_METRICS if name in declared]

    @classmethod
    def unmeasured_why(cls, name: str, why: str) -> str:
        return f"timing unavailable: {why}"

    # --- evaluation --------------------------------------------------------------------------

    async def evaluate(self, source: str) -> EvalResult:
        """Run and check one candidate. Never raises for a bad candidate.

        Raises:
            EvaluatorUnavailableError: this host cannot run the evaluator (no result is made
                up; a session refuses to start in that case).
        """
        return await on_device(
            self, self._running, self._slots, "cuda", lambda device: self._evaluate(source, device)
        )

    async def _evaluate(self, source: str, device: Device | None) -> EvalResult:
        problem, config = self.problem, self.config
        cuda = device is not None
        timeout_s = config["gpu_timeout_s"] if cuda else problem.timeout_s
        where = device.key if device is not None else "cpu"
        baseline = self._baselines.get(where)
        wants_baseline = cuda or config["cpu_baseline"]
        request = {
            "source": source,
            "kind": self.kind,
            "target": self.target,
            "spec_path": str(problem.spec_path),
            "task_path": config["task_path"],
            "trials": config["trials"],
            "small_inputs": config["small_inputs"],
            "atol": config["atol"],
            "rtol": config["rtol"],
            "precision_floor": config["precision_floor"],
            "timing": {
                "warmups": config["timing_warmups"],
                "repeats": config["timing_repeats"],
                "flush_mib": config["flush_mib"],
                "sanity_repeats": config["sanity_repeats"],
            },
            "baseline": baseline,
            "cpu_baseline": config["cpu_baseline"] and not cuda,
            "baseline_timeout_s": config["baseline_timeout_s"],
            "shrunk": None if cuda else self._shrunk,
            "timeout_s": timeout_s,
            "memory_mb": problem.memory_mb,
            "reference_timeout_s": config["reference_timeout_s"],
            "suspicious_speedup": config["suspicious_speedup"],
            "peak_bandwidth_gbs": config["peak_bandwidth_gbs"],
            "user": problem.options.get("sandbox_user", "nobody"),
            "allow_root": bool(problem.options.get("sandbox_allow_root", False)),
            "network": problem.options.get("sandbox_network", "server"),
        }
        env = _runner_env(problem.options.get("sandbox_env") or ())
        if device is not None:
            env["CUDA_VISIBLE_DEVICES"] = device.details.get("uuid") or str(device.index)
        deadline_s = timeout_s + config["reference_timeout_s"] + _RUNNER_MARGIN_S
        if wants_baseline and baseline is None:
            deadline_s += config["baseline_timeout_s"]
        start = time.perf_counter()
        reply = await call_runner(
            "evoforge.evaluators.kernels.kernelbench", request, deadline_s=deadline_s, env=env
        )
        if wants_baseline and isinstance(reply.get("baseline"), dict):
            self._baselines[where] = reply["baseline"]
        if isinstance(reply.get("shrunk"), dict):  # from the trusted runner, never a candidate
            self._shrunk = reply["shrunk"]
        return self._result(reply, time.perf_counter() - start, device)

    def _result(
        self, reply: Mapping[str, Any], caller_s: float, device: Device | None
    ) -> EvalResult:
        where = fingerprint(device or inventory().of_kind("cpu")[0])
        where["target"] = self.target
        timed = (reply.get("metrics") or {}).get("timed_device")
        if timed:
            where["timed_device"] = str(timed)
        # a compile-only build has no objectives to check
        return reply_result(
            self.problem, reply, caller_s, where, classify=not reply.get("build_only")
        )


def read_config(problem: Problem) -> dict[str, Any]:
    """This evaluator's options with their defaults, validated; ``task_path`` resolved.

    Raises:
        ProblemSpecError: an option has the wrong type or range, or the task file is missing.
    """
    options = {**_DEFAULTS, **{k: v for k, v in problem.options.items() if k in _DEFAULTS}}
    path = problem.spec_path

    def number(name: str, *, minimum: float, integer: bool = False, optional: bool = False) -> Any:
        value = options[name]
        if value is None and optional:
            return None
        kind = int if integer else int | float
        if isinstance(value, bool) or not isinstance(value, kind) or value < minimum:
            what = "an int" if integer else "a number"
            raise ProblemSpecError(
                path, f"options[{name!r}]", f"found {value!r}; use {what} >= {minimum:g}"
            )
        return value if integer else float(value)

    config: dict[str, Any] = {
        "trials": number("trials", minimum=MIN_TRIALS, integer=True),
        "timing_repeats": number("timing_repeats", minimum=10, integer=True),
        "timing_warmups": number("timing_warmups", minimum=1, integer=True),
        "flush_mib": number("flush_mib", minimum=0, integer=True),
        "sanity_repeats": number("sanity_repeats", minimum=4, integer=True),
        "reference_timeout_s": number("reference_timeout_s", minimum=1),
        "baseline_timeout_s": number("baseline_timeout_s", minimum=1),
        "suspicious_speedup": number("suspicious_speedup", minimum=1),
        "peak_bandwidth_gbs": number("peak_bandwidth_gbs", minimum=1),
        "atol": number("atol", minimum=0, optional=True),
        "rtol": number("rtol", minimum=0, optional=True),
        "precision_floor": number("precision_floor", minimum=0, optional=True),
    }
    gpu_timeout = problem.options.get("gpu_timeout_s", max(problem.timeout_s, 300.0))
    options["gpu_timeout_s"] = gpu_timeout
    config["gpu_timeout_s"] = number("gpu_timeout_s", minimum=1)
    for name in ("task_file", "small_inputs"):
        if not isinstance(options[name], str) or not options[name]:
            raise ProblemSpecError(
                path, f"options[{name!r}]", f"found {options[name]!r}; use a name"
            )
    task = (path.parent / options["task_file"]).resolve()
    if not task.is_file():
        raise ProblemSpecError(
            path,
            "options['task_file']",
            f"{task} does not exist; put the KernelBench task (Model, get_inputs, "
            "get_init_inputs) there or name its file",
        )
    if not isinstance(options["cpu_baseline"], bool):
        raise ProblemSpecError(
            path, "options['cpu_baseline']", f"found {options['cpu_baseline']!r}; use True or False"
        )
    config.update(
        task_path=str(task),
        small_inputs=options["small_inputs"],
        cpu_baseline=options["cpu_baseline"],
    )
    return config


def torch_missing() -> str:
    """Why torch cannot be used here ("" when it can), found without importing it."""
    if importlib.util.find_spec("torch") is None:
        return "torch is not installed"
    try:
        metadata.version("torch")
    except metadata.PackageNotFoundError:
        return "torch is importable but has no installed metadata (a broken install)"
    return ""


def gpu_missing() -> str:
    """Why there is no usable CUDA GPU here ("" when there is), without importing torch."""
    if not inventory().of_kind("cuda"):
        return "no CUDA GPU"
    if torch_missing():
        return torch_missing()
    cuda = torch_cuda_version()
    if cuda is None:
        return f"torch {metadata.version('torch')} is a CPU build; install a CUDA build"
    return ""


def torch_cuda_version() -> str | None:
    """The CUDA version torch was built with (``torch.version.cuda``), read from its file."""
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return None
    version_file = Path(next(iter(spec.submodule_search_locations)), "version.py")
    try:
        text = version_file.read_text()
    except OSError:
        return None
    match = re.search(r"^cuda\s*(?::[^=\n]*)?=\s*['\"]([^'\"]+)['\"]", text, re.MULTILINE)
    return match.group(1) if match else None


def _runner_env(declared: Iterable[str] = ()) -> dict[str, str]:
    return server_env(declared)  # an allow-list: no secrets
