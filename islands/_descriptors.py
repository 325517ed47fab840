"""Built-in MAP-Elites descriptors for a problem that declares none.

Without descriptors every program falls in one cell, so each island keeps only its best and
always returns it as parent: greedy hill climbing, which stalls on the first local optimum.
Two descriptors computed from the program text alone give every problem a grid instead:

``size``
    ``log2`` of the evolving code's token count over the seed's (:func:`code_tokens` of the
    EVOLVE-BLOCK text). 0 is the seed's size, +1 twice as long, -1 half as long. Range
    (-1.5, 1.5) in 10 bins (each ~23 % longer than the one before); programs more than 2.8
    times longer or shorter than the seed share the end bins. The grid so keeps a short
    and a long solution of similar score apart, where greedy search would let code grow.

``distance``
    How far the program is from what its island already holds: the square root of the mean
    Jaccard distance (1 - similarity of token 5-gram sets, :func:`shingles`) to up to 16
    elites of its island (the best ones; itself excluded; 0 when the island has none).
    Range (0, 1) in 10 bins. The square root spreads the small distances of one-token
    edits (a distance of 0.04 lands in bin 2, not 0), so a modest but different idea gets
    a cell of its own instead of competing with its parent's.

Both ranges are fixed and declared, never stretched to the values seen so far, so a cell
means the same thing for the whole run and across runs and resumes; values outside a range
go to its end bins (:meth:`~evoforge.problems.Descriptor.bin`). ``distance`` is measured
against the island as it is when the program is recorded, so the same program may land in
another cell of another island or later; what is stored (the program's ``descriptors``) is
what decided its cell.

To use your own, declare descriptors in the problem (``descriptors = {"name": (low, high,
bins)}``) and return them from ``evaluate``: the built-in ones then do not apply. A declared
descriptor named ``"size"`` or ``"distance"`` that an ok result lacks is computed by the
engine, on the declared range and bins: the ``openevolve`` evaluator leaves them out so (an
OpenEvolve folder's ``complexity`` and ``diversity``); other evaluators require every
declared descriptor in the metrics. Run setting ``[search] descriptors = "none"`` turns off
the undeclared ones (one cell per island).
"""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING

from evoforge.archive import program_id
from evoforge.islands._similarity import (
    ShingleCache,
    code_tokens,
    evolving_code,
    fingerprint,
    jaccard,
)
from evoforge.problems import Descriptor

if TYPE_CHECKING:
    from evoforge.archive import Archive
    from evoforge.problems import Problem

SIZE = Descriptor("size", -1.5, 1.5, 10)
DISTANCE = Descriptor("distance", 0.0, 1.0, 10)
BUILTIN_DESCRIPTORS: tuple[Descriptor, ...] = (SIZE, DISTANCE)
"""``size`` and ``distance`` (see :mod:`evoforge.islands._descriptors`), on fixed ranges."""
REFERENCE_ELITES = 16
"""Elites of the island a program's ``distance`` is measured against (the best ones)."""


def with_builtin_descriptors(problem: Problem) -> Problem:
    """``problem`` with :data:`BUILTIN_DESCRIPTORS` when it declares none; else unchanged.

    Use the returned problem for everything that bins programs (``Program.from_result``,
    grid statistics), so cells and ``num_cells`` agree.
    """
    if problem.descriptors:
        return problem
    return dataclasses.replace(problem, descriptors=BUILTIN_DESCRIPTORS)


class BuiltinDescriptors:
    """Computes the built-in descriptor values of programs of one run.

    Deterministic given the archive's state: the same source and island grid give the same
    values. Shingles of elites are cached by program id, so a call costs the new program's
    tokens plus up to :data:`REFERENCE_ELITES` set comparisons.

    Example::

        problem = with_builtin_descriptors(problem)
        builtin = BuiltinDescriptors(archive, run.id, problem.seed_source, problem.language)
        result.descriptors.update(builtin.values(source, island))
        program = Program.from_result(result, problem, ...)
    """

    def __init__(
        self, archive: Archive, run_id: str, seed_source: str, language: str = "python"
    ) -> None:
        self.archive, self.run_id, self.language = archive, run_id, language
        self._seed_size = max(len(code_tokens(evolving_code(seed_source), language)), 1)
        self._shingles = ShingleCache(language)

    def values(self, source: str, island: int) -> dict[str, float]:
        """``{"size": ..., "distance": ...}`` for ``source`` recorded on ``island``."""
        own = fingerprint(source, self.language)
        size = math.log2(max(own.size, 1) / self._seed_size)
        return {SIZE.name: size, DISTANCE.name: self._distance(source, own.shingles, island)}

    def _distance(self, source: str, own: frozenset[int], island: int) -> float:
        me = program_id(source)
        elites = sorted(
            (e for e in self.archive.elites(self.run_id, island) if e.program_id != me),
            key=lambda e: (-e.score, e.seq),
        )[:REFERENCE_ELITES]
        if not elites:
            return 0.0
        total = math.fsum(1.0 - jaccard(own, self._elite(e.program_id)) for e in elites)
        return math.sqrt(total / len(elites))

    def _elite(self, program_id: str) -> frozenset[int]:
        return self._shingles.get(
            program_id, lambda: self.archive.get_program(self.run_id, program_id).source
        )
