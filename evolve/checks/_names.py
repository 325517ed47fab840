"""Name check of a Python candidate before it is spent on an evaluation.

A child that reads a name defined nowhere, or no longer defines a function its evaluator calls,
can only fail with ``NameError`` (issue 35: every evaluated child of a small model's run died
so). Both are visible statically, so such a child is refused as an edit error whose message
names what to define, and costs no evaluation.

Undefined names are pyflakes' (the scope rules of a well-kept checker, not ours): builtins,
imports, and the whole program (the fixed code outside the EVOLVE-BLOCKs included) count as
definitions. A false positive costs a model call, so whatever is uncertain is let through:

* only names read where the program runs them: annotations are not (they may be strings,
  or never evaluated under ``from __future__ import annotations``);
* a name the parent reads undefined too is the evaluator's to provide (the ``tpu``
  harness sets ``INTERPRET``; a third-party evaluator may inject its own): the parent was
  evaluated with it, so it is not the child's fault;
* a program that may make names no static reading sees (``globals()``, ``exec``, a star
  import, ``sys.modules``) is not checked at all.

The names an evaluator calls are the problem's ``entry`` (the ``python``, kernel, timing and
LLVM evaluators call it) or, for an OpenEvolve folder, the attributes its ``evaluator.py``
reads from the program's module (``program.run_search()``, ``hasattr(program, "f")``). One
is required only when the parent defines it at module level.
"""

from __future__ import annotations

import ast
import functools
import logging
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from evoforge.problems import Problem

_SHOWN = 5  # names listed in a message
_DYNAMIC = frozenset({"globals", "locals", "vars", "exec", "eval", "__builtins__"})
_LOADERS = frozenset({"module_from_spec", "import_module", "load_module", "__import__"})


def check_program_names(
    child: str, parent: str, problem: Problem, *, parent_feedback: str = ""
) -> str | None:
    """Why ``child`` would stop with ``NameError`` (None when it would not, as far as can be
    told: see the module docstring). Python programs only; other languages and repository
    bundles give None.

    Args:
        child: the candidate, which compiles (check its syntax first).
        parent: the program it was made from, which was evaluated.
        problem: the problem (its language, evaluator and ``entry``).
        parent_feedback: the parent's evaluation feedback (its artifacts' text): a name it
            reports as ``name 'X' is not defined`` is not the evaluator's, so a child (a
            repair) that still reads it undefined is refused.
    """
    if problem.language != "python" or _is_bundle(child):
        return None
    try:
        tree = ast.parse(child)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if dynamic_names(tree):
        return None
    tolerated = {
        n for n in _undefined_in(parent) if f"name '{n}' is not defined" not in parent_feedback
    }
    undefined = [(n, line) for n, line in _undefined(child, tree) if n not in tolerated]
    required = _called_names(problem)
    had = _parent_bindings(parent)
    gone = sorted(name for name in required & had if name not in bindings(tree.body))
    problems = []
    if undefined:
        problems.append(_undefined_message(undefined, child, had))
    if gone:
        listed = ", ".join(f"{name}()" for name in gone)
        problems.append(
            f"it no longer defines {listed}, which the evaluator calls; keep "
            f"{'that function' if len(gone) == 1 else 'those functions'} at module level, "
            "as the current program has"
        )
    if not problems:
        return None
    return "the program would stop with NameError: " + "; ".join(problems)


def statement_lines(node: ast.stmt) -> tuple[int, int]:
    """The 0-based lines ``[first, last)`` of a statement, its decorators included."""
    decorators = getattr(node, "decorator_list", None) or []
    return min([node.lineno, *(d.lineno for d in decorators)]) - 1, node.end_lineno or node.lineno


def bindings(statements: Iterable[ast.stmt]) -> set[str]:
    """Names that module-level ``statements`` bind (definitions, assignments, imports, loop
    and ``with`` targets), looking into ``if``/``try``/``with`` bodies at the same level."""
    names: set[str] = set()
    for node in statements:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign | ast.For):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(_stored(targets))
        if isinstance(node, ast.With):
            names.update(_stored(item.optional_vars for item in node.items if item.optional_vars))
        for field in ("body", "orelse", "finalbody"):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names |= bindings(getattr(node, field, None) or [])
        for handler in getattr(node, "handlers", None) or []:
            names |= bindings(handler.body)
    return names


def dynamic_names(tree: ast.AST) -> bool:
    """Whether ``tree`` may make names no static reading sees: ``globals()``, ``exec``, a
    star import, ``__builtins__``, a module's ``__dict__`` or ``sys.modules``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in _DYNAMIC:
            return True
        if isinstance(node, ast.Attribute) and node.attr in ("__dict__", "modules"):
            return True
        if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
            return True
    return False


def _stored(targets: Iterable[ast.expr]) -> set[str]:
    return {
        node.id
        for target in targets
        for node in ast.walk(target)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)
    }


def _undefined_message(undefined: list[tuple[str, int]], child: str, had: frozenset[str]) -> str:
    """What to fix: the names the parent defined and the child dropped first (the usual
    case: a rewrite without them), then those never defined; each at its first line."""
    from evoforge.problems import BlockError, find_blocks

    try:
        regions = [
            (child.count("\n", 0, b.start) + 1, child.count("\n", 0, b.end))
            for b in find_blocks(child)
        ]
    except BlockError:
        regions = []
    first: dict[str, int] = {}
    for name, line in undefined:
        first.setdefault(name, line)

    def listed(names: list[str]) -> str:
        shown = []
        for name in names[:_SHOWN]:
            line = first[name]
            fixed = regions and not any(lo <= line <= hi for lo, hi in regions)
            shown.append(f"{name} (line {line}{', in the fixed code' if fixed else ''})")
        return ", ".join(shown) + (" and others" if len(names) > _SHOWN else "")

    assigned = _assigned_anywhere(child)
    dropped = [name for name in first if name in had and name not in assigned]
    early = [name for name in first if name in assigned]  # read before its assignment
    unknown = [name for name in first if name not in had and name not in assigned]
    parts = []
    if early:
        one = len(early) == 1
        parts.append(
            f"it reads {listed(early)} before any assignment to "
            f"{'it' if one else 'them'} has run (an UnboundLocalError when that line runs); "
            "assign before the first read, or keep the statements in their order"
        )
    if dropped:
        one = len(dropped) == 1
        parts.append(
            f"it reads {listed(dropped)}, which the current program defines and this one no "
            f"longer does; keep {'that definition' if one else 'those definitions'} between "
            "the EVOLVE-BLOCK markers"
        )
    if unknown:
        one = len(unknown) == 1
        parts.append(
            f"it reads {listed(unknown)}, defined nowhere in it; define or import "
            f"{'it' if one else 'them'}, or use a name that exists"
        )
    return "; ".join(parts)


def _assigned_anywhere(source: str) -> set[str]:
    """Names bound anywhere in ``source`` (any scope): an undefined read of one of them is a
    read before its assignment, which the message says apart from a name defined nowhere."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set()
    return {
        node.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load)
    } | {
        node.name
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
    }


def _undefined(source: str, tree: ast.Module) -> list[tuple[str, int]]:
    """``(name, line)`` of each name pyflakes finds undefined where the program runs it."""
    try:
        from pyflakes import checker, messages
    except ImportError:  # a core dependency: only an environment not reinstalled lacks it
        _warn_no_pyflakes()
        return []
    try:
        found = checker.Checker(tree, filename="<candidate>", withDoctest=False).messages
    except Exception:  # a checker that fails on new syntax must not cost the candidate
        return []
    places = _runtime_reads(tree)
    return [
        (m.message_args[0], m.lineno)
        for m in sorted(found, key=lambda m: (m.lineno, m.col))
        if isinstance(m, messages.UndefinedName) and (m.lineno, m.col) in places
    ]


@functools.cache
def _warn_no_pyflakes() -> None:
    logging.getLogger(__name__).warning(
        "pyflakes is not installed, so candidates are not checked for undefined names before "
        "they are evaluated; reinstall evoforge (pip install -e .) to get it"
    )


@functools.lru_cache(maxsize=64)
def _undefined_in(parent: str) -> frozenset[str]:
    """Names the parent reads undefined (provided by its evaluator, or never reached)."""
    try:
        tree = ast.parse(parent)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return frozenset()
    return frozenset(name for name, _ in _undefined(parent, tree))


@functools.lru_cache(maxsize=64)
def _parent_bindings(parent: str) -> frozenset[str]:
    try:
        return frozenset(bindings(ast.parse(parent).body))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return frozenset()


def _runtime_reads(tree: ast.Module) -> set[tuple[int, int]]:
    """``(line, column)`` of every name read outside an annotation."""
    skip: set[int] = set()
    for node in ast.walk(tree):
        notes: Iterable[ast.expr | None] = ()
        if isinstance(node, ast.arg):
            notes = (node.annotation,)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            notes = (node.returns,)
        elif isinstance(node, ast.AnnAssign):
            notes = (node.annotation,)
        for note in notes:
            if note is not None:
                skip.update(id(n) for n in ast.walk(note))
    return {
        (node.lineno, node.col_offset)
        for node in ast.walk(tree)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and id(node) not in skip
    }


def _is_bundle(source: str) -> bool:
    from evoforge.problems import BundleError, split_bundle

    try:
        split_bundle(source)
    except BundleError:
        return False
    return True


def _called_names(problem: Problem) -> set[str]:
    """The names the problem's evaluator calls in the program (see the module docstring)."""
    if problem.evaluator != "openevolve":
        return {problem.entry}
    folder = problem.options.get("openevolve_dir")
    name = problem.options.get("evaluator_file", "evaluator.py")
    if not isinstance(folder, str) or not isinstance(name, str):
        return set()
    return set(_evaluator_reads(str((problem.spec_path.parent / folder / name).resolve())))


@functools.lru_cache(maxsize=16)
def _evaluator_reads(path: str) -> frozenset[str]:
    """Attributes an OpenEvolve ``evaluator.py`` reads from the program's module.

    The module is any variable assigned from ``module_from_spec``, ``import_module``, ... or
    passed to ``exec_module``, or assigned from a function of the file that returns one;
    what the evaluator reads from it is ``module.name`` and ``getattr``/``hasattr(module,
    "name")``. An evaluator that loads the program otherwise (a script run in a subprocess)
    gives no names: nothing is required.
    """
    try:
        tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return frozenset()
    modules: set[str] = set()
    loaders = set(_LOADERS)
    for _ in range(3):  # a loader function, a function calling it, ...
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and _calls(node.value, loaders):
                modules.update(t.id for t in node.targets if isinstance(t, ast.Name))
            elif isinstance(node, ast.Call) and _calls(node, {"exec_module"}) and node.args:
                if isinstance(node.args[0], ast.Name):
                    modules.add(node.args[0].id)
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                for inner in ast.walk(node):
                    if (
                        isinstance(inner, ast.Return)
                        and isinstance(inner.value, ast.Name)
                        and inner.value.id in modules
                    ):
                        loaders.add(node.name)
    reads: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if node.value.id in modules and isinstance(node.ctx, ast.Load):
                reads.add(node.attr)
        elif isinstance(node, ast.Call) and _calls(node, {"getattr", "hasattr"}):
            args = node.args
            if len(args) >= 2 and isinstance(args[0], ast.Name) and args[0].id in modules:
                if isinstance(args[1], ast.Constant) and isinstance(args[1].value, str):
                    reads.add(args[1].value)
    return frozenset(reads)


def _calls(node: ast.expr, names: set[str] | frozenset[str]) -> bool:
    """Whether ``node`` is a call of a function named one of ``names`` (``a.b.name(...)``)."""
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    return name in names
