"""The island model: N MAP-Elites grids, ring migration and reset of stagnant islands.

Islands keep no state outside SQLite: grids are the archive's ``elites`` rows and counters its
``island_state`` rows, all updated inside the caller's per-candidate transaction. So a run
rebuilt from the archive after any stop, ``kill -9`` included, continues exactly.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, ClassVar

import numpy as np
from pydantic import Field

from evoforge.archive import AddStatus, Elite, Program
from evoforge.base.settings import Settings

if TYPE_CHECKING:
    from evoforge.archive import Archive
    from evoforge.problems import InstanceScores

GLOBAL = -1  # the archive's island index for the run-wide grid


class IslandConfig(Settings):
    """How the population is structured (``[islands]`` in a run configuration).

    Attributes:
        count: number of islands.
        migration_interval: an island sends migrants after this many programs were accepted
            into its grid since its last migration.
        migration_evaluations: an island also sends migrants after this many evaluations on
            it since its last migration (a tuned child's trials included; an attempt that
            was not evaluated counts one), accepted or not (0: only ``migration_interval``
            counts); whichever count is reached first triggers it, and a migration resets
            both. Acceptances alone tie migration to progress, and islands that improve
            rarely hardly share: on ``bench/openevolve_example`` (4 islands, 600
            evaluations, 2 seeds) the first migration came at attempt ~410 and there were 3
            in the run. 40 evaluations (OpenEvolve migrates every 50 generations of an
            island) gave the first at attempt ~190 and 12 in the run (measured together
            with the built-in descriptors' new bins: duplicates 11 % of attempts, was
            15.6 %; the best after 600 evaluations unchanged within its spread).
        migration_rate: share of the sending island's elites that migrate (best first; at
            least one).
        stagnation: an island whose best score has not improved for this many evaluations is
            reset from the best other island (0 disables resets).
        selection: parent-selection strategy name (see ``evoforge plugins``).
        exploitation: probability that the parent is the island's best elite instead of the
            strategy's pick, as OpenEvolve's exploitation ratio: with many cells the strategy
            alone spreads the model's attention over weak elites. 0.8 by default: on
            circle_packing without its descriptors (built-in ones instead), 600 evaluations,
            3 seeds, best 2.49 with 0, 2.52 with 0.5, 2.58 with 0.8 (one cell per island:
            2.58); with its own descriptors, 2.51 with 0 and 2.55 with 0.8.
        selection_options: keyword options for the strategy (e.g. ``{"size": 3}``).
        inspirations: inspirations per prompt (other elites shown to the model).
    """

    section: ClassVar[str] = "islands"

    count: Annotated[int, Field(ge=1)] = 4
    migration_interval: Annotated[int, Field(ge=1)] = 25
    migration_evaluations: Annotated[int, Field(ge=0)] = 40
    migration_rate: Annotated[float, Field(gt=0, le=1)] = 0.1
    stagnation: Annotated[int, Field(ge=0)] = 150
    selection: Annotated[str, Field(min_length=1)] = "tournament"
    exploitation: Annotated[float, Field(ge=0, le=1)] = 0.8
    selection_options: dict[str, Any] = Field(default_factory=dict)
    inspirations: Annotated[int, Field(ge=0)] = 2


@dataclass(frozen=True)
class Selection:
    """What one candidate starts from."""

    island: int
    parent: Program
    inspirations: tuple[Program, ...]


@dataclass(frozen=True)
class Outcome:
    """What recording one evaluated program did to the population."""

    added: AddStatus = AddStatus.NOT_ADDED  # to the global grid
    island_added: AddStatus = AddStatus.NOT_ADDED
    events: tuple[tuple[str, int, dict[str, Any]], ...] = ()  # (kind, island, data)


Strategy = Callable[..., int]


def per_instance(strategy: Strategy) -> bool:
    """Whether ``strategy`` chooses by per-instance scores (it takes an ``instances``
    keyword; see :mod:`evoforge.islands._selection`)."""
    try:
        return "instances" in inspect.signature(strategy).parameters
    except (TypeError, ValueError):  # a builtin or C callable without a signature
        return False


class Islands:
    """Selection from and recording into the islands of one run.

    ``instances``: where the problem's per-instance scores are, for a strategy that chooses
    by them (:func:`per_instance`).
    """

    def __init__(
        self,
        archive: Archive,
        run_id: str,
        config: IslandConfig,
        strategy: Strategy,
        instances: InstanceScores | None = None,
    ) -> None:
        self.archive, self.run_id, self.config = archive, run_id, config
        self._strategy = strategy
        self._instances = instances if per_instance(strategy) else None

    def island_for(self, seq: int) -> int:
        """Islands take turns, so each gets the same share of the model's attention."""
        return seq % self.config.count

    def select(
        self, island: int, rng: np.random.Generator, *, avoid: Collection[str] = ()
    ) -> Selection:
        """Pick a parent with the configured strategy and distinct inspirations.

        Inspirations are other elites of the same island, plus the run's global best when it
        lives elsewhere, so good ideas cross islands between migrations too. ``avoid``: ids
        of elites not to pick as the parent (resting ones), unless no other is left.
        """
        elites = self.archive.elites(self.run_id, island)
        if not elites:
            raise RuntimeError(f"island {island} is empty; seed the run before selecting")
        parents = [e for e in elites if e.program_id not in avoid] or elites
        scores = [e.score for e in parents]
        exploit = self.config.exploitation
        if exploit and len(parents) > 1 and float(rng.random()) < exploit:
            index = max(range(len(parents)), key=lambda i: (scores[i], -parents[i].seq))
        elif self._instances is not None:
            tables = [
                self._instances.of(self.archive.get_program(self.run_id, e.program_id).metrics)
                for e in parents
            ]
            options = self.config.selection_options
            index = self._strategy(scores, rng, instances=tables, **options)
        else:
            index = self._strategy(scores, rng, **self.config.selection_options)
        parent = parents[index]
        others = [e for e in elites if e.program_id != parent.program_id]
        chosen: list[Elite] = []
        if others and self.config.inspirations:
            picks = rng.choice(
                len(others), size=min(len(others), self.config.inspirations), replace=False
            )
            chosen = [others[int(i)] for i in picks]
        best = self._best(GLOBAL)
        ids = {parent.program_id, *(e.program_id for e in chosen)}
        if best is not None and best.program_id not in ids and self.config.inspirations:
            chosen = [best, *chosen][: self.config.inspirations]
        get = self.archive.get_program
        return Selection(
            island=island,
            parent=get(self.run_id, parent.program_id),
            inspirations=tuple(get(self.run_id, e.program_id) for e in chosen),
        )

    def seed(self, program: Program) -> None:
        """Place the seed program in every island and the global grid."""
        for island in (GLOBAL, *range(self.config.count)):
            self.archive.offer(self.run_id, island, program)
            if island != GLOBAL:
                self.archive.set_island_state(self.run_id, island, best_score=program.score)

    def record(self, program: Program) -> Outcome:
        """Account for one evaluated program of ``program.island``; call inside the transaction.

        Offers an ok program to its island's grid and to the global grid, updates the
        island's counters, and migrates or resets when they say so.
        """
        island = program.island
        state = self.archive.island_state(self.run_id, island)
        added = island_added = AddStatus.NOT_ADDED
        accepted, since_improvement = state.accepted_since_migration, state.evals_since_improvement
        # evaluations as the budget counts them: a tuned child's trials are evaluations on
        # its island too (an attempt that was not evaluated still counts one, as before)
        spent = max(1, program.evaluations)
        evaluated = state.evals_since_migration + spent
        best = state.best_score
        if program.status == "ok" and program.score is not None and program.cell is not None:
            island_added = self.archive.offer(self.run_id, island, program)
            added = self.archive.offer(self.run_id, GLOBAL, program)
            accepted += bool(island_added)
        if program.score is not None and (best is None or program.score > best):
            best, since_improvement = program.score, 0
        else:
            since_improvement += spent
        self.archive.set_island_state(
            self.run_id,
            island,
            accepted_since_migration=accepted,
            evals_since_migration=evaluated,
            evals_since_improvement=since_improvement,
            best_score=best,
        )
        events = []
        if self.config.count > 1 and self._migration_due(accepted, evaluated):
            events.append(self._migrate(island, program.seq))
        if (
            self.config.count > 1
            and self.config.stagnation
            and since_improvement >= self.config.stagnation
        ):
            reset = self._reset(island, program.seq)
            if reset is not None:
                events.append(reset)
        return Outcome(added, island_added, tuple(events))

    def _migration_due(self, accepted: int, evaluated: int) -> bool:
        """Whether an island with these counts since its last migration sends migrants now."""
        every = self.config.migration_evaluations
        return accepted >= self.config.migration_interval or bool(every and evaluated >= every)

    def _best(self, island: int) -> Elite | None:
        elites = self.archive.elites(self.run_id, island)
        return max(elites, key=lambda e: (e.score, -e.seq)) if elites else None

    def _migrate(self, source: int, seq: int) -> tuple[str, int, dict[str, Any]]:
        """Copy the best ``migration_rate`` share of ``source``'s elites to the next island."""
        target = (source + 1) % self.config.count
        elites = sorted(self.archive.elites(self.run_id, source), key=lambda e: (-e.score, e.seq))
        migrants = elites[: max(1, math.ceil(self.config.migration_rate * len(elites)))]
        accepted = []
        for elite in migrants:
            program = self.archive.get_program(self.run_id, elite.program_id)
            if self.archive.offer(self.run_id, target, program):
                accepted.append(elite.program_id)
        if accepted:
            self._note_improvement(target, max(e.score for e in migrants))
        state = self.archive.island_state(self.run_id, source)
        self.archive.set_island_state(
            self.run_id,
            source,
            accepted_since_migration=0,
            evals_since_migration=0,
            migrations=state.migrations + 1,
        )
        data = {
            "from": source,
            "to": target,
            "sent": [e.program_id for e in migrants],
            "accepted": accepted,
        }
        self.archive.record_event(self.run_id, "migration", island=target, seq=seq, data=data)
        return ("migration", target, data)

    def _reset(self, island: int, seq: int) -> tuple[str, int, dict[str, Any]] | None:
        """Reseed a stagnant island from the best elite of the best other island.

        The island holding the run's best program is never reset: it is not stagnant, it is
        ahead. Returns None when there is nothing better to reseed from.
        """
        bests = {i: best for i in range(self.config.count) if (best := self._best(i)) is not None}
        leader = max(bests, key=lambda i: (bests[i].score, -i))
        if leader == island:
            return None
        donor = bests[leader]
        self.archive.clear_island(self.run_id, island)
        self.archive.offer(
            self.run_id, island, self.archive.get_program(self.run_id, donor.program_id)
        )
        state = self.archive.island_state(self.run_id, island)
        self.archive.set_island_state(
            self.run_id,
            island,
            accepted_since_migration=0,
            evals_since_migration=0,
            evals_since_improvement=0,
            best_score=donor.score,
            resets=state.resets + 1,
        )
        data = {"donor_island": leader, "donor": donor.program_id, "score": donor.score}
        self.archive.record_event(self.run_id, "reset", island=island, seq=seq, data=data)
        return ("reset", island, data)

    def _note_improvement(self, island: int, score: float) -> None:
        state = self.archive.island_state(self.run_id, island)
        if state.best_score is None or score > state.best_score:
            self.archive.set_island_state(
                self.run_id, island, best_score=score, evals_since_improvement=0
            )
