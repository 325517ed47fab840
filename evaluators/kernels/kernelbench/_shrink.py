"""Shapes small enough for the Triton interpreter, from a KernelBench task that has only its
full-size ``get_inputs()`` (imports torch; runs in the trusted runner).

KernelBench shapes are sized for a GPU (a 4096 x 393216 float32 input is 6 GiB; a 4096-cubed
matmul takes minutes in the interpreter). A task may define ``get_inputs_small(trial)`` with
its own reduced shapes; a task that does not is shrunk by this rule, the same for every task:

1. **Sizes** are the task's module-level integers that shape an input or are large (see
   :mod:`evoforge.evaluators.kernels.kernelbench._sizes`: literals, expressions such as
   ``2048 * 2``, tuples such as ``(32768,)``, large literals inside ``get_inputs``); kernel
   sizes, strides, padding, group counts and axes are never changed, and derived constants
   are recomputed from the sizes they use.
2. While the inputs exceed the budget (the largest at most :data:`MAX_ELEMENTS` elements, all
   together at most :data:`MAX_TOTAL`; where the model can be run on the meta device, also the
   largest output at most :data:`MAX_OUTPUT` and the parameters at most :data:`MAX_PARAMETERS`,
   which the search aims for but a task need not reach: the inputs' budget is the one that
   decides whether it runs),
   the largest size that can still shrink is halved (the first written on a tie). Halving the
   largest first keeps every dimension in play, so a 5-D input reaches the budget with each
   dimension near the fifth root of it, and keeps the sizes' factors of two (head and group
   counts still divide them).
3. Each step is **checked on PyTorch's meta device** (no memory, no arithmetic): the task's
   own ``Model`` is built from ``get_init_inputs()`` and run on ``get_inputs()``. A step the
   operation refuses (a spatial size below what the kernel, stride, padding and dilation need;
   a channel count a group count no longer divides; an output dimension of two or more left
   with one position, where a pooling's or strided kernel's indexing would go untested) is
   not taken: sizes of the same value are halved together instead (two dimensions that must
   match), or else the size stays at the smallest value the operation accepted and is not
   shrunk again. Sizes go no lower than
   :data:`FLOORS` (2 first, 1 only if the budget needs it), so a reduction keeps at least two
   elements to reduce wherever the budget allows.

The shrunk task is the task's own source with only those constants replaced, executed as a
module. A task that fits already runs at its own sizes. The search costs a second or two in
a fresh runner (the meta device's first operator loads its kernels), so the runner returns
:attr:`Shrunk.record` and the evaluator hands it to the next runner of the same task, which
applies it (checked against the task's hash, its sizes and the budget) instead of searching.
Every evaluation reports what ran in its metrics (``inputs``, ``shapes``); a task that cannot
be shrunk says which sizes stopped where, and why.
"""

from __future__ import annotations

import ast
import dataclasses
import hashlib
import sys
import types
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evoforge.evaluators.kernels.kernelbench._sizes import SIZE_MIN, Size, find_sizes, rewrite

MAX_ELEMENTS = 16_384
MAX_TOTAL = 32_768
MAX_OUTPUT = 262_144
MAX_PARAMETERS = 262_144
FLOORS = (2, 1)
_MAX_STEPS = 2_000  # halvings and bisections together: far more than any task's sizes need


class ShrinkError(ValueError):
    """The task cannot be measured or shrunk into the interpreter's budget."""


class _Refused(Exception):
    """The task's code refused the sizes on the meta device."""


class _Useless(_Refused):
    """The inputs fit and the step would not reduce the output or parameters over budget."""


@dataclass(frozen=True)
class Measure:
    """Element counts of one size assignment (outputs and parameters: -1 when unmeasured)."""

    largest: int
    total: int
    output: int = -1
    parameters: int = -1
    shapes: tuple[tuple[int, ...], ...] = field(default=(), compare=False)

    def fits(self) -> bool:
        """Within every budget: what the search aims for."""
        return self.inputs_fit() and self.output <= MAX_OUTPUT and self.parameters <= MAX_PARAMETERS

    def inputs_fit(self) -> bool:
        """Within the inputs' budget: what a task must reach to run (a model whose own
        parameters or outputs stay large, such as a VGG's fixed layer widths, still runs)."""
        return self.largest <= MAX_ELEMENTS and self.total <= MAX_TOTAL

    def describe(self) -> str:
        parts = [f"largest input {self.largest} elements (budget {MAX_ELEMENTS})"]
        parts.append(f"all inputs {self.total} (budget {MAX_TOTAL})")
        if self.output >= 0:
            parts.append(f"largest output {self.output} (budget {MAX_OUTPUT})")
            parts.append(f"parameters {self.parameters} (budget {MAX_PARAMETERS})")
        return ", ".join(parts)


@dataclass(frozen=True)
class Shrunk:
    """A task module with shrunk sizes; ``sizes`` maps each size's label to ``(full,
    shrunk)``, ``stopped`` the sizes the operation held up to why."""

    module: types.ModuleType
    sizes: dict[str, tuple[int, int]] = field(default_factory=dict)
    largest: int = 0
    checked: str = "checked on the meta device"
    stopped: dict[str, str] = field(default_factory=dict)
    sha256: str = ""

    @property
    def record(self) -> dict[str, Any]:
        """What a later runner of the same task needs to skip the search (JSON)."""
        return {
            "sha256": self.sha256,
            "sizes": {label: new for label, (_, new) in self.sizes.items()},
            "largest": self.largest,
            "checked": self.checked,
            "stopped": self.stopped,
        }

    @property
    def note(self) -> str:
        changed = ", ".join(f"{n} {a}->{b}" for n, (a, b) in self.sizes.items() if a != b)
        return (
            f"shrunk for the Triton interpreter ({changed}; largest input {self.largest} "
            f"elements; {self.checked}); add get_inputs_small(trial) to choose shapes"
        )


def shrink_task(
    path: str | Path, module: types.ModuleType, known: Mapping[str, Any] | None = None
) -> Shrunk | None:
    """``module`` (the task as loaded from ``path``) with shrunk sizes, or None when its inputs
    fit the budget as they are.

    Args:
        path: the task file.
        module: the task as loaded from it.
        known: a previous :attr:`Shrunk.record` of this task (from a trusted runner), applied
            without a search when it still matches the file and fits the budget.

    Raises:
        ShrinkError: the shapes cannot be measured on the meta device, or are too large even
            at the smallest sizes the operation allows (the message names them, and why).
    """
    largest, total = measure(module)
    if largest <= MAX_ELEMENTS and total <= MAX_TOTAL:
        return None
    source = Path(path).read_text()
    digest = hashlib.sha256(source.encode()).hexdigest()
    tree = ast.parse(source, filename=str(path))
    sizes = find_sizes(tree)
    if not sizes:
        raise ShrinkError(
            f"its inputs are large ({largest} elements) and it has no module-level sizes "
            f"(integers that shape an input, or >= {SIZE_MIN}) to shrink; add "
            "get_inputs_small(trial)"
        )
    if known and known.get("sha256") == digest:
        reused = _reuse(tree, path, sizes, known)
        if reused is not None:
            return dataclasses.replace(reused, sha256=digest)
    return dataclasses.replace(_Search(tree, path, sizes).run(), sha256=digest)


def _reuse(
    tree: ast.Module, path: str | Path, sizes: list[Size], known: Mapping[str, Any]
) -> Shrunk | None:
    """The task with ``known``'s sizes, or None when they do not name exactly this task's
    sizes or do not fit the budget (then the caller searches)."""
    values = known.get("sizes")
    labels = [s.label for s in sizes]
    if not isinstance(values, dict) or sorted(values) != sorted(labels):
        return None
    if len(set(labels)) != len(labels) or not all(
        type(values[s.label]) is int and 1 <= values[s.label] <= s.full for s in sizes
    ):
        return None
    chosen = {s: int(values[s.label]) for s in sizes}
    try:
        module = _execute(tree, path, chosen)
        largest, total = measure(module)
    except Exception:
        return None
    if largest > MAX_ELEMENTS or total > MAX_TOTAL:
        return None
    stopped = known.get("stopped")
    return Shrunk(
        module,
        {s.label: (s.full, chosen[s]) for s in sizes},
        largest,
        str(known.get("checked", "checked on the meta device")),
        dict(stopped) if isinstance(stopped, dict) else {},
    )


class _Search:
    """The halving of the sizes of one task (rule 2 and 3 of the module docstring)."""

    def __init__(self, tree: ast.Module, path: str | Path, sizes: list[Size]) -> None:
        self.tree, self.path, self.sizes = tree, path, sizes
        self.values = {size: size.full for size in sizes}
        self.stopped: dict[Size, str] = {}
        self.steps = 0
        self.full = Measure(0, 0)
        self.forward = ""  # why the model does not run on the meta device ("" when it does)
        try:
            self.full = _run_on_meta(_execute(tree, path, {}))
        except _Refused as refused:
            self.forward = str(refused)

    def run(self) -> Shrunk:
        measured = self._measure(self.values)
        for floor in FLOORS:
            while not measured.fits():
                size = self._next(floor)
                if size is None:
                    break
                measured = self._halve(size, floor, measured) or measured
            if measured.fits():
                break
        if not measured.inputs_fit():
            raise ShrinkError(self._why(measured))
        module = _execute(self.tree, self.path, self.values)
        checked = "checked on the meta device"
        if self.forward:
            checked = f"not checked on the meta device, where the model fails ({self.forward})"
        elif not measured.fits():
            checked += f"; over the budget as small as it goes: {measured.describe()}"
        return Shrunk(
            module,
            {s.label: (s.full, self.values[s]) for s in self.sizes},
            measured.largest,
            checked,
            {s.label: why for s, why in self.stopped.items()},
        )

    def _movable(self, floor: int) -> list[Size]:
        return [s for s in self.sizes if s not in self.stopped and self.values[s] > floor]

    def _next(self, floor: int) -> Size | None:
        movable = self._movable(floor)
        if not movable:
            return None
        return max(movable, key=lambda s: (self.values[s], -self.sizes.index(s)))

    def _halve(self, size: Size, floor: int, before: Measure) -> Measure | None:
        """Halve ``size`` (or shrink it as far towards half as the operation allows); the new
        measure, or None when it cannot shrink at all (then it is stopped). Once the inputs
        fit, a step must reduce the output or the parameters that are over their budget."""

        def attempt(values: dict[Size, int]) -> Measure:
            measured = self._measure(values)
            if before.inputs_fit() and not _reduces(before, measured):
                raise _Useless(f"the inputs fit; {before.describe()}")
            return measured

        current = self.values[size]
        target = max(floor, current // 2)
        try:
            measured = attempt({**self.values, size: target})
            self.values[size] = target
            return measured
        except _Refused as refused:
            reason = str(refused)
            verdict = (
                "would not help" if isinstance(refused, _Useless) else "fails on the meta device"
            )
        tied = [s for s in self._movable(floor) if s != size and self.values[s] == current]
        if tied:  # sizes that must stay equal (one tensor's dimension matched to another's)
            together = {**self.values, **{s: target for s in [size, *tied]}}
            try:
                measured = attempt(together)
                self.values = together
                return measured
            except _Refused:
                pass
        low, high, best = target, current, None  # low refused, high accepted
        while high - low > 1 and self.steps < _MAX_STEPS:
            middle = (low + high) // 2
            try:
                best = attempt({**self.values, size: middle}), middle
                high = middle
            except _Refused:
                low = middle
        if best is not None:
            self.values[size] = best[1]
        self.stopped[size] = (
            f"{size.label} stays at {self.values[size]}: {target} {verdict} ({reason})"
        )
        return best[0] if best is not None else None

    def _measure(self, values: dict[Size, int]) -> Measure:
        self.steps += 1
        if self.steps > _MAX_STEPS:
            raise _Refused(f"more than {_MAX_STEPS} trials")
        try:
            module = _execute(self.tree, self.path, values)
        except Exception as exc:
            raise _Refused(f"the task's module fails: {type(exc).__name__}: {exc}") from None
        if self.forward:
            try:
                largest, total = measure(module)
            except ShrinkError as exc:
                raise _Refused(str(exc)) from None
            return Measure(largest, total)
        measured = _run_on_meta(module)
        _check_outputs(self.full.shapes, measured.shapes)
        return measured

    def _why(self, measured: Measure) -> str:
        at = ", ".join(f"{s.label}={self.values[s]}" for s in self.sizes)
        stopped = "; ".join(self.stopped.values()) or "every size is at its floor"
        unchecked = f"; the model does not run on the meta device ({self.forward})" * bool(
            self.forward
        )
        return (
            f"even at the smallest sizes the operation allows ({at}) it is over the "
            f"interpreter's budget: {measured.describe()}. What stopped: {stopped}"
            f"{unchecked}; add get_inputs_small(trial) with shapes for the interpreter"
        )


def measure(module: types.ModuleType) -> tuple[int, int]:
    """``(largest input, all inputs)`` in elements, measured on the meta device (no operator
    runs: the first one run on the meta device costs a second of imports).

    Raises:
        ShrinkError: ``get_inputs()`` or ``get_init_inputs()`` fail on the meta device.
    """
    try:
        inputs, _ = _meta_inputs(module)
    except Exception as exc:
        raise ShrinkError(
            f"its input shapes cannot be measured on PyTorch's meta device ({type(exc).__name__}"
            f": {exc}); add get_inputs_small(trial) with shapes for the interpreter"
        ) from None
    sizes = [_numel(x) for x in inputs]
    return max([*sizes, 0]), sum(sizes)


def _meta_inputs(module: types.ModuleType) -> tuple[list[Any], list[Any]]:
    import torch

    from evoforge.evaluators.kernels.kernelbench._placement import cuda_redirect

    with torch.device("meta"), cuda_redirect("meta"):
        return list(module.get_inputs()), list(module.get_init_inputs())


def _run_on_meta(module: types.ModuleType) -> Measure:
    """The task's Model built and run on the meta device: its input, output and parameter
    sizes.

    Raises:
        _Refused: any step fails (the shapes are not valid for the operation).
    """
    import torch

    from evoforge.evaluators.kernels.kernelbench._placement import cuda_redirect

    try:
        with torch.device("meta"), cuda_redirect("meta"), torch.no_grad():
            inputs = list(module.get_inputs())
            model = module.Model(*module.get_init_inputs())
            outputs = model(*inputs)
            parameters = sum(int(p.numel()) for p in model.parameters())
    except Exception as exc:
        raise _Refused(f"{type(exc).__name__}: {_first_line(exc)}") from None
    sizes = [_numel(x) for x in inputs]
    produced = _flatten(outputs)
    shapes = tuple(tuple(int(d) for d in getattr(x, "shape", ())) for x in produced)
    largest_output = max([*(_numel(x) for x in produced), 0])
    return Measure(max([*sizes, 0]), sum(sizes), largest_output, parameters, shapes)


def _reduces(before: Measure, after: Measure) -> bool:
    """Whether ``after`` is smaller in an output or parameter count over its budget."""
    return (before.output > MAX_OUTPUT and after.output < before.output) or (
        before.parameters > MAX_PARAMETERS and after.parameters < before.parameters
    )


def _check_outputs(full: tuple[tuple[int, ...], ...], shrunk: tuple[tuple[int, ...], ...]) -> None:
    """Refuse sizes that collapse an output dimension of two or more to fewer: a pooling or
    strided convolution left with a single output position tests none of its indexing.

    Raises:
        _Refused: which output and dimension, from what to what.
    """
    for number, (before, after) in enumerate(zip(full, shrunk, strict=False)):
        if len(before) != len(after):
            continue
        for axis, (a, b) in enumerate(zip(before, after, strict=True)):
            if a >= 2 and b < 2:
                raise _Refused(
                    f"output {number} dimension {axis} would shrink from {a} to {b}, too "
                    "small to test the operation"
                )


def _flatten(value: Any) -> list[Any]:
    if isinstance(value, list | tuple):
        return [x for item in value for x in _flatten(item)]
    if isinstance(value, dict):
        return [x for item in value.values() for x in _flatten(item)]
    return [value]


def _first_line(exc: Exception) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else "(no message)"


def _numel(x: Any) -> int:
    import torch

    if isinstance(x, torch.Tensor):
        return int(x.numel())
    if hasattr(x, "size") and isinstance(getattr(x, "size", None), int):  # numpy
        return int(x.size)
    return 0


def _execute(tree: ast.Module, path: str | Path, values: dict[Size, int]) -> types.ModuleType:
    code = compile(rewrite(tree, values), str(path), "exec")
    module = types.ModuleType("kernelbench_task")
    module.__file__ = str(path)
    sys.modules["kernelbench_task"] = module
    exec(code, module.__dict__)
    return module
