"""A run's failed attempts, grouped by status and by what their error says.

Thousands of failures are usually a handful of causes: ``circles 3 and 7 overlap by 1.2e-03``
and ``circles 5 and 9 overlap by 4.0e-04`` are one. Messages are grouped by a signature in
which every number is replaced by ``#``, so the groups are the causes and their sizes say
which matter.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from evoforge.archive._outcome import Status
from evoforge.archive._timeline import ids_by_seq
from evoforge.base import jsonio

if TYPE_CHECKING:
    from evoforge.archive._archive import Archive

SIGNATURE_CHARS = 160
"""Signatures are cut to this length, so messages that differ only far in share a group."""
_NUMBER = re.compile(r"(?<![A-Za-z_])[-+]?(?:0x[0-9a-fA-F]+|\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)")
_SPACE = re.compile(r"\s+")
NO_MESSAGE = "(no message)"


@dataclass(frozen=True)
class FailureGroup:
    """Failed attempts of one status whose messages share a signature.

    Attributes:
        status: their status.
        signature: the message with numbers replaced by ``#`` (cut to
            :data:`SIGNATURE_CHARS`).
        count: how many attempts.
        example: the full message of the latest of them.
        example_id: the id of the latest of them.
        first_seq: the attempt number of the first.
        last_seq: the attempt number of the latest.
    """

    status: Status
    signature: str
    count: int
    example: str
    example_id: str
    first_seq: int
    last_seq: int

    def to_dict(self) -> dict[str, object]:
        """The group as JSON values: one shape for ``evoforge failures --json`` and the
        dashboard."""
        return {
            "status": str(self.status),
            "signature": self.signature,
            "count": self.count,
            "example": self.example,
            "example_id": self.example_id,
            "first_seq": self.first_seq,
            "last_seq": self.last_seq,
        }


def failure_message(artifacts: dict[str, str]) -> str:
    """What a failed attempt's artifacts say went wrong, in one line of text.

    The ``error`` artifact when there is one, else the last line of the ``traceback``, else
    the first non-empty artifact's last line.
    """
    text = artifacts.get("error")
    if not isinstance(text, str) or not text.strip():
        texts = [artifacts.get("traceback")] + list(artifacts.values())
        text = next((t for t in texts if isinstance(t, str) and t.strip()), "")
        text = text.strip().splitlines()[-1] if text.strip() else ""
    return _SPACE.sub(" ", text).strip() or NO_MESSAGE


def signature(message: str) -> str:
    """``message`` with every number replaced by ``#``, cut to :data:`SIGNATURE_CHARS`."""
    return _NUMBER.sub("#", message)[:SIGNATURE_CHARS]


def failure_groups(
    archive: Archive, run_id: str, *, status: Status | str | None = None
) -> list[FailureGroup]:
    """See :meth:`Archive.failure_groups`."""
    if status is not None and Status(status) is Status.OK:
        raise ValueError("failure_groups() groups failed attempts; status 'ok' is not one")
    where, params = "run_id = ? AND status != 'ok'", [run_id]
    if status is not None:
        where, params = f"{where} AND status = ?", [run_id, str(Status(status))]
    # idx_programs_top (run_id, status, ...) finds the failures; SQLite groups equal messages,
    # so Python sees each distinct (status, error) once, with its count and seq range.
    rows = archive.conn.execute(
        "SELECT status, json_extract(artifacts_json, '$.error') AS error, count(*), min(seq), "
        f"max(seq) FROM programs WHERE {where} GROUP BY status, error",
        params,
    ).fetchall()
    groups: dict[tuple[str, str], list] = {}
    without_error = set()
    for found, error, count, first, last in rows:
        if not (isinstance(error, str) and error.strip()):
            without_error.add(found)  # the message is in another artifact (rare)
            continue
        message = failure_message({"error": error})
        key = (found, signature(message))
        group = groups.get(key)
        if group is None:
            groups[key] = [count, message, first, last]
        else:
            group[0] += count
            group[2] = min(group[2], first)
            if last > group[3]:
                group[1], group[3] = message, last
    for found in sorted(without_error):
        _add_without_error(archive, run_id, found, groups)
    ordered = sorted(groups.items(), key=lambda item: (-item[1][0], item[0]))
    ids = ids_by_seq(archive, run_id, [g[3] for _, g in ordered])
    return [
        FailureGroup(Status(found), sig, count, message, ids[last], first, last)
        for (found, sig), (count, message, first, last) in ordered
    ]


def _add_without_error(archive: Archive, run_id: str, status: str, groups: dict) -> None:
    rows = archive.conn.execute(
        "SELECT seq, artifacts_json FROM programs WHERE run_id = ? AND status != 'ok' "
        "AND status = ? AND trim(coalesce(json_extract(artifacts_json, '$.error'), '')) = ''",
        (run_id, status),
    )
    for seq, artifacts_json in rows:
        message = failure_message(jsonio.loads(artifacts_json))
        group = groups.setdefault((status, signature(message)), [0, message, seq, seq])
        group[0] += 1
        group[2] = min(group[2], seq)
        if seq >= group[3]:
            group[1], group[3] = message, seq
