"""Define a problem in Python: the same problem a folder would hold, written for you.

A run's candidates and scorer live in other processes (sandboxed fork servers, possibly other
machines), which import the problem's spec file; so :func:`define_problem` writes a real problem
folder (``problem.py`` and ``seed.py``) from Python values and loads it like any other. Runs
store that folder's path, so ``resume`` works as long as the folder is kept.

The scoring function travels by its source code, not by reference: the written spec must import
nothing from the script or notebook that defined it (importing a script that starts a run
would start another). What the function uses from its module is carried along:

- modules (``import numpy as np`` at module level) become the same imports;
- constants (numbers, strings, booleans, None, and tuples, lists, dicts and sets of those)
  are written as assignments;
- other functions of the same module are copied too (and what they use, in turn).

Anything else (an open file, a class instance, a closure over local variables) cannot be
rebuilt in another process and is refused with a message naming it.
"""

from __future__ import annotations

import ast
import builtins
import hashlib
import inspect
import os
import textwrap
import types
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from evoforge.base.settings import Settings
from evoforge.problems._blocks import BlockError, find_blocks
from evoforge.problems._declaration import Declaration, ProblemSpecError, declaration_error
from evoforge.problems._loader import SPEC_FILENAME, load_problem
from evoforge.problems._spec import Problem

CACHE_ENV = "EVOFORGE_CACHE"
"""Where defined problems are written when no ``folder`` is given (default: the user's cache
folder, ``$XDG_CACHE_HOME/evoforge`` or ``~/.cache/evoforge``)."""

_SEED_FILE = "seed.py"
_HEADER = "# Written by evoforge.define_problem(); edit the Python code that defined it instead.\n"


def define_problem(
    name: str,
    *,
    seed: str,
    evaluate: Callable[..., Any] | str,
    objectives: Mapping[str, str],
    functions: Iterable[Callable[..., Any]] = (),
    folder: str | os.PathLike[str] | None = None,
    **declarations: Any,
) -> Problem:
    """A problem from Python values, written as a problem folder and loaded.

    Example::

        SEED = '''
        def main():
            # EVOLVE-BLOCK-START
            return sorted([3, 1, 2])
            # EVOLVE-BLOCK-END
        '''

        def evaluate(output):
            return {"score": float(output == [1, 2, 3])}

        problem = evoforge.define_problem(
            "sort3", seed=SEED, evaluate=evaluate, objectives={"score": "maximize"}
        )
        evoforge.run(problem, budget=50)

    Args:
        name: the problem's name (an identifier).
        seed: the seed program's source, with at least one EVOLVE-BLOCK.
        evaluate: ``evaluate(output) -> dict`` scoring what the candidate's entry returned
            (runs outside the candidate's process), as a function or as source text defining
            it.
        objectives: ``{"metric": "maximize" | "minimize"}``; the first is primary.
        functions: more functions the spec needs: the stages' scoring functions
            (``evaluate_<stage>``) and anything ``evaluate`` calls that is not found by itself.
        folder: where to write the problem; default: a folder under the evoforge cache named
            by the problem and a hash of its content (the same definition, the same folder).
        **declarations: any other declaration of a spec file (``descriptors``, ``entry``,
            ``timeout_s``, ``memory_mb``, ``preload``, ``evaluator``, ``options``, ``stages``,
            ``tuning``, ``description``), validated by the same schema; stages and tuning as
            tables or as :class:`~evoforge.problems.Stage` and
            :class:`~evoforge.problems.Tuning`.

    Returns:
        The loaded problem; pass it to :func:`evoforge.run`.

    Raises:
        ProblemSpecError: a declaration is wrong or unknown, ``evaluate`` uses something that
            cannot be rebuilt in another process, or the seed has no EVOLVE-BLOCK.
    """
    where = f"define_problem({name!r})"
    for forbidden in ("seed_file", "seed_source"):
        if forbidden in declarations:
            raise ProblemSpecError(where, forbidden, "give the seed's text as seed=...")
    values = {"name": name, "objectives": dict(objectives), **declarations}
    try:
        Declaration.parse(values)
    except ValidationError as exc:
        raise declaration_error(where, exc) from None
    try:
        find_blocks(seed, origin=f"{where} seed")
    except BlockError as exc:
        raise ProblemSpecError(where, "seed", str(exc)) from None
    spec = _spec_source(where, values, evaluate, list(functions))
    target = Path(folder) if folder is not None else cache_folder(name, spec, seed)
    target.mkdir(parents=True, exist_ok=True)
    write_if_changed(target / SPEC_FILENAME, spec)
    write_if_changed(target / _SEED_FILE, seed)
    return load_problem(target)


def _spec_source(
    where: str,
    values: Mapping[str, Any],
    evaluate: Callable[..., Any] | str,
    functions: list[Callable[..., Any]],
) -> str:
    """The text of ``problem.py``: docstring, imports, declarations, constants, functions."""
    description = values.get("description")
    doc = f'"""{_docstring(description)}"""\n\n' if description else ""
    declared = "".join(f"{k} = {_plain(v)!r}\n" for k, v in values.items() if k != "description")
    declared += f"seed_file = {_SEED_FILE!r}\n"
    if isinstance(evaluate, str):
        code = textwrap.dedent(evaluate)
        _check_defines(where, code, "evaluate")
        return f"{doc}{_HEADER}\n{declared}\n\n{code.rstrip()}\n"
    if not callable(evaluate):
        raise ProblemSpecError(where, "evaluate", "expected a function or its source text")
    collected = _Collected(where)
    for function in (evaluate, *functions):
        collected.add(function)
    alias = "" if evaluate.__name__ == "evaluate" else f"\n\nevaluate = {evaluate.__name__}\n"
    imports = "".join(collected.imports) + ("\n" if collected.imports else "")
    constants = "".join(collected.constants)
    body = "\n\n".join(collected.sources)
    return f"{doc}{_HEADER}\n{imports}{declared}{constants}\n\n{body}{alias}"


class _Collected:
    """Functions copied by source, with the module-level names they use."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.imports: list[str] = []
        self.constants: list[str] = []
        self.sources: list[str] = []
        self.names: dict[str, Any] = {}

    def add(self, function: Callable[..., Any]) -> None:
        if not isinstance(function, types.FunctionType):
            raise ProblemSpecError(
                self.where,
                "evaluate",
                f"{function!r} is not a plain function; pass a function defined with `def`",
            )
        name = function.__name__
        if self.names.get(name) is function:
            return
        if name == "<lambda>":
            raise ProblemSpecError(
                self.where, "evaluate", "a lambda cannot be copied by source; use `def`"
            )
        if function.__code__.co_freevars:
            enclosing = ", ".join(function.__code__.co_freevars)
            raise ProblemSpecError(
                self.where,
                name,
                f"uses variables of an enclosing function ({enclosing}); define it at module "
                "level, or pass what it needs as constants",
            )
        try:
            source = textwrap.dedent(inspect.getsource(function))
        except (OSError, TypeError) as exc:
            raise ProblemSpecError(
                self.where,
                name,
                f"its source cannot be read ({exc}); pass evaluate as source text instead",
            ) from None
        self.names[name] = function
        self.sources.append(source.rstrip() + "\n")
        for global_name in sorted(_global_names(source, name)):
            self._carry(name, global_name, function.__globals__)

    def _carry(self, user: str, name: str, scope: Mapping[str, Any]) -> None:
        if name in self.names or name not in scope:
            return  # a builtin, a parameter, or defined inside the function
        value = scope[name]
        self.names[name] = value
        if isinstance(value, types.ModuleType):
            module = value.__name__
            self.imports.append(
                f"import {module}\n" if module == name else f"import {module} as {name}\n"
            )
        elif isinstance(value, types.FunctionType):
            self.names.pop(name)
            self.add(value)
        elif _literal(value):
            self.constants.append(f"{name} = {value!r}\n")
        else:
            raise ProblemSpecError(
                self.where,
                user,
                f"uses {name!r}, a {type(value).__name__} that cannot be rebuilt in the "
                "scorer's process; import it inside the function, or pass it in `functions`",
            )


def _global_names(source: str, function_name: str) -> set[str]:
    """Names a function's body reads that it does not bind itself (its free globals)."""
    tree = ast.parse(source)
    loaded: set[str] = set()
    bound: set[str] = {function_name}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (loaded if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            if node.name != function_name:
                bound.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
    return loaded - bound - set(dir(builtins))


def _plain(value: Any) -> Any:
    """``value`` as plain data a spec file can hold: a :class:`~evoforge.problems.Stage` or
    :class:`~evoforge.problems.Tuning` given in Python becomes the table that declares it."""
    if isinstance(value, Settings):
        return value.model_dump(mode="json")
    if isinstance(value, list | tuple):
        return type(value)(_plain(v) for v in value)
    return value


def _literal(value: Any, depth: int = 0) -> bool:
    """Whether ``repr(value)`` rebuilds it: plain data, nested at most a few levels."""
    if depth > 8:
        return False
    if value is None or isinstance(value, bool | int | float | complex | str | bytes):
        return True
    if isinstance(value, list | tuple | set | frozenset):
        return all(_literal(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return all(_literal(k, depth + 1) and _literal(v, depth + 1) for k, v in value.items())
    return False


def _check_defines(where: str, code: str, name: str) -> None:
    try:
        tree = ast.parse(code)
    except SyntaxError as exc:
        raise ProblemSpecError(where, "evaluate", f"the source does not parse: {exc}") from None
    if not any(isinstance(n, ast.FunctionDef) and n.name == name for n in tree.body):
        raise ProblemSpecError(where, "evaluate", f"the source defines no function {name}()")


def _docstring(text: str) -> str:
    return str(text).replace("\\", "\\\\").replace('"""', '\\"\\"\\"')


def cache_folder(name: str, spec: str, seed: str) -> Path:
    """Where a generated problem goes when no folder is given: under the evoforge cache
    (:data:`CACHE_ENV`), named by the problem and a hash of its text, so the same definition
    gets the same folder."""
    root = os.environ.get(CACHE_ENV) or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "evoforge"
    )
    digest = hashlib.sha256(f"{spec}\0{seed}".encode()).hexdigest()[:12]
    return Path(root) / "problems" / f"{name}-{digest}"


def write_if_changed(path: Path, text: str) -> None:
    """Leave an identical file alone (its mtime too), so a redefinition costs nothing."""
    if path.is_file() and path.read_text() == text:
        return
    path.write_text(text)
