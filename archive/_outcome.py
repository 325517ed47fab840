"""The typed outcome of one attempted candidate: what evaluators return and the archive stores.

Defined at the archive's level (the lowest layer that needs it), so that storing a program never
imports an evaluator; :mod:`evoforge.evaluators` re-exports both names for plugin authors.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any


class Status(enum.StrEnum):
    """What happened to a candidate. Stored verbatim in the archive's ``status`` column.

    Example::

        failed = [p for p in archive.programs(run_id) if p.status is not Status.OK]
        archive.count_programs(run_id, Status.TIMEOUT)
    """

    OK = "ok"
    INCORRECT = "incorrect"  # ran, but its output failed the problem's correctness check
    EDIT_ERROR = "edit_error"  # the model's answer could not be applied to the parent
    SYNTAX_ERROR = "syntax_error"  # does not parse (engine check, or the evaluator's compile)
    COMPILE_ERROR = "compile_error"
    RUNTIME_ERROR = "runtime_error"  # raised an exception
    TIMEOUT = "timeout"  # wall-clock or CPU-time limit
    MEMORY_LIMIT = "memory_limit"
    DISK_LIMIT = "disk_limit"  # wrote more than its disk quota (workdir and TMPDIR together)
    CRASHED = "crashed"  # died by a signal or exited without a result
    SANDBOX_VIOLATION = "sandbox_violation"
    DUPLICATE = "duplicate"  # the novelty filter found it equivalent to a stored program

    @property
    def evaluated(self) -> bool:
        """Whether this outcome consumed an evaluation (and so counts against the budget)."""
        return self not in (Status.EDIT_ERROR, Status.SYNTAX_ERROR, Status.DUPLICATE)


_STATUS_BY_TEXT = {str(s): s for s in Status}


def status_of(text: str) -> Status:
    """``Status(text)`` for rows read by the thousand: a dict lookup, where the enum's own
    constructor costs microseconds a call (a third of reading a run's attempts).

    Raises:
        ValueError: ``text`` is no status, as ``Status(text)`` does.
    """
    status = _STATUS_BY_TEXT.get(text)
    return Status(text) if status is None else status


@dataclass
class EvalResult:
    """What an evaluator returns for one candidate.

    ``objectives`` and ``descriptors`` are the subsets of ``metrics`` the problem declared;
    ``artifacts`` are short texts (stderr tail, traceback, failing input) fed back to the model;
    ``timings`` are seconds; ``device`` is the fingerprint of where it ran. ``evaluations`` is
    how many evaluations it used (1, plus any knob-tuning trials: each counts against the
    budget); ``source`` is the program as scored when the evaluator rewrote it (tuned knobs
    written back), else None.
    """

    status: Status
    metrics: dict[str, Any] = field(default_factory=dict)
    objectives: dict[str, float] = field(default_factory=dict)
    descriptors: dict[str, float] = field(default_factory=dict)
    artifacts: dict[str, str] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    device: dict[str, str] = field(default_factory=dict)
    evaluations: int = 1
    source: str | None = None
