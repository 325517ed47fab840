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
    "m008_repository_files",
    "m009_spread_and_cost",
    "m010_suites",
    "m011_transfer",
    "m012_request_keys",
)
"""Every migration of :mod:`evoforge.archive._migrations`, in order. A new migration's name
goes here too (``tests/archive/test_migrations.py`` checks that the two lists agree)."""

MIGRATION_SET = "evoforge"
"""The name of the archive's sqlite-utils migration set."""

# What a read-only reader of an archive without a migration sees in its place (see
# Archive._migrate).
READER_VIEWS: dict[str, tuple[str, ...]] = {
    # m005's derived tables, computed from the programs; no Pareto front is kept (directions
    # unknown): pareto_front() scans, as for runs created before m005
    "m005_derived_at_scale": (
        "CREATE TEMP VIEW run_status_counts AS SELECT run_id, status, count(*) AS n "
        "FROM main.programs GROUP BY run_id, status",
        "CREATE TEMP VIEW run_best_points AS SELECT p.run_id, p.seq, p.score "
        "FROM main.programs AS p WHERE p.status = 'ok' AND p.score IS NOT NULL AND NOT EXISTS "
        "(SELECT 1 FROM main.programs AS q WHERE q.run_id = p.run_id AND q.status = 'ok' "
        "AND q.score >= p.score AND q.seq < p.seq)",
        "CREATE TEMP VIEW runs AS SELECT *, NULL AS objectives_json FROM main.runs",
        "CREATE TEMP VIEW run_pareto AS SELECT NULL AS run_id, NULL AS program_id WHERE 0",
    ),
    # no memory checkpoints: the prompt memory rebuilds from the programs
    "m006_memory_states": (
        "CREATE TEMP VIEW memory_states AS SELECT NULL AS run_id, NULL AS refresh_every, "
        "NULL AS epoch, NULL AS state_json WHERE 0",
    ),
    # no prompt variants were recorded
    "m007_search_quality": (
        "CREATE TEMP VIEW prompt_variants AS SELECT NULL AS run_id, NULL AS id, "
        "NULL AS parent_id, NULL AS seq, NULL AS origin, NULL AS templates_json, NULL AS note, "
        "NULL AS created_at WHERE 0",
    ),
    # every program's source is in programs.source: no file tables to read
    "m008_repository_files": (
        "CREATE TEMP VIEW file_blobs AS SELECT NULL AS blob_id, NULL AS blob_hash, "
        "NULL AS blob_text WHERE 0",
        "CREATE TEMP VIEW run_files AS SELECT NULL AS rf_run, NULL AS rf_ord, NULL AS rf_path, "
        "NULL AS rf_blob WHERE 0",
        "CREATE TEMP VIEW program_files AS SELECT NULL AS pf_run, NULL AS pf_program, "
        "NULL AS pf_path, NULL AS pf_blob WHERE 0",
    ),
    # calls counted from the calls themselves; islands read as never having evaluated since
    # a migration (a reader does not migrate)
    "m009_spread_and_cost": (
        "CREATE TEMP VIEW run_call_counts AS SELECT run_id, status, count(*) AS n "
        "FROM main.llm_calls GROUP BY run_id, status",
        "CREATE TEMP VIEW island_state AS SELECT *, 0 AS evals_since_migration "
        "FROM main.island_state",
    ),
    # no suites were run
    "m010_suites": (
        "CREATE TEMP VIEW suites AS SELECT NULL AS id, NULL AS name, NULL AS budget, "
        "NULL AS allocation, NULL AS config_json, NULL AS status, NULL AS stop_reason, "
        "NULL AS created_at, NULL AS updated_at WHERE 0",
        "CREATE TEMP VIEW suite_tasks AS SELECT NULL AS suite_id, NULL AS ord, "
        "NULL AS problem, NULL AS config_json, NULL AS run_id WHERE 0",
        "CREATE TEMP VIEW suite_grants AS SELECT NULL AS suite_id, NULL AS seq, NULL AS ord, "
        "NULL AS evaluations, NULL AS cap, NULL AS spent, NULL AS gain, NULL AS why, "
        "NULL AS created_at WHERE 0",
    ),
    # no request was keyed: a resume (a writer, which migrates) is the only reader of keys
    "m012_request_keys": (
        "CREATE TEMP VIEW llm_calls AS SELECT *, NULL AS request_key FROM main.llm_calls",
    ),
}
# Columns of ``programs`` that a migration added, as a reader of an archive without it sees
# them; one view over main.programs adds those of every pending migration.
READER_PROGRAM_COLUMNS: dict[str, str] = {
    "m004_mining_indexes": "1 AS evaluations",  # rows before m004 used one evaluation each
    "m007_search_quality": "NULL AS edit_match, NULL AS prompt_variant, NULL AS ast_key",
    "m008_repository_files": "NULL AS source_files",
    "m011_transfer": "NULL AS transfer_from",
}

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
