"""Per-instance scores: a problem whose ``evaluate()`` scores many instances (test inputs,
datasets, shapes) says where it returns each instance's score, so parents can be chosen per
instance (the ``pareto_instances`` selection strategy) and not by the aggregate alone.

Declared in a spec as ``instances = {"metric": "dataset_excess_pct", "direction":
"minimize"}``: ``evaluate()`` (or the evaluator) returns, under that metric, a table
``{instance name: number}``, one entry per instance, the same instances for every program::

    def evaluate(output):
        per_set = {name: excess(name, output) for name in DATASETS}
        return {"excess_pct": mean(per_set.values()), "dataset_excess_pct": per_set}

The native evaluator returns ``test_instructions`` (callgrind instructions of each test, as
``{"0": ..., "1": ...}``) for ``measure = "callgrind"``, so a native problem declares
``instances = {"metric": "test_instructions", "direction": "minimize"}``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import Field

from evoforge.base.settings import Settings


class InstanceScores(Settings):
    """Where a problem's per-instance scores are (see the module docstring).

    Attributes:
        metric: the metric whose value is ``{instance name: number}``.
        direction: whether a bigger or a smaller number is better on an instance.
    """

    metric: Annotated[str, Field(min_length=1)]
    direction: Literal["maximize", "minimize"] = "maximize"

    def of(self, metrics: Mapping[str, Any]) -> dict[str, float]:
        """A program's per-instance scores, oriented so that bigger is better; the instances
        whose value is missing or not a finite number are left out ({} for a program that
        returned no table)."""
        table = metrics.get(self.metric)
        if not isinstance(table, Mapping):
            return {}
        sign = 1.0 if self.direction == "maximize" else -1.0
        return {
            str(name): sign * float(value)
            for name, value in table.items()
            if isinstance(value, int | float)
            and not isinstance(value, bool)
            and math.isfinite(value)
        }
