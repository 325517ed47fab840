"""The novelty filter: candidates equivalent or nearly identical to known ones are not evaluated.

An evaluation is the scarce resource of a run; a model often proposes what the run already
has: the same program with a variable renamed, a comment changed, lines re-wrapped. The
filter runs after the edit is applied and before the candidate is evaluated:

1. **Equivalent** (rule ``ast``): a stored program of the run, or a candidate being
   evaluated now, has the same :func:`ast_key`. Always rejected: its result is known.
2. **Near-duplicate** (rule ``near``): the Jaccard similarity of its token shingles to an
   elite of its island is at least ``similarity``. Rejected with probability ``rejection``,
   so small steps are thinned out but not forbidden (a small step is sometimes the one that
   improves).

A rejected candidate is stored with status ``duplicate`` (it used no evaluation) and the
artifacts of :meth:`Verdict.artifacts`.

Cost per candidate, given its :class:`Fingerprint`: one index probe, and a comparison with
the island's elites that is a MinHash sketch check against all of them (numpy) followed by
exact Jaccard similarity with the few most similar (see ``bench/novelty_cost.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from evoforge.islands._similarity import Fingerprint, ShingleCache, fingerprint, jaccard

if TYPE_CHECKING:
    from evoforge.archive import Archive

RULE_AST = "ast"
RULE_NEAR = "near"
SKETCH_SIZE = 64
"""MinHash values per program: estimates Jaccard similarity within ~0.03 near 0.95."""
SHORTLIST = 8
"""Elites compared exactly: the most similar by sketch (the true nearest, all but surely)."""

_rng = np.random.default_rng(0x5EED)  # fixed: sketches must agree across processes and runs
_MULTIPLIERS = _rng.integers(0, 2**63, size=SKETCH_SIZE, dtype=np.uint64) * np.uint64(2)
_MULTIPLIERS += np.uint64(1)  # odd: multiplying permutes 64-bit values
_OFFSETS = _rng.integers(0, 2**63, size=SKETCH_SIZE, dtype=np.uint64)
_EMPTY_SKETCH = np.full(SKETCH_SIZE, np.iinfo(np.uint64).max, dtype=np.uint64)


def sketch(shingles: frozenset[int]) -> np.ndarray:
    """The MinHash sketch of a shingle set: per hash function the least hash of its members.

    The share of positions where two sketches agree estimates the Jaccard similarity of
    their sets. The hash functions are fixed, so sketches compare across processes.
    """
    if not shingles:
        return _EMPTY_SKETCH
    values = np.fromiter(shingles, dtype=np.uint64, count=len(shingles))
    with np.errstate(over="ignore"):
        mixed = values[:, None] * _MULTIPLIERS[None, :] + _OFFSETS[None, :]
        mixed ^= mixed >> np.uint64(29)
    return mixed.min(axis=0)


@dataclass(frozen=True)
class Verdict:
    """Why the novelty filter rejected a candidate.

    Attributes:
        rule: ``ast`` (equivalent to a known program) or ``near`` (a near-duplicate of an
            elite of its island).
        duplicate_of: the id of that program (for ``ast`` and an equivalent still being
            evaluated: the key it was registered under with :meth:`NoveltyFilter.begin`, as
            ``in-flight:<key>``).
        similarity: 1.0 for ``ast``; the Jaccard similarity for ``near``.
        key: the candidate's :func:`ast_key` (store it in the program's ``ast_key``).
    """

    rule: str
    duplicate_of: str
    similarity: float
    key: str

    def message(self) -> str:
        """One line for people (and the ``error`` artifact, so failure groups read well)."""
        if self.rule == RULE_AST:
            return (
                "rejected by the novelty filter (not evaluated): equivalent to a program of "
                "the run (same syntax tree once names, comments and formatting are erased)"
            )
        return (
            "rejected by the novelty filter (not evaluated): a near-duplicate of an elite of "
            f"its island ({100 * self.similarity:.0f}% of token 5-grams shared)"
        )

    def artifacts(self) -> dict[str, str]:
        """The artifacts to store on the candidate's ``duplicate`` row."""
        return {
            "error": self.message(),
            "rule": self.rule,
            "duplicate_of": self.duplicate_of,
            "similarity": f"{self.similarity:.3f}",
        }


class NoveltyFilter:
    """Rejects candidates of one run that are equivalent or nearly identical to known ones.

    Args:
        archive: the run's archive (read only: stored programs' keys, the island's elites).
        run_id: the run.
        similarity: Jaccard similarity of shingles at or above which a candidate is a
            near-duplicate of an elite (``[search] near_duplicate_similarity``).
        rejection: probability that a near-duplicate is rejected
            (``[search] near_duplicate_rejection``); 0 turns the rule off.
        language: the problem's language (``problem.language``).

    Example::

        novelty = NoveltyFilter(archive, run.id, similarity=0.95, rejection=0.5)
        verdict = novelty.check(source, island, rng)
        if verdict is None:
            novelty.begin(key)  # ... evaluate ...; novelty.end(key) once it is stored
    """

    def __init__(
        self,
        archive: Archive,
        run_id: str,
        *,
        similarity: float,
        rejection: float,
        language: str = "python",
    ) -> None:
        if not 0 < similarity <= 1:
            raise ValueError(f"similarity must be in (0, 1], got {similarity}")
        if not 0 <= rejection <= 1:
            raise ValueError(f"rejection must be a probability in [0, 1], got {rejection}")
        self.archive, self.run_id, self.language = archive, run_id, language
        self.similarity, self.rejection = similarity, rejection
        self._in_flight: dict[str, int] = {}
        self._shingles = ShingleCache(language)
        self._sketches: dict[str, np.ndarray] = {}
        self._matrices: dict[int, tuple[tuple[str, ...], np.ndarray]] = {}

    # -- candidates being evaluated -------------------------------------------------------

    def begin(self, key: str) -> None:
        """Note that a candidate with this key is being evaluated (call once it passed
        :meth:`check`), so an equivalent proposed meanwhile is caught."""
        self._in_flight[key] = self._in_flight.get(key, 0) + 1

    def end(self, key: str) -> None:
        """The candidate noted by :meth:`begin` is stored (or abandoned): its key is now
        found in the archive, or nowhere."""
        count = self._in_flight.get(key, 0)
        if count <= 1:
            self._in_flight.pop(key, None)
        else:
            self._in_flight[key] = count - 1

    # -- the check ------------------------------------------------------------------------

    def check(
        self,
        source: str,
        island: int,
        rng: np.random.Generator,
        *,
        precomputed: Fingerprint | None = None,
    ) -> Verdict | None:
        """Why ``source``, proposed on ``island``, should not be evaluated; None to go on.

        Args:
            source: the candidate program.
            island: the island it was proposed for (its elites are the near-duplicate
                reference).
            rng: draws whether a near-duplicate is rejected (only when one is found, so a
                seeded run replays exactly).
            precomputed: the candidate's :func:`fingerprint`, when computed already (in
                the proposal worker); computed here otherwise.
        """
        own = precomputed or fingerprint(source, self.language)
        twin = self.twin(own.key)
        if twin is not None:
            return Verdict(RULE_AST, twin, 1.0, own.key)
        if self.rejection <= 0:
            return None
        nearest = self.nearest(own.shingles, island)
        if nearest is None or nearest[1] < self.similarity:
            return None
        if float(rng.random()) >= self.rejection:
            return None
        return Verdict(RULE_NEAR, nearest[0], nearest[1], own.key)

    def twin(self, key: str) -> str | None:
        """The stored program with this equivalence key (``in-flight:KEY`` for a child
        being evaluated); None when there is none."""
        if key in self._in_flight:
            return f"in-flight:{key}"
        return self.archive.find_equivalent(self.run_id, key)

    def nearest(self, shingles: frozenset[int], island: int) -> tuple[str, float] | None:
        """The elite of ``island`` most similar to these shingles, with its Jaccard
        similarity; None for an empty island.

        All elites are ranked by MinHash sketch and the :data:`SHORTLIST` best compared
        exactly (a true nearest left out would need a sketch error of many standard
        deviations); deterministic for a given grid.
        """
        elites = self.archive.elites(self.run_id, island)
        if not elites:
            return None
        ids = [e.program_id for e in elites]
        if len(ids) > SHORTLIST:
            estimates = (self._matrix(island, ids) == sketch(shingles)).mean(1)
            ids = [ids[i] for i in np.argsort(-estimates, kind="stable")[:SHORTLIST]]
        best_id, best = ids[0], -1.0
        for candidate in ids:
            value = jaccard(shingles, self._elite(candidate))
            if value > best:
                best_id, best = candidate, value
        return best_id, best

    def _elite(self, program_id: str) -> frozenset[int]:
        return self._shingles.get(
            program_id, lambda: self.archive.get_program(self.run_id, program_id).source
        )

    def _matrix(self, island: int, ids: list[str]) -> np.ndarray:
        """The sketches of ``ids`` (the island's elites) as rows, rebuilt when they change."""
        key = tuple(ids)
        cached = self._matrices.get(island)
        if cached is None or cached[0] != key:
            cached = self._matrices[island] = (key, np.stack([self._sketch(i) for i in ids]))
        return cached[1]

    def _sketch(self, program_id: str) -> np.ndarray:
        found = self._sketches.get(program_id)
        if found is None:
            if len(self._sketches) >= self._shingles.size:
                self._sketches.clear()
            found = self._sketches[program_id] = sketch(self._elite(program_id))
        return found
