"""What :meth:`Archive.offer` did with a program."""

from __future__ import annotations

import enum


class AddStatus(enum.IntEnum):
    """Outcome of offering a program to a MAP-Elites grid.

    An ``IntEnum``, so it is truthy exactly when the program entered the grid and the values
    are ordered by how much the grid changed (as in pyribs' ``AddStatus``)::

        if archive.offer(run_id, island, program):  # NEW or IMPROVE_EXISTING
            ...
    """

    NOT_ADDED = 0
    """The cell's incumbent is at least as good (ties keep the incumbent)."""
    IMPROVE_EXISTING = 1
    """The program replaced a strictly worse incumbent."""
    NEW = 2
    """The program filled an empty cell."""
