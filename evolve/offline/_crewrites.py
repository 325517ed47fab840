"""Rewrites of C and C++ that a compiler does not do by itself, for the offline mutation model.

Each is a small, local source change that often keeps a program correct and can change what it
costs: a branch turned into arithmetic or a select (which the compiler may then vectorise), the
operands of ``&&``/``||`` swapped (the cheaper or more selective test first), a loop bound
tightened to the square root or the half (divisor searches), and a clang loop pragma (unroll or
vectorise) before a ``for``. In an OpenMP program (one that includes ``omp.h`` or has an
``omp`` pragma): ``#pragma omp parallel for`` before a ``for``, and ``#pragma omp atomic``
before an update (``x++;``, ``x += e;``) inside a loop, which makes a shared counter's loop
safe to parallelise. Many produce wrong (or racy) programs too; the evaluator (its tests, its
ThreadSanitizer stage) sorts them out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evoforge.evolve.offline._clike import CProgram
from evoforge.evolve.offline._tree import Change, Mutation, Program, text_of

if TYPE_CHECKING:
    import numpy as np
    import tree_sitter

_PRAGMAS = (
    "#pragma clang loop unroll_count(2)",
    "#pragma clang loop unroll_count(4)",
    "#pragma clang loop unroll_count(8)",
    "#pragma clang loop unroll(disable)",
    "#pragma clang loop vectorize(enable) interleave(enable)",
    "#pragma clang loop vectorize(disable)",
)


_OMP_LOOP = (
    "#pragma omp parallel for",
    "#pragma omp parallel for schedule(static)",
    "#pragma omp parallel for schedule(dynamic, 4096)",
)


def _pick(nodes: list[tree_sitter.Node], rng: np.random.Generator) -> tree_sitter.Node:
    return nodes[int(rng.integers(len(nodes)))]


def _line(node: tree_sitter.Node) -> int:
    return node.start_point.row + 1


def _single(body: tree_sitter.Node | None) -> tree_sitter.Node | None:
    """The one expression of a body ``x;`` or ``{ x; }``, else None."""
    if body is not None and body.type == "compound_statement":
        inner = [c for c in body.named_children if c.type != "comment"]
        body = inner[0] if len(inner) == 1 else None
    if body is None or body.type != "expression_statement" or body.named_child_count != 1:
        return None
    return body.named_children[0]


def branchless(prog: Program, rng: np.random.Generator) -> Mutation | None:
    """``if (c) x++;`` -> ``x += (c);`` and ``if (c) x = e;`` -> ``x = (c) ? e : x;``."""
    assert isinstance(prog, CProgram)
    node = _pick(prog.ifs, rng)
    condition = node.child_by_field_name("condition")
    expr = _single(node.child_by_field_name("consequence"))
    if condition is None or expr is None or condition.named_child_count != 1:
        return None
    cond = text_of(condition.named_children[0]).decode()
    new: str | None = None
    if expr.type == "update_expression":
        target = expr.child_by_field_name("argument")
        op = expr.child_by_field_name("operator")
        if target is not None and op is not None:
            sign = "+" if op.type == "++" else "-"
            new = f"{text_of(target).decode()} {sign}= ({cond});"
    elif expr.type == "assignment_expression":
        left, right = expr.child_by_field_name("left"), expr.child_by_field_name("right")
        op = expr.child_by_field_name("operator")
        if left is not None and right is not None and op is not None and op.type == "=":
            name = text_of(left).decode()
            new = f"{name} = ({cond}) ? {text_of(right).decode()} : {name};"
    if new is None:
        return None
    return Mutation(
        (Change(node.start_byte, node.end_byte, new.encode()),),
        f"the branch on line {_line(node)} as arithmetic",
    )


def swap_operands(prog: Program, rng: np.random.Generator) -> Mutation | None:
    """``a && b`` -> ``b && a`` (operands free of side effects only)."""
    assert isinstance(prog, CProgram)
    node = _pick(prog.chains, rng)
    left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
    op = node.child_by_field_name("operator")
    if left is None or right is None or op is None:
        return None
    new = b"%s %s %s" % (text_of(right), text_of(op), text_of(left))
    return Mutation(
        (Change(node.start_byte, node.end_byte, new),),
        f"test the operands of '{op.type}' on line {_line(node)} the other way round",
    )


def _counter(loop: tree_sitter.Node) -> str | None:
    """The variable a ``for`` steps by one upwards (``v++``, ``++v``, ``v += 1``), if any."""
    update = loop.child_by_field_name("update")
    if update is None:
        return None
    if update.type == "update_expression":
        op, arg = update.child_by_field_name("operator"), update.child_by_field_name("argument")
        if op is not None and op.type == "++" and arg is not None and arg.type == "identifier":
            return text_of(arg).decode()
    if update.type == "assignment_expression":
        left, right = update.child_by_field_name("left"), update.child_by_field_name("right")
        op = update.child_by_field_name("operator")
        if (
            left is not None
            and right is not None
            and op is not None
            and (op.type, text_of(right), left.type) == ("+=", b"1", "identifier")
        ):
            return text_of(left).decode()
    return None


def loop_bound(prog: Program, rng: np.random.Generator) -> Mutation | None:
    """``v < r`` in a counting ``for`` -> ``v * v <= r`` (square-root bound) or ``v <= r / 2``."""
    assert isinstance(prog, CProgram)
    loop = _pick(prog.loops, rng)
    var, condition = _counter(loop), loop.child_by_field_name("condition")
    if var is None or condition is None or condition.type != "binary_expression":
        return None
    left, right = condition.child_by_field_name("left"), condition.child_by_field_name("right")
    op = condition.child_by_field_name("operator")
    if left is None or right is None or op is None or text_of(left).decode() != var:
        return None
    if op.type not in ("<", "<="):
        return None
    bound = text_of(right).decode()
    if right.type not in ("identifier", "number_literal", "field_expression", "call_expression"):
        bound = f"({bound})"
    options = [f"{var} * {var} <= {bound}", f"{var} <= {bound} / 2"]
    new = options[int(rng.integers(len(options)))]
    return Mutation(
        (Change(condition.start_byte, condition.end_byte, new.encode()),),
        f"loop bound '{text_of(condition).decode()}' -> '{new}' (line {_line(loop)})",
    )


def loop_pragma(prog: Program, rng: np.random.Generator) -> Mutation | None:
    """A clang loop pragma (unroll, vectorise) on its own line before a ``for``."""
    return _pragma_before_loop(prog, rng, _PRAGMAS)


def omp_parallel(prog: Program, rng: np.random.Generator) -> Mutation | None:
    """``#pragma omp parallel for`` (a schedule at random) on its own line before a ``for``."""
    return _pragma_before_loop(prog, rng, _OMP_LOOP)


def omp_atomic(prog: Program, rng: np.random.Generator) -> Mutation | None:
    """``#pragma omp atomic`` on its own line before an update inside a loop."""
    assert isinstance(prog, CProgram)
    node = _pick(prog.updates, rng)
    row = node.start_point.row
    start = prog.line_start(row)
    above = prog.data[prog.line_start(row - 1) : start] if row > 0 else b""
    if above.lstrip().startswith(b"#pragma"):
        return None
    end = prog.line_start(row + 1)
    line = prog.data[start:end]
    indent = line[: len(line) - len(line.lstrip())]
    return Mutation(
        (Change(start, end, indent + b"#pragma omp atomic\n" + line),),
        f"'#pragma omp atomic' before '{text_of(node).decode()}' (line {row + 1})",
    )


def _pragma_before_loop(
    prog: Program, rng: np.random.Generator, pragmas: tuple[str, ...]
) -> Mutation | None:
    assert isinstance(prog, CProgram)
    loop = _pick(prog.loops, rng)
    row = loop.start_point.row
    start, end = prog.line_start(row), prog.line_start(row + 1)
    line = prog.data[start:end]
    indent = line[: len(line) - len(line.lstrip())]
    if line[len(indent) :].split(b"(")[0].strip() != b"for":
        return None  # the for shares its line with other code
    above = prog.data[prog.line_start(row - 1) : start] if row > 0 else b""
    if above.lstrip().startswith(b"#pragma"):
        return None  # one pragma per loop
    pragma = pragmas[int(rng.integers(len(pragmas)))]
    return Mutation(
        (Change(start, end, indent + pragma.encode() + b"\n" + line),),
        f"'{pragma}' before the loop on line {row + 1}",
    )


def has_ifs(prog: Program) -> bool:
    return isinstance(prog, CProgram) and bool(prog.ifs)


def has_chains(prog: Program) -> bool:
    return isinstance(prog, CProgram) and bool(prog.chains)


def has_loops(prog: Program) -> bool:
    return isinstance(prog, CProgram) and bool(prog.loops)


def _openmp(prog: Program) -> bool:
    return isinstance(prog, CProgram) and (b"omp.h" in prog.data or b"#pragma omp" in prog.data)


def has_openmp_loops(prog: Program) -> bool:
    return _openmp(prog) and has_loops(prog)


def has_openmp_updates(prog: Program) -> bool:
    return _openmp(prog) and bool(getattr(prog, "updates", ()))
