"""What the archive's parts share: the connection, the file path and argument checks."""

from __future__ import annotations

import contextlib
import shutil
import sqlite3
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from evoforge.archive._errors import ArchiveError, ArchiveWriteError

if TYPE_CHECKING:
    from evoforge.archive._program import Program
    from evoforge.archive._records import Elite

PROGRAM_CACHE_SIZE = 4096  # parents and inspirations come back often; sources are small


_WRITE_FAILURES = ("SQLITE_FULL", "SQLITE_IOERR", "SQLITE_BUSY", "SQLITE_LOCKED",
                   "SQLITE_READONLY", "SQLITE_CANTOPEN", "SQLITE_CORRUPT")  # fmt: skip


def _is_write_failure(exc: BaseException) -> bool:
    """SQLite failing to write (disk, I/O, locks), as opposed to a bad statement or a
    constraint (a bug, raised as it is). Extended codes (``SQLITE_IOERR_WRITE``) count."""
    name = getattr(exc, "sqlite_errorname", "") or ""
    return isinstance(exc, sqlite3.Error) and name.startswith(_WRITE_FAILURES)


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
    _fronts: dict[str, Any]  # run id -> its Pareto front in memory (see _front.py)

    def _init_caches(self) -> None:
        self._elite_cache, self._program_cache, self._fronts = {}, OrderedDict(), {}

    def _drop_caches(self) -> None:
        self._elite_cache.clear()
        self._program_cache.clear()
        self._fronts.clear()

    @contextmanager
    def transaction(self) -> Iterator[Self]:
        """Run the block in one write transaction (``BEGIN IMMEDIATE`` … ``COMMIT``).

        An exception rolls back everything done in the block and propagates. A nested
        ``transaction()`` joins the outer one: nothing is committed until the outermost block
        ends, and an exception that escapes it rolls back the inner blocks' work too (one
        caught inside the outer block does not; there are no savepoints).

        Raises:
            ArchiveWriteError: SQLite could not write (disk full, I/O error, the file locked
                by another process for longer than the busy timeout); the block's work is
                rolled back, everything committed before is intact.
        """
        if self._depth:
            self._depth += 1
            try:
                yield self
            finally:
                self._depth -= 1
            return
        try:
            self.conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            raise self._write_error(exc) from exc
        self._depth = 1
        try:
            yield self
        except BaseException as exc:
            self._depth = 0
            self._rollback()
            if _is_write_failure(exc):
                raise self._write_error(exc) from exc  # type: ignore[arg-type]
            raise
        self._depth = 0
        try:
            self.conn.execute("COMMIT")
        except BaseException as exc:
            self._rollback()
            if _is_write_failure(exc):
                raise self._write_error(exc) from exc  # type: ignore[arg-type]
            raise

    def _rollback(self) -> None:
        self._drop_caches()  # they may hold what the rolled-back work wrote
        if self.conn.in_transaction:
            with contextlib.suppress(sqlite3.Error):  # SQLite may have rolled back itself
                self.conn.execute("ROLLBACK")

    def _write_error(self, exc: sqlite3.Error) -> ArchiveWriteError:
        """What a failed write means for the user, with the fix."""
        reason = str(exc)
        folder = self.path.absolute().parent
        if "full" in reason:
            try:
                free = f"{shutil.disk_usage(folder).free / 2**20:.1f} MB free there"
            except OSError:
                free = "free space unknown"
            fix = f"the disk holding {folder} is full ({free}); free some space"
        elif "locked" in reason or "busy" in reason:
            fix = (
                "another process held the archive for longer than the busy timeout; stop "
                "whatever keeps it open for writing"
            )
        elif "readonly" in reason:
            fix = f"the archive or its folder {folder} is read-only; make it writable"
        else:
            fix = f"check the disk holding {folder} (an I/O error)"
        return ArchiveWriteError(
            f"cannot write to archive {self.path}: {reason}. Nothing already committed is "
            f"lost; {fix}, then resume"
        )

    def _run_exists(self, run_id: str) -> bool:
        row = self.conn.execute("SELECT 1 FROM runs WHERE id = ?", (run_id,)).fetchone()
        return row is not None

    def _no_run(self, run_id: str) -> ArchiveError:
        return ArchiveError(f"no run {run_id!r} in {self.path}; `evoforge status` lists the runs")
