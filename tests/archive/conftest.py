"""Fixtures for the archive tests: an archive file, a problem, a run, and a program factory."""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlite_utils

from evoforge.archive import Archive, Program, program_id
from evoforge.evaluators import Status
from evoforge.problems import Descriptor, Direction, Objective, Problem

MakeProgram = Callable[..., Program]


@pytest.fixture(scope="session")
def problem() -> Problem:
    """Two objectives and a 3 x 3 grid."""
    return Problem(
        name="toy problem",
        spec_path=Path("/problems/toy/problem.py"),
        seed_source="def main():\n    return 1\n",
        objectives=(Objective("score"), Objective("time", Direction.MINIMIZE)),
        descriptors=(Descriptor("a", 0.0, 3.0, 3), Descriptor("b", 0.0, 3.0, 3)),
    )


@pytest.fixture
def archive(tmp_path: Path) -> Iterator[Archive]:
    with Archive(tmp_path / "evoforge.db") as opened:
        yield opened


@pytest.fixture(scope="module")
def shared_archive(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Archive]:
    """One archive for a module's hypothesis tests; each example makes its own run."""
    with Archive(tmp_path_factory.mktemp("shared") / "evoforge.db") as opened:
        yield opened


def undo_added_column(path: Path, migration: str, table: str, column: str) -> None:
    """Make the archive at ``path`` as it was before ``migration``, which added ``column``
    to ``table`` (the archive an older evoforge wrote)."""
    db = sqlite_utils.Database(path)
    db.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
    db.execute("DELETE FROM _sqlite_migrations WHERE name = ?", [migration])
    db.close()


def new_run(archive: Archive, problem: Problem) -> str:
    """A fresh run with a unique id (hypothesis examples each take one)."""
    return archive.create_run(problem, config={}, seed=0, run_id=f"r-{uuid.uuid4().hex}").id


@pytest.fixture
def run_id(archive: Archive, problem: Problem) -> str:
    return new_run(archive, problem)


def build_program(
    run_id: str,
    seq: int,
    source: str | None = None,
    *,
    status: Status = Status.OK,
    score: float | None = 1.0,
    cell: int | None = 0,
    parent_id: str | None = None,
    **fields: Any,
) -> Program:
    """A program with sensible defaults; ``source`` defaults to a unique text per ``seq``."""
    source = f"def main():\n    return {seq}\n" if source is None else source
    ok = status is Status.OK
    return Program(
        run_id=run_id,
        id=program_id(source),
        seq=seq,
        source=source,
        parent_id=parent_id,
        island=fields.pop("island", 0),
        generation=fields.pop("generation", 0),
        status=status,
        score=score if ok else None,
        cell=cell if ok else None,
        **fields,
    )


@pytest.fixture
def make_program(archive: Archive, run_id: str) -> MakeProgram:
    """Build a program of the ``run_id`` run (next free seq unless given) and store it."""
    seqs = itertools.count()

    def make(source: str | None = None, *, seq: int | None = None, **fields: Any) -> Program:
        program = build_program(run_id, next(seqs) if seq is None else seq, source, **fields)
        archive.add_program(program)
        return program

    return make
