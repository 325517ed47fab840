"""What a run's model calls cost, per model: from the ``llm_calls`` table alone.

:func:`evoforge.archive.model_usage` also counts each model's improvements, which joins every
call to its child and the child's parent; on a run of 100k programs that takes seconds. The
dashboard and ``evoforge stats`` want calls, tokens and cost at a glance: this reads one
range of ``idx_llm_calls_run_seq`` and the small call rows.
"""

from __future__ import annotations

from dataclasses import dataclass
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
