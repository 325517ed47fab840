"""Cascade stages, their thresholds, and knob tuning: one model each, declared and run as is.

A spec declares these as tables (``stages = [{"name": "quick", "threshold": {...}}]``,
``tuning = {"trials": 20}``); the problem's :class:`~evoforge.problems.Declaration` validates
each table into the class below, and the resolved :class:`~evoforge.problems.Problem` holds the
same instances, which the evaluators read. So each rule (a threshold needs a bound, a stage's
arguments must travel as JSON) is written once and holds for a stage built in Python too.

They are :class:`~evoforge.base.settings.Settings` models (strict, closed, immutable), built
with keywords; a bad value raises :class:`~evoforge.base.settings.ConfigError` naming the field::

    Stage(name="quick", timeout_s=1.0, args=(10,), evaluate="evaluate_quick",
          threshold=Threshold(metric="accuracy", min=0.9))

A stage declared in a spec may leave out ``timeout_s``, ``memory_mb`` and ``evaluate``:
:func:`stage_defaults` fills them in from the problem before validation.

This module imports pydantic; the problem model that the archive and the ``evoforge`` command
read (:mod:`evoforge.problems._spec`) names these classes for type checkers only.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field, field_validator, model_validator

from evoforge.base.settings import Settings
from evoforge.problems._spec import Direction

if TYPE_CHECKING:
    from evoforge.problems._spec import Problem


class Threshold(Settings):
    """The bar a cascade stage's metric must clear for the candidate to reach the next stage.

    Bounds are inclusive; at least one is set. A metric that is missing, not a finite number,
    or out of bounds stops the cascade with ``incorrect``.
    """

    metric: Annotated[str, Field(min_length=1)]
    min: float | None = None
    max: float | None = None

    @model_validator(mode="after")
    def _a_bound(self) -> Threshold:
        if self.min is None and self.max is None:
            raise ValueError('sets neither min nor max; use {"metric": "accuracy", "min": 0.9}')
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError(f"min {self.min!r} > max {self.max!r}; no value could pass")
        return self

    def miss(self, stage: str, metrics: Mapping[str, Any]) -> str | None:
        """Why ``metrics`` miss this threshold, as an artifact for the prompt; ``None`` if met."""
        value = metrics.get(self.metric)
        if self.metric not in metrics:
            return (
                f"stage {stage!r}: threshold metric {self.metric!r} is not among the metrics "
                f"its evaluate function returned ({sorted(metrics)}); return it from that "
                "function or fix the threshold in the problem's `stages`"
            )
        number = isinstance(value, int | float) and not isinstance(value, bool)
        if not number or not isinstance(value, int | float) or not math.isfinite(value):
            return (
                f"stage {stage!r}: threshold metric {self.metric!r} is {value!r}; "
                "expected a finite number"
            )
        if self.min is not None and value < self.min:
            return f"stage {stage!r}: {self.metric} {value:.6g} < {self.min:.6g} (threshold)"
        if self.max is not None and value > self.max:
            return f"stage {stage!r}: {self.metric} {value:.6g} > {self.max:.6g} (threshold)"
        return None


class Stage(Settings):
    """One step of a cascade: run the candidate's entry on this stage's input, score, compare.

    Stages run cheapest first; a candidate that fails a stage, or misses its threshold, is
    not run on the next one. Only the last stage's metrics are checked against the problem's
    objectives and descriptors.

    Attributes:
        name: identifies the stage in metrics, timings and artifacts (``"quick"``).
        args: positional arguments for the candidate's entry function (JSON values).
        kwargs: keyword arguments for the entry function (JSON values).
        timeout_s: wall-clock limit for this stage's run of the candidate.
        memory_mb: address-space limit for this stage's run.
        evaluate: the spec's function that scores this stage's output; the last stage's is
            the problem's ``evaluate``.
        threshold: what this stage's metrics must meet to go on; ``None``: only correctness.
    """

    # Field order is the order errors are reported in: the name first, the threshold last.
    name: str
    args: Annotated[tuple[Any, ...], Field(strict=False)] = ()
    kwargs: dict[str, Any] = Field(default_factory=dict)
    timeout_s: Annotated[float, Field(gt=0)]
    memory_mb: Annotated[int, Field(gt=0)] = 2048
    evaluate: Annotated[str, Field(min_length=1)] = "evaluate"
    threshold: Threshold | None = None

    @field_validator("name")
    @classmethod
    def _identifier(cls, name: str) -> str:
        if not name.isidentifier():
            raise ValueError('give each stage a name that is an identifier, e.g. "quick"')
        return name

    @model_validator(mode="after")
    def _json_arguments(self) -> Stage:
        try:
            json.dumps([list(self.args), self.kwargs])
        except (TypeError, ValueError) as exc:
            raise ValueError(
                f"args/kwargs cannot be sent to the candidate as JSON ({exc}); use numbers, "
                "strings, lists and dicts"
            ) from None
        return self


def stage_defaults(tables: Any, *, timeout_s: Any, memory_mb: Any, held_out: bool) -> Any:
    """Declared stage tables with what they leave out taken from the problem.

    A stage without ``timeout_s`` or ``memory_mb`` gets the problem's; one without
    ``evaluate`` is scored by ``evaluate_<name>``, except the last of the cascade, which is
    scored by the problem's ``evaluate`` (held-out stages have no last: each is scored by its
    own function). Anything that is not a list of tables is returned as is, for validation to
    refuse with its own message; ``None`` for a default leaves that key out.
    """
    if not isinstance(tables, list | tuple):
        return tables
    filled: list[Any] = []
    for index, table in enumerate(tables):
        if not isinstance(table, Mapping):
            filled.append(table)
            continue
        table = dict(table)
        for key, value in (("timeout_s", timeout_s), ("memory_mb", memory_mb)):
            if value is not None:
                table.setdefault(key, value)
        name = table.get("name")
        if isinstance(name, str):
            last = index == len(tables) - 1 and not held_out
            table.setdefault("evaluate", "evaluate" if last else f"evaluate_{name}")
        filled.append(table)
    return filled


class Tuning(Settings):
    """Knob tuning of candidates (see :mod:`evoforge.evaluators.tuning`).

    Attributes:
        trials: settings tried per candidate after its untuned evaluation (each one an
            evaluation, taken from the run's budget).
        stage: run trials through the cascade only up to this stage (None: full evaluations).
        metric: what trials optimise (None: the primary objective); with ``stage``, a metric
            of that stage.
        direction: ``maximize`` or ``minimize`` for ``metric`` (None: the objective's own).
        knobs: tune at most this many knobs per candidate, chosen at random (None: all).
        only_improved: tune only candidates that score at least as well as their parent.
    """

    trials: Annotated[int, Field(ge=1, le=10_000)]
    stage: str | None = None
    metric: str | None = None
    direction: Annotated[Direction | None, Field(strict=False)] = None  # "maximize" → enum
    knobs: Annotated[int, Field(ge=1)] | None = None
    only_improved: bool = True

    def maximize(self, problem: Problem) -> bool:
        """Whether trials keep the setting with the largest value of what they optimise."""
        if self.direction is not None:
            return self.direction is Direction.MAXIMIZE
        name = self.metric or problem.primary.name
        objective = next((o for o in problem.objectives if o.name == name), problem.primary)
        return objective.direction is Direction.MAXIMIZE
