"""The sizes of a KernelBench task file: which module-level integers may be shrunk, and the
task's source with new values for them (pure ``ast``; imports nothing).

KernelBench writes a task's sizes as module-level constants, in several forms::

    batch_size = 16                  # a literal
    N = 2048 * 2                     # an expression of literals
    height = width = 128             # one value, several names
    D, H, W = 16, 32, 32             # unpacked: three sizes
    input_shape = (32768,)           # a tuple (or list) of sizes
    dim = batch_size // 2            # derived from other names: recomputed, never replaced
    input_shape = (batch_size, 3, 224, 224)        # literals inside a derived constant
    return [torch.rand(batch_size, 3, 224, 224)]   # ... or inside get_inputs itself

A :class:`Size` is one integer of such a constant (one element of a tuple). It may be shrunk
when it is at least 2 and either shapes an input (``get_inputs`` uses it, directly or through
a derived constant or a helper function) or is at least :data:`SIZE_MIN` (a channel or
feature count that only the constructor sees). An integer literal written inside
``get_inputs``, or inside a derived constant it uses, is a size from :data:`SIZE_MIN` up
(below it, ``torch.randint(0, 2, ...)``'s bound or a channel count of 3 stays as written).
Everything else (kernel sizes, strides,
padding, group counts, a reduction axis, floats) is left as written. A derived constant keeps
its expression, so ``bias_shape = (out_channels, 1, 1)`` follows ``out_channels``.
"""

from __future__ import annotations

import ast
import copy
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

SIZE_MIN = 32
"""A constant that no input's shape uses is a size only from this value up."""
INPUT_FUNCTION = "get_inputs"

_BINARY: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Div: operator.truediv,
    ast.LShift: operator.lshift,
    ast.RShift: operator.rshift,
}


class _NotConstant(Exception):
    """The expression refers to a name or does something other than arithmetic on literals."""


@dataclass(frozen=True)
class Size:
    """One shrinkable integer of the task's module level.

    Attributes:
        label: how reports name it (``batch_size``, ``height/width``, ``input_shape[0]``).
        statement: the index of its assignment in the module's body.
        element: its index in the assigned tuple or list (None for a plain integer); for a
            literal in ``get_inputs``, its index among the function's constants.
        full: its value as written.
        shapes_input: ``get_inputs`` uses it (it may go to 1); else it is a large constant
            only the constructor or the model sees.
    """

    label: str
    statement: int
    element: int | None
    full: int
    shapes_input: bool
    literal: bool = False


def find_sizes(tree: ast.Module) -> list[Size]:
    """The shrinkable sizes of a parsed task, in source order (see the module docstring)."""
    used = _names_used_by_inputs(tree)
    found: list[Size] = []
    for index, node in enumerate(tree.body):
        targets, value = _assignment(node)
        if value is None:
            continue
        try:
            evaluated = _constant(value)
        except _NotConstant:
            continue  # derived from other names (or not arithmetic): recomputed as written
        for label, names, element, number in _integers(targets, evaluated):
            if isinstance(number, bool) or not isinstance(number, int):
                continue
            shapes_input = bool(names & used)
            if number >= 2 and (shapes_input or number >= SIZE_MIN):
                found.append(Size(label, index, element, number, shapes_input))
    return found + _literals(tree, used)


def _literals(tree: ast.Module, used: set[str]) -> list[Size]:
    """The integer literals from :data:`SIZE_MIN` up written inside ``get_inputs``, or inside
    a derived constant it uses (``input_shape = (batch_size, 3, 224, 224)``)."""
    found: list[Size] = []
    for index, node in enumerate(tree.body):
        if isinstance(node, ast.FunctionDef) and node.name == INPUT_FUNCTION:
            where = INPUT_FUNCTION
        else:
            targets, value = _assignment(node)
            names = [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
            if value is None or not set(names) & used or _is_constant(value):
                continue  # a constant assignment's integers are sizes of their own
            where = "/".join(names)
        count = 0
        for element, constant in enumerate(_constants(node)):
            number = constant.value
            if isinstance(number, int) and not isinstance(number, bool) and number >= SIZE_MIN:
                count += 1
                label = f"{where} literal #{count}"
                found.append(Size(label, index, element, number, True, literal=True))
    return found


def _is_constant(value: ast.expr) -> bool:
    try:
        _constant(value)
    except _NotConstant:
        return False
    return True


def _constants(node: ast.AST) -> list[ast.Constant]:
    return [n for n in ast.walk(node) if isinstance(n, ast.Constant)]


def rewrite(tree: ast.Module, values: Mapping[Size, int]) -> ast.Module:
    """A copy of ``tree`` with each size in ``values`` replaced by its new value (a literal);
    everything else, derived constants included, as written."""
    changed = copy.deepcopy(tree)
    for size, value in values.items():
        node = changed.body[size.statement]
        if size.literal:
            assert size.element is not None
            _constants(node)[size.element].value = value
            continue
        _, expression = _assignment(node)
        assert expression is not None  # find_sizes found an assignment here
        literal = ast.copy_location(ast.Constant(value), expression)
        if size.element is None:
            _set_value(node, literal)
            continue
        if not isinstance(expression, ast.Tuple | ast.List):  # a folded expression: rebuild it
            evaluated = _constant(expression)
            elements: list[ast.expr] = [ast.Constant(v) for v in evaluated]
            expression = ast.copy_location(ast.Tuple(elements, ast.Load()), expression)
            _set_value(node, expression)
        expression.elts[size.element] = literal
    return ast.fix_missing_locations(changed)


def _assignment(node: ast.stmt) -> tuple[list[ast.expr], ast.expr | None]:
    if isinstance(node, ast.Assign):
        return list(node.targets), node.value
    if isinstance(node, ast.AnnAssign) and node.value is not None:
        return [node.target], node.value
    return [], None


def _set_value(node: ast.stmt, value: ast.expr) -> None:
    assert isinstance(node, ast.Assign | ast.AnnAssign)
    node.value = value


def _integers(targets: list[ast.expr], value: Any) -> list[tuple[str, set[str], int | None, Any]]:
    """``(label, names, element, number)`` for each number an assignment binds."""
    names = [t.id for t in targets if isinstance(t, ast.Name)]
    unpacked = [t for t in targets if isinstance(t, ast.Tuple | ast.List)]
    if unpacked and isinstance(value, tuple) and not names and len(unpacked) == 1:
        parts = unpacked[0].elts
        if len(parts) != len(value) or not all(isinstance(p, ast.Name) for p in parts):
            return []
        return [
            (p.id, {p.id}, i, v)
            for i, (p, v) in enumerate(zip(parts, value, strict=True))
            if isinstance(p, ast.Name)
        ]
    if not names or unpacked:
        return []
    label = "/".join(names)
    if isinstance(value, tuple):
        return [(f"{label}[{i}]", set(names), i, v) for i, v in enumerate(value)]
    return [(label, set(names), None, value)]


def _constant(node: ast.expr) -> Any:
    """The value of arithmetic on literals (tuples and lists become tuples).

    Raises:
        _NotConstant: it refers to a name, calls something, or is not arithmetic.
    """
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        operand = _constant(node.operand)
        return -operand if isinstance(node.op, ast.USub) else operand
    if isinstance(node, ast.BinOp):
        left, right = _constant(node.left), _constant(node.right)
        if isinstance(node.op, ast.Pow) and isinstance(right, int) and 0 <= right <= 64:
            return left**right
        operation = _BINARY.get(type(node.op))
        if operation is None or isinstance(left, tuple) or isinstance(right, tuple):
            raise _NotConstant
        try:
            return operation(left, right)
        except ArithmeticError:
            raise _NotConstant from None
    if isinstance(node, ast.Tuple | ast.List):
        return tuple(_constant(e) for e in node.elts)
    raise _NotConstant


def _names_used_by_inputs(tree: ast.Module) -> set[str]:
    """The module-level names ``get_inputs`` reads, through derived constants and the module's
    own functions it calls."""
    functions = {
        n.name: n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
    }
    assigned: dict[str, list[ast.expr]] = {}
    for node in tree.body:
        targets, value = _assignment(node)
        if value is None:
            continue
        for target in targets:
            for name in ast.walk(target):
                if isinstance(name, ast.Name):
                    assigned.setdefault(name.id, []).append(value)
    start = functions.get(INPUT_FUNCTION)
    if start is None:
        return set()
    seen: set[str] = set()
    pending: list[ast.AST] = [start]
    while pending:
        for found in ast.walk(pending.pop()):
            if not isinstance(found, ast.Name) or found.id in seen:
                continue
            seen.add(found.id)
            pending.extend(assigned.get(found.id, []))
            if found.id in functions:
                pending.append(functions[found.id])
    return seen
