"""Resting parents: a parent that keeps producing duplicates is not chosen for a while.

A model asked about the same program again and again runs out of new changes to it: after
a few copies and syntax-tree twins in a row, the next call from that parent is likely one
more (a deterministic model repeats itself outright). Such a parent *rests*: for its island's
next ``rest_selections`` selections another elite of the island is chosen instead (when it has
one), and the calls go where they can find something new. It is then chosen as before; with
the duplicates shown in its prompts (:mod:`evoforge.evolve.prompts._nothing_new`) and other
programs in the run by then, its next prompts differ.

Nothing is kept in memory: whether a parent rests is read from the archive at each selection
(its last ``rest_after`` children, one bounded probe of ``idx_programs_parent``), so a
resumed run rests the same parents. Selections of an island are counted by ``seq``: islands
take turns (:meth:`~evoforge.islands.Islands.island_for`), so ``k`` selections of one island
span ``k x islands`` candidates of the run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evoforge.archive import Status, failed_children

if TYPE_CHECKING:
    from evoforge.archive import Archive


def rests(
    archive: Archive,
    run_id: str,
    parent_id: str,
    seq: int,
    *,
    after: int,
    selections: int,
    islands: int,
) -> bool:
    """Whether ``parent_id`` rests when candidate ``seq`` selects: its last ``after`` children
    were all duplicates, the latest less than ``selections`` selections of its island ago.

    Args:
        archive, run_id: the run.
        parent_id: the selected parent.
        seq: the selecting candidate's number.
        after: duplicates in a row that rest a parent (``[search] rest_after``; 0: never).
        selections: how long it rests, in selections of its island.
        islands: the run's islands (they take turns).
    """
    if after <= 0:
        return False
    # The failed children among its last `after` children: all of them failed, as duplicates,
    # exactly when `after` come back and each is a duplicate.
    last = failed_children(archive, run_id, parent_id, limit=after, window=after)
    if len(last) < after or any(child.status is not Status.DUPLICATE for child in last):
        return False
    return seq - max(child.seq for child in last) <= selections * max(1, islands)
