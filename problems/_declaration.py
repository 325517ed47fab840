"""The schema of a problem spec's declarations: one pydantic model, shared by spec files and
:func:`~evoforge.problems.define_problem`.

A spec file's module-level names are its declarations (``name``, ``objectives``, …); functions
(``evaluate`` and the stages' scoring functions) are checked by the loader, which needs the
module. Field errors become :class:`ProblemSpecError` with the file, the field as a user writes
it (``descriptors['size']``, ``stages[0].timeout_s``) and the fix.

The tables of a spec (``stages``, ``held_out``, ``tuning``) are validated into
:class:`~evoforge.problems.Stage` and :class:`~evoforge.problems.Tuning` themselves, what the
loaded :class:`~evoforge.problems.Problem` holds, with the problem's defaults filled in
(:func:`~evoforge.problems._stages.stage_defaults`).
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from evoforge.base.settings import Settings, describe_item
from evoforge.problems._stages import Stage, Threshold, Tuning, stage_defaults


class ProblemSpecError(ValueError):
    """A problem spec is malformed. The message names the file, the field and the fix."""

    def __init__(self, path: Path | str, field: str, message: str) -> None:
        self.path, self.field = Path(path), field
        super().__init__(f"{path}: {field}: {message}")


Lax = Field(strict=False)  # a list where a tuple is declared (specs are often written so)
Number = Annotated[float, Field(allow_inf_nan=False)]


def _low_below_high(value: tuple[float, float, int]) -> tuple[float, float, int]:
    low, high, _ = value
    if not (math.isfinite(low) and math.isfinite(high) and low < high):
        raise ValueError(f"needs finite numbers low < high, found low={low!r}, high={high!r}")
    return value


DescriptorRange = Annotated[
    tuple[Number, Number, Annotated[int, Field(ge=1)]], Lax, AfterValidator(_low_below_high)
]
"""``(low, high, bins)``: a fixed range cut into equal bins."""


class Declaration(Settings):
    """Everything a problem declares besides its functions (see :func:`load_problem`)."""

    name: str
    objectives: Annotated[dict[str, Literal["maximize", "minimize"]], Field(min_length=1)]
    descriptors: dict[str, DescriptorRange] = Field(default_factory=dict)
    evaluator: Annotated[str, Field(min_length=1)] = "python"
    entry: str = "main"
    timeout_s: Annotated[float, Field(gt=0)] = 30.0
    memory_mb: Annotated[int, Field(gt=0)] = 2048
    preload: Annotated[tuple[str, ...], Lax] = ("numpy",)
    description: str = ""
    options: dict[str, Any] = Field(default_factory=dict)
    stages: Annotated[tuple[Stage, ...], Lax, Field(min_length=1)] | None = None
    seed_file: str = "seed.py"
    seed_source: str | None = None
    baselines: dict[str, dict[str, Number]] = Field(default_factory=dict)
    tuning: Tuning | None = None
    held_out: Annotated[tuple[Stage, ...], Lax] = ()
    requires: dict[str, str] = Field(default_factory=dict)
    run_defaults: dict[str, Any] = Field(default_factory=dict)
    language: Annotated[str, Field(min_length=1)] = "python"

    @field_validator("name", "entry")
    @classmethod
    def _identifier(cls, value: str) -> str:
        if not value.isidentifier():
            raise ValueError("not a valid identifier; use letters, digits and underscores")
        return value

    @field_validator("stages", "held_out", mode="before")
    @classmethod
    def _stage_defaults(cls, tables: Any, info: ValidationInfo) -> Any:
        # timeout_s and memory_mb are declared (so validated) before the stages; one that is
        # invalid is missing here and reported first, as it should be
        return stage_defaults(
            tables,
            timeout_s=info.data.get("timeout_s"),
            memory_mb=info.data.get("memory_mb"),
            held_out=info.field_name == "held_out",
        )

    @model_validator(mode="after")
    def _baselines_name_objectives(self) -> Declaration:
        check_baselines(self.baselines, self.objectives, [s.name for s in self.held_out])
        return self

    @model_validator(mode="after")
    def _tuning_names_a_stage(self) -> Declaration:
        tuning = self.tuning
        if tuning is None:
            return self
        names = [s.name for s in self.stages or ()]
        if tuning.stage is not None and tuning.stage not in names:
            raise ValueError(
                f"tuning stage {tuning.stage!r} is not one of the stages "
                f"({', '.join(names) or 'none'})"
            )
        if (
            tuning.metric is not None
            and tuning.stage is None
            and tuning.metric not in self.objectives
        ):
            raise ValueError(
                f"tuning metric {tuning.metric!r} is not an objective; name an objective, or "
                "the stage whose metric it is"
            )
        if (
            tuning.metric is not None
            and tuning.metric not in self.objectives
            and not tuning.direction
        ):
            raise ValueError(f"tuning metric {tuning.metric!r} needs a direction")
        return self

    @field_validator("objectives", mode="before")
    @classmethod
    def _any_case(cls, objectives: Any) -> Any:
        if isinstance(objectives, dict):
            return {k: v.lower() if isinstance(v, str) else v for k, v in objectives.items()}
        return objectives


DECLARATIONS: tuple[str, ...] = tuple(Declaration.model_fields)


def check_baselines(
    baselines: Mapping[str, Mapping[str, float]],
    objectives: Iterable[str],
    held_out: Iterable[str] = (),
) -> None:
    """Each baseline names objectives of the problem (or ``<held-out stage>.<metric>``, a
    reference for a held-out stage's result), with a nonzero value for each.

    Raises:
        ValueError: one that does not, named.
    """
    known = set(objectives)
    stages = tuple(f"{stage}." for stage in held_out)
    for label, values in baselines.items():
        if not values:
            raise ValueError(f"baseline {label!r} gives no value; map objectives to numbers")
        if unknown := sorted(n for n in set(values) - known if not n.startswith(stages)):
            raise ValueError(
                f"baseline {label!r} names {', '.join(unknown)}, which are not objectives "
                f"(objectives: {', '.join(sorted(known))})"
            )
        if zero := sorted(name for name, value in values.items() if value == 0):
            raise ValueError(f"baseline {label!r} is 0 for {', '.join(zero)}: no ratio to it")


"""The names a spec declares; any other module-level name is the spec's own."""

_FIXES = {
    "name": 'add name = "my_problem" (an identifier)',
    "objectives": 'declare e.g. objectives = {"score": "maximize"} ("maximize" or "minimize"; '
    "the first is primary)",
    "descriptors": 'declare each as "name": (low, high, bins), e.g. {"size": (0.0, 1.0, 10)}',
    "evaluator": 'name an evaluator plugin, e.g. evaluator = "python" (see `evoforge plugins`)',
    "entry": 'name the function the candidate defines, e.g. entry = "main"',
    "timeout_s": "use a number of seconds, e.g. timeout_s = 30",
    "memory_mb": "use whole megabytes, e.g. memory_mb = 2048",
    "preload": 'use a list of module names, e.g. preload = ["numpy"]',
    "description": "use a string",
    "options": 'use a dict, e.g. options = {"sandbox_network": "server"}',
    "stages": 'use a list of dicts, e.g. [{"name": "quick", "args": [10], "threshold": '
    '{"metric": "accuracy", "min": 0.9}}, {"name": "full"}]; a stage has '
    + ", ".join(Stage.model_fields),
    "seed_file": 'name the seed program file, e.g. seed_file = "seed.py"',
    "seed_source": "give the seed program's text",
    "baselines": 'map each baseline to objective values, e.g. {"stock -Oz": {"text_bytes": '
    "97669}}, or define `def baselines() -> dict` that measures them once per session",
    "tuning": 'use e.g. tuning = {"trials": 20} (optionally "stage", "metric", "direction")',
    "held_out": 'use a list of stages, e.g. [{"name": "held_out", "kwargs": {"corpus": '
    '"held_out"}}], each scored by evaluate_<name>(output)',
    "requires": 'map each command the problem needs to how to get it, e.g. {"valgrind": '
    '"apt-get install -y valgrind"}',
    "language": 'name the seed\'s language, e.g. language = "python" (others skip the Python '
    "syntax check)",
    "run_defaults": 'use a dict of run settings, e.g. {"budget": 100, "islands": {"count": 2}}',
}


def declaration_error(path: Path | str, error: ValidationError) -> ProblemSpecError:
    """The first bad declaration as a :class:`ProblemSpecError` naming the field as written
    (``descriptors['d']``, ``stages[0].threshold.min``), what is wrong and the fix."""
    item = error.errors(include_url=False)[0]
    loc = list(item.get("loc", ()))
    if item.get("type") == "extra_forbidden":
        return _unknown_key(path, loc)
    field = _field_name(loc)
    message = describe_item(item, field=None)
    fix = _FIXES.get(str(loc[0]) if loc else "", "")
    return ProblemSpecError(path, field, f"{message}; {fix}" if fix else message)


def _unknown_key(path: Path | str, loc: list[Any]) -> ProblemSpecError:
    key, container = str(loc[-1]), loc[:-1]
    known: tuple[str, ...] = DECLARATIONS
    if container:
        # the table the key is in: a stage (of stages or held_out), its threshold, or tuning
        tables: dict[str, type[Settings]] = {"tuning": Tuning, "threshold": Threshold}
        named = [part for part in container if isinstance(part, str)]
        known = tuple(tables.get(named[-1] if named else "", Stage).model_fields)
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
    hint = f"did you mean {close[0]!r}? " if close else ""
    if not container:
        return ProblemSpecError(
            path, key, f"is not a declaration; {hint}declarations: {', '.join(known)}"
        )
    return ProblemSpecError(
        path, _field_name(container), f"unknown key {key!r}; {hint}known: {', '.join(known)}"
    )


def _field_name(loc: list[Any]) -> str:
    """``['stages', 0, 'name']`` → ``stages[0].name``; dict keys as ``descriptors['d']``."""
    if not loc:
        return "spec"
    text = str(loc[0])
    keyed = loc[0] in ("objectives", "descriptors", "options")
    for index, part in enumerate(loc[1:]):
        if isinstance(part, int) or (keyed and index == 0):
            text += f"[{part!r}]"
            if keyed:
                break  # an element of the declared tuple: the entry is what to fix
        else:
            text += f".{part}"
    return text
