"""When a session ends: the budgets of a run (evaluations, wall time, US dollars, tokens), a
model outage, a model error that retrying will not fix and that keeps coming back, and a
streak of attempts that produced nothing evaluable.

A run's evaluation budget is fixed, or granted in parts while the session runs
(:class:`Allowance`: a suite's scheduler grants each task more as it decides).
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from evoforge.evolve.mining import mask_numbers

if TYPE_CHECKING:
    from evoforge.evolve.config import RunConfig
    from evoforge.evolve.run._snapshot import Snapshot

REPEATED_ERROR = 5
"""Calls in a row that fail with the same error that retrying will not fix (a refused request,
a refused key, an unknown model) before the run stops: one such error is the model's word on
one request, five are its word on all of them. Without this a run sent 200 requests, each
refused for the same reason, and then stopped saying only that nothing was evaluable."""
REPEATED_UNSENT = 25
"""Prompts in a row that could not be sent, each too large for the window, before the run
stops: they cost no call, and the next parent or context may fit, so one bad stretch must not
end a run; 25 in a row say that nothing fits."""
_HEALS = frozenset({"rate_limit", "server", "connection", "timeout", "empty"})


@dataclass(frozen=True)
class Ending:
    """Why a session ends; ``drain``: let in-flight candidates finish (else cancel them; they
    are redone on resume)."""

    status: str  # finished | stopped | failed
    reason: str
    drain: bool = True
    spent: bool = False  # the evaluation budget was reached (an allowance may extend it)


class Allowance(Protocol):
    """An evaluation budget granted in parts while a session runs (a suite's task)."""

    async def extend(self, evaluations: int) -> int | Ending:
        """The session has spent its budget (``evaluations``) and has nothing in flight:
        its new, larger budget, or how it ends. It may wait (for a decision, for other
        tasks); the session stops meanwhile if asked to."""
        ...


class Budgets:
    """A run's budgets, checked against the session's running statistics.

    Also the run's clock: active wall time counts earlier sessions' (``elapsed_base``) plus
    this one's from :meth:`start`, when it could propose.
    """

    def __init__(self, config: RunConfig, snapshot: Snapshot, elapsed_base: float) -> None:
        self.config, self.snapshot = config, snapshot
        self.evaluations = config.budget  # raised by an allowance while the session runs
        self._elapsed_base = elapsed_base
        self._session_start: float | None = None
        self.outage: str | None = None  # why every model is failing, once the pool says so
        self.failed_streak = 0  # attempts in a row that produced nothing evaluable
        self.repeated: tuple[str, str, str] | None = None  # (model, kind, message) of the last
        self.repeats = 0  # calls in a row that failed as ``repeated`` says
        self._repeated_line = ""

    def model_failed(self, model: str, kind: str, message: str, *, sent: bool = True) -> None:
        """A call of ``model`` failed for good (after its retries) with ``kind``; errors that
        do not heal by themselves are counted while they repeat (numbers aside).

        ``sent`` False: the request never left (a prompt that cannot fit the window). Such
        failures cost nothing and depend on the prompt (a larger parent, more context), so
        the run stops only after :data:`REPEATED_UNSENT` of them in a row: then nothing fits.
        """
        if kind in _HEALS:
            self.repeated, self.repeats = None, 0
            return
        same = (model, kind, mask_numbers(message))
        self.repeats = self.repeats + 1 if same == self.repeated else 1
        self.repeated = same
        limit = REPEATED_ERROR if sent else REPEATED_UNSENT
        if self.repeats >= limit and not self._repeated_line:
            from evoforge.evolve.mining import failure_hint

            fix = failure_hint(kind, message) or "fix the cause above"
            said = " ".join(message.split())[:400]
            self._repeated_line = (
                f"{model} failed {self.repeats} calls in a row with the same error, which "
                f"retrying will not fix ({kind}): {said}. Fix: {fix}; then `evoforge resume` "
                "the run"
            )

    def model_answered(self) -> None:
        """A call was answered: whatever repeated before has stopped."""
        self.repeated, self.repeats = None, 0

    def start(self) -> float:
        """The session can propose from now on; returns the monotonic start time."""
        self._session_start = time.monotonic()
        return self._session_start

    def count_seed(self, timings: Mapping[str, float]) -> None:
        """Add the seed's evaluation (its wall time: ``caller_s``, else ``eval_s``) to the
        run's active time, once, when the seed is recorded: a run whose seed took minutes
        has been running for minutes, whatever the search did since."""
        seconds = timings.get("caller_s", timings.get("eval_s", 0.0))
        if isinstance(seconds, int | float) and math.isfinite(seconds) and seconds > 0:
            self._elapsed_base += float(seconds)

    def extend(self, evaluations: int) -> None:
        """Raise the evaluation budget (an :class:`Allowance` granted more)."""
        self.evaluations = self.snapshot.budget = evaluations

    def idle(self, seconds: float) -> None:
        """Leave ``seconds`` the session spent waiting for a grant out of its active time."""
        self._elapsed_base -= seconds

    def elapsed(self) -> float:
        """Active wall time of the run: earlier sessions', the seed's evaluation
        (:meth:`count_seed`), plus this session's since it could propose (start-up, which is
        mostly importing litellm in the proposal workers, is not counted: it says nothing
        about the run). The wall-time budget is checked against this."""
        if self._session_start is None:
            return self._elapsed_base
        return self._elapsed_base + time.monotonic() - self._session_start

    def wall_remaining(self) -> float | None:
        if self.config.max_wall_s is None:
            return None
        return max(0.0, self.config.max_wall_s - self.elapsed())

    def ending(self) -> Ending | None:
        """The first budget or failure condition reached, or None to go on."""
        config = self.config
        if self.snapshot.evaluations >= self.evaluations:
            return Ending(
                "finished", f"budget of {self.evaluations} evaluations reached", spent=True
            )
        if config.max_wall_s is not None and self.elapsed() >= config.max_wall_s:
            return Ending(
                "finished", f"wall-time budget of {config.max_wall_s:g} s reached", drain=False
            )
        if self.outage is not None:
            return Ending("failed", self.outage, drain=False)
        if self._repeated_line:
            return Ending("failed", self._repeated_line, drain=False)
        spent = self._spending_ending()
        if spent is not None:
            return spent
        if self.failed_streak >= config.max_failed_streak:
            return Ending(
                "failed",
                f"the last {self.failed_streak} attempts produced nothing "
                "evaluable (model errors, unusable edits, syntax errors or "
                "duplicates); check the model and the prompt, then `evoforge "
                "resume` the run",
                drain=False,
            )
        return None

    def _spending_ending(self) -> Ending | None:
        """USD and token budgets: calls already in flight are paid for, so let them finish."""
        snap, config = self.snapshot, self.config
        if config.usd_budget is not None and snap.cost_usd >= config.usd_budget:
            return Ending(
                "finished",
                f"USD budget of ${config.usd_budget:g} reached (${snap.cost_usd:.4f} spent)",
            )
        tokens = snap.tokens_in + snap.tokens_out
        if config.token_budget is not None and tokens >= config.token_budget:
            return Ending(
                "finished", f"token budget of {config.token_budget} reached ({tokens} used)"
            )
        return None
