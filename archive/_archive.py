"""The archive: one SQLite file holding every run, attempt, grid cell and event."""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evoforge.archive import _queries
from evoforge.archive._base import PROGRAM_CACHE_SIZE
from evoforge.archive._errors import ArchiveError
from evoforge.archive._front import Fronts
from evoforge.archive._grids import Grids
from evoforge.archive._outcome import Status
from evoforge.archive._paths import create_private
from evoforge.archive._program import INSERT_SQL, SELECT_SQL, Program, from_row, to_row
from evoforge.archive._prompt_variants import PromptVariants
from evoforge.archive._queries import Node
from evoforge.archive._records import Event, LlmCall
from evoforge.archive._runs import Runs
from evoforge.archive._schema import READER_PROGRAM_COLUMNS, READER_VIEWS, is_current
from evoforge.archive._stored_files import stored_row
from evoforge.archive._suites import Suites
from evoforge.base import jsonio

if TYPE_CHECKING:
    from sqlite_utils import Database

    from evoforge.problems import Objective

BUSY_TIMEOUT_MS = 10_000  # a reader (`evoforge status`) may hold the file briefly
PAGE_CACHE_KIB = 65_536
"""SQLite's page cache per connection (its default is 2 MiB, ~500 pages). A lineage at a million
programs touches ~4,000 pages scattered over the file (an index and a table page per ancestor):
with the default every repeat reads them again from the OS (about 40 ms, against 23 with this).
Pages are allocated as they are read, so a small archive never uses it all."""
_EVENT_COLUMNS = "id, run_id, kind, seq, island, data_json, created_at"
_LLM_COLUMNS = (
    "id", "run_id", "seq", "model", "latency_s", "status", "program_id", "prompt_tokens",
    "completion_tokens", "cost_usd", "error", "created_at", "attempt", "error_kind",
    "status_code", "retry_after_s", "waited_s", "request_key",
)  # fmt: skip
_LLM_STATUSES = ("ok", "error", "retry")
_PAGE = 512  # rows per query when iterating, so no read statement stays open between pages


EDIT_MATCHES: tuple[str, ...] = ("exact", "whitespace", "reindent", "fuzzy")
"""Values of ``Program.edit_match``, strictest first."""


class Archive(Runs, Grids, Fronts, PromptVariants, Suites):
    """The single source of truth of evoforge: an SQLite file in WAL mode.

    Opening applies pending schema migrations. ``read_only=True`` opens the file as a reader
    that cannot write (SQLite's ``mode=ro`` and ``query_only``): nothing is migrated, the
    migrations a writer would apply are in :attr:`pending_migrations` (queries still work,
    perhaps without the newest indexes), and a missing file is an error rather than a new
    archive. That is how ``evoforge ui`` reads, during a run too.

    The connection is in autocommit mode: each method call is its own transaction unless made
    inside :meth:`transaction`, which the controller uses to record one candidate (program,
    grid offers, island counters, events, run counters) atomically.

    One ``Archive`` is for one thread at a time (it may be handed to a worker thread, never
    used by two at once); other processes may read the file while a run writes it.

    Example::

        with Archive("evoforge.db") as archive:
            run = archive.create_run(problem, config={}, seed=0)
            with archive.transaction():
                archive.add_program(program)
                archive.offer(run.id, -1, program)
    """

    def __init__(self, path: str | os.PathLike[str], *, read_only: bool = False) -> None:
        self.path = Path(path)
        self.read_only = read_only
        self.pending_migrations: tuple[str, ...] = ()  # read-only: what a writer would apply
        directory = self.path.absolute().parent
        if not directory.is_dir():
            raise ArchiveError(
                f"cannot open archive {self.path}: directory {directory} does not exist; "
                f"create it (mkdir -p {directory}) or choose another archive path"
            )
        if read_only and not self.path.is_file():
            raise ArchiveError(
                f"cannot open archive {self.path} read-only: there is no such file; start a "
                "run with `evoforge run` or pass the archive's path"
            )
        self._depth = 0  # nesting depth of transaction()
        self._db: Database | None = None
        self._init_caches()
        try:
            if read_only:
                uri = f"{self.path.absolute().as_uri()}?mode=ro"
                self.conn = sqlite3.connect(
                    uri, uri=True, isolation_level=None, check_same_thread=False
                )
            else:
                create_private(self.path)
                self.conn = sqlite3.connect(
                    self.path, isolation_level=None, check_same_thread=False
                )
        except sqlite3.Error as e:
            raise ArchiveError(f"cannot open archive {self.path}: {e}") from e
        try:
            if read_only:
                # Nothing here may write, whatever a caller runs on the connection; WAL lets
                # it read while a run writes the file.
                self.conn.execute("PRAGMA query_only = ON")
            else:
                # Before any transaction: the journal mode cannot change inside one.
                if self.conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                    self.conn.execute("PRAGMA journal_mode = wal")
                self.conn.execute("PRAGMA synchronous = NORMAL")  # WAL: durable at checkpoints
                self.conn.execute("PRAGMA foreign_keys = ON")
            self.conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            self.conn.execute(f"PRAGMA cache_size = -{PAGE_CACHE_KIB}")
            self._migrate()
        except sqlite3.DatabaseError as e:
            self.conn.close()
            raise ArchiveError(
                f"cannot open archive {self.path}: {e}; is it an evoforge archive? "
                "Choose another path to start a new one"
            ) from e
        except BaseException:
            self.conn.close()
            raise

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, read_only: bool = False) -> Archive:
        """Open (or create) the archive at ``path``; same as ``Archive(path)``."""
        return cls(path, read_only=read_only)

    @property
    def db(self) -> Database:
        """The connection as a sqlite-utils ``Database`` (migrations, schema introspection).

        Made on first use: sqlite-utils imports pandas and numpy when they are installed,
        which reading an archive whose schema is current does not need.
        """
        if self._db is None:
            from sqlite_utils import Database

            self._db = Database(self.conn, execute_plugins=False)
        return self._db

    def _migrate(self) -> None:
        if is_current(self.conn):
            return  # nothing pending, nothing unknown: no sqlite-utils needed
        from evoforge.archive._migrations import NAMES, migrations

        unknown = [m.name for m in migrations.applied(self.db) if m.name not in NAMES]
        if unknown:
            raise ArchiveError(
                f"archive {self.path} was written by a newer evoforge (schema migrations "
                f"{', '.join(unknown)} are unknown to this version); upgrade evoforge"
            )
        if not self.read_only:
            migrations.apply(self.db)
            return
        self.pending_migrations = tuple(m.name for m in migrations.pending(self.db))
        if "m001_initial" in self.pending_migrations:
            raise ArchiveError(
                f"cannot open archive {self.path} read-only: it has no evoforge tables yet; "
                "is it an evoforge archive? A run creates them when it starts"
            )
        views = [v for name in self.pending_migrations for v in READER_VIEWS.get(name, ())]
        columns = [READER_PROGRAM_COLUMNS[n] for n in self.pending_migrations if n in
                   READER_PROGRAM_COLUMNS]  # fmt: skip
        if columns:
            views.append(
                f"CREATE TEMP VIEW programs AS SELECT *, {', '.join(columns)} FROM main.programs"
            )
        if views:
            # TEMP views (in this connection's own temp database: nothing is written to the
            # file) give this reader what the pending migrations would add, shadowing the
            # tables for unqualified queries; derived data is computed instead of kept.
            self.conn.execute("PRAGMA query_only = OFF")
            for view in views:
                self.conn.execute(view)
            self.conn.execute("PRAGMA query_only = ON")

    def close(self) -> None:
        """Close the connection; an open transaction is rolled back."""
        self.conn.close()

    def __enter__(self) -> Archive:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Archive({str(self.path)!r})"

    # -- programs -------------------------------------------------------------------------

    def add_program(self, program: Program) -> None:
        """Store one attempt (any status).

        Raises:
            ArchiveError: the run already has a program with this id (check
                :meth:`has_program` first and count a duplicate) or with this ``seq``, or the
                run does not exist.
            ValueError: the program's score is NaN.
        """
        try:
            with self.transaction():  # the program's row and its files, or nothing
                self.conn.execute(INSERT_SQL, stored_row(self.conn, to_row(program)))
                self.conn.execute(
                    "DELETE FROM evaluations WHERE run_id = ? AND program_id = ?",
                    (program.run_id, program.id),
                )
        except sqlite3.IntegrityError as e:
            raise self._refused(program, e) from e
        self._offer_front((program,))

    def add_programs(self, programs: Sequence[Program]) -> None:
        """Store many attempts at once (a bulk import, a benchmark's seeding): the same rows and
        derived data as :meth:`add_program` for each, in one statement.

        Call it inside :meth:`transaction` to make the batch atomic.

        Raises:
            ArchiveError: as :meth:`add_program`, for the first program refused (with a
                transaction, nothing of the batch is stored then).
        """
        try:
            rows = [stored_row(self.conn, to_row(p)) for p in programs]
            self.conn.executemany(INSERT_SQL, rows)
        except sqlite3.IntegrityError as e:
            for program in programs:  # find the one refused, for the message
                if (
                    self.has_program(program.run_id, program.id)
                    or self.conn.execute(
                        "SELECT 1 FROM programs WHERE run_id = ? AND seq = ?",
                        (program.run_id, program.seq),
                    ).fetchone()
                ):
                    raise self._refused(program, e) from e
            raise ArchiveError(f"cannot add programs: {e}") from e
        self._offer_front(programs)

    def _refused(self, program: Program, e: sqlite3.IntegrityError) -> ArchiveError:
        """Why SQLite refused ``program``, worked out from the data (not SQLite's wording)."""
        run_id = program.run_id
        if self.has_program(run_id, program.id):
            found = f"program {program.id} is already in run {run_id!r}"
            fix = "check has_program() first and count the duplicate"
        elif self.conn.execute(
            "SELECT 1 FROM programs WHERE run_id = ? AND seq = ?", (run_id, program.seq)
        ).fetchone():
            found = f"attempt number (seq) {program.seq} is already used in run {run_id!r}"
            fix = (
                "each attempt needs its own number (reserve_seq() hands them out) and only "
                "one controller may write a run at a time"
            )
        elif not self._run_exists(run_id):
            return self._no_run(run_id)
        else:
            found, fix = f"program {program.id} was refused ({e})", "fix that field"
        return ArchiveError(f"cannot add program: {found}; {fix}")

    def begin_evaluation(self, run_id: str, program_id: str, seq: int) -> int:
        """Note that program ``program_id`` (attempt ``seq``) is being evaluated; returns how
        many times its evaluation has now been started without being recorded (1 the first
        time). :meth:`add_program` clears the note, :meth:`forget_evaluation` drops it.

        A count above 1 means earlier sessions stopped (crashed, failed, were killed) while
        evaluating it: the controller records a candidate that keeps doing so as crashed
        rather than evaluating it again on every resume.
        """
        row = self.conn.execute(
            "INSERT INTO evaluations (run_id, program_id, seq, attempts, started_at) "
            "VALUES (?, ?, ?, 1, ?) ON CONFLICT (run_id, program_id) DO UPDATE SET "
            "attempts = attempts + 1, seq = excluded.seq, started_at = excluded.started_at "
            "RETURNING attempts",
            (run_id, program_id, seq, time.time()),
        ).fetchone()
        return int(row[0])

    def forget_evaluation(self, run_id: str, program_id: str) -> None:
        """Drop the note of :meth:`begin_evaluation` (an evaluation cancelled by a clean stop,
        which says nothing about the candidate)."""
        self.conn.execute(
            "DELETE FROM evaluations WHERE run_id = ? AND program_id = ?", (run_id, program_id)
        )

    def unfinished_evaluations(self, run_id: str) -> dict[str, int]:
        """``{program id: times started}`` of evaluations started and never recorded."""
        rows = self.conn.execute(
            "SELECT program_id, attempts FROM evaluations WHERE run_id = ?", (run_id,)
        )
        return dict(rows.fetchall())

    def has_program(self, run_id: str, program_id: str) -> bool:
        """Whether run ``run_id`` already holds a program with this id."""
        return (
            self.conn.execute(
                "SELECT 1 FROM programs WHERE run_id = ? AND id = ?", (run_id, program_id)
            ).fetchone()
            is not None
        )

    def find_equivalent(self, run_id: str, ast_key: str) -> str | None:
        """The id of a program of run ``run_id`` stored with this ``ast_key`` (an equivalent
        program: same normalised syntax tree), or None; the novelty filter's look-up.

        Any status counts: an equivalent of a failure fails the same way. One probe of
        ``idx_programs_ast_key``.
        """
        row = self.conn.execute(
            "SELECT id FROM programs WHERE run_id = ? AND ast_key = ? LIMIT 1", (run_id, ast_key)
        ).fetchone()
        return None if row is None else row[0]

    def get_program(self, run_id: str, program_id: str) -> Program:
        """The program with this exact id in run ``run_id``.

        Raises:
            ArchiveError: no such program (use :meth:`find_program` for a prefix).
        """
        key = (run_id, program_id)
        cached = self._program_cache.get(key)
        if cached is not None:
            self._program_cache.move_to_end(key)
            return cached
        row = self.conn.execute(
            f"{SELECT_SQL} WHERE run_id = ? AND id = ?", (run_id, program_id)
        ).fetchone()
        if row is None:
            raise ArchiveError(
                f"no program {program_id!r} in run {run_id!r} of {self.path}; "
                "find_program() accepts an id prefix"
            )
        program = self._program_cache[key] = from_row(row)
        if len(self._program_cache) > PROGRAM_CACHE_SIZE:
            self._program_cache.popitem(last=False)
        return program

    def find_program(
        self, id_or_prefix: str, run_id: str | None = None, *, latest: bool = False
    ) -> Program:
        """The one program whose id starts with ``id_or_prefix`` (in ``run_id``, or any run);
        with ``latest``, one program stored in several runs (a seed) is the latest run's.

        Raises:
            ArchiveError: no program matches, or more than one does (the message lists them).
        """
        return _queries.find_program(self, id_or_prefix, run_id, latest=latest)

    def program_runs(self, program_id: str) -> list[str]:
        """The runs that hold program ``program_id`` (a full id), latest first."""
        return _queries.program_runs(self, program_id)

    def programs(
        self, run_id: str, *, status: Status | str | None = None, after_seq: int | None = None
    ) -> Iterator[Program]:
        """The run's programs in ``seq`` order, optionally of one status or after a ``seq``.

        Rows are fetched in pages, so iterating over a large run holds no read transaction
        open between pages (the writer's WAL checkpoints are not blocked).
        """
        where = "run_id = ? AND seq > ?" + (" AND status = ?" if status is not None else "")
        sql = f"{SELECT_SQL} WHERE {where} ORDER BY seq LIMIT {_PAGE}"
        last = -1 if after_seq is None else after_seq
        extra = () if status is None else (str(Status(status)),)
        while True:
            rows = self.conn.execute(sql, (run_id, last, *extra)).fetchall()
            for row in rows:
                yield from_row(row)
            if len(rows) < _PAGE:
                return
            last = rows[-1][2]

    def count_programs(self, run_id: str, status: Status | str | None = None) -> int:
        """How many programs the run holds, optionally of one status."""
        # run_status_counts is kept by a trigger on every insert: O(statuses), not O(run).
        params: tuple[str, ...]
        if status is None:
            sql, params = "SELECT sum(n) FROM run_status_counts WHERE run_id = ?", (run_id,)
        else:
            sql = "SELECT n FROM run_status_counts WHERE run_id = ? AND status = ?"
            params = (run_id, str(Status(status)))
        row = self.conn.execute(sql, params).fetchone()
        return 0 if row is None or row[0] is None else row[0]

    def status_counts(self, run_id: str) -> dict[str, int]:
        """Programs per status (only statuses that occur), e.g. ``{"ok": 90, "timeout": 3}``."""
        rows = self.conn.execute(
            "SELECT status, n FROM run_status_counts WHERE run_id = ? AND n > 0 ORDER BY status",
            (run_id,),
        )
        return dict(rows.fetchall())

    def edit_match_counts(self, run_id: str) -> dict[str, int]:
        """Applied diffs per matching rule that located their SEARCH texts (only rules that
        occur), e.g. ``{"exact": 80, "whitespace": 12, "reindent": 5, "fuzzy": 2}``; what
        tolerant matching saved is everything but ``exact``. Scans the run's rows (stats)."""
        rows = self.conn.execute(
            "SELECT edit_match, count(*) FROM programs WHERE run_id = ? AND edit_match IS NOT "
            "NULL GROUP BY edit_match",
            (run_id,),
        )
        order = {name: i for i, name in enumerate(EDIT_MATCHES)}
        return dict(sorted(rows.fetchall(), key=lambda row: order.get(row[0], len(order))))

    # -- events and LLM calls -------------------------------------------------------------

    def record_event(
        self,
        run_id: str,
        kind: str,
        *,
        island: int | None = None,
        seq: int | None = None,
        data: dict[str, Any] | None = None,
    ) -> int:
        """Log an event (``run_start``, ``migration``, ``reset``, …); returns its id."""
        cursor = self.conn.execute(
            "INSERT INTO events (run_id, seq, kind, island, data_json, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (run_id, seq, kind, island, jsonio.dumps(data or {}), time.time()),
        )
        assert cursor.lastrowid is not None  # an INSERT always sets it
        return cursor.lastrowid

    def baselines(self, run_id: str) -> dict[str, dict[str, float]]:
        """The baselines the run's last session measured (``{label: {objective: value}}``),
        to report results against; empty when the problem has none."""
        for event in reversed(self.events(run_id)):
            if event.kind in ("run_start", "run_resume"):
                return dict(event.data.get("baselines") or {})
        return {}

    def events(self, run_id: str, kind: str | None = None) -> list[Event]:
        """The run's events in the order they were recorded, optionally of one kind."""
        params: tuple[str, ...]
        if kind is None:
            sql, params = "WHERE run_id = ?", (run_id,)
        else:
            sql, params = "WHERE run_id = ? AND kind = ?", (run_id, kind)
        rows = self.conn.execute(f"SELECT {_EVENT_COLUMNS} FROM events {sql} ORDER BY id", params)
        return [
            Event(id=r[0], run_id=r[1], kind=r[2], seq=r[3], island=r[4],
                  data=jsonio.loads(r[5]), created_at=r[6])
            for r in rows
        ]  # fmt: skip

    def record_llm_call(
        self,
        run_id: str,
        *,
        seq: int,
        model: str,
        latency_s: float,
        status: str,
        program_id: str | None = None,
        prompt_tokens: int | None = None,
        completion_tokens: int | None = None,
        cost_usd: float | None = None,
        error: str | None = None,
        attempt: int = 1,
        error_kind: str | None = None,
        status_code: int | None = None,
        retry_after_s: float | None = None,
        waited_s: float | None = None,
        request_key: bytes | None = None,
    ) -> int:
        """Log one attempt of a model call; returns its id. Unknown tokens or cost stay None,
        never 0.

        Args:
            status: ``ok`` (it answered), ``error`` (the call's last failed attempt) or
                ``retry`` (a failed attempt that was tried again).
            attempt: 1-based number of the attempt within its call.
            error_kind: why it failed (``evoforge.evolve.models._retry.KINDS``); None when ok.
            status_code: the HTTP status of a failed attempt, when there was one.
            retry_after_s: the provider's ``Retry-After`` in seconds, when it sent one.
            waited_s: seconds waited after this attempt before the next.
            request_key: the key of the request an answered call was sent for
                (:meth:`answered_request_keys`); None when not keyed.

        Raises:
            ValueError: an unknown ``status`` or an ``attempt`` below 1.
        """
        if status not in _LLM_STATUSES:
            raise ValueError(
                f"LLM call status must be 'ok' or 'error' (or 'retry' for a failed attempt "
                f"that was tried again), got {status!r}"
            )
        if attempt < 1:
            raise ValueError(f"LLM call attempt numbers start at 1, got {attempt!r}")
        cursor = self.conn.execute(
            f"INSERT INTO llm_calls ({', '.join(_LLM_COLUMNS[1:])}) "
            f"VALUES ({', '.join('?' * (len(_LLM_COLUMNS) - 1))})",
            (run_id, seq, model, latency_s, status, program_id, prompt_tokens,
             completion_tokens, cost_usd, error, time.time(), attempt, error_kind,
             status_code, retry_after_s, waited_s, request_key),
        )  # fmt: skip
        assert cursor.lastrowid is not None  # an INSERT always sets it
        return cursor.lastrowid

    def llm_calls(self, run_id: str, *, seq: int | None = None) -> list[LlmCall]:
        """The run's model call attempts in ``seq`` order (attempts of one call in order);
        with ``seq``, only those made for that attempt (the calls behind one program)."""
        params: tuple[str | int, ...]
        where, params = "run_id = ?", (run_id,)
        if seq is not None:
            where, params = "run_id = ? AND seq = ?", (run_id, seq)
        rows = self.conn.execute(
            f"SELECT {', '.join(_LLM_COLUMNS)} FROM llm_calls WHERE {where} ORDER BY seq, id",
            params,
        )
        return [LlmCall(*row) for row in rows]

    def answered_request_keys(self, run_id: str, limit: int) -> list[bytes]:
        """The keys of the run's last ``limit`` answered, keyed requests, oldest first (a
        resumed session's ledger starts from them)."""
        rows = self.conn.execute(
            "SELECT request_key FROM llm_calls WHERE run_id = ? AND request_key IS NOT NULL "
            "ORDER BY seq DESC, id DESC LIMIT ?",
            (run_id, limit),
        )
        return [key for (key,) in rows][::-1]

    # -- mining ---------------------------------------------------------------------------

    def metric_ranges(self, run_id: str, metrics: Iterable[str]) -> dict[str, tuple[float, float]]:
        """``{metric: (smallest, largest)}`` of each of ``metrics`` over the run's ok programs
        (numbers only; a metric no ok program has a number for is left out)."""
        return _queries.metric_ranges(self, run_id, metrics)

    def top(self, run_id: str, k: int = 10) -> list[Program]:
        """The ``k`` best ok programs, best score first; equal scores by lower ``seq``."""
        return _queries.top(self, run_id, k)

    def pareto_front(self, run_id: str, objectives: Sequence[Objective]) -> list[Program]:
        """The ok programs no other ok program dominates on ``objectives``, in ``seq`` order.

        See :func:`evoforge.archive._queries.pareto_front`.
        """
        return _queries.pareto_front(self, run_id, objectives)

    def lineage(self, run_id: str, program_id: str) -> list[Program]:
        """The chain of ancestors of a program, root (the seed) first, the program last."""
        return _queries.lineage(self, run_id, program_id)

    def diff(self, run_id: str, program_id: str) -> str:
        """Unified diff of a program against its parent (against nothing for the seed)."""
        return _queries.diff(self, run_id, program_id)

    def best_over_time(self, run_id: str) -> list[tuple[int, float]]:
        """``(seq, best score so far)`` at each attempt that improved the run's best score."""
        return _queries.best_over_time(self, run_id)

    def lineage_tree(
        self, run_id: str, program_id: str, *, max_descendants: int = 300
    ) -> list[Node]:
        """A program's ancestors, itself and its nearest descendants, in ``seq`` order.

        See :func:`evoforge.archive._queries.lineage_tree`.
        """
        return _queries.lineage_tree(self, run_id, program_id, max_descendants=max_descendants)
