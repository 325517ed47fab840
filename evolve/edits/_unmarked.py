"""A rewrite without EVOLVE-BLOCK markers: accepted only where the fixed code's names survive.

A rewrite that sends no marker lines is taken as the new content of the program's only
EVOLVE-BLOCK region (models often send just the code they changed). That reading is right
only when the new code still defines what the fixed code outside the markers uses: a small
model that sends a new ``main()`` without the ``construct_centers`` it calls, or the whole
program minus its markers, would otherwise be evaluated and die with ``NameError`` (issue 35:
every such answer did). So the names that the region defined at module level and that the
fixed code reads must all be defined by the new code, or the answer is refused, naming them;
and a whole program sent without its markers counts only by what it changes (see
:func:`unmarked_content`).

Python only, by ``ast``; whatever cannot be decided here (a parent or code that does not
parse, a region inside an indented body, names made by ``globals()``, ``exec`` or a star
import) is let through: the syntax and name checks after the edit see the whole child.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from evoforge.evolve.checks import bindings, dynamic_names, statement_lines
from evoforge.evolve.edits._parse import EditError
from evoforge.problems import END_MARKER, START_MARKER, Block

_SHOWN = 5  # names listed in a message


def unmarked_content(parent: str, region: Block, code: str) -> str:
    """The new content of ``region`` that ``code``, a rewrite without marker lines, stands for.

    ``code`` is the region's new content, less the module-level statements it copies
    unchanged from the fixed code (a whole program sent without its marker lines repeats the
    docstring, the imports and ``main``: those copies are dropped, the fixed code keeps its
    own). What is left must not redefine a name the fixed code defines (a changed ``main``
    or ``N``: the fixed code is not to be changed, even by a copy inside the block) and must
    still define every name the fixed code reads from the region.

    Raises:
        EditError: a fixed name redefined, or a name the fixed code reads no longer defined;
            the message names them and the two ways to send a valid rewrite.
    """
    try:
        old, new = ast.parse(parent), ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return code
    if dynamic_names(new):
        return code
    first = parent.count("\n", 0, region.start) + 1
    last = parent.count("\n", 0, region.end)
    inside = [node for node in old.body if first <= node.lineno <= last]
    fixed = [node for node in old.body if not first <= node.lineno <= last]
    copies = {ast.dump(node) for node in fixed}
    kept = [node for node in new.body if ast.dump(node) not in copies]
    redefined = sorted(bindings(kept) & bindings(fixed) - bindings(inside))
    uses = _loads(fixed)
    needed = bindings(inside) & set(uses) - bindings(fixed)
    missing = sorted(needed - bindings(kept), key=lambda name: (uses[name], name))
    wrong = []
    if missing:
        wrong.append(
            f"it does not define {_listed(missing)}, which the fixed code outside the markers "
            f"uses ({missing[0]} at line {uses[missing[0]]} of the current program)"
        )
    if redefined:
        wrong.append(
            f"it redefines {_listed(redefined)}, which the fixed code outside the markers "
            "defines and which must not change"
        )
    if wrong:
        raise EditError(
            f"the rewrite has no {START_MARKER} / {END_MARKER} lines, so it would replace the "
            f"code between them, but {'; and '.join(wrong)}; send the whole program with its "
            "marker lines and the code outside them unchanged, or only the code for between "
            "the markers" + (f", still defining {_listed(missing)}" if missing else "")
        )
    if len(kept) == len(new.body):
        return code
    content = parent[region.start : region.end]
    ending = "\n" * max(1, len(content) - len(content.rstrip("\n")))  # the block's blank tail
    return _without(code, [node for node in new.body if ast.dump(node) in copies]) + ending


def _listed(names: list[str]) -> str:
    return ", ".join(names[:_SHOWN]) + (" and others" if len(names) > _SHOWN else "")


def _without(code: str, statements: list[ast.stmt]) -> str:
    """``code`` without the lines of ``statements`` (decorators included) and the blank
    lines at its ends."""
    lines = code.split("\n")
    drop: set[int] = set()
    for node in statements:
        drop.update(range(*statement_lines(node)))
    return "\n".join(line for index, line in enumerate(lines) if index not in drop).strip("\n")


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
