"""The problem declaration: what to evolve, how it is scored, and how results are binned."""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PASSED = "passed"
"""The objective of a correctness-only run: 1.0 for every program that passed the problem's
checks (see :func:`~evoforge.evaluators.classify_metrics`). A host that can check a kernel but
not time it ranks by it, so an error within tolerance counts as a pass, never as a score."""


class Direction(enum.StrEnum):
    MAXIMIZE = "maximize"
    MINIMIZE = "minimize"


@dataclass(frozen=True)
class Objective:
    """A named metric and whether bigger or smaller is better."""

    name: str
    direction: Direction = Direction.MAXIMIZE

    def oriented(self, value: float) -> float:
        """``value`` with the sign flipped for minimised objectives, so bigger is always better."""
        return value if self.direction is Direction.MAXIMIZE else -value


@dataclass(frozen=True)
class Descriptor:
    """A behaviour dimension of the MAP-Elites grid: a fixed range cut into ``bins`` equal bins.

    Ranges are declared, never derived from the data seen so far, so a cell means the same
    thing for the whole run and across runs. Values outside the range go to the edge bins.
    """

    name: str
    low: float
    high: float
    bins: int

    def bin(self, value: float) -> int:
        if not math.isfinite(value):
            return 0 if value < 0 or math.isnan(value) else self.bins - 1
        index = int((value - self.low) / (self.high - self.low) * self.bins)
        return min(max(index, 0), self.bins - 1)


@dataclass(frozen=True)
class Threshold:
    """The bar a cascade stage's metric must clear for the candidate to reach the next stage.

    Bounds are inclusive; at least one is set. A metric that is missing, not a finite number,
    or out of bounds stops the cascade with ``incorrect``.
    """

    metric: str
    min: float | None = None
    max: float | None = None

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


@dataclass(frozen=True)
class Stage:
    """One step of a cascade: run the candidate's entry on this stage's input, score, compare.

    Stages run cheapest first; a candidate that fails a stage, or misses its threshold, is
    not run on the next one. Only the last stage's metrics are checked against the problem's
    objectives and descriptors.

    Attributes:
        name: identifies the stage in metrics, timings and artifacts (``"quick"``).
        timeout_s: wall-clock limit for this stage's run of the candidate.
        threshold: what this stage's metrics must meet to go on; ``None``: only correctness.
        evaluate: the spec's function that scores this stage's output; the last stage's is
            the problem's ``evaluate``.
        args: positional arguments for the candidate's entry function (JSON values).
        kwargs: keyword arguments for the entry function (JSON values).
        memory_mb: address-space limit for this stage's run.
    """

    name: str
    timeout_s: float
    threshold: Threshold | None = None
    evaluate: str = "evaluate"
    args: tuple[Any, ...] = ()
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    memory_mb: int = 2048


@dataclass(frozen=True)
class Tuning:
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

    trials: int
    stage: str | None = None
    metric: str | None = None
    direction: Direction | None = None
    knobs: int | None = None
    only_improved: bool = True

    def maximize(self, problem: Problem) -> bool:
        if self.direction is not None:
            return self.direction is Direction.MAXIMIZE
        name = self.metric or problem.primary.name
        objective = next((o for o in problem.objectives if o.name == name), problem.primary)
        return objective.direction is Direction.MAXIMIZE


@dataclass(frozen=True)
class Problem:
    """A loaded, validated problem spec.

    Made by :func:`~evoforge.problems.load_problem` from a folder or spec file (see it for the
    format), or by :func:`~evoforge.problems.define_problem` from Python values.

    Example::

        problem = load_problem("my_problems/packing")
        problem.primary.name, problem.score({"sum_radii": 2.6})
    """

    name: str
    spec_path: Path
    seed_source: str
    objectives: tuple[Objective, ...]
    descriptors: tuple[Descriptor, ...] = ()
    evaluator: str = "python"
    entry: str = "main"
    timeout_s: float = 30.0
    memory_mb: int = 2048
    preload: tuple[str, ...] = ("numpy",)
    description: str = ""
    # Evaluator-specific settings (JSON values): each evaluator reads and converts its own.
    options: Mapping[str, Any] = field(default_factory=dict)
    stages: tuple[Stage, ...] = ()
    """Cascade stages, cheapest first; empty: one run of ``entry()`` scored by ``evaluate``."""
    baselines: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    """Reference values of objectives by label (``{"stock -Oz": {"text_bytes": 97669.0}}``),
    shown as ratios beside results; more are measured by the spec's ``baselines()``."""
    measures_baselines: bool = False
    """Whether the spec defines ``baselines()``, measured once per session
    (:func:`~evoforge.problems.measure_baselines`)."""
    tuning: Tuning | None = None
    """Knob tuning of candidates after their evaluation; None: no tuning."""
    held_out: tuple[Stage, ...] = ()
    """Stages run once on the best program at the end of a session (data never shown to the
    model: the results go to a ``held_out`` event, not to the program's metrics)."""
    requires: Mapping[str, str] = field(default_factory=dict)
    """Commands the problem needs on the host, each with how to get it."""
    prepares: bool = False
    """Whether the spec defines ``setup()`` (prepares data once: ``evoforge problems setup``)."""
    checks_ready: bool = False
    """Whether the spec defines ``ready() -> str`` (why it cannot run yet, "" when it can)."""
    language: str = "python"
    """The programs' language; candidates in another language skip the Python syntax check
    (their evaluator reports what does not compile)."""
    run_defaults: Mapping[str, Any] = field(default_factory=dict)
    """Run settings this problem starts from (``budget``, ``islands``, ``models``, …, as in a
    run configuration); a configuration file, flags and Python arguments override them. An
    adapted OpenEvolve folder carries its ``config.yaml`` here."""

    @property
    def primary(self) -> Objective:
        """The objective that decides who keeps a MAP-Elites cell (the first declared)."""
        return self.objectives[0]

    @property
    def num_cells(self) -> int:
        return math.prod(d.bins for d in self.descriptors)

    def cell_of(self, descriptor_values: Mapping[str, float]) -> int:
        """Row-major index of the grid cell for these descriptor values (0 with no descriptors)."""
        index = 0
        for d in self.descriptors:
            index = index * d.bins + d.bin(float(descriptor_values[d.name]))
        return index

    def score(self, objectives: Mapping[str, float]) -> float:
        """The primary objective oriented so that bigger is better."""
        return self.primary.oriented(float(objectives[self.primary.name]))
