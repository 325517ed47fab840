"""What the archive's parts share: the connection, the file path and argument checks."""

from __future__ import annotations

import sqlite3
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from evoforge.archive._errors import ArchiveError

if TYPE_CHECKING:
    from evoforge.archive._program import Program
    from evoforge.archive._records import Elite

PROGRAM_CACHE_SIZE = 4096  # parents and inspirations come back often; sources are small


def check_fields(method: str, fields: dict[str, Any], allowed: frozenset[str]) -> None:
    """Raise ``TypeError`` naming any keyword of ``method`` outside ``allowed``."""
    unknown = sorted(set(fields) - allowed)
    if unknown:
        raise TypeError(
            f"{method}() got unknown field(s) {', '.join(unknown)}; "
            f"expected some of {', '.join(sorted(allowed))}"
        )


class Store:
    """Base of the :class:`~evoforge.archive.Archive` parts: an open connection to ``path``."""

    conn: sqlite3.Connection
    path: Path
    _depth: int = 0  # nesting depth of transaction()
    # Read caches for the per-candidate hot path. Program rows never change once stored and
    # grids change only through this object (one writer per run: its controller), so entries
    # stay true; writes update or drop them and a rollback drops them all.
    _elite_cache: dict[tuple[str, int], tuple[Elite, ...]]
    _program_cache: OrderedDict[tuple[str, str], Program]

    def _init_caches(self) -> None:
        self._elite_cache, self._program_cache = {}, OrderedDict()

    def _drop_caches(self) -> None:
        self._elite_cache.clear()
        self._program_cache.clear()

    @contextmanager
    def transaction(self) -> Iterator[Self]:
        """Run the block in one write transaction (``BEGIN IMMEDIATE`` … ``COMMIT``).

        An exception rolls back everything done in the block and propagates. A nested
        ``transaction()`` joins the outer one: nothing is committed until the outermost block
        ends, and an exception that escapes it rolls back the inner blocks' work too (one
        caught inside the outer block does not; there are no savepoints).
        """
        if self._depth:
            self._depth += 1
            try:
                yield self
            finally:
                self._depth -= 1
            return
        self.conn.execute("BEGIN IMMEDIATE")
        self._depth = 1
        try:
            yield self
        except BaseException:
            self._depth = 0
            self._rollback()
            raise
        self._depth = 0
        try:
            self.conn.execute("COMMIT")
        except BaseException:
            self._rollback()
            raise

    def _rollback(self) -> None:
        self._drop_caches()  # they may hold what the rolled-back work wrote
        if self.conn.in_transaction:
            self.conn.execute("ROLLBACK")

    def _run_exists(self, run_id: str) -> bool:
        row = self.conn.execute("SELECT 1 FROM runs WHERE id = ?", (run_id,)).fetchone()
        return row is not None

    def _no_run(self, run_id: str) -> ArchiveError:
        return ArchiveError(f"no run {run_id!r} in {self.path}; `evoforge status` lists the runs")
