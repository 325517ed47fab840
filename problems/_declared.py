"""How a spec declares a field of the problem model: the rules its value must pass, and the fix.

Each declaration of a spec file (``timeout_s = 30``) is a field of
:class:`~evoforge.problems.Problem`, and that field says everything about it once: the name,
type and default (the dataclass field), and in the field's ``metadata``, written by
:func:`declared`, the rules a declared value must pass beyond its type and the fix that an
error about it ends with. The schema that validates spec files and
:func:`~evoforge.problems.define_problem` (:class:`~evoforge.problems.Declaration`) is made
from these fields, and the loader fills the problem from it field by field in a loop; so adding
a declaration is adding one field.

The rules are annotations that pydantic reads (through its ``__get_pydantic_core_schema__``
protocol), written here without importing pydantic: the archive and the ``evoforge`` command
import the problem model, and pydantic comes in only with the loader.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping
from typing import Annotated, Any, NamedTuple

_KEY = "evoforge.declared"
"""The key of a field's ``metadata`` that holds its :class:`Declared`."""


class _FieldDefault:
    def __repr__(self) -> str:
        return "FIELD_DEFAULT"


FIELD_DEFAULT: Any = _FieldDefault()
"""A declaration's default is the problem field's own."""


class Declared(NamedTuple):
    """How a spec declares one field of a problem class (see :func:`declared`)."""

    fix: str
    rules: tuple[object, ...] = ()
    written_as: object = None
    default: object = FIELD_DEFAULT
    read: Callable[[Any], Any] | None = None


def declared(
    fix: str,
    *rules: object,
    written_as: object = None,
    default: object = FIELD_DEFAULT,
    read: Callable[[Any], Any] | None = None,
) -> Mapping[str, Declared]:
    """The ``metadata`` of a problem field that a spec declares.

    Example (a field of :class:`~evoforge.problems.Problem`)::

        timeout_s: float = field(
            default=30.0,
            metadata=declared("use a number of seconds, e.g. timeout_s = 30", Limits(gt=0)),
        )

    Args:
        fix: how to write it right, the end of every error about it. ``{keys}`` stands for
            the keys of the table it declares (a stage's, for ``stages``).
        *rules: what a declared value must pass beyond its type (:class:`Limits`,
            :data:`Lax`, :class:`Check`), applied to ``written_as`` when it is given.
        written_as: the type of the value as a spec writes it, where the problem holds
            another (``objectives``: a table of directions, held as objectives).
        default: the default as written, where the problem's differs in form; ``None`` also
            lets a spec declare None for "the problem's default".
        read: the written value to the value the problem holds (with ``written_as``).
    """
    return {_KEY: Declared(fix, rules, written_as, default, read)}


def declarations(cls: type) -> list[tuple[dataclasses.Field[Any], Declared]]:
    """The fields of the dataclass ``cls`` that a spec declares, in order, each with how."""
    return [(f, f.metadata[_KEY]) for f in dataclasses.fields(cls) if _KEY in f.metadata]


class Limits:
    """Bounds on a declared value: ``gt``, ``ge`` for numbers, ``min_length`` for text,
    tables and lists; they are pydantic-core's own bounds, so errors read as for ``Field``."""

    __slots__ = ("bounds",)

    def __init__(
        self, *, gt: float | None = None, ge: float | None = None, min_length: int | None = None
    ) -> None:
        given = {"gt": gt, "ge": ge, "min_length": min_length}
        self.bounds = {name: value for name, value in given.items() if value is not None}

    def __get_pydantic_core_schema__(self, source: Any, handler: Callable[[Any], Any]) -> Any:
        schema = handler(source)
        schema.update(self.bounds)
        return schema

    def __repr__(self) -> str:
        return f"Limits({', '.join(f'{k}={v!r}' for k, v in self.bounds.items())})"


class _Lax:
    """A list where a tuple is declared: spec files and TOML write lists (strict otherwise)."""

    def __get_pydantic_core_schema__(self, source: Any, handler: Callable[[Any], Any]) -> Any:
        schema = handler(source)
        schema["strict"] = False
        return schema

    def __repr__(self) -> str:
        return "Lax"


Lax = _Lax()


class Check:
    """A rule in code: ``test(value)`` returns the value (or the value normalised) or raises
    :class:`ValueError` saying what is wrong. ``before``: run on the value as written, before
    its type is checked (so it must let anything it does not expect through)."""

    __slots__ = ("before", "test")

    def __init__(self, test: Callable[[Any], Any], *, before: bool = False) -> None:
        self.test, self.before = test, before

    def __get_pydantic_core_schema__(self, source: Any, handler: Callable[[Any], Any]) -> Any:
        from pydantic_core import core_schema  # only where a declaration is validated

        if self.before:
            return core_schema.no_info_before_validator_function(self.test, handler(source))
        return core_schema.no_info_after_validator_function(self.test, handler(source))

    def __repr__(self) -> str:
        return f"Check({self.test.__name__}{', before=True' if self.before else ''})"


def _identifier(value: str) -> str:
    if not value.isidentifier():
        raise ValueError("not a valid identifier; use letters, digits and underscores")
    return value


IDENTIFIER = Check(_identifier)
"""A name the engine uses in code (the problem's, the entry function's)."""


def _any_case(table: Any) -> Any:
    if isinstance(table, dict):
        return {k: v.lower() if isinstance(v, str) else v for k, v in table.items()}
    return table


ANY_CASE = Check(_any_case, before=True)
"""A table's text values in any case (``"Maximize"``), read lowercased."""


def _low_below_high(value: tuple[float, float, int]) -> tuple[float, float, int]:
    low, high, _ = value
    if not (math.isfinite(low) and math.isfinite(high) and low < high):
        raise ValueError(f"needs finite numbers low < high, found low={low!r}, high={high!r}")
    return value


DescriptorRange = Annotated[
    tuple[float, float, Annotated[int, Limits(ge=1)]], Lax, Check(_low_below_high)
]
"""``(low, high, bins)``: a fixed range cut into equal bins."""
