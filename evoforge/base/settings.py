"""Validated settings: one pydantic base for every schema, and errors a person can act on.

Run configuration, its sections, problem declarations and sandbox options are each one
:class:`Settings` model: unknown keys are refused (a typo never passes silently), scalars are
strict (``workers = 2.5``, ``seed = "abc"``, ``budget = true`` and ``budget = "10"`` are
refused, not coerced), floats must be finite, and instances are immutable. TOML, CLI flags and
Python all go through the same model, so they accept and refuse the same values.

:func:`describe` turns pydantic's error into one line per bad value that names the field, the
value (secrets redacted) and what is allowed, e.g. ``islands.count = 2.5: expected a whole
number``.
"""

from __future__ import annotations

import contextvars
from collections.abc import Mapping
from typing import Any, ClassVar, Self, get_args

from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic_core import PydanticCustomError

from evoforge.base.redaction import redact

__all__ = ["ConfigError", "Settings", "describe", "describe_item", "hidden_value_error"]

_MAX_VALUE_CHARS = 80
_EXPECTED = {
    "int_type": "expected a whole number",
    "int_from_float": "expected a whole number",
    "float_type": "expected a number",
    "finite_number": "expected a finite number",
    "bool_type": "expected true or false",
    "string_type": "expected text (a string)",
    "tuple_type": "expected a list",
    "list_type": "expected a list",
    "dict_type": "expected a table of settings (a dict)",
    "model_type": "expected a table of settings (a dict)",
    "model_attributes_type": "expected a table of settings (a dict)",
}


_nesting: contextvars.ContextVar[int] = contextvars.ContextVar("evoforge_settings", default=0)
_WORDS = (
    ("Input should be greater than or equal to", "must be at least"),
    ("Input should be less than or equal to", "must be at most"),
    ("Input should be greater than", "must be more than"),
    ("Input should be less than", "must be less than"),
    ("Input should be", "must be"),
    ("Input ", ""),
)


class ConfigError(ValueError):
    """A setting is wrong; the message names the field, the value and what is allowed."""


class Settings(BaseModel):
    """Base of every settings schema: strict, closed, finite and immutable.

    Constructing one with a bad value raises :class:`ConfigError` (one line, see
    :func:`describe`), not pydantic's multi-line report. A field that must accept a list where a
    tuple is stored (TOML and JSON have no tuples) says so with ``Field(strict=False)``.
    """

    model_config = ConfigDict(
        extra="forbid", strict=True, frozen=True, allow_inf_nan=False, validate_default=True
    )
    error: ClassVar[type[ConfigError]] = ConfigError
    """What a bad value raises (a subclass may name its own :class:`ConfigError`)."""
    section: ClassVar[str] = ""
    """Where the schema sits in a run configuration (``islands``): errors name fields as
    ``islands.count`` even when the section is built on its own."""

    def __init__(self, **data: Any) -> None:
        outermost = _nesting.get() == 0
        token = _nesting.set(_nesting.get() + 1)
        try:
            super().__init__(**data)
        except ValidationError as exc:
            # pydantic calls a nested model's __init__ too; only the outermost call turns the
            # whole report into one line (an inner one must stay a ValidationError to merge)
            if not outermost:
                raise
            raise self.error(describe(exc, type(self), section=self.section)) from None
        finally:
            _nesting.reset(token)

    @classmethod
    def parse(cls, data: Mapping[str, Any] | Self) -> Self:
        """Validate ``data``, raising pydantic's :class:`ValidationError` (for callers that
        word errors their own way, like the problem loader).

        (``model_validate`` goes through ``__init__`` here, which words errors itself.)
        """
        token = _nesting.set(_nesting.get() + 1)
        try:
            return cls.model_validate(data)
        finally:
            _nesting.reset(token)

    @classmethod
    def load(cls, data: Mapping[str, Any] | Self, *, where: str = "") -> Self:
        """Validate ``data`` (a mapping, e.g. read from TOML, or an instance).

        Raises:
            ConfigError: a bad, missing or unknown value; ``where`` prefixes the message.
        """
        token = _nesting.set(_nesting.get() + 1)
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise cls.error(describe(exc, cls, where=where, section=cls.section)) from None
        finally:
            _nesting.reset(token)

    def replace(self, **changes: Any) -> Self:
        """A copy with ``changes``, validated like a new instance (unlike ``model_copy``)."""
        return type(self).load({**self.model_dump(), **changes})


def hidden_value_error(message: str) -> PydanticCustomError:
    """A validation error whose message is shown without the value that caused it.

    For fields where a secret may have been pasted by mistake (an API key in ``api_key_env``):
    raise it from a validator, and :func:`describe` never echoes the input.
    """
    return PydanticCustomError("hidden_value", message, {"hide_value": True})


def describe(
    error: ValidationError,
    model: type[BaseModel] | None = None,
    *,
    where: str = "",
    section: str = "",
) -> str:
    """One line naming each bad field, its value and what is allowed.

    Args:
        error: what pydantic raised.
        model: the model that was validated; lets an unknown key list the known ones.
        where: what was read (``run.toml``, ``command line``, a spec file), as a prefix.
        section: the model's place in a larger schema, prefixed to field names.
    """
    lines = []
    for item in error.errors(include_url=False):
        loc = tuple(item.get("loc", ()))
        if section:
            loc = (section, *loc)
        field = ".".join(str(part) for part in loc)
        if item.get("type") == "extra_forbidden":
            known = _known_fields(model, loc[1 if section else 0 : -1])
            hint = f"; known: {', '.join(known)}" if known else ""
            lines.append(describe_item(item, field) + hint)
        else:
            lines.append(describe_item(item, field))
    text = "; ".join(lines)
    return f"{where}: {text}" if where else text


def describe_item(item: Mapping[str, Any], field: str | None) -> str:
    """One pydantic error as ``field = value: what is allowed``; without ``field``, as
    ``found value: what is allowed``. Values that may be secrets are never shown."""
    kind = item.get("type", "")
    if (item.get("ctx") or {}).get("hide_value"):
        return f"{field}: {item.get('msg')}" if field else str(item.get("msg"))
    value = _show(item.get("input"))
    if kind == "extra_forbidden":
        name = field or repr(item.get("loc", ("?",))[-1])
        return f"unknown setting {name} (= {value})"
    if kind == "missing":
        return f"{field}: missing; it is required" if field else "missing; it is required"
    if not field:
        return (
            _expected(item)
            if isinstance(item.get("input"), Mapping)
            else (f"found {value}: {_expected(item)}")
        )
    if isinstance(item.get("input"), Mapping):  # a rule across a section's fields
        return f"{field}: {_expected(item)}"
    return f"{field} = {value}: {_expected(item)}"


def _expected(item: Mapping[str, Any]) -> str:
    kind = item.get("type", "")
    if kind in _EXPECTED:
        return _EXPECTED[kind]
    if kind == "literal_error":
        return f"expected one of {item.get('ctx', {}).get('expected', '')}"
    message = str(item.get("msg", "is not allowed"))
    for prefix in ("Value error, ", "Assertion failed, "):
        message = message.removeprefix(prefix)
    for pydantic_words, ours in _WORDS:
        message = message.replace(pydantic_words, ours)
    return message


def _show(value: Any) -> str:
    text = redact(repr(value))
    if len(text) > _MAX_VALUE_CHARS:
        text = text[: _MAX_VALUE_CHARS - 1] + "…"
    return text


def _known_fields(model: type[BaseModel] | None, loc: tuple[Any, ...]) -> list[str]:
    """The field names of the (sub)model at ``loc``, or none when it cannot be followed."""
    for part in loc:
        if model is None or part not in model.model_fields:
            return []
        annotation = model.model_fields[part].annotation
        model = next(
            (
                kind
                for kind in (annotation, *get_args(annotation))
                if isinstance(kind, type) and issubclass(kind, BaseModel)
            ),
            None,
        )
    return sorted(model.model_fields) if model is not None else []
