"""The archive's exception class."""

from __future__ import annotations


class ArchiveError(Exception):
    """Something the archive cannot do: a missing run or program, an ambiguous id prefix, an
    unusable database file. The message says what was expected, what was found and the fix.

    Programming errors (calling things out of order, wrong argument values) raise
    ``ValueError`` or ``TypeError`` instead.
    """
