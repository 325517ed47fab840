"""Whether an archive's schema is current, answered without importing sqlite-utils.

Opening an archive used to import sqlite-utils to ask its migration set what was pending, and
sqlite-utils imports pandas and numpy when they are installed (about 0.3 s of CPU): every
``evoforge status`` paid for it. An archive whose migrations are all applied needs none of
that, so :func:`is_current` reads sqlite-utils' record of applied migrations with plain SQL;
:mod:`evoforge.archive._migrations` (and sqlite-utils) is imported only when something is
pending, unknown, or recorded in an unexpected way.
"""

from __future__ import annotations

import sqlite3

MIGRATION_NAMES: tuple[str, ...] = (
    "m001_initial",
    "m002_llm_call_attempts",
    "m003_evaluations",
    "m004_mining_indexes",
    "m005_derived_at_scale",
    "m006_memory_states",
    "m007_search_quality",
)
"""Every migration of :mod:`evoforge.archive._migrations`, in order. A new migration's name
goes here too (``tests/archive/test_migrations.py`` checks that the two lists agree)."""

MIGRATION_SET = "evoforge"
"""The name of the archive's sqlite-utils migration set."""
_TABLE = "_sqlite_migrations"  # where sqlite-utils records applied migrations


def is_current(conn: sqlite3.Connection) -> bool:
    """True when ``conn``'s database has applied exactly :data:`MIGRATION_NAMES`, in order,
    and records them the way the installed sqlite-utils does (an ``id`` primary key).

    False sends the caller to sqlite-utils' migration set: a new archive, pending migrations,
    migrations of a newer evoforge, or a record table an older sqlite-utils made.
    """
    pks = [row[1] for row in conn.execute(f"PRAGMA table_info({_TABLE})") if row[5]]
    if pks != ["id"]:
        return False  # no table yet, or one that sqlite-utils would rebuild
    rows = conn.execute(
        f"SELECT name FROM {_TABLE} WHERE migration_set = ? ORDER BY rowid", (MIGRATION_SET,)
    )
    return tuple(name for (name,) in rows) == MIGRATION_NAMES
