"""What a run's failures mean: the message of a failed attempt, its cause with the numbers
masked, and the attempts grouped by cause.

Thousands of failures are usually a handful of causes: ``circles 3 and 7 overlap by 1.2e-03``
and ``circles 5 and 9 overlap by 4.0e-04`` are one. One rule masks numbers
(:func:`mask_numbers`) wherever evoforge tells whether two errors are the same: the groups of
``evoforge failures`` and the dashboard (:func:`failure_groups`), the failed model calls
(:func:`~evoforge.evolve.mining.model_failures`), the run's stop after the same model error
repeats, and the failure reasons of the optimization memory (:func:`failure_reason`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from evoforge.archive import Status, failure_rows, ids_by_seq

if TYPE_CHECKING:
    from evoforge.archive import Archive

SIGNATURE_CHARS = 160
"""Signatures are cut to this length, so messages that differ only far in share a group."""
REASON_CHARS = 100
"""A failure reason (:func:`failure_reason`) is cut to this length."""
NO_MESSAGE = "(no message)"
# A number standing alone (a sign, a decimal, an exponent, hexadecimal), not one that ends a
# name: `x1` and `float32` stay, so the names in a message still tell causes apart.
_NUMBER = re.compile(r"(?<!\w)[-+]?(?:0x[0-9a-fA-F]+|\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)")
_SPACE = re.compile(r"\s+")
_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")


def mask_numbers(text: str) -> str:
    """``text`` with every number replaced by ``#``: the one rule by which two errors that
    differ only in their numbers are the same error."""
    return _NUMBER.sub("#", text)


def signature(message: str) -> str:
    """``message`` with every number masked, cut to :data:`SIGNATURE_CHARS`."""
    return mask_numbers(message)[:SIGNATURE_CHARS]


def failure_reason(error: str | None) -> str:
    """A failure's error reduced to its kind, for the optimization memory's counts: its first
    line before any ``;``, quoted text as ``'…'`` and numbers masked, so the same mistake at
    different places counts once; cut to :data:`REASON_CHARS`."""
    if not error or not error.strip():
        return "no error message"
    line = error.strip().split("\n", 1)[0].split(";", 1)[0]
    return mask_numbers(_QUOTED.sub("'…'", line)).strip()[:REASON_CHARS]


def failure_message(artifacts: Mapping[str, str]) -> str:
    """What a failed attempt's artifacts say went wrong, in one line of text.

    The ``error`` artifact when there is one, else the last line of the ``traceback``, else
    the first non-empty artifact's last line.
    """
    text = artifacts.get("error")
    if not isinstance(text, str) or not text.strip():
        texts = [artifacts.get("traceback"), *artifacts.values()]
        text = next((t for t in texts if isinstance(t, str) and t.strip()), "")
        text = text.strip().splitlines()[-1] if text.strip() else ""
    return _SPACE.sub(" ", text).strip() or NO_MESSAGE


@dataclass(frozen=True)
class FailureGroup:
    """Failed attempts of one status whose messages share a signature.

    Attributes:
        status: their status.
        signature: the message with numbers masked (cut to :data:`SIGNATURE_CHARS`).
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


def failure_groups(
    archive: Archive, run_id: str, *, status: Status | str | None = None
) -> list[FailureGroup]:
    """The run's failed attempts (or those of one status) grouped by status and by their
    message's :func:`signature`; largest group first, then by status and signature.

    Reads :func:`~evoforge.archive.failure_rows` (SQLite counts equal messages), so the work
    in Python grows with the distinct messages, not the failures.

    Raises:
        ValueError: ``status`` is ``ok``, which is no failure.
    """
    if status is not None and Status(status) is Status.OK:
        raise ValueError("failure_groups() groups failed attempts; status 'ok' is not one")
    groups: dict[tuple[str, str], list] = {}  # (status, signature): count, message, first, last
    for rows in failure_rows(archive, run_id, status=status):
        message = failure_message(rows.artifacts)
        key = (str(rows.status), signature(message))
        group = groups.get(key)
        if group is None:
            groups[key] = [rows.count, message, rows.first_seq, rows.last_seq]
            continue
        group[0] += rows.count
        group[2] = min(group[2], rows.first_seq)
        if rows.last_seq > group[3]:
            group[1], group[3] = message, rows.last_seq
    ordered = sorted(groups.items(), key=lambda item: (-item[1][0], item[0]))
    ids = ids_by_seq(archive, run_id, [g[3] for _, g in ordered])
    return [
        FailureGroup(Status(found), sig, count, message, ids[last], first, last)
        for (found, sig), (count, message, first, last) in ordered
    ]
