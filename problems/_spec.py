"""The problem model the engine reads: what to evolve, how it is scored, how results are binned.

A :class:`Problem` is made by the loader (:func:`~evoforge.problems.load_problem`) from a
spec's validated declarations. Each field a spec declares says here, once, how: its type and
default, and in its metadata (:func:`~evoforge.problems._declared.declared`) the rules a
declared value must pass and the fix an error about it ends with; the schema that validates
specs (:class:`~evoforge.problems.Declaration`) is made from these fields. Its cascade stages,
their thresholds and its knob tuning are the pydantic models of
:mod:`evoforge.problems._stages`, which the declaration validates and the problem holds as they
are (one class per concept). This module imports no pydantic, so the archive and the
``evoforge`` command read objectives and descriptors cheaply; it names the stage classes for
type checkers only.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from evoforge.problems._declared import (
    ANY_CASE,
    IDENTIFIER,
    DescriptorRange,
    Lax,
    Limits,
    declared,
)

if TYPE_CHECKING:
    from evoforge.problems._instances import InstanceScores
    from evoforge.problems._stages import Stage, Tuning

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
class Problem:
    """A loaded, validated problem spec.

    Made by :func:`~evoforge.problems.load_problem` from a folder or spec file (see it for the
    format), or by :func:`~evoforge.problems.define_problem` from Python values.

    Example::

        problem = load_problem("my_problems/packing")
        problem.primary.name, problem.score({"sum_radii": 2.6})

    A field with ``metadata=declared(...)`` is what a spec file declares under its name (its
    rules and fix: :func:`~evoforge.problems._declared.declared`); a new declaration is one such
    field. The other fields come from the spec's path, its seed and the functions it defines.
    """

    name: str = field(metadata=declared('add name = "my_problem" (an identifier)', IDENTIFIER))
    spec_path: Path
    seed_source: str
    """The seed program (a spec declares ``seed_file`` or ``seed_source``: see
    :mod:`~evoforge.problems._declaration`)."""
    objectives: tuple[Objective, ...] = field(
        metadata=declared(
            'declare e.g. objectives = {"score": "maximize"} ("maximize" or "minimize"; '
            "the first is primary)",
            Limits(min_length=1),
            ANY_CASE,
            written_as=dict[str, Literal["maximize", "minimize"]],
            read=lambda table: tuple(Objective(n, Direction(d)) for n, d in table.items()),
        )
    )
    descriptors: tuple[Descriptor, ...] = field(
        default=(),
        metadata=declared(
            'declare each as "name": (low, high, bins), e.g. {"size": (0.0, 1.0, 10)}',
            written_as=dict[str, DescriptorRange],
            default={},
            read=lambda table: tuple(Descriptor(n, *bounds) for n, bounds in table.items()),
        ),
    )
    evaluator: str = field(
        default="python",
        metadata=declared(
            'name an evaluator plugin, e.g. evaluator = "python" (see `evoforge plugins`)',
            Limits(min_length=1),
        ),
    )
    entry: str = field(
        default="main",
        metadata=declared(
            'name the function the candidate defines, e.g. entry = "main"', IDENTIFIER
        ),
    )
    timeout_s: float = field(
        default=30.0,
        metadata=declared("use a number of seconds, e.g. timeout_s = 30", Limits(gt=0)),
    )
    memory_mb: int = field(
        default=2048,
        metadata=declared("use whole megabytes, e.g. memory_mb = 2048", Limits(gt=0)),
    )
    preload: tuple[str, ...] = field(
        default=("numpy",),
        metadata=declared('use a list of module names, e.g. preload = ["numpy"]', Lax),
    )
    description: str = field(default="", metadata=declared("use a string"))
    options: Mapping[str, Any] = field(
        default_factory=dict,
        metadata=declared('use a dict, e.g. options = {"sandbox_network": "server"}'),
    )
    """Evaluator-specific settings (JSON values): each evaluator reads and converts its own."""
    stages: tuple[Stage, ...] = field(
        default=(),
        metadata=declared(
            'use a list of dicts, e.g. [{"name": "quick", "args": [10], "threshold": '
            '{"metric": "accuracy", "min": 0.9}}, {"name": "full"}]; a stage has {keys}',
            Lax,
            Limits(min_length=1),
            default=None,
        ),
    )
    """Cascade stages, cheapest first; empty: one run of ``entry()`` scored by ``evaluate``."""
    baselines: Mapping[str, Mapping[str, float]] = field(
        default_factory=dict,
        metadata=declared(
            'map each baseline to objective values, e.g. {"stock -Oz": {"text_bytes": '
            "97669}}, or define `def baselines() -> dict` that measures them once per session"
        ),
    )
    """Reference values of objectives by label (``{"stock -Oz": {"text_bytes": 97669.0}}``),
    shown as ratios beside results; more are measured by the spec's ``baselines()``."""
    measures_baselines: bool = False
    """Whether the spec defines ``baselines()``, measured once per session
    (:func:`~evoforge.problems.measure_baselines`)."""
    tuning: Tuning | None = field(
        default=None,
        metadata=declared(
            'use e.g. tuning = {"trials": 20} (optionally "stage", "metric", "direction")'
        ),
    )
    """Knob tuning of candidates after their evaluation; None: no tuning."""
    held_out: tuple[Stage, ...] = field(
        default=(),
        metadata=declared(
            'use a list of stages, e.g. [{"name": "held_out", "kwargs": {"corpus": '
            '"held_out"}}], each scored by evaluate_<name>(output)',
            Lax,
        ),
    )
    """Stages run once on the best program at the end of a session (data never shown to the
    model: the results go to a ``held_out`` event, not to the program's metrics)."""
    requires: Mapping[str, str] = field(
        default_factory=dict,
        metadata=declared(
            'map each command the problem needs to how to get it, e.g. {"valgrind": '
            '"apt-get install -y valgrind"}'
        ),
    )
    """Commands the problem needs on the host, each with how to get it."""
    prepares: bool = False
    """Whether the spec defines ``setup()`` (prepares data once: ``evoforge problems setup``)."""
    checks_ready: bool = False
    """Whether the spec defines ``ready() -> str`` (why it cannot run yet, "" when it can)."""
    language: str = field(
        default="python",
        metadata=declared(
            'name the seed\'s language, e.g. language = "python" (others skip the Python '
            "syntax check)",
            Limits(min_length=1),
        ),
    )
    """The programs' language; candidates in another language skip the Python syntax check
    (their evaluator reports what does not compile)."""
    run_defaults: Mapping[str, Any] = field(
        default_factory=dict,
        metadata=declared(
            'use a dict of run settings, e.g. {"budget": 100, "islands": {"count": 2}}'
        ),
    )
    """Run settings this problem starts from (``budget``, ``islands``, ``models``, …, as in a
    run configuration); a configuration file, flags and Python arguments override them. An
    adapted OpenEvolve folder carries its ``config.yaml`` here."""
    instances: InstanceScores | None = field(
        default=None,
        metadata=declared(
            'use e.g. instances = {"metric": "test_scores", "direction": "maximize"}: the '
            "metric in which evaluate() returns {instance name: number}"
        ),
    )
    """Where ``evaluate()`` returns each instance's score (test inputs, datasets), for
    selection per instance (:mod:`evoforge.problems._instances`); None: the aggregate only."""
    family: str = field(
        default="",
        metadata=declared(
            'name the problem\'s family, e.g. family = "circle_packing": problems of one '
            "family offer each other their elites in a suite run with [suite] transfer on"
        ),
    )
    """Problems of one family (``circle_packing`` and ``circle_packing_32``) are related: in a
    suite run with ``[suite] transfer`` on, each is offered the other's elites."""

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
