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
    options = {}                            # evaluator settings, e.g. for "python":
        # sandbox_user ("nobody"; None keeps the current user), sandbox_network ("server":
        # no network for candidates; "candidate": a namespace each; "host"), sandbox_prefork
        # (True), score_timeout_s (60)

    def evaluate(output) -> dict:
        '''Score what the candidate's entry returned (runs outside the candidate process).
        Return metrics including every objective and descriptor; add "correct": False
        (and "error": "why") for an invalid answer.'''

The seed program must contain at least one EVOLVE-BLOCK.

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

import importlib.util
import itertools
import json
import math
import sys
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

from evoforge.problems._blocks import BlockError, find_blocks
from evoforge.problems._spec import Descriptor, Direction, Objective, Problem, Stage, Threshold

SPEC_FILENAME = "problem.py"
_DEFAULTS = {"evaluator": "python", "entry": "main", "timeout_s": 30.0, "memory_mb": 2048}
_STAGE_KEYS = ("name", "args", "kwargs", "timeout_s", "memory_mb", "evaluate", "threshold")
_THRESHOLD_KEYS = ("metric", "min", "max")
_module_counter = itertools.count()


class ProblemSpecError(ValueError):
    """A problem spec is malformed. The message names the file, the field and the fix."""

    def __init__(self, path: Path | str, field: str, message: str) -> None:
        self.path, self.field = Path(path), field
        super().__init__(f"{path}: {field}: {message}")


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

    Raises:
        ProblemSpecError: the spec is missing a field, has a wrong type or value, or its seed
            has no EVOLVE-BLOCK.
    """
    path = spec_file(Path(path).expanduser().resolve())
    module = import_spec(path)
    fields = {k: v for k, v in vars(module).items() if not k.startswith("_")}

    def need(field: str, kind: type | tuple[type, ...], fix: str) -> Any:
        if field not in fields:
            raise ProblemSpecError(path, field, f"missing; {fix}")
        if not isinstance(fields[field], kind):
            raise ProblemSpecError(
                path,
                field,
                f"expected {_kind_name(kind)}, found {type(fields[field]).__name__}; {fix}",
            )
        return fields[field]

    def optional(field: str, kind: type | tuple[type, ...], fix: str) -> Any:
        return need(field, kind, fix) if field in fields else _DEFAULTS.get(field)

    name = need("name", str, 'add name = "my_problem"')
    if not name.isidentifier():
        raise ProblemSpecError(
            path, "name", f"{name!r} is not a valid identifier; use letters, digits and underscores"
        )
    if not callable(fields.get("evaluate")):
        raise ProblemSpecError(
            path,
            "evaluate",
            "missing; define `def evaluate(output) -> dict` "
            "that scores what the candidate's entry function returned",
        )
    objectives = _objectives(
        path, need("objectives", Mapping, 'add objectives = {"score": "maximize"}')
    )
    descriptors = _descriptors(
        path, optional("descriptors", Mapping, 'use descriptors = {"size": (0.0, 1.0, 10)}') or {}
    )
    timeout_s = optional("timeout_s", (int, float), "use a number of seconds, e.g. timeout_s = 30")
    memory_mb = optional("memory_mb", int, "use whole megabytes, e.g. memory_mb = 2048")
    if not (timeout_s > 0 and memory_mb > 0):
        raise ProblemSpecError(path, "timeout_s/memory_mb", "must be positive")
    preload = optional("preload", (list, tuple), 'use a list of module names, e.g. ["numpy"]')
    entry = optional("entry", str, 'name the function the candidate defines, e.g. entry = "main"')
    stages = optional(
        "stages", (list, tuple), 'use a list of dicts, e.g. [{"name": "quick", "args": [10]}, ...]'
    )
    return Problem(
        name=name,
        spec_path=path,
        seed_source=_seed(path, fields),
        objectives=objectives,
        descriptors=descriptors,
        evaluator=optional("evaluator", str, 'name an evaluator plugin, e.g. "python"'),
        entry=entry,
        timeout_s=float(timeout_s),
        memory_mb=memory_mb,
        preload=tuple(preload) if preload is not None else ("numpy",),
        description=fields.get("description") or (module.__doc__ or "").strip(),
        options=optional("options", Mapping, "use a dict") or {},
        stages=_stages(path, stages, fields, float(timeout_s), memory_mb)
        if stages is not None
        else (),
    )


def _objectives(path: Path, declared: Mapping) -> tuple[Objective, ...]:
    if not declared:
        raise ProblemSpecError(
            path, "objectives", 'is empty; declare at least one, e.g. {"score": "maximize"}'
        )
    result = []
    for name, direction in declared.items():
        try:
            result.append(Objective(str(name), Direction(str(direction).lower())))
        except ValueError:
            raise ProblemSpecError(
                path,
                "objectives",
                f'{name!r} has direction {direction!r}; use "maximize" or "minimize"',
            ) from None
    return tuple(result)


def _descriptors(path: Path, declared: Mapping) -> tuple[Descriptor, ...]:
    result = []
    for name, value in declared.items():
        fix = f'declare it as "{name}": (low, high, bins), e.g. (0.0, 1.0, 10)'
        if not (isinstance(value, (tuple, list)) and len(value) == 3):
            raise ProblemSpecError(path, f"descriptors[{name!r}]", f"found {value!r}; {fix}")
        low, high, bins = value
        field = f"descriptors[{name!r}]"
        if not (isinstance(bins, int) and bins >= 1):
            raise ProblemSpecError(path, field, f"bins must be an int >= 1; {fix}")
        numbers = all(isinstance(v, (int, float)) and math.isfinite(v) for v in (low, high))
        if not (numbers and low < high):
            raise ProblemSpecError(path, field, f"needs finite numbers low < high; {fix}")
        result.append(Descriptor(str(name), float(low), float(high), bins))
    return tuple(result)


def _stages(
    path: Path, declared: list | tuple, fields: dict[str, Any], timeout_s: float, memory_mb: int
) -> tuple[Stage, ...]:
    example = '[{"name": "quick", "args": [10], "threshold": {...}}, {"name": "full"}]'
    if not declared:
        raise ProblemSpecError(
            path, "stages", f"is empty; leave it out for one stage, or declare e.g. {example}"
        )
    result: list[Stage] = []
    for index, entry in enumerate(declared):
        last = index == len(declared) - 1
        where = f"stages[{index}]"
        if not isinstance(entry, Mapping):
            raise ProblemSpecError(
                path, where, f"expected a dict, found {type(entry).__name__}; e.g. {example}"
            )
        if unknown := sorted(set(map(str, entry)) - set(_STAGE_KEYS)):
            raise ProblemSpecError(
                path, where, f"unknown keys {unknown}; a stage has {', '.join(_STAGE_KEYS)}"
            )
        name = entry.get("name")
        if not (isinstance(name, str) and name.isidentifier()):
            raise ProblemSpecError(
                path,
                f"{where}.name",
                f'found {name!r}; give each stage a name that is an identifier, e.g. "quick"',
            )
        if name in {stage.name for stage in result}:
            raise ProblemSpecError(
                path, f"{where}.name", f"{name!r} names two stages; stage names must be unique"
            )
        evaluate = entry.get("evaluate", "evaluate" if last else f"evaluate_{name}")
        if last and evaluate != "evaluate":
            raise ProblemSpecError(
                path,
                f"{where}.evaluate",
                f"found {evaluate!r}; the last stage is scored by the problem's evaluate() "
                "(its metrics hold the objectives): remove the key",
            )
        if not (isinstance(evaluate, str) and callable(fields.get(evaluate))):
            raise ProblemSpecError(
                path,
                f"{where}.evaluate",
                f"the spec defines no function {evaluate!r}; define `def {evaluate}(output) -> "
                "dict` that scores this stage's output, or name another with "
                '"evaluate": "my_function"',
            )
        args, kwargs = entry.get("args", ()), entry.get("kwargs", {})
        if not isinstance(args, list | tuple):
            raise ProblemSpecError(
                path, f"{where}.args", f"found {args!r}; use a list of entry() arguments"
            )
        if not (isinstance(kwargs, Mapping) and all(isinstance(k, str) for k in kwargs)):
            raise ProblemSpecError(
                path, f"{where}.kwargs", f"found {kwargs!r}; use a dict with string keys"
            )
        try:
            json.dumps([args, dict(kwargs)])
        except (TypeError, ValueError) as exc:
            raise ProblemSpecError(
                path,
                f"{where}.args/kwargs",
                f"cannot be sent to the candidate as JSON ({exc}); use numbers, strings, "
                "lists and dicts",
            ) from None
        stage_timeout = entry.get("timeout_s", timeout_s)
        if not (_finite(stage_timeout) and stage_timeout > 0):
            raise ProblemSpecError(
                path, f"{where}.timeout_s", f"found {stage_timeout!r}; use a positive number"
            )
        stage_memory = entry.get("memory_mb", memory_mb)
        if isinstance(stage_memory, bool) or not (
            isinstance(stage_memory, int) and stage_memory > 0
        ):
            raise ProblemSpecError(
                path, f"{where}.memory_mb", f"found {stage_memory!r}; use positive whole megabytes"
            )
        result.append(
            Stage(
                name=name,
                timeout_s=float(stage_timeout),
                threshold=_threshold(path, f"{where}.threshold", entry.get("threshold")),
                evaluate=evaluate,
                args=tuple(args),
                kwargs=dict(kwargs),
                memory_mb=stage_memory,
            )
        )
    return tuple(result)


def _threshold(path: Path, where: str, declared: Any) -> Threshold | None:
    if declared is None:
        return None
    fix = 'use {"metric": "accuracy", "min": 0.9} (and/or "max")'
    if not isinstance(declared, Mapping):
        raise ProblemSpecError(path, where, f"found {declared!r}; {fix}")
    if unknown := sorted(set(map(str, declared)) - set(_THRESHOLD_KEYS)):
        raise ProblemSpecError(path, where, f"unknown keys {unknown}; {fix}")
    metric = declared.get("metric")
    if not (isinstance(metric, str) and metric):
        raise ProblemSpecError(path, f"{where}.metric", f"found {metric!r}; {fix}")
    bounds = {key: declared.get(key) for key in ("min", "max")}
    for key, value in bounds.items():
        if value is not None and not _finite(value):
            raise ProblemSpecError(path, f"{where}.{key}", f"found {value!r}; use a finite number")
    low, high = bounds["min"], bounds["max"]
    if low is None and high is None:
        raise ProblemSpecError(path, where, f"sets neither min nor max; {fix}")
    if low is not None and high is not None and low > high:
        raise ProblemSpecError(path, where, f"min {low!r} > max {high!r}; no value could pass")
    return Threshold(
        metric,
        None if low is None else float(low),
        None if high is None else float(high),
    )


def _finite(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, int | float) and math.isfinite(value)


def _seed(path: Path, fields: dict[str, Any]) -> str:
    if "seed_source" in fields:
        source, origin = fields["seed_source"], f"{path} (seed_source)"
        if not isinstance(source, str):
            raise ProblemSpecError(path, "seed_source", "must be the seed program's text")
    else:
        seed_path = path.parent / fields.get("seed_file", "seed.py")
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


def _kind_name(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(k.__name__ for k in kinds)
