"""What a run's model calls bought: calls per evaluation, and the calls wasted, by reason.

A model call is what a user pays for, so every report shows it beside the best score:
``evoforge status``, ``evoforge stats`` and the dashboard print :func:`call_cost` (as
:func:`cost_text`), read from the archive's counts (:func:`~evoforge.archive.call_counts`:
a few rows by primary key, whatever the run's size).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from evoforge.archive import call_counts

if TYPE_CHECKING:
    from evoforge.archive import Archive

WASTE_REASONS: tuple[str, ...] = ("duplicate", "edit_error", "syntax_error", "model_error")
"""Why an answer gave nothing to evaluate: a copy or equivalent of a program of the run, an
edit that did not apply, a child that did not parse, or no answer at all (a failed attempt,
retried or not)."""
_ATTEMPT_WASTE = WASTE_REASONS[:3]  # statuses of stored attempts; model_error is a call's


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
    ``evoforge stats`` and the dashboard alike."""
    counts = call_counts(archive, run_id)
    wasted = {reason: counts.attempts.get(reason, 0) for reason in _ATTEMPT_WASTE}
    wasted["model_error"] = sum(n for status, n in counts.calls.items() if status != "ok")
    return CallCost(sum(counts.calls.values()), counts.evaluations, wasted)


def cost_text(cost: Mapping[str, Any]) -> str:
    """What a run's calls bought, in one line (``evoforge status`` and ``stats`` print it),
    from :meth:`CallCost.to_dict`.

    Example: ``calls 812 (1.35 per evaluation), wasted 212: duplicate 150, edit error 40,
    syntax error 12, model error 10``.
    """
    per = cost["calls_per_evaluation"]
    text = f"calls {cost['calls']} ({'—' if per is None else f'{per:.2f}'} per evaluation)"
    reasons = [f"{k.replace('_', ' ')} {v}" for k, v in cost["wasted"].items() if v]
    text += f", wasted {cost['wasted_calls']}"
    return text + (": " + ", ".join(reasons) if reasons else "")
