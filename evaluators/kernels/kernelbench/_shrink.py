"""Shapes small enough for the Triton interpreter, from a KernelBench task that has only its
full-size ``get_inputs()`` (imports torch; runs in the trusted runner).

KernelBench shapes are sized for a GPU (a 4096 x 393216 float32 input is 6 GiB; a 4096-cubed
matmul takes minutes in the interpreter). A task may define ``get_inputs_small(trial)`` with
its own reduced shapes; a task that does not is shrunk by this rule, the same for every task:

1. **Sizes** are the task's module-level constants assigned an integer literal of at least
   :data:`SIZE_MIN` (``batch_size = 4096``, ``dim = 393216``). Smaller ones (kernel sizes,
   strides, a channel count of 3, a reduction axis ``dim = 1``) are never changed.
2. Every size is divided by the same power of two ``f`` (rounded down, never below
   :data:`SIZE_FLOOR`), with ``f`` the smallest for which the largest input holds at most
   :data:`MAX_ELEMENTS` elements and all inputs together at most :data:`MAX_TOTAL`. Dividing
   by a power of two keeps the sizes' factors of two, so head counts and group counts still
   divide them.
3. Input shapes are measured on PyTorch's ``meta`` device (no memory, no time); the shrunk
   task is the task's own source with only those constants replaced, executed as a module.

A task whose inputs fit already runs at its own sizes. Every evaluation reports what ran in
its metrics (``inputs``, ``shapes``); a reference that fails on the shrunk shapes says so and
suggests ``get_inputs_small``.
"""

from __future__ import annotations

import ast
import sys
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SIZE_MIN = 32
SIZE_FLOOR = 16
MAX_ELEMENTS = 16_384
MAX_TOTAL = 32_768
_MAX_DOUBLINGS = 40


class ShrinkError(ValueError):
    """The task cannot be measured or shrunk into the interpreter's budget."""


@dataclass(frozen=True)
class Shrunk:
    """A task module with its sizes divided by ``factor``; ``sizes`` maps each changed
    constant to ``(full, shrunk)``."""

    module: types.ModuleType
    factor: int
    sizes: dict[str, tuple[int, int]] = field(default_factory=dict)
    largest: int = 0

    @property
    def note(self) -> str:
        changed = ", ".join(f"{n} {a}->{b}" for n, (a, b) in self.sizes.items() if a != b)
        return (
            f"shrunk for the Triton interpreter (sizes / {self.factor}: {changed}; largest "
            f"tensor {self.largest} elements); add get_inputs_small(trial) to choose shapes"
        )


def shrink_task(path: str | Path, module: types.ModuleType) -> Shrunk | None:
    """``module`` (the task as loaded from ``path``) with shrunk sizes, or None when its inputs
    fit the budget as they are.

    Raises:
        ShrinkError: the shapes cannot be measured on the meta device, or are too large even
            at the smallest sizes the rule allows.
    """
    largest, total = measure(module)
    if largest <= MAX_ELEMENTS and total <= MAX_TOTAL:
        return None
    source = Path(path).read_text()
    tree = ast.parse(source, filename=str(path))
    sizes = _sizes(tree)
    if not sizes:
        raise ShrinkError(
            f"its inputs are large ({largest} elements) and it has no module-level size "
            f"constants (integers >= {SIZE_MIN}) to shrink; add get_inputs_small(trial)"
        )
    previous: dict[str, int] | None = None
    for doubling in range(1, _MAX_DOUBLINGS):
        factor = 2**doubling
        values = {name: max(SIZE_FLOOR, full // factor) for name, full in sizes.items()}
        if values == previous:
            break
        previous = values
        shrunk = _execute(tree, path, values)
        largest, total = measure(shrunk)
        if largest <= MAX_ELEMENTS and total <= MAX_TOTAL:
            changed = {name: (sizes[name], values[name]) for name in sizes}
            return Shrunk(shrunk, factor, changed, largest)
    raise ShrinkError(
        f"even with every size at its smallest ({SIZE_FLOOR}) the largest tensor has {largest} "
        f"elements (the interpreter's budget: {MAX_ELEMENTS}); add get_inputs_small(trial)"
    )


def measure(module: types.ModuleType) -> tuple[int, int]:
    """``(largest input, all inputs)`` in elements, measured on the meta device (outputs are
    not: the first operator run on the meta device costs seconds of imports).

    Raises:
        ShrinkError: ``get_inputs()`` or ``get_init_inputs()`` fail on the meta device.
    """
    import torch

    from evoforge.evaluators.kernels.kernelbench._placement import cuda_redirect

    try:
        with torch.device("meta"), cuda_redirect("meta"):
            inputs = list(module.get_inputs())
            init = list(module.get_init_inputs())
    except Exception as exc:
        raise ShrinkError(
            f"its input shapes cannot be measured on PyTorch's meta device ({type(exc).__name__}"
            f": {exc}); add get_inputs_small(trial) with shapes for the interpreter"
        ) from None
    sizes = [_numel(x) for x in inputs]
    del init  # measured for its errors only: the constructor's arguments are not tensors
    return max([*sizes, 0]), sum(sizes)


def _numel(x: Any) -> int:
    import torch

    if isinstance(x, torch.Tensor):
        return int(x.numel())
    if hasattr(x, "size") and isinstance(getattr(x, "size", None), int):  # numpy
        return int(x.size)
    return 0


def _sizes(tree: ast.Module) -> dict[str, int]:
    found: dict[str, int] = {}
    for node in tree.body:
        targets: list[ast.expr] = []
        value = None
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        if not _is_size(value):
            continue
        for target in targets:
            if isinstance(target, ast.Name):
                found[target.id] = value.value  # type: ignore[union-attr]
    return found


def _is_size(value: ast.expr | None) -> bool:
    return (
        isinstance(value, ast.Constant)
        and isinstance(value.value, int)
        and not isinstance(value.value, bool)
        and value.value >= SIZE_MIN
    )


class _Replace(ast.NodeTransformer):
    def __init__(self, values: dict[str, int]) -> None:
        self.values = values

    def visit_Module(self, node: ast.Module) -> ast.Module:  # noqa: N802 - ast's API
        for statement in node.body:  # top level only: a function's locals stay as written
            if isinstance(statement, ast.Assign):
                targets = statement.targets
            elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
                targets = [statement.target]
            else:
                continue
            names = [t.id for t in targets if isinstance(t, ast.Name) and t.id in self.values]
            if names and statement.value is not None and _is_size(statement.value):
                statement.value = ast.copy_location(
                    ast.Constant(self.values[names[0]]), statement.value
                )
        return node


def _execute(tree: ast.Module, path: str | Path, values: dict[str, int]) -> types.ModuleType:
    import copy

    changed = _Replace(values).visit(copy.deepcopy(tree))
    code = compile(ast.fix_missing_locations(changed), str(path), "exec")
    module = types.ModuleType("kernelbench_task")
    module.__file__ = str(path)
    sys.modules["kernelbench_task"] = module
    exec(code, module.__dict__)
    return module
