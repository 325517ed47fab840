"""Built-in MAP-Elites descriptors for a problem that declares none.

Without descriptors every program falls in one cell, so each island keeps only its best and
always returns it as parent: greedy hill climbing, which stalls on the first local optimum.
Two descriptors computed from the program text alone give every problem a grid instead, on
fixed, declared ranges whose bins are fine where small edits land and coarse far away:

``size``
    How much longer or shorter the evolving code is than the seed's, in tokens
    (:func:`code_tokens` of the EVOLVE-BLOCK text): ``asinh(change / 0.02)`` of the relative
    change ``(tokens - seed_tokens) / seed_tokens``, linear within a few percent of the seed
    and logarithmic beyond. Range (-4.4, 4.4) in 11 bins, so the seed's bin is centred on
    it; bin edges fall at 0.8 %, 3 %, 7 %, 16 %, 37 % and 81 % longer (or shorter).
    Programs more than 81 % longer or shorter share the end bins.

``distance``
    How far the program has drifted from the seed: the square root of the Jaccard distance
    (1 - similarity of token 5-gram sets, :func:`shingles`) to the seed's evolving code.
    Range (0, 1) in 10 bins: bin ``k`` holds distances from ``(k/10)**2`` to
    ``((k+1)/10)**2``, so one changed token of a 120-token block (0.08) is bin 2, two (0.16)
    bin 4, a rewrite of half of it (0.5) bin 7.

Why these. Measured on ``bench/openevolve_example`` (a 119-token block, the clean model
server, 4 islands, 600 evaluations, 2 seeds, 533 and 536 ok children): 48 % and 60 % of
children have exactly the seed's token count (constants and operators change, not lengths);
the others differ by 4 % at the median, 11 % at the 90th percentile and 39 % at most. One
edit is a Jaccard distance of 0.08 (the median distance of a child to its parent); to the
seed, children were 0.16 at the 10th percentile, 0.32 at the median, 0.44 at the 90th and
0.74 at most: distance bins 2 to 8, size bins 1 to 8. The earlier ranges (``size`` as
``log2`` of the token ratio on (-1.5, 1.5): bins 23 % wide, so +-4 % stayed in the seed's
bin or the one below; ``distance`` to up to 16 elites of the island, which moves little as
an island fills with relatives) kept 38 +- 1 cells occupied after 600 evaluations over 4
islands; these keep 66 +- 4 (cells that ok programs reached by attempt 300: 22-25 before,
38-41 now). Distance to the seed also fixes a program's cell: it no longer depends on the
island or on when the program was recorded, so the same program lands in the same cell
everywhere, across migrations and resumes.

Both ranges are fixed and declared, never stretched to the values seen so far, so a cell
means the same thing for the whole run and across runs and resumes; values outside a range
go to its end bins (:meth:`~evoforge.problems.Descriptor.bin`).

To use your own, declare descriptors in the problem (``descriptors = {"name": (low, high,
bins)}``) and return them from ``evaluate``: the built-in ones then do not apply. A declared
descriptor named ``"size"`` or ``"distance"`` that an ok result lacks is computed by the
engine, on the declared range and bins: the ``openevolve`` evaluator leaves them out so (an
OpenEvolve folder's ``complexity`` and ``diversity``); other evaluators require every
declared descriptor in the metrics. Run setting ``[search] descriptors = "none"`` turns off
the undeclared ones (one cell per island).

The one kind of range stretched to the values seen: an OpenEvolve folder's metric-named
feature dimensions, which OpenEvolve min-max scales (:class:`SeenRanges`, kept per run).
"""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING

from evoforge.islands._similarity import fingerprint, jaccard
from evoforge.problems import Descriptor

if TYPE_CHECKING:
    from evoforge.problems import Problem

SIZE_SCALE = 0.02
"""Relative token change at which ``size`` turns from linear to logarithmic (2 %)."""
SIZE = Descriptor("size", -4.4, 4.4, 11)
DISTANCE = Descriptor("distance", 0.0, 1.0, 10)
BUILTIN_DESCRIPTORS: tuple[Descriptor, ...] = (SIZE, DISTANCE)
"""``size`` and ``distance`` (see :mod:`evoforge.islands._descriptors`), on fixed ranges."""


def with_builtin_descriptors(problem: Problem) -> Problem:
    """``problem`` with :data:`BUILTIN_DESCRIPTORS` when it declares none; else unchanged.

    Use the returned problem for everything that bins programs (``Program.from_result``,
    grid statistics), so cells and ``num_cells`` agree.
    """
    if problem.descriptors:
        return problem
    return dataclasses.replace(problem, descriptors=BUILTIN_DESCRIPTORS)


def size_value(tokens: int, seed_tokens: int) -> float:
    """The ``size`` descriptor of a program of ``tokens`` tokens (0.0 for the seed's count)."""
    change = (tokens - seed_tokens) / max(seed_tokens, 1)
    return math.asinh(change / SIZE_SCALE)


class BuiltinDescriptors:
    """Computes the built-in descriptor values of the programs of one run.

    A pure function of the program's and the seed's text: the same source gets the same
    values on every island, at any time. A call costs the program's tokens (cached by
    :func:`fingerprint`) and one set comparison.

    Example::

        problem = with_builtin_descriptors(problem)
        builtin = BuiltinDescriptors(problem.seed_source, problem.language)
        result.descriptors.update(builtin.values(source))
        program = Program.from_result(result, problem, ...)
    """

    def __init__(self, seed_source: str, language: str = "python") -> None:
        self.language = language
        seed = fingerprint(seed_source, language)
        self._seed_size, self._seed_shingles = seed.size, seed.shingles

    def values(self, source: str) -> dict[str, float]:
        """``{"size": ..., "distance": ...}`` of ``source``."""
        own = fingerprint(source, self.language)
        distance = 1.0 - jaccard(own.shingles, self._seed_shingles)
        return {
            SIZE.name: size_value(own.size, self._seed_size),
            DISTANCE.name: math.sqrt(max(distance, 0.0)),
        }


class SeenRanges:
    """OpenEvolve's min-max scaling of a descriptor read from a metric, over a run.

    OpenEvolve places a program on such a dimension by its value scaled to [0, 1] between the
    smallest and largest values seen so far, its own included (``feature_scaling_method:
    minmax``, the default; 0.5 while all are equal), at the time it is added; programs placed
    earlier keep their cells. Scores such as 0.003 to 0.02 (``kissing_number``,
    ``heilbronn_*``) so spread over the bins, where a fixed [0, 1] range would put them all in
    the first. The ranges are the run's, kept by the controller (one for every evaluation
    slot and Ray actor) and started again from the run's stored metrics when a session
    starts (:meth:`~evoforge.archive.Archive.metric_ranges`), so a program's cell does not
    depend on which worker evaluated it or whether the run was resumed.

    Args:
        seen: ``{name: (smallest, largest)}`` seen before (a resumed run's).
    """

    def __init__(self, seen: dict[str, tuple[float, float]] | None = None) -> None:
        self.seen: dict[str, tuple[float, float]] = dict(seen or {})

    def scale(self, name: str, value: float) -> float:
        """``value`` scaled to [0, 1], after taking it into ``name``'s range."""
        low, high = self.seen.get(name, (value, value))
        low, high = min(low, value), max(high, value)
        self.seen[name] = (low, high)
        return 0.5 if high == low else (value - low) / (high - low)
