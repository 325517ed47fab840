"""What a run's model calls cost, per model (from the ``llm_calls`` table alone), and what
they bought: calls per evaluation and the calls wasted, by reason (:func:`call_cost`).

:func:`evoforge.archive.model_usage` also counts each model's improvements, which joins every
call to its child and the child's parent; on a run of 100k programs that takes seconds. The
dashboard and ``evoforge stats`` want calls, tokens and cost at a glance: this reads one
range of ``idx_llm_calls_run_seq`` and the small call rows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from evoforge.archive._archive import Archive


@dataclass(frozen=True)
class CallUsage:
    """One model's calls in a run.

    Attributes:
        model: the litellm model string.
        calls: answered calls.
        retries: failed attempts that were tried again.
        errors: calls that failed after their retries.
        tokens_in: prompt tokens (known ones).
        tokens_out: completion tokens (known ones).
        cost_usd: the known cost; None when no call of the model had a known price.
        unpriced: answered calls whose price was unknown.
        mean_latency_s: mean latency of the answered calls; None without any.
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


def call_usage(archive: Archive, run_id: str) -> list[CallUsage]:
    """Per-model calls, tokens and cost of a run, most calls first."""
    rows = archive.conn.execute(
        "SELECT model, SUM(status = 'ok'), SUM(status = 'retry'), SUM(status = 'error'), "
        "COALESCE(SUM(prompt_tokens), 0), COALESCE(SUM(completion_tokens), 0), SUM(cost_usd), "
        "SUM(status = 'ok' AND cost_usd IS NULL), "
        "AVG(CASE WHEN status = 'ok' THEN latency_s END) "
        "FROM llm_calls WHERE run_id = ? GROUP BY model ORDER BY 2 DESC, model",
        (run_id,),
    )
    return [CallUsage(*row) for row in rows]


WASTE_REASONS: tuple[str, ...] = ("duplicate", "edit_error", "syntax_error", "model_error")
"""Why an answer gave nothing to evaluate: a copy or equivalent of a program of the run, an
edit that did not apply, a child that did not parse, or no answer at all (a failed attempt,
retried or not)."""
_PROGRAM_WASTE = WASTE_REASONS[:3]  # statuses of stored attempts; model_error is a call's
_CALL_COST_SQL = (
    "SELECT 'call', status, n FROM run_call_counts WHERE run_id = ?1 "
    "UNION ALL SELECT 'program', status, n FROM run_status_counts WHERE run_id = ?1 "
    f"AND status IN ({', '.join(repr(s) for s in _PROGRAM_WASTE)}) "
    "UNION ALL SELECT 'run', 'evaluations', evaluations FROM runs WHERE id = ?1"
)


@dataclass(frozen=True)
class CallCost:
    """What a run's model calls bought: evaluations, and the calls that bought nothing.

    Attributes:
        calls: model requests sent (every attempt, retries included): what a user pays for.
        evaluations: evaluations used (the budget's count).
        wasted: calls that gave nothing to evaluate, per reason (:data:`WASTE_REASONS`, each
            present, 0 when none): one answered call per ``duplicate``, ``edit_error`` and
            ``syntax_error`` attempt; every failed attempt is a ``model_error``.
    """

    calls: int
    evaluations: int
    wasted: dict[str, int] = field(default_factory=dict)

    @property
    def per_evaluation(self) -> float | None:
        """Calls per evaluation (1.0 when every call is evaluated); None before any
        evaluation."""
        return self.calls / self.evaluations if self.evaluations else None

    @property
    def wasted_calls(self) -> int:
        """Calls wasted for any reason."""
        return sum(self.wasted.values())

    def to_dict(self) -> dict[str, object]:
        """The JSON form every view prints (``evoforge status/stats --json``, the dashboard)."""
        return {
            "calls": self.calls,
            "evaluations": self.evaluations,
            "calls_per_evaluation": self.per_evaluation,
            "wasted_calls": self.wasted_calls,
            "wasted": dict(self.wasted),
        }


def call_cost(archive: Archive, run_id: str) -> CallCost:
    """Calls per evaluation and the calls wasted by reason, for ``evoforge status``,
    ``evoforge stats`` and the dashboard alike.

    One statement that reads a few rows by primary key (the trigger-kept
    ``run_call_counts``, ``run_status_counts`` and the run's row), whatever the run's size.
    """
    calls = evaluations = 0
    wasted = dict.fromkeys(WASTE_REASONS, 0)
    for source, status, n in archive.conn.execute(_CALL_COST_SQL, (run_id,)):
        if source == "run":
            evaluations = n
        elif source == "program":
            wasted[status] = n
        else:
            calls += n
            if status != "ok":
                wasted["model_error"] += n
    return CallCost(calls=calls, evaluations=evaluations, wasted=wasted)
