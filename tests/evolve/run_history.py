"""Build a run's history in a real archive, attempt by attempt, for prompt and memory tests."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

from evoforge.archive import Archive, Program, attempt_id, program_id
from evoforge.evaluators import Status
from evoforge.problems import Descriptor, Objective, Problem

SEED = """\
import math

# EVOLVE-BLOCK-START
A = 1.0
B = 2.0


def f(x):
    return A * x + B
# EVOLVE-BLOCK-END


def main():
    return f(3)
"""

PROBLEM = Problem(
    name="line",
    spec_path=Path("/nonexistent/line/problem.py"),
    seed_source=SEED,
    objectives=(Objective("score"),),
    descriptors=(Descriptor("a", 0.0, 4.0, 4),),
    description="Fit a line.",
)


def variant(n: int) -> str:
    """A distinct valid program for each ``n``."""
    return SEED.replace("B = 2.0", f"B = {2.0 + n / 1000:.3f}")


class History:
    """Stores programs of one run with consecutive ``seq`` numbers."""

    def __init__(self, archive: Archive, problem: Problem = PROBLEM, run_id: str = "run") -> None:
        self.archive, self.problem = archive, problem
        self.run_id = archive.create_run(problem, config={}, seed=0, run_id=run_id).id
        self._seq = itertools.count()

    def add(
        self,
        source: str | None,
        *,
        parent: Program | None = None,
        status: Status = Status.OK,
        score: float | None = None,
        cell: int = 0,
        island: int = 0,
        edit_kind: str = "diff",
        model: str | None = "offline/mutator",
        artifacts: dict[str, str] | None = None,
        offer: bool = True,
        **fields: Any,
    ) -> Program:
        seq = next(self._seq)
        ok = status is Status.OK
        program = Program(
            run_id=self.run_id,
            id=program_id(source) if source is not None else attempt_id(seq),
            seq=seq,
            source=source,
            parent_id=parent.id if parent else None,
            island=island,
            generation=parent.generation + 1 if parent else 0,
            status=status,
            edit_kind=edit_kind if parent else "seed",
            score=(0.0 if score is None else score) if ok else None,
            cell=cell if ok else None,
            model=model if parent else None,
            artifacts=artifacts or {},
            **fields,
        )
        with self.archive.transaction():
            self.archive.add_program(program)
            if ok and offer:
                for grid in (island, -1):
                    self.archive.offer(self.run_id, grid, program)
        return program
