"""What a run's model calls were, counted: per model (:func:`model_usage`) and per status
(:func:`call_counts`).

Counts only: what they bought (calls per evaluation, the calls wasted by reason) is
:func:`evoforge.evolve.mining.call_cost`'s reading of :func:`call_counts`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evoforge.archive._archive import Archive


@dataclass(frozen=True)
class ModelUsage:
    """One model's calls in a run.

    Attributes:
        model: the litellm model string.
        calls: answered calls.
        retries: failed attempts that were tried again.
        errors: calls that failed after their retries.
        tokens_in: prompt tokens (known ones).
        tokens_out: completion tokens (known ones).
        cost_usd: the known cost; None when no call of the model had a known price (unknown,
            not free).
        unpriced: answered calls whose price was unknown.
        mean_latency_s: mean latency of the answered calls; None without any.
        improvements: answered calls whose child beat its parent (see
            :func:`~evoforge.archive.improved`); None when not counted.
    """

    model: str
    calls: int
    retries: int
    errors: int
    tokens_in: int
    tokens_out: int
    cost_usd: float | None
    unpriced: int
    mean_latency_s: float | None
    improvements: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """The fields as JSON values (``improvements`` only when counted)."""
        data = asdict(self)
        if self.improvements is None:
            del data["improvements"]
        return data


_USAGE_COLUMNS = (
    "c.model, SUM(c.status = 'ok'), SUM(c.status = 'retry'), SUM(c.status = 'error'), "
    "COALESCE(SUM(c.prompt_tokens), 0), COALESCE(SUM(c.completion_tokens), 0), "
    "SUM(c.cost_usd), SUM(c.status = 'ok' AND c.cost_usd IS NULL), "
    "AVG(CASE WHEN c.status = 'ok' THEN c.latency_s END)"
)
_IMPROVEMENTS = (  # improved() in SQL: scored above the parent, or scored where it was not
    ", SUM(c.status = 'ok' AND p.score IS NOT NULL AND (pp.score IS NULL OR p.score > pp.score)) "
    "FROM llm_calls AS c "
    "LEFT JOIN programs AS p ON p.run_id = c.run_id AND p.id = c.program_id "
    "LEFT JOIN programs AS pp ON pp.run_id = p.run_id AND pp.id = p.parent_id "
)


def model_usage(archive: Archive, run_id: str, *, improvements: bool = False) -> list[ModelUsage]:
    """Per-model calls, tokens and cost of a run, most calls first.

    One range of ``idx_llm_calls_run_seq`` and the small call rows. ``improvements`` also
    counts each model's improvements, which joins every call to its child and the child's
    parent (by primary key): on a run of 100k programs that takes seconds, so ``evoforge
    status`` asks for it and the dashboard and ``evoforge stats`` do not.
    """
    source = _IMPROVEMENTS if improvements else "FROM llm_calls AS c "
    rows = archive.conn.execute(
        f"SELECT {_USAGE_COLUMNS}{source}WHERE c.run_id = ? GROUP BY c.model "
        "ORDER BY 2 DESC, c.model",
        (run_id,),
    )
    return [ModelUsage(*row) for row in rows]


@dataclass(frozen=True)
class CallCounts:
    """A run's model calls per status, its stored attempts per status and its evaluations,
    read together.

    Attributes:
        calls: model requests per status (``ok``, ``retry``, ``error``): every attempt.
        attempts: stored attempts per status (only statuses that occur).
        evaluations: evaluations used (the budget's count).
    """

    calls: dict[str, int] = field(default_factory=dict)
    attempts: dict[str, int] = field(default_factory=dict)
    evaluations: int = 0


_COUNTS_SQL = (
    "SELECT 'call', status, n FROM run_call_counts WHERE run_id = ?1 "
    "UNION ALL SELECT 'attempt', status, n FROM run_status_counts WHERE run_id = ?1 AND n > 0 "
    "UNION ALL SELECT 'run', 'evaluations', evaluations FROM runs WHERE id = ?1"
)


def call_counts(archive: Archive, run_id: str) -> CallCounts:
    """Calls and attempts per status and the evaluations of a run, in one statement (one
    snapshot, while a run writes) that reads a few rows by primary key (the trigger-kept
    ``run_call_counts``, ``run_status_counts`` and the run's row), whatever the run's size.
    A run that does not exist counts nothing."""
    calls: dict[str, int] = {}
    attempts: dict[str, int] = {}
    evaluations = 0
    for source, status, n in archive.conn.execute(_COUNTS_SQL, (run_id,)):
        if source == "run":
            evaluations = n
        elif source == "attempt":
            attempts[status] = n
        else:
            calls[status] = n
    return CallCounts(calls, attempts, evaluations)
