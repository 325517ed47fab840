"""The problem declaration: what to evolve, how it is scored, and how results are binned."""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path


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
    """A loaded, validated problem spec. See :func:`problems.load_problem` for the file format."""

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
    options: Mapping[str, object] = field(default_factory=dict)

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
