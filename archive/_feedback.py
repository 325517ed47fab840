"""Read-only queries that feed a run's history back into its prompts.

They run for every candidate, so each is bounded: it reads a fixed number of index entries
(a window of recent rows), never a whole run, and says which index serves it. "Recent" means
recent in insertion order (``rowid``), which is commit order: with one evaluation slot that
is ``seq`` order, and in any case a pure function of the archive's content.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from evoforge.archive._outcome import Status, status_of
from evoforge.archive._program import SELECT_SQL, Program, from_row

if TYPE_CHECKING:
    from evoforge.archive._archive import Archive

REPAIRABLE: frozenset[Status] = frozenset(
    {
        Status.INCORRECT,
        Status.COMPILE_ERROR,
        Status.RUNTIME_ERROR,
        Status.SYNTAX_ERROR,
        Status.TIMEOUT,
    }
)
"""Statuses of a failure a model can be asked to fix: the program ran (or was compiled) and
its error says what is wrong. Crashes, memory limits and sandbox violations are not here:
their artifacts rarely say what to change."""

CHILD_WINDOW = 64
"""Children of a program looked at by :func:`failed_children` (its most recent ones)."""

_REPAIRABLE_SQL = ", ".join(f"'{s}'" for s in sorted(REPAIRABLE))


def failed_children(
    archive: Archive, run_id: str, parent_id: str, *, limit: int, window: int = CHILD_WINDOW
) -> list[Program]:
    """The failed attempts (any status but ok) among the last ``window`` children of a program.

    Returns:
        At most ``limit`` programs, most recent first.
    """
    if limit <= 0:
        return []
    # idx_programs_parent (run_id, parent_id) holds rowid as its last column: the inner query
    # walks the program's children newest first and stops after `window`; the outer one reads
    # those rows by rowid.
    rows = archive.conn.execute(
        f"{SELECT_SQL} WHERE rowid IN (SELECT rowid FROM programs WHERE run_id = ? AND "
        "parent_id = ? ORDER BY rowid DESC LIMIT ?) AND status != 'ok' ORDER BY rowid DESC "
        "LIMIT ?",
        (run_id, parent_id, window, limit),
    )
    return [from_row(row) for row in rows]


def repairable_failures(
    archive: Archive, run_id: str, island: int, *, window: int, limit: int = 8
) -> list[Program]:
    """Failures of ``island`` worth a repair attempt, most recent first.

    A failure qualifies when its status is in :data:`REPAIRABLE`, it has a source, its ``seq``
    is among the run's last ``window`` attempts, it was not itself a repair (``edit_kind``
    ``repair``) and no program has it as parent yet (it was never tried).

    Returns:
        At most ``limit`` programs, highest ``seq`` first.
    """
    # max(seq): idx_programs_seq (run_id, seq), one index probe.
    (last,) = archive.conn.execute(
        "SELECT max(seq) FROM programs WHERE run_id = ?", (run_id,)
    ).fetchone()
    if last is None:
        return []
    # idx_programs_seq bounds the scan to the last `window` attempts; the NOT EXISTS probe
    # uses idx_programs_parent (run_id, parent_id).
    rows = archive.conn.execute(
        f"{SELECT_SQL} AS p WHERE p.run_id = ? AND p.seq > ? AND p.island = ? "
        f"AND p.status IN ({_REPAIRABLE_SQL}) "
        "AND (p.source IS NOT NULL OR p.source_files IS NOT NULL) "
        "AND p.edit_kind != 'repair' AND NOT EXISTS (SELECT 1 FROM programs AS c "
        "WHERE c.run_id = p.run_id AND c.parent_id = p.id) ORDER BY p.seq DESC LIMIT ?",
        (run_id, last - window, island, limit),
    )
    return [from_row(row) for row in rows]


@dataclass(frozen=True)
class AttemptOutcome:
    """One stored attempt reduced to what a run's memory needs.

    Attributes:
        rowid: its position in insertion order (pass the last one back to page on).
        seq, id, status, edit_kind, model, score: as in :class:`~evoforge.archive.Program`.
        parent_score: the parent's score (None without a parent, or when it has none).
        error: the ``error`` artifact of a failed attempt (None for ok ones or none given).
        evaluations: evaluations it consumed (its tuning trials included; 0 unevaluated).
    """

    rowid: int
    seq: int
    id: str
    status: Status
    edit_kind: str
    model: str | None
    score: float | None
    parent_score: float | None
    error: str | None
    evaluations: int = 1


def attempt_outcomes(
    archive: Archive, run_id: str, *, after_rowid: int = 0, limit: int = 2048
) -> list[AttemptOutcome]:
    """The run's attempts inserted after ``after_rowid``, in insertion order, one page.

    Call again with the last outcome's ``rowid`` until a page is shorter than ``limit``.
    """
    # The rowid range is the scan (`+c.run_id` keeps the planner off the run_id indexes,
    # which would read the whole run); the parent's score is one probe of the primary key
    # (run_id, id).
    rows = archive.conn.execute(
        "SELECT c.rowid, c.seq, c.id, c.status, c.edit_kind, c.model, c.score, p.score, "
        "CASE WHEN c.status != 'ok' THEN json_extract(c.artifacts_json, '$.error') END, "
        "c.evaluations "
        "FROM programs AS c LEFT JOIN programs AS p ON p.run_id = c.run_id "
        "AND p.id = c.parent_id WHERE +c.run_id = ? AND c.rowid > ? ORDER BY c.rowid LIMIT ?",
        (run_id, after_rowid, limit),
    )
    return [
        AttemptOutcome(
            rowid=r[0], seq=r[1], id=r[2], status=status_of(r[3]), edit_kind=r[4], model=r[5],
            score=r[6], parent_score=r[7], error=r[8] if isinstance(r[8], str) else None,
            evaluations=r[9] if isinstance(r[9], int) else 1,
        )
        for r in rows
    ]  # fmt: skip


def improved(score: float | None, parent_score: float | None) -> bool:
    """Whether a child improved on its parent: it scored above it, or it was scored while its
    parent (a failure being repaired) was not. :func:`~evoforge.archive.model_usage` counts the
    same in SQL."""
    return score is not None and (parent_score is None or score > parent_score)


def model_outcomes(
    archive: Archive, run_id: str
) -> list[tuple[str, float, float | None, int | None]]:
    """Each answered model call of the run as ``(model, improved, cost_usd, tokens)``, in call
    order: what an adaptive ensemble learned, for rebuilding it when a run resumes.

    ``improved`` is 1.0 when the call's child scored above its parent (or was scored while its
    parent, a failure being repaired, was not), else 0.0. Read once per session, not per
    candidate: it scans the run's calls through ``idx_llm_calls_run_seq``, and each child and
    parent is one primary-key probe.
    """
    rows = archive.conn.execute(
        "SELECT c.model, c.cost_usd, c.prompt_tokens, c.completion_tokens, p.score, pp.score "
        "FROM llm_calls AS c "
        "LEFT JOIN programs AS p ON p.run_id = c.run_id AND p.id = c.program_id "
        "LEFT JOIN programs AS pp ON pp.run_id = p.run_id AND pp.id = p.parent_id "
        "WHERE c.run_id = ? AND c.status = 'ok' ORDER BY c.seq, c.id",
        (run_id,),
    )
    outcomes = []
    for model, cost, tokens_in, tokens_out, score, parent_score in rows:
        tokens = (
            None
            if tokens_in is None and tokens_out is None
            else (tokens_in or 0) + (tokens_out or 0)
        )
        outcomes.append((model, float(improved(score, parent_score)), cost, tokens))
    return outcomes
