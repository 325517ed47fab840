"""Load and validate a problem spec from a folder or a single file.

A problem is a Python file (``problem.py`` in a folder, or any ``.py`` file) with module-level
declarations and an ``evaluate`` function::

    name = "circle_packing"                 # required
    objectives = {"sum_radii": "maximize"}  # required; the first one is primary
    descriptors = {"radius_std": (0.0, 0.1, 10)}   # name: (low, high, bins)
    evaluator = "python"                    # evaluator plugin name
    entry = "main"                          # function the candidate must define
    timeout_s = 30                          # wall-clock limit per evaluation
    memory_mb = 2048                        # address-space limit per evaluation
    preload = ["numpy"]                     # imported once, before candidates are forked
    seed_file = "seed.py"                   # or seed_source = "...": the starting program
    baselines = {"published": {"sum_radii": 2.63}}  # reference values shown as ratios
    run_defaults = {"budget": 500}          # run settings (a config file and flags win)
    options = {}                            # evaluator settings, e.g. for "python":
        # sandbox_user ("nobody"; None keeps the current user, root only with
        # sandbox_allow_root=True), sandbox_network ("server": no network for candidates;
        # "candidate": a namespace each; "host"), sandbox_env (names passed through),
        # sandbox_prefork (True), score_timeout_s (60)

    def evaluate(output) -> dict:
        '''Score what the candidate's entry returned (runs outside the candidate process).
        Return metrics including every objective and descriptor; add "correct": False
        (and "error": "why") for an invalid answer.'''

The seed program must contain at least one EVOLVE-BLOCK.

Names starting with ``_`` and UPPER_CASE names are the spec's own (constants, helpers); so is
any other name that is not a declaration, but a lowercase name that looks like a misspelled
declaration (``objective``, ``timeout``) is an error, so a typo never passes silently. The
declarations are validated by one schema (:class:`~evoforge.problems.Declaration`), shared with
:func:`~evoforge.problems.define_problem`.

Cascade (optional): cheap stages first, so that a candidate that fails early costs nothing
more. Each stage calls ``entry(*args, **kwargs)`` under its own limits and scores the output
with its own function; the candidate goes on only if that function does not report
``"correct": False`` and the threshold holds. The last stage is the problem's ``evaluate``,
whose metrics must hold every objective and descriptor::

    stages = [
        {"name": "quick", "args": [10], "timeout_s": 1,        # evaluate_quick(output)
         "threshold": {"metric": "accuracy", "min": 0.9}},
        {"name": "full", "args": [1000]},                       # evaluate(output)
    ]

Stage keys: ``name`` (required, an identifier), ``args`` (list), ``kwargs`` (dict),
``timeout_s`` and ``memory_mb`` (default: the problem's), ``evaluate`` (default
``evaluate_<name>``; the last stage's is always ``evaluate``), ``threshold`` (``{"metric": ...,
"min": ..., "max": ...}``, inclusive bounds, at least one of them). A threshold's metric can only
be checked when the stage runs: a stage whose function does not return it fails the candidate
with an artifact that says so.
"""

from __future__ import annotations

import difflib
import importlib.util
import itertools
import sys
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from evoforge.problems._blocks import BlockError, find_blocks
from evoforge.problems._declaration import (
    DeclarationModel,
    ProblemSpecError,
    declaration_error,
    declaration_model,
)
from evoforge.problems._spec import Problem

if TYPE_CHECKING:
    from evoforge.problems._stages import Stage

SPEC_FILENAME = "problem.py"
_module_counter = itertools.count()


def spec_file(path: Path) -> Path:
    """The spec file for a problem folder or file path; raises if there is none."""
    if path.is_dir():
        candidate = path / SPEC_FILENAME
        if not candidate.is_file():
            raise ProblemSpecError(
                path,
                SPEC_FILENAME,
                f"folder has no {SPEC_FILENAME}; create "
                "one declaring name, objectives and evaluate()",
            )
        return candidate
    if path.suffix != ".py" or not path.is_file():
        raise ProblemSpecError(path, "path", "expected a problem folder or a .py spec file")
    return path


def import_spec(path: Path) -> ModuleType:
    """Import a spec file under a private module name; used by the loader and by workers."""
    module_name = f"_evoforge_problem_{next(_module_counter)}_{path.stem}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ProblemSpecError(path, "import", "cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[module_name]
        raise ProblemSpecError(path, "import", f"raised {type(exc).__name__}: {exc}") from exc
    return module


def load_problem(path: Path | str) -> Problem:
    """Load the problem at ``path`` (a folder with ``problem.py``, or a ``.py`` file).

    Example::

        problem = load_problem("my_problems/packing")
        problem.objectives, problem.seed_source

    Raises:
        ProblemSpecError: the spec is missing a field, has a wrong type or value, misspells a
            declaration, or its seed has no EVOLVE-BLOCK.
    """
    path = spec_file(Path(path).expanduser().resolve())
    module = import_spec(path)
    names = {k: v for k, v in vars(module).items() if not k.startswith("_")}
    model = declaration_model(Problem)  # made once from the fields of Problem that are declared
    _check_misspellings(path, names, tuple(model.model_fields))
    declared = {k: names[k] for k in model.model_fields if k in names}
    measures_baselines = callable(declared.get("baselines"))
    if measures_baselines:  # `def baselines()`: measured per session, not declared
        del declared["baselines"]
    if "description" not in declared and module.__doc__:
        declared["description"] = module.__doc__.strip()
    try:
        decl = model.parse(declared)
    except ValidationError as exc:
        raise declaration_error(path, exc, model) from None
    supplied = _supplied_scorers(decl, names)
    if not callable(names.get("evaluate")) and "evaluate" not in supplied:
        raise ProblemSpecError(
            path,
            "evaluate",
            "missing; define `def evaluate(output) -> dict` "
            "that scores what the candidate's entry function returned",
        )
    seed_source = _seed(path, decl)
    _check_stages(path, decl.stages or (), names, supplied)
    _check_stages(path, decl.held_out, names, supplied, held_out=True)
    return Problem(
        **decl.problem_fields(),
        spec_path=path,
        seed_source=seed_source,
        measures_baselines=measures_baselines,
        prepares=callable(names.get("setup")),
        checks_ready=callable(names.get("ready")),
    )


def _check_misspellings(
    path: Path, names: Mapping[str, Any], declarations: tuple[str, ...]
) -> None:
    """A lowercase name close to a declaration's (``objective``, ``timeout``) is a typo."""
    for name in names:
        if name in declarations or not name.islower() or callable(names[name]):
            continue
        if any(name.startswith(f"{declared}_") for declared in declarations):
            continue  # `baselines_note`, `objectives_list`: a deliberate name of the spec's own
        close = difflib.get_close_matches(name, declarations, n=1, cutoff=0.75)
        if close:
            raise ProblemSpecError(
                path,
                name,
                f"is not a declaration; did you mean {close[0]!r}? (rename your own names "
                "with a leading underscore or in UPPER_CASE)",
            )


def _supplied_scorers(decl: DeclarationModel, names: Mapping[str, Any]) -> frozenset[str]:
    """The scoring functions the spec's ``evaluator`` supplies where the spec defines none
    (its class's ``default_scorers``: ``native`` scores its measure's metrics as measured).

    Asked only when a function is missing, so a spec that defines its functions loads
    without loading the plugins; through the plugin manager (a layer below this one), as the
    evaluator classes live in a layer above."""
    stages = (*(decl.stages or ()), *decl.held_out)
    if all(callable(names.get(n)) for n in {"evaluate", *(s.evaluate for s in stages)}):
        return frozenset()
    from evoforge.plugins import collect, load_plugins

    load_plugins()
    found = collect(
        "register_evaluators",
        "evaluator scoring defaults",
        lambda _plugin, cls: (str(getattr(cls, "name", "")), cls),
    )
    cls = found.get(decl.evaluator, (None, ""))[0]
    return frozenset(getattr(cls, "default_scorers", None) or ())


def _check_stages(
    path: Path,
    declared: tuple[Stage, ...],
    names: Mapping[str, Any],
    supplied: frozenset[str] = frozenset(),
    *,
    held_out: bool = False,
) -> None:
    """Check the declared stages (or held-out stages) against the spec's functions: names
    unique, the last stage of the cascade scored by ``evaluate``, and every stage's scoring
    function defined by the spec or ``supplied`` by its evaluator. (The declaration has
    filled in each stage's defaults.)"""
    for index, stage in enumerate(declared):
        where = f"{'held_out' if held_out else 'stages'}[{index}]"
        last = index == len(declared) - 1 and not held_out
        if stage.name in {s.name for s in declared[:index]}:
            raise ProblemSpecError(
                path,
                f"{where}.name",
                f"{stage.name!r} names two stages; stage names must be unique",
            )
        if last and stage.evaluate != "evaluate":
            raise ProblemSpecError(
                path,
                f"{where}.evaluate",
                f"found {stage.evaluate!r}; the last stage is scored by the problem's evaluate() "
                "(its metrics hold the objectives): remove the key",
            )
        if not callable(names.get(stage.evaluate)) and stage.evaluate not in supplied:
            raise ProblemSpecError(
                path,
                f"{where}.evaluate",
                f"the spec defines no function {stage.evaluate!r}; define `def "
                f"{stage.evaluate}(output) -> dict` that scores this stage's output, or name "
                'another with "evaluate": "my_function"',
            )


def _seed(path: Path, decl: DeclarationModel) -> str:
    if decl.seed_source is not None:
        source, origin = decl.seed_source, f"{path} (seed_source)"
    else:
        seed_path = path.parent / decl.seed_file
        if not seed_path.is_file():
            raise ProblemSpecError(
                path,
                "seed_file",
                f"{seed_path} does not exist; add the seed "
                'program there or set seed_file = "your_seed.py"',
            )
        source, origin = seed_path.read_text(), str(seed_path)
    try:
        find_blocks(source, origin=origin)
    except BlockError as exc:
        raise ProblemSpecError(path, "seed", str(exc)) from None
    return source
