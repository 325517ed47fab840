"""The schema of a problem spec's declarations: one pydantic model, made from the problem model
and shared by spec files and :func:`~evoforge.problems.define_problem`.

A spec file's module-level names are its declarations (``name``, ``objectives``, …); functions
(``evaluate`` and the stages' scoring functions) are checked by the loader, which needs the
module. Each declaration is a field of :class:`~evoforge.problems.Problem` that says how a spec
writes it (:mod:`evoforge.problems._declared`); :func:`declaration_model` makes the schema from
those fields, with the two ways to give the seed (``seed_file``, ``seed_source``), which the
loader reads into the problem's ``seed_source``, and the rules across declarations
(:class:`DeclarationModel`). Field errors become :class:`ProblemSpecError` with the file, the
field as a user writes it (``descriptors['size']``, ``stages[0].timeout_s``) and the fix.

The tables of a spec (``stages``, ``held_out``, ``tuning``) are validated into
:class:`~evoforge.problems.Stage` and :class:`~evoforge.problems.Tuning` themselves, what the
loaded :class:`~evoforge.problems.Problem` holds, with the problem's defaults filled in
(:func:`~evoforge.problems._stages.stage_defaults`).
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import types
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import (
    TYPE_CHECKING,
    Annotated,
    Any,
    ClassVar,
    Union,
    get_args,
    get_origin,
    get_type_hints,
)

from pydantic import (
    BaseModel,
    Field,
    ValidationError,
    ValidationInfo,
    create_model,
    field_validator,
    model_validator,
)

from evoforge.base.settings import Settings, describe_item
from evoforge.problems._declared import FIELD_DEFAULT, Declared, declarations
from evoforge.problems._instances import InstanceScores
from evoforge.problems._spec import Problem
from evoforge.problems._stages import Stage, Tuning, stage_defaults


class ProblemSpecError(ValueError):
    """A problem spec is malformed. The message names the file, the field and the fix."""

    def __init__(self, path: Path | str, field: str, message: str) -> None:
        self.path, self.field = Path(path), field
        super().__init__(f"{path}: {field}: {message}")


_SEED: dict[str, tuple[Any, Any]] = {
    "seed_file": (
        str,
        Field("seed.py", description='name the seed program file, e.g. seed_file = "seed.py"'),
    ),
    "seed_source": (str | None, Field(None, description="give the seed program's text")),
}
"""The seed's two declarations, which the problem holds as one field (its ``seed_source``,
the text the loader reads): each with its type, default and fix (the field's description)."""


class DeclarationModel(Settings):
    """What every problem's declarations obey together: the base of :func:`declaration_model`'s
    schemas, whose fields are the problem class's declared fields."""

    problem_class: ClassVar[type[Problem]] = Problem
    """The problem class whose declarations these are."""

    if TYPE_CHECKING:  # the fields are made at run time, from the problem class's

        def __getattr__(self, name: str) -> Any: ...

    def problem_fields(self) -> dict[str, Any]:
        """The problem's declared fields as the problem holds them: each value read from how a
        spec writes it; None where None stands for the field's default."""
        values = {}
        for field, how in declarations(self.problem_class):
            value = getattr(self, field.name)
            if value is None and how.default is None:
                continue
            values[field.name] = how.read(value) if how.read is not None else value
        return values

    @field_validator("stages", "held_out", mode="before", check_fields=False)
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
    def _baselines_name_objectives(self) -> DeclarationModel:
        check_baselines(self.baselines, self.objectives, [s.name for s in self.held_out])
        return self

    @model_validator(mode="after")
    def _tuning_names_a_stage(self) -> DeclarationModel:
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


@functools.cache
def declaration_model(problem: type[Problem] = Problem) -> type[DeclarationModel]:
    """The schema of what a spec declares for ``problem`` (a dataclass like
    :class:`~evoforge.problems.Problem`): one field per declared field, with its type as
    written, its rules, its default and its fix; then the seed's two declarations."""
    # Problem names these classes in its annotations for type checkers only
    annotations = get_type_hints(
        problem,
        localns={"Stage": Stage, "Tuning": Tuning, "InstanceScores": InstanceScores},
        include_extras=True,
    )
    fields: dict[str, Any] = {}
    for field, how in declarations(problem):
        kind: Any = annotations[field.name] if how.written_as is None else how.written_as
        if how.rules:
            kind = Annotated[(kind, *how.rules)]
        if how.default is None:
            kind = kind | None
        fix = how.fix
        if "{keys}" in fix:
            fix = fix.replace("{keys}", ", ".join(_table(kind).model_fields))
        fields[field.name] = (kind, Field(**_default(field, how), description=fix))
    fields.update(_SEED)
    model = create_model(
        "Declaration",
        __base__=DeclarationModel,
        __module__=__name__,
        __doc__="Everything a problem declares besides its functions (see "
        ":func:`~evoforge.problems.load_problem`).",
        **fields,
    )
    model.problem_class = problem
    return model


def _default(field: dataclasses.Field[Any], how: Declared) -> dict[str, Any]:
    """The declaration's default, as ``Field`` arguments: as written where it differs in form
    from the problem field's, else the field's own (none: required)."""
    if how.default is not FIELD_DEFAULT:
        return {"default": how.default}
    if field.default_factory is not dataclasses.MISSING:
        return {"default_factory": field.default_factory}
    if field.default is not dataclasses.MISSING:
        return {"default": field.default}
    return {}


def _bare(kind: Any) -> Any:
    """``kind`` without ``Annotated`` rules and without ``| None``."""
    while True:
        if get_origin(kind) is Annotated:
            kind = get_args(kind)[0]
        elif get_origin(kind) in (Union, types.UnionType):
            kind = next(arg for arg in get_args(kind) if arg is not type(None))
        else:
            return kind


def _table(kind: Any) -> type[BaseModel]:
    """The settings table a declaration of type ``kind`` is made of (a stage for ``stages``)."""
    kind = _bare(kind)
    while not _is_table(kind):
        kind = _bare(get_args(kind)[0])
    return kind


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


def declaration_error(
    path: Path | str, error: ValidationError, model: type[BaseModel] | None = None
) -> ProblemSpecError:
    """The first bad declaration as a :class:`ProblemSpecError` naming the field as written
    (``descriptors['d']``, ``stages[0].threshold.min``), what is wrong and the fix (the
    description of the field of ``model``, the schema that raised ``error``; default:
    :data:`Declaration`)."""
    model = model or Declaration
    item = error.errors(include_url=False)[0]
    loc = list(item.get("loc", ()))
    if item.get("type") == "extra_forbidden":
        return _unknown_key(path, loc, model)
    field = _field_name(loc, model)
    message = describe_item(item, field=None)
    declared = model.model_fields.get(str(loc[0])) if loc else None
    fix = declared.description if declared is not None else None
    return ProblemSpecError(path, field, f"{message}; {fix}" if fix else message)


def _unknown_key(path: Path | str, loc: list[Any], model: type[BaseModel]) -> ProblemSpecError:
    key, container = str(loc[-1]), loc[:-1]
    where, table = _locate(container, model)
    known = tuple(table.model_fields) if _is_table(table) else ()
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
    hint = f"did you mean {close[0]!r}? " if close else ""
    if not container:
        return ProblemSpecError(
            path, key, f"is not a declaration; {hint}declarations: {', '.join(known)}"
        )
    return ProblemSpecError(path, where, f"unknown key {key!r}; {hint}known: {', '.join(known)}")


def _field_name(loc: list[Any], model: type[BaseModel]) -> str:
    """``['stages', 0, 'name']`` → ``stages[0].name``; ``['descriptors', 'd', 2]`` →
    ``descriptors['d']`` (inside a ``(low, high, bins)`` range the entry is what to fix)."""
    return _locate(loc, model)[0] if loc else "spec"


def _locate(loc: list[Any], model: type[BaseModel]) -> tuple[str, Any]:
    """The place of an error as a spec writes it, and the type declared there, found by
    following the declared types from ``model``: a table's key as ``.key``, a dict's as
    ``['key']``, a list's index as ``[0]``; the walk stops at a fixed-shape entry (a range)
    or a value of any type, which is then the place to fix."""
    text, kind = "", _bare(model)
    for part in loc:
        if _is_table(kind) and part in kind.model_fields:
            text += f".{part}" if text else str(part)
            kind = kind.model_fields[part].annotation
        elif get_origin(kind) in (dict, Mapping) and len(get_args(kind)) == 2:
            text += f"[{part!r}]"
            kind = get_args(kind)[1]
        elif get_origin(kind) is tuple and get_args(kind)[-1:] == (...,):
            text += f"[{part!r}]"
            kind = get_args(kind)[0]
        else:
            break
        kind = _bare(kind)
    return text, kind


def _is_table(kind: Any) -> bool:
    return isinstance(kind, type) and issubclass(kind, BaseModel)


Declaration = declaration_model(Problem)

DECLARATIONS: tuple[str, ...] = tuple(Declaration.model_fields)
"""The names a spec declares; any other module-level name is the spec's own."""
