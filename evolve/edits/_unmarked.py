"""A rewrite without EVOLVE-BLOCK markers: accepted only where the fixed code's names survive.

A rewrite that sends no marker lines is taken as the new content of the program's only
EVOLVE-BLOCK region (models often send just the code they changed). That reading is right
only when the new code still defines what the fixed code outside the markers uses: a small
model that sends a new ``main()`` without the ``construct_centers`` it calls, or the whole
program minus its markers, would otherwise be evaluated and die with ``NameError`` (issue 35:
every such answer did). So the names that the region defined at module level and that the
fixed code reads must all be defined by the new code, or the answer is refused, naming them.

Python only, by ``ast``; whatever cannot be decided here (a parent or code that does not
parse, a region inside an indented body, names made by ``globals()``, ``exec`` or a star
import) is let through: the syntax and name checks after the edit see the whole child.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from evoforge.evolve._names import bindings, dynamic_names
from evoforge.evolve.edits._parse import EditError
from evoforge.problems import END_MARKER, START_MARKER, Block

_SHOWN = 5  # names listed in a message


def check_unmarked(parent: str, region: Block, code: str) -> None:
    """Refuse ``code`` as ``region``'s new content when it drops a name the fixed code uses.

    Raises:
        EditError: names the missing definitions, where the fixed code uses the first one,
            and the two ways to send a valid rewrite.
    """
    try:
        old, new = ast.parse(parent), ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return
    if dynamic_names(new):
        return
    first = parent.count("\n", 0, region.start) + 1
    last = parent.count("\n", 0, region.end)
    inside = [node for node in old.body if first <= node.lineno <= last]
    fixed = [node for node in old.body if not first <= node.lineno <= last]
    uses = _loads(fixed)
    needed = bindings(inside) & set(uses) - bindings(fixed)
    missing = sorted(needed - bindings(new.body), key=lambda name: (uses[name], name))
    if not missing:
        return
    shown = ", ".join(missing[:_SHOWN]) + (" and others" if len(missing) > _SHOWN else "")
    where = uses[missing[0]]
    raise EditError(
        f"the rewrite has no {START_MARKER} / {END_MARKER} lines, so it would replace the "
        f"code between them, but it does not define {shown}, which the fixed code outside "
        f"the markers uses ({missing[0]} at line {where} of the current program); send the "
        "whole program with its marker lines and the code outside them unchanged, or code "
        f"for the region that still defines {shown}"
    )


def _loads(statements: Iterable[ast.stmt]) -> dict[str, int]:
    """Each global name read in ``statements``, with the line it is first read at.

    A name a function (or lambda, or comprehension) binds itself is its own, not the
    module's: reading it there needs nothing from the region (unless declared ``global``).
    """
    first: dict[str, int] = {}

    def visit(node: ast.AST, local: frozenset[str]) -> None:
        if isinstance(node, _SCOPES):
            local = local | _local_names(node)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in local:
            first[node.id] = min(first.get(node.id, node.lineno), node.lineno)
        for child in ast.iter_child_nodes(node):
            visit(child, local)

    for statement in statements:
        visit(statement, frozenset())
    return first


_SCOPES = (
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.Lambda,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
)


def _local_names(scope: ast.AST) -> frozenset[str]:
    """Parameters and names stored in ``scope`` itself, less those declared ``global``."""
    names: set[str] = set()
    declared: set[str] = set()
    arguments = getattr(scope, "args", None)
    if isinstance(arguments, ast.arguments):
        every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
        every += [a for a in (arguments.vararg, arguments.kwarg) if a is not None]
        names.update(a.arg for a in every)
    for node in ast.walk(scope):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Global):
            declared.update(node.names)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            if node is not scope:
                names.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return frozenset(names - declared)
