"""The rows behind a run's history, as stored: its attempts in ``seq`` order, its failed
attempts counted by error message, and program ids by attempt number.

These are queries and nothing more: what the rows mean (the successive bests, time buckets,
failure groups with numbers masked) is :mod:`evoforge.evolve.mining`'s, which reads them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from evoforge.archive._outcome import Status
from evoforge.base import jsonio

if TYPE_CHECKING:
    from evoforge.archive._archive import Archive

_CHUNK = 500  # seqs per IN (...) list: well below SQLite's limit on bound parameters


@dataclass(frozen=True)
class FailureRows:
    """Failed attempts of one status that say the same thing.

    Attributes:
        status: their status.
        artifacts: what they say: ``{"error": message}`` for attempts with an ``error``
            artifact (SQLite groups equal messages), else the one attempt's artifacts.
        count: how many attempts.
        first_seq: the attempt number of the first.
        last_seq: the attempt number of the latest.
    """

    status: Status
    artifacts: Mapping[str, str]
    count: int
    first_seq: int
    last_seq: int


def failure_rows(
    archive: Archive, run_id: str, *, status: Status | str | None = None
) -> list[FailureRows]:
    """The run's failed attempts (any status but ok, or only ``status``), equal ``error``
    artifacts counted together; an attempt without one (rare) is a row of its own.

    Reads ``idx_programs_top`` (run_id, status, ...): SQLite groups equal messages, so Python
    sees each distinct (status, error) once, with its count and seq range.
    """
    where, params = "run_id = ? AND status != 'ok'", [run_id]
    if status is not None:
        where, params = f"{where} AND status = ?", [run_id, str(Status(status))]
    rows = archive.conn.execute(
        "SELECT status, json_extract(artifacts_json, '$.error') AS error, count(*), min(seq), "
        f"max(seq) FROM programs WHERE {where} GROUP BY status, error",
        params,
    ).fetchall()
    found = []
    without_error = set()
    for failed, error, count, first, last in rows:
        if isinstance(error, str) and error.strip():
            found.append(FailureRows(Status(failed), {"error": error}, count, first, last))
        else:
            without_error.add(failed)  # the message is in another artifact
    for failed in sorted(without_error):
        unlabelled = archive.conn.execute(
            "SELECT seq, artifacts_json FROM programs WHERE run_id = ? AND status = ? "
            "AND trim(coalesce(json_extract(artifacts_json, '$.error'), '')) = ''",
            (run_id, failed),
        )
        found += [
            FailureRows(Status(failed), jsonio.loads(artifacts_json), 1, seq, seq)
            for seq, artifacts_json in unlabelled
        ]
    return found


def timeline_rows(
    archive: Archive, run_id: str
) -> Iterator[tuple[int, str, int, float | None, float, int]]:
    """Every attempt of the run in ``seq`` order, as ``(seq, status, island, score,
    created_at, evaluations)`` tuples (plain tuples: a run has 100k of them).

    One pass over the run's entries of ``idx_programs_timeline``, which holds these columns.

    Raises:
        ArchiveError: there is no such run.
    """
    if not archive._run_exists(run_id):
        raise archive._no_run(run_id)
    return archive.conn.execute(
        "SELECT seq, status, island, score, created_at, evaluations FROM programs "
        "WHERE run_id = ? ORDER BY seq",
        (run_id,),
    )


def ids_by_seq(archive: Archive, run_id: str, seqs: list[int]) -> dict[int, str]:
    """Program ids of some attempts of a run, by attempt number: one probe of
    ``idx_programs_seq`` each."""
    ids: dict[int, str] = {}
    for start in range(0, len(seqs), _CHUNK):
        chunk = seqs[start : start + _CHUNK]
        marks = ", ".join("?" * len(chunk))
        ids.update(
            archive.conn.execute(
                f"SELECT seq, id FROM programs WHERE run_id = ? AND seq IN ({marks})",
                (run_id, *chunk),
            ).fetchall()
        )
    return ids
