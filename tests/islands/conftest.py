"""Fixtures for the island tests that need stored programs on island grids."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from evoforge.archive import Archive, Program, program_id
from evoforge.evaluators import Status
from evoforge.problems import Objective, Problem

SEED = (
    "# EVOLVE-BLOCK-START\ndef main():\n    a = 0.5\n    b = 0.25\n    return [a, b]\n"
    "# EVOLVE-BLOCK-END\n"
)

Store = Callable[..., Program]


@pytest.fixture
def plain_problem() -> Problem:
    """A problem that declares no descriptors."""
    return Problem(
        name="plain",
        spec_path=Path("/problems/plain/problem.py"),
        seed_source=SEED,
        objectives=(Objective("score"),),
    )


@pytest.fixture
def grid_archive(tmp_path: Path) -> Iterator[Archive]:
    with Archive(tmp_path / "evoforge.grid.db") as archive:
        yield archive


@pytest.fixture
def run_id(grid_archive: Archive, plain_problem: Problem) -> str:
    return grid_archive.create_run(plain_problem, config={}, seed=0).id


@pytest.fixture
def store(grid_archive: Archive, run_id: str) -> Store:
    """Store a program; ``elite=True`` also puts it in cell ``cell`` of its island."""
    seqs = itertools.count()

    def make(
        source: str,
        *,
        island: int = 0,
        cell: int = 0,
        score: float = 1.0,
        elite: bool = True,
        status: Status = Status.OK,
        ast_key: str | None = None,
    ) -> Program:
        ok = status is Status.OK
        program = Program(
            run_id=run_id,
            id=program_id(source),
            seq=next(seqs),
            source=source,
            parent_id=None,
            island=island,
            generation=0,
            status=status,
            score=score if ok else None,
            cell=cell if ok else None,
            ast_key=ast_key,
        )
        grid_archive.add_program(program)
        if elite:
            grid_archive.offer(run_id, island, program)
        return program

    return make


def variant(number: int, lines: int = 1) -> str:
    """A program of the seed's shape whose constants depend on ``number``."""
    body = "".join(f"    c{i} = {number} * {i} + {number % 7}\n" for i in range(lines))
    return (
        f"# EVOLVE-BLOCK-START\ndef main():\n{body}    return [c0, {number}]\n# EVOLVE-BLOCK-END\n"
    )
