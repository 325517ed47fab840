"""The archive's exception class."""

from __future__ import annotations


class ArchiveError(Exception):
    """Something the archive cannot do: a missing run or program, an ambiguous id prefix, an
    unusable database file. The message says what was expected, what was found and the fix.

    Programming errors (calling things out of order, wrong argument values) raise
    ``ValueError`` or ``TypeError`` instead.
    """


class RunLockedError(ArchiveError):
    """Another controller is running this run: only one may write it at a time.

    Attributes:
        holder: what the other controller wrote about itself (pid, host, since, command);
            empty when it could not be read.
    """

    def __init__(self, message: str, holder: dict[str, object] | None = None) -> None:
        super().__init__(message)
        self.holder = holder or {}


class ArchiveWriteError(ArchiveError):
    """A write to the archive failed (disk full, I/O error, file locked too long).

    The transaction was rolled back: everything committed before is intact, and a run can be
    resumed once the cause is fixed. The message says what SQLite reported and what to do.
    """
