"""Schema migrations of the archive, applied when it is opened.

Rules (as in sqlite-utils and llm): a migration is a function ``mNNN_what(db)``, runs in one
transaction with the record of it having been applied, and is never edited once released -
change the schema with a new migration. Tables are STRICT; JSON lives in TEXT columns named
``*_json``; every index says which query it serves.
"""

# sqlite-utils types ``db[name]`` as ``Table | View`` (these migrations only ever name tables),
# and m006 fills an unannotated ``points, best = [], {}``. Migrations are never edited once
# released, so the checker is told here rather than the bodies changed.
# mypy: disable-error-code="union-attr, var-annotated"

from __future__ import annotations

from sqlite_utils import Database, Migrations
from sqlite_utils.db import DescIndex

migrations = Migrations("evoforge")

_RUN_FK = [("run_id", "runs", "id")]


@migrations()
def m001_initial(db: Database) -> None:
    """Runs, programs, MAP-Elites cells, island counters, events and LLM calls."""
    db["runs"].create(
        {
            "id": str,
            "problem": str,
            "problem_path": str,
            "config_json": str,
            "seed": int,
            "status": str,  # running | stopped | finished | failed
            "stop_reason": str,
            "created_at": float,
            "updated_at": float,
            "next_seq": int,
            "evaluations": int,
            "attempts": int,
            "duplicates": int,
            "elapsed_s": float,
            "best_score": float,
            "best_program_id": str,
            "tokens_in": int,
            "tokens_out": int,
            "cost_usd": float,
        },
        pk="id",
        not_null=["problem", "problem_path", "config_json", "seed", "status", "created_at",
                  "updated_at", "next_seq", "evaluations", "attempts", "duplicates",
                  "elapsed_s", "tokens_in", "tokens_out", "cost_usd"],
        defaults={"config_json": "{}", "status": "running", "next_seq": 0, "evaluations": 0,
                  "attempts": 0, "duplicates": 0, "elapsed_s": 0.0, "tokens_in": 0,
                  "tokens_out": 0, "cost_usd": 0.0},
        strict=True,
    )  # fmt: skip
    # runs() / latest_run() scan this small table and sort it; no index.

    programs = db["programs"].create(
        {
            "run_id": str,
            "id": str,  # content hash of source
            "seq": int,
            "source": str,  # NULL only for edit_error rows
            "parent_id": str,
            "island": int,
            "generation": int,
            "status": str,  # evaluators.Status
            "edit": str,  # the model's raw answer
            "edit_kind": str,  # seed | diff | rewrite | crossover | repair | carry
            "score": float,
            "cell": int,
            "metrics_json": str,
            "objectives_json": str,
            "descriptors_json": str,
            "artifacts_json": str,
            "timings_json": str,
            "device_json": str,
            "inspirations_json": str,
            "model": str,
            "created_at": float,
        },
        pk=("run_id", "id"),
        foreign_keys=_RUN_FK,
        not_null=["run_id", "id", "seq", "island", "generation", "status", "edit_kind",
                  "metrics_json", "objectives_json", "descriptors_json", "artifacts_json",
                  "timings_json", "device_json", "inspirations_json", "created_at"],
        defaults={"metrics_json": "{}", "objectives_json": "{}", "descriptors_json": "{}",
                  "artifacts_json": "{}", "timings_json": "{}", "device_json": "{}",
                  "inspirations_json": "[]"},
        strict=True,
    )  # fmt: skip
    # The primary key (run_id, id) serves get_program / has_program and find_program's
    # prefix range within one run.
    # top(): WHERE run_id = ? AND status = 'ok' ORDER BY score DESC, seq LIMIT k; also
    # count_programs(status=...) and status_counts() (GROUP BY status).
    programs.create_index(
        ["run_id", "status", DescIndex("score"), "seq"], index_name="idx_programs_top"
    )
    # Lookup by attempt number; programs(after_seq=...) and best_over_time() in seq order.
    # Unique: each attempt number is handed out once.
    programs.create_index(["run_id", "seq"], index_name="idx_programs_seq", unique=True)
    # find_program(): WHERE id >= :prefix AND id < :prefix_end across all runs.
    programs.create_index(["id"], index_name="idx_programs_id")
    # Children of a program: WHERE run_id = ? AND parent_id = ? (lineage trees, offspring
    # counts).
    programs.create_index(["run_id", "parent_id"], index_name="idx_programs_parent")

    db["elites"].create(
        {
            "run_id": str,
            "island": int,  # -1 is the run's global grid
            "cell": int,
            "program_id": str,
            "score": float,
            "seq": int,  # seq of the program, i.e. when it entered
        },
        pk=("run_id", "island", "cell"),
        foreign_keys=_RUN_FK,
        not_null=["run_id", "island", "cell", "program_id", "score", "seq"],
        strict=True,
    )
    # The primary key serves elites(run_id, island), offer()'s cell lookup, clear_island()
    # and stats(); no other index.

    db["island_state"].create(
        {
            "run_id": str,
            "island": int,
            "accepted_since_migration": int,
            "evals_since_improvement": int,
            "best_score": float,
            "resets": int,
            "migrations": int,
        },
        pk=("run_id", "island"),
        foreign_keys=_RUN_FK,
        not_null=["run_id", "island", "accepted_since_migration", "evals_since_improvement",
                  "resets", "migrations"],
        defaults={"accepted_since_migration": 0, "evals_since_improvement": 0, "resets": 0,
                  "migrations": 0},
        strict=True,
    )  # fmt: skip
    # The primary key serves island_state() / set_island_state().

    events = db["events"].create(
        {
            "id": int,
            "run_id": str,
            "seq": int,
            "kind": str,  # run_start | run_resume | run_stop | run_finish | migration | reset …
            "island": int,
            "data_json": str,
            "created_at": float,
        },
        pk="id",
        foreign_keys=_RUN_FK,
        not_null=["run_id", "kind", "data_json", "created_at"],
        defaults={"data_json": "{}"},
        strict=True,
    )
    # events(run_id, kind=...): WHERE run_id = ? [AND kind = ?] ORDER BY id.
    events.create_index(["run_id", "kind"], index_name="idx_events_run_kind")

    llm_calls = db["llm_calls"].create(
        {
            "id": int,
            "run_id": str,
            "seq": int,
            "program_id": str,
            "model": str,
            "prompt_tokens": int,  # NULL = unknown
            "completion_tokens": int,  # NULL = unknown
            "cost_usd": float,  # NULL = unknown, never 0 for unknown
            "latency_s": float,
            "status": str,  # ok | error
            "error": str,
            "created_at": float,
        },
        pk="id",
        foreign_keys=_RUN_FK,
        not_null=["run_id", "seq", "model", "latency_s", "status", "created_at"],
        strict=True,
    )
    # llm_calls(run_id): WHERE run_id = ? ORDER BY seq, id (per-run cost and error reports).
    llm_calls.create_index(["run_id", "seq"], index_name="idx_llm_calls_run_seq")


@migrations()
def m002_llm_call_attempts(db: Database) -> None:
    """llm_calls holds one row per attempt: its number, why it failed, and the waits.

    ``status`` may now also be ``retry``: a failed attempt that was tried again. Rows written
    before this migration were whole calls and read as attempt 1.
    """
    llm_calls = db["llm_calls"]
    llm_calls.add_column("attempt", int, not_null_default=1)  # 1-based
    llm_calls.add_column("error_kind", str)  # evoforge.evolve.models._retry.KINDS; NULL when ok
    llm_calls.add_column("status_code", int)  # HTTP status of a failed attempt, if any
    llm_calls.add_column("retry_after_s", float)  # the provider's Retry-After, if sent
    llm_calls.add_column("waited_s", float)  # waited after this attempt before the next


@migrations()
def m003_evaluations(db: Database) -> None:
    """Evaluations started and not yet recorded: one row per (run, program) while it runs.

    Written before a candidate is evaluated and deleted in the transaction that stores it, so
    after a crash or ``kill -9`` a row names a candidate whose evaluation never finished, and
    ``attempts`` counts how often; a resumed run records one that keeps failing to finish as
    crashed instead of evaluating it forever.
    """
    db["evaluations"].create(
        {"run_id": str, "program_id": str, "seq": int, "attempts": int, "started_at": float},
        pk=("run_id", "program_id"),
        foreign_keys=_RUN_FK,
        not_null=["run_id", "program_id", "seq", "attempts", "started_at"],
        strict=True,
    )
    # The primary key serves begin_evaluation() and the delete in add_program().


@migrations()
def m004_mining_indexes(db: Database) -> None:
    """Evaluations per program, and an index for mining a run's history (the dashboard's run
    page, ``evoforge stats``).

    ``evaluations``: what a program used of the budget, 1 plus its knob-tuning trials (rows
    written before knob tuning existed used 1), so the history counts evaluations as the
    budget does.
    """
    db["programs"].add_column("evaluations", int, not_null_default=1)
    # timeline(): WHERE run_id = ? ORDER BY seq, reading status, island, score and
    # created_at from the index alone. Without it each of a run's rows is read from the table,
    # past its source text (100k programs: about 10x slower).
    db["programs"].create_index(
        ["run_id", "seq", "status", "island", "score", "created_at", "evaluations"],
        index_name="idx_programs_timeline",
    )


@migrations()
def m005_derived_at_scale(db: Database) -> None:
    """Data derived from ``programs`` kept as rows are stored, so that a run's status counts,
    best-over-time and Pareto front read O(answer) rows at a million programs, not O(run).

    Programs are append-only (no statement of evoforge updates or deletes one), so triggers
    and inserts keep these exact. Existing runs are backfilled here; their Pareto front is
    not (their objectives' directions were not recorded): ``pareto_front`` scans them.
    """
    db["run_status_counts"].create(
        {"run_id": str, "status": str, "n": int},
        pk=("run_id", "status"),
        foreign_keys=_RUN_FK,
        not_null=["run_id", "status", "n"],
        strict=True,
    )
    # The primary key serves status_counts() and count_programs(): WHERE run_id = ?.
    db.execute(
        "INSERT INTO run_status_counts (run_id, status, n) "
        "SELECT run_id, status, count(*) FROM programs GROUP BY run_id, status"
    )
    db.execute(
        "CREATE TRIGGER programs_count AFTER INSERT ON programs BEGIN "
        "INSERT INTO run_status_counts (run_id, status, n) VALUES (NEW.run_id, NEW.status, 1) "
        "ON CONFLICT (run_id, status) DO UPDATE SET n = n + 1; END"
    )

    # best_over_time(): the run's prefix maxima of score in seq order, one row per point.
    db["run_best_points"].create(
        {"run_id": str, "seq": int, "score": float},
        pk=("run_id", "seq"),
        foreign_keys=_RUN_FK,
        not_null=["run_id", "seq", "score"],
        strict=True,
    )
    # The primary key serves best_over_time() (WHERE run_id = ? ORDER BY seq) and the
    # trigger's prefix maximum (seq < NEW.seq) and clean-up (seq > NEW.seq) ranges.
    db.execute(
        "CREATE TRIGGER programs_best AFTER INSERT ON programs "
        "WHEN NEW.status = 'ok' AND NEW.score IS NOT NULL AND NOT EXISTS (SELECT 1 FROM "
        "run_best_points WHERE run_id = NEW.run_id AND seq < NEW.seq AND score >= NEW.score) "
        "BEGIN "
        "DELETE FROM run_best_points WHERE run_id = NEW.run_id AND seq > NEW.seq "
        "AND score <= NEW.score; "
        "INSERT INTO run_best_points (run_id, seq, score) VALUES (NEW.run_id, NEW.seq, NEW.score); "
        "END"
    )
    rows = db.execute(
        "SELECT run_id, seq, score FROM programs WHERE status = 'ok' AND score IS NOT NULL "
        "ORDER BY run_id, seq"
    )
    points, best = [], {}
    for run_id, seq, score in rows:
        if run_id not in best or score > best[run_id]:
            best[run_id] = score
            points.append((run_id, seq, score))
    db.conn.executemany("INSERT INTO run_best_points (run_id, seq, score) VALUES (?, ?, ?)", points)

    # pareto_front() for the objectives a run was created with (runs.objectives_json): the
    # run's non-dominated ok programs, kept by Archive.add_program.
    db["runs"].add_column("objectives_json", str)  # [[name, "maximize"|"minimize"], ...]
    db["run_pareto"].create(
        {"run_id": str, "program_id": str},
        pk=("run_id", "program_id"),
        foreign_keys=_RUN_FK,
        not_null=["run_id", "program_id"],
        strict=True,
    )
    # The primary key serves pareto_front() and its upkeep: WHERE run_id = ?.


@migrations()
def m006_memory_states(db: Database) -> None:
    """Checkpoints of each run's optimization memory (the prompt digest of what worked and
    what failed), so that a new session continues from the last one instead of reading the
    whole run's history again (about 1 s at 100k programs).

    One row per run and refresh interval; ``state_json`` is opaque here (its reader,
    :mod:`evoforge.evolve.prompts._memory`, checks its own version and rebuilds from the programs
    when it cannot use it), so a lost or stale checkpoint costs time, never a wrong digest.
    """
    db["memory_states"].create(
        {"run_id": str, "refresh_every": int, "epoch": int, "state_json": str},
        pk=("run_id", "refresh_every"),
        foreign_keys=_RUN_FK,
        not_null=["run_id", "refresh_every", "epoch", "state_json"],
        strict=True,
    )
    # The primary key serves both the read and the upsert: WHERE run_id = ? AND refresh_every = ?.


@migrations()
def m007_search_quality(db: Database) -> None:
    """What the search itself did to each attempt, and the prompt variants of a run.

    ``programs.edit_match``: the loosest rule that located the answer's SEARCH texts in the
    parent (``exact``, ``whitespace``, ``reindent``, ``fuzzy``; NULL for seeds, rewrites and
    answers that could not be applied), so ``evoforge stats`` says what tolerant matching saves.
    ``programs.prompt_variant``: the prompt variant that asked for the program (NULL when
    prompts do not evolve). ``programs.ast_key``: a hash of the program's syntax tree with
    names, comments and formatting erased (the novelty filter's equivalence; NULL when not
    computed). ``prompt_variants``: each run's variants, with the variant each was
    derived from; their children and improvement rates are counted from ``programs``.
    """
    db["programs"].add_column("edit_match", str)
    db["programs"].add_column("prompt_variant", str)
    db["programs"].add_column("ast_key", str)  # hash of the normalised syntax tree
    db["prompt_variants"].create(
        {
            "run_id": str,
            "id": str,  # content hash of templates_json
            "parent_id": str,  # the variant it was derived from; NULL for the run's first
            "seq": int,  # the attempt number at which it was created (0: at the start)
            "origin": str,  # default | bank | model | recombination
            "templates_json": str,  # {"system": ..., "task_diff": ..., ...}: template overrides
            "note": str,  # why it was made (the model's summary, or the recombination)
            "created_at": float,
        },
        pk=("run_id", "id"),
        foreign_keys=_RUN_FK,
        not_null=["run_id", "id", "seq", "origin", "templates_json", "created_at"],
        defaults={"templates_json": "{}"},
        strict=True,
    )
    # The primary key serves prompt_variants(run_id) and get_prompt_variant(run_id, id).
    # Children per variant: WHERE run_id = ? GROUP BY prompt_variant, for `evoforge prompts`
    # and the bandit's replay at a session's start.
    db["programs"].create_index(
        ["run_id", "prompt_variant", "status", "score"], index_name="idx_programs_variant"
    )
    # The novelty filter's look-up of an equivalent program: WHERE run_id = ? AND ast_key = ?.
    db["programs"].create_index(["run_id", "ast_key"], index_name="idx_programs_ast_key")


@migrations()
def m008_repository_files(db: Database) -> None:
    """Repository programs stored as the files that differ from the run's base, by content.

    A repository problem's program is a bundle of files (:mod:`evoforge.problems._bundle`) of which
    a child usually changes one: storing the whole bundle per attempt stored every unchanged file
    again. ``file_blobs`` holds each distinct file section once (keyed by the SHA-256 of its text,
    so identical files in any program or run cost nothing); ``run_files`` the run's base (its first
    bundle: the seed), in bundle order; ``program_files`` the files in which a program differs from
    that base. Such a program's ``programs.source`` is NULL and ``programs.source_files`` is 1;
    readers get the bundle back through :func:`~evoforge.archive._stored_files.source_sql`. Columns
    have table-specific names so that the reconstruction's correlated subquery can name the outer
    row's ``run_id`` and ``id`` under any alias.
    """
    db["programs"].add_column("source_files", int)  # 1: source is in program_files
    # A blob's integer id is what the file rows hold (8 bytes, not the 64 of its hash).
    # The hash's unique index serves the writer's look-up of a blob by content.
    db.execute(
        "CREATE TABLE file_blobs (blob_id INTEGER PRIMARY KEY, blob_hash TEXT NOT NULL "
        "UNIQUE, blob_text TEXT NOT NULL) STRICT"
    )
    # The primary key serves the reconstruction: WHERE rf_run = ? ORDER BY rf_ord. Without
    # rowid: the rows are small and only ever read through that key.
    db.execute(
        "CREATE TABLE run_files (rf_run TEXT NOT NULL REFERENCES runs(id), rf_ord INTEGER "
        "NOT NULL, rf_path TEXT NOT NULL, rf_blob INTEGER NOT NULL, "
        "PRIMARY KEY (rf_run, rf_ord)) STRICT, WITHOUT ROWID"
    )
    # The primary key serves the reconstruction's probe per base file:
    # WHERE pf_run = ? AND pf_program = ? AND pf_path = ?.
    db.execute(
        "CREATE TABLE program_files (pf_run TEXT NOT NULL REFERENCES runs(id), pf_program "
        "TEXT NOT NULL, pf_path TEXT NOT NULL, pf_blob INTEGER NOT NULL, "
        "PRIMARY KEY (pf_run, pf_program, pf_path)) STRICT, WITHOUT ROWID"
    )


@migrations()
def m009_spread_and_cost(db: Database) -> None:
    """Migration by evaluations, every duplicate counted, and model calls counted per status.

    ``island_state.evals_since_migration``: evaluations on the island since it last sent
    migrants (``IslandConfig.migration_evaluations``); 0 for islands of older runs, which so
    count from their next evaluation. ``runs.duplicates`` counted only exact copies, not the
    equivalents the novelty filter rejected (both stored as ``duplicate`` rows): it is raised
    here to the run's ``duplicate`` rows, which the writer now counts as it stores them.
    ``run_call_counts``: the run's ``llm_calls`` rows (attempts, retries included) per status,
    kept by a trigger as calls are recorded (calls are append-only), so ``evoforge status``
    reads calls per evaluation from a few rows at any run size; existing runs are backfilled.
    """
    db["island_state"].add_column("evals_since_migration", int, not_null_default=0)
    db.execute(
        "UPDATE runs SET duplicates = (SELECT n FROM run_status_counts AS c "
        "WHERE c.run_id = runs.id AND c.status = 'duplicate') WHERE duplicates < "
        "(SELECT n FROM run_status_counts AS c WHERE c.run_id = runs.id AND "
        "c.status = 'duplicate')"
    )
    db["run_call_counts"].create(
        {"run_id": str, "status": str, "n": int},
        pk=("run_id", "status"),
        foreign_keys=_RUN_FK,
        not_null=["run_id", "status", "n"],
        strict=True,
    )
    # The primary key serves call_cost(): WHERE run_id = ?.
    db.execute(
        "INSERT INTO run_call_counts (run_id, status, n) "
        "SELECT run_id, status, count(*) FROM llm_calls GROUP BY run_id, status"
    )
    db.execute(
        "CREATE TRIGGER llm_calls_count AFTER INSERT ON llm_calls BEGIN "
        "INSERT INTO run_call_counts (run_id, status, n) VALUES (NEW.run_id, NEW.status, 1) "
        "ON CONFLICT (run_id, status) DO UPDATE SET n = n + 1; END"
    )


@migrations()
def m010_suites(db: Database) -> None:
    """Suites: several tasks run as one run with one evaluation budget.

    ``suites``: one row per suite run (its total budget, the allocation policy, the settings
    it was started with). ``suite_tasks``: its tasks in order, each with the run settings its
    run is created with and, once created, that run's id (a task is an ordinary run: its
    programs, grid and events are the run's). ``suite_grants``: every allocation decision, in
    order: evaluations granted to a task (negative: unspent evaluations a task that ended
    gave back), the task's cap after it, and what the task had spent and gained (log-ratio of
    its best to its seed) when it was decided, so the allocation over time can be shown and a
    resumed suite's bandit replays the same history.
    """
    db["suites"].create(
        {
            "id": str,
            "name": str,  # the suite's name or folder
            "budget": int,  # evaluations in total, across the tasks
            "allocation": str,  # bandit | equal
            "config_json": str,  # the [suite] settings it runs with
            "status": str,  # running | stopped | finished | failed
            "stop_reason": str,
            "created_at": float,
            "updated_at": float,
        },
        pk="id",
        not_null=["name", "budget", "allocation", "config_json", "status", "created_at",
                  "updated_at"],
        defaults={"config_json": "{}", "status": "running"},
        strict=True,
    )  # fmt: skip
    # suites() scans this small table and sorts it; no index.
    db.execute(
        "CREATE TABLE suite_tasks (suite_id TEXT NOT NULL REFERENCES suites(id), ord INTEGER "
        "NOT NULL, problem TEXT NOT NULL, config_json TEXT NOT NULL, run_id TEXT, "
        "PRIMARY KEY (suite_id, ord)) STRICT"
    )
    # The primary key serves suite_tasks(suite_id); which suite a run is a task of
    # (`evoforge status RUN`, resume of a task's run): WHERE run_id = ?.
    db.execute("CREATE INDEX idx_suite_tasks_run ON suite_tasks (run_id)")
    db.execute(
        "CREATE TABLE suite_grants (suite_id TEXT NOT NULL REFERENCES suites(id), seq INTEGER "
        "NOT NULL, ord INTEGER NOT NULL, evaluations INTEGER NOT NULL, cap INTEGER NOT NULL, "
        "spent INTEGER NOT NULL, gain REAL NOT NULL, why TEXT NOT NULL, created_at REAL NOT "
        "NULL, PRIMARY KEY (suite_id, seq)) STRICT"
    )
    # The primary key serves grants(suite_id) in order, and a task's own: the table is small
    # (one row per allocation decision), so WHERE suite_id = ? AND ord = ? scans its suite.


@migrations()
def m011_transfer(db: Database) -> None:
    """``programs.transfer_from``: the other task's elite (``run id/program id``) a child's
    prompt offered in a suite run with cross-task transfer on (NULL when none), so the
    improvement rates with and without one are counted from the programs (``evoforge
    stats``; a scan of the run's rows, no index)."""
    db["programs"].add_column("transfer_from", str)


@migrations()
def m012_request_keys(db: Database) -> None:
    """``llm_calls.request_key``: the 16-byte key of the request an answered call was sent
    for (:func:`evoforge.evolve.search.request_key`; NULL with request variation off, for
    failed calls and for calls made before this migration). A resumed run loads its keys into
    the session's ledger, so what the run asked before a stop is not asked again after it.
    ``idx_llm_calls_run_seq`` serves the read (one run's rows)."""
    db["llm_calls"].add_column("request_key", bytes)


# Names of every migration this version knows, in order; an archive that has applied others
# was written by a newer evoforge.
NAMES: tuple[str, ...] = tuple(
    m.name for m in migrations.pending(Database(memory=True, execute_plugins=False))
)
