"""Turning what a problem's ``evaluate()`` returned into a typed verdict (every evaluator)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from evoforge.archive import Status
from evoforge.problems import PASSED

if TYPE_CHECKING:
    from evoforge.problems import Problem


def classify_metrics(
    problem: Problem, metrics: Mapping[str, Any]
) -> tuple[Status, str, dict[str, float], dict[str, float]]:
    """Check what ``evaluate()`` returned against the problem's declarations.

    Returns:
        ``(status, error, objectives, descriptors)``: INCORRECT with a reason when the metrics
        say ``"correct": False`` or lack a finite value for a declared objective or descriptor;
        otherwise OK with the declared values as floats. The objective ``passed``
        (:data:`~evoforge.problems.PASSED`, a correctness-only run's) is 1.0 for every
        program that gets this far, unless the metrics give it.
    """
    if "correct" in metrics and not metrics["correct"]:
        error = metrics.get("error") or "evaluate() reported correct=False"
        return Status.INCORRECT, str(error), {}, {}
    values: dict[str, dict[str, float]] = {"objective": {}, "descriptor": {}}
    for kind, names in (
        ("objective", [o.name for o in problem.objectives]),
        ("descriptor", [d.name for d in problem.descriptors]),
    ):
        for name in names:
            value = metrics.get(name)
            if name == PASSED and kind == "objective" and name not in metrics:
                values[kind][name] = 1.0  # it passed every check that ran
                continue
            if name not in metrics:
                return (
                    Status.INCORRECT,
                    (
                        f"evaluate() returned no {kind} {name!r} (it returned "
                        f"{sorted(metrics)}); every declared {kind} must be "
                        "in the metrics"
                    ),
                    {},
                    {},
                )
            if (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or not math.isfinite(value)
            ):
                return (
                    Status.INCORRECT,
                    (f"{kind} {name!r} is {value!r}; expected a finite number"),
                    {},
                    {},
                )
            values[kind][name] = float(value)
    return Status.OK, "", values["objective"], values["descriptor"]
