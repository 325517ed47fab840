"""Edit modes: what a candidate asks the model for, and when a failed program gets repaired.

Each candidate is one of:

* ``diff``: a focused change as SEARCH/REPLACE blocks (the default, as in AlphaEvolve);
* ``rewrite``: a new version of the EVOLVE-BLOCK code, whole, in one fenced block;
* ``crossover``: a child combining the parent with a second parent (either answer format);
* ``repair``: a recently failed program is the parent and the model is asked to fix it.

The first three are drawn with :func:`choose_mode`. Repair comes first: :func:`pick_repair`
decides, with probability ``repair_rate``, to spend the candidate on a recent failure of its
island. That state lives in the archive (a failure counts as "tried" once some program has it
as parent), so repair choices survive restarts and replay exactly on resume.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Collection
from typing import TYPE_CHECKING, Annotated, ClassVar

from pydantic import Field, model_validator

from evoforge.archive import repairable_failures
from evoforge.base.settings import Settings

if TYPE_CHECKING:
    import numpy as np

    from evoforge.archive import Archive, Program


_CHOICES = 8  # a repair picks among this many of the most recent repairable failures


class Mode(enum.StrEnum):
    """What a candidate asks for; stored as the child's ``edit_kind``."""

    DIFF = "diff"
    REWRITE = "rewrite"
    CROSSOVER = "crossover"
    REPAIR = "repair"


class ModeConfig(Settings):
    """How often each mode is used (``[modes]`` in a run configuration).

    Attributes:
        diff, rewrite, crossover: relative weights of the three modes :func:`choose_mode`
            draws from (they need not sum to 1; crossover's weight counts only when a second
            parent exists); 0 turns a mode off.
        repair_rate: probability that a candidate repairs a recent failure of its island when
            there is one (see :func:`pick_repair`); 0 turns repair off.
        repair_window: a failure is "recent" when it is among the run's last
            ``repair_window`` attempts; older failures are left alone.
    """

    section: ClassVar[str] = "modes"

    diff: Annotated[float, Field(ge=0)] = 0.6
    rewrite: Annotated[float, Field(ge=0)] = 0.2
    crossover: Annotated[float, Field(ge=0)] = 0.2
    repair_rate: Annotated[float, Field(ge=0, le=1)] = 0.3
    repair_window: Annotated[int, Field(ge=1)] = 256

    @model_validator(mode="after")
    def _some_mode_is_on(self) -> ModeConfig:
        if self.diff + self.rewrite + self.crossover <= 0:
            raise ValueError(
                "diff, rewrite and crossover weights are all 0; give at least one a positive "
                "weight, e.g. diff = 1"
            )
        return self


def choose_mode(rng: np.random.Generator, config: ModeConfig, *, can_crossover: bool) -> Mode:
    """Draw ``diff``, ``rewrite`` or ``crossover`` by the configured weights.

    Always draws exactly one number from ``rng``, so the rest of the candidate's random stream
    does not depend on the outcome.

    Args:
        rng: the candidate's generator.
        config: the weights.
        can_crossover: whether a second parent exists (the selection has inspirations). When
            it does not, crossover's weight is given to the others; when they weigh nothing,
            the mode is ``diff``.
    """
    u = float(rng.random())
    modes = [(Mode.DIFF, config.diff), (Mode.REWRITE, config.rewrite)]
    if can_crossover:
        modes.append((Mode.CROSSOVER, config.crossover))
    total = math.fsum(w for _, w in modes)
    if total <= 0:
        return Mode.DIFF
    edge = 0.0
    for mode, weight in modes:
        edge += weight / total
        if u < edge and weight > 0:
            return mode
    return next(mode for mode, weight in reversed(modes) if weight > 0)  # u at the very top


def pick_repair(
    archive: Archive,
    run_id: str,
    island: int,
    rng: np.random.Generator,
    config: ModeConfig,
    *,
    busy: Collection[str] = (),
) -> Program | None:
    """A recent repairable failure of ``island`` to use as the parent, or None.

    A failure is repairable when it ran (or was compiled) and failed (``incorrect``,
    ``compile_error``, ``runtime_error``, ``syntax_error`` or ``timeout``), has a source, is
    among the run's last ``config.repair_window`` attempts, was not itself a repair attempt
    (each failure gets one repair, so failed fixes do not chain), and has no child yet. With
    probability ``config.repair_rate``, and when such failures exist, one of the most recent
    ones is returned, chosen with ``rng``.

    ``busy`` holds the ids of failures that candidates in flight are already repairing (their
    children are not stored yet); they are skipped, so two candidates do not fix the same one.

    Always draws exactly one number from ``rng`` first (two when a failure is picked), so the
    draw sequence is a function of the archive's content (and of ``busy``).
    """
    if float(rng.random()) >= config.repair_rate:
        return None
    failures = [
        failure
        for failure in repairable_failures(
            archive, run_id, island, window=config.repair_window, limit=_CHOICES + len(busy)
        )
        if failure.id not in busy
    ][:_CHOICES]
    if not failures:
        return None
    return failures[int(rng.integers(len(failures)))]
