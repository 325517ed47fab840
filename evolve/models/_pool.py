"""The ensemble: which model answers the next call, and when to give up.

A :class:`ModelPool` chooses among several models (each a
:class:`~evoforge.evolve.models.ModelSpec`): by weight, or by UCB1 on improvement per unit
cost; it takes a model that keeps failing out of rotation for a while, and tells the run when
every model has been failing for too long (:class:`ModelOutage`).
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from evoforge.base.redaction import redact
from evoforge.evolve.models._policy import POLICIES
from evoforge.evolve.models._spec import ModelSpec, ModelSpecError

_PERMANENT = frozenset({"auth", "not_found"})  # no number of quick retries will fix these
_MAX_DOUBLINGS = 4  # a cooldown grows to at most 16 times cooldown_s


class ModelOutage(RuntimeError):
    """Every model of the pool has been failing, without one success, for ``outage_s``; or
    every model failed in a way that will not heal (missing or refused credentials, unknown
    model) before any of them answered once."""


@dataclass
class ModelStats:
    """What the pool knows of one model.

    Attributes:
        spec: the model.
        calls: successful calls recorded (the bandit's pulls).
        reward: summed improvement credit of those calls.
        cost: summed known cost, in USD-equivalents (see :class:`ModelPool`).
        costed: calls whose cost is known.
        failures: failures since the last success.
        failing_since: clock time of the first of those failures; None after a success.
        cooldowns: cooldowns in a row without a success in between.
        cooldown_until: clock time the model comes back; None when in rotation.
        probation: back from a cooldown and not yet successful: one failure sends it back.
        last_error: kind and redacted message of the last failure.
    """

    spec: ModelSpec
    calls: int = 0
    reward: float = 0.0
    cost: float = 0.0
    costed: int = 0
    failures: int = 0
    failing_since: float | None = None
    cooldowns: int = 0
    cooldown_until: float | None = None
    probation: bool = False
    last_error: tuple[str, str] | None = None

    @property
    def mean_cost(self) -> float | None:
        return self.cost / self.costed if self.costed else None


class ModelPool:
    """An ensemble of models: which one answers next, which are resting, and outages.

    Policies:
        ``weighted``: draw among the models in rotation in proportion to their weights.
        ``ucb1``: UCB1 on improvement per unit cost. The reward of a call is its improvement
        credit: 1 when the child beat its parent's score, else 0 (fractional credit in
        [0, 1] is accepted, e.g. for a child that found a new MAP-Elites cell without
        beating its parent). The cost of a call is its USD price when known, else its tokens
        at $1 per million (a rough price of a mid-size hosted model, so priced and self-hosted
        models can be compared), else unknown; a model's cost is the mean of its known costs,
        and a model with none yet counts at the mean of the others (neutral). Costs are then
        divided by the dearest model's, which makes the index scale-free (prices in cents or
        dollars choose the same), and floored at ``min_relative_cost``, so that a free model
        (offline, local) is preferred but not by an infinite factor on noise. The index of
        model i after N calls in all is
        ``(mean_reward_i + sqrt(2 ln N / n_i)) / relative_cost_i``; untried models come
        first, drawn by weight. With every cost equal (or none known) it is plain UCB1.

    Rotation: ``failures_to_cooldown`` consecutive failures (one for ``auth`` and
    ``not_found``, which do not heal by themselves) take a model out of rotation for
    ``cooldown_s``; it then comes back on probation, and a failure on probation sends it
    back for twice as long as before (up to 16 times ``cooldown_s``). A success ends
    probation and resets the cooldown length. When every model is out, :meth:`choose`
    returns the one whose cooldown ends first, so calls keep probing instead of stalling.

    Outage: :meth:`outage_for` is how long every model has been failing with no success in
    between; :meth:`check_outage` raises :class:`ModelOutage` once it exceeds ``outage_s``.

    Everything is a function of the ``rng`` passed to :meth:`choose` and of ``clock``, so
    tests drive time by hand. A pool of one model never draws from the rng.
    """

    def __init__(
        self,
        specs: Sequence[ModelSpec | str | Mapping[str, Any]],
        *,
        policy: str = "weighted",
        cooldown_s: float = 60.0,
        failures_to_cooldown: int = 3,
        outage_s: float = 300.0,
        min_relative_cost: float = 0.05,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        parsed = [ModelSpec.from_value(s) for s in specs]
        if not parsed:
            raise ModelSpecError("a model pool needs at least one model; add one to 'models'")
        names = [s.model for s in parsed]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ModelSpecError(
                f"model pool: {', '.join(twice)} listed more than once; calls are recorded "
                "by model string, so list each model once (merge the entries' weights)"
            )
        if policy not in POLICIES:
            raise ModelSpecError(
                f"model pool policy = {policy!r}: use one of {', '.join(POLICIES)}"
            )
        checks = [
            (cooldown_s >= 0, "cooldown_s", cooldown_s, "must be zero or positive"),
            (
                failures_to_cooldown >= 1,
                "failures_to_cooldown",
                failures_to_cooldown,
                "must be at least 1",
            ),
            (outage_s > 0, "outage_s", outage_s, "must be positive"),
            (
                0 < min_relative_cost <= 1,
                "min_relative_cost",
                min_relative_cost,
                "must be in (0, 1]",
            ),
        ]
        for ok, name, value, fix in checks:
            if not ok:
                raise ModelSpecError(f"model pool {name} = {value!r}: {fix}")
        self.policy = policy
        self.cooldown_s = cooldown_s
        self.failures_to_cooldown = failures_to_cooldown
        self.outage_s = outage_s
        self.min_relative_cost = min_relative_cost
        self._clock = clock
        self._stats = {s.model: ModelStats(s) for s in parsed}

    @property
    def specs(self) -> tuple[ModelSpec, ...]:
        return tuple(s.spec for s in self._stats.values())

    def stats(self, model: ModelSpec | str) -> ModelStats:
        """The pool's record of ``model`` (a copy)."""
        return dataclasses.replace(self._get(model))

    def _get(self, model: ModelSpec | str) -> ModelStats:
        name = model.model if isinstance(model, ModelSpec) else model
        try:
            return self._stats[name]
        except KeyError:
            raise KeyError(f"{name} is not in the model pool ({', '.join(self._stats)})") from None

    # --- choosing ----------------------------------------------------------------------------

    def in_rotation(self) -> list[ModelSpec]:
        """Models not cooling down now (a cooldown that has ended puts one back on probation)."""
        now = self._clock()
        return [
            s.spec
            for s in self._stats.values()
            if s.cooldown_until is None or now >= s.cooldown_until
        ]

    def choose(self, rng: np.random.Generator) -> ModelSpec:
        """The model for the next call (see the class docstring for the policies)."""
        stats = list(self._stats.values())
        if len(stats) == 1:
            return stats[0].spec
        now = self._clock()
        ready = [s for s in stats if s.cooldown_until is None or now >= s.cooldown_until]
        if not ready:
            return min(stats, key=lambda s: s.cooldown_until or 0.0).spec
        if self.policy == "ucb1":
            untried = [s for s in ready if s.calls == 0]
            if not untried:
                return self._ucb1(ready)
            ready = untried
        if len(ready) == 1:
            return ready[0].spec
        weights = np.array([s.spec.weight for s in ready], dtype=float)
        return ready[int(rng.choice(len(ready), p=weights / weights.sum()))].spec

    def relative_costs(self) -> dict[str, float]:
        """Each model's mean cost per call divided by the dearest's, floored (see class doc)."""
        known = {name: s.mean_cost for name, s in self._stats.items() if s.mean_cost is not None}
        neutral = sum(known.values()) / len(known) if known else 1.0
        costs = {name: known.get(name, neutral) for name in self._stats}
        top = max(costs.values())
        if top <= 0:
            return dict.fromkeys(costs, 1.0)  # all free: compare improvement alone
        return {n: max(c / top, self.min_relative_cost) for n, c in costs.items()}

    def _ucb1(self, ready: list[ModelStats]) -> ModelSpec:
        total = sum(s.calls for s in self._stats.values())
        costs = self.relative_costs()
        best, best_index = ready[0], -math.inf
        for s in ready:  # ties: the earlier-listed model
            bonus = math.sqrt(2.0 * math.log(total) / s.calls)
            index = (s.reward / s.calls + bonus) / costs[s.spec.model]
            if index > best_index:
                best, best_index = s, index
        return best.spec

    # --- outcomes ----------------------------------------------------------------------------

    def record_success(
        self,
        model: ModelSpec | str,
        *,
        improved: bool | float,
        cost_usd: float | None = None,
        tokens: int | None = None,
    ) -> None:
        """A call of ``model`` answered.

        Args:
            model: the spec :meth:`choose` returned, or its model string.
            improved: True (1) when the child beat its parent's score; a fraction in [0, 1]
                for partial credit.
            cost_usd: the call's price; None when unknown (never 0 for unknown).
            tokens: prompt + completion tokens; None when unknown.
        """
        credit = float(improved)
        if not 0.0 <= credit <= 1.0:
            raise ValueError(f"improved = {improved!r}: use a bool or a credit in [0, 1]")
        s = self._get(model)
        s.calls += 1
        s.reward += credit
        cost = _call_cost(cost_usd, tokens)
        if cost is not None:
            s.cost += cost
            s.costed += 1
        s.failures, s.failing_since, s.cooldowns = 0, None, 0
        s.cooldown_until, s.probation = None, False

    def record_failure(self, model: ModelSpec | str, kind: str, message: str = "") -> None:
        """A call of ``model`` failed (after its retries) with ``kind`` (see
        ``evoforge.evolve.models._retry``).

        ``message`` is redacted before it is kept.
        """
        s = self._get(model)
        now = self._clock()
        if s.failing_since is None:
            s.failing_since = now
        s.last_error = (kind, redact(message)[:300])
        if s.cooldown_until is not None:
            if now < s.cooldown_until:
                return  # a call sent before the cooldown began: the model is resting already
            s.cooldown_until = None  # it was back, on probation
        s.failures += 1
        if s.probation or s.failures >= self.failures_to_cooldown or kind in _PERMANENT:
            s.cooldowns += 1
            doublings = min(s.cooldowns - 1, _MAX_DOUBLINGS)
            s.cooldown_until = now + self.cooldown_s * 2.0**doublings
            s.failures, s.probation = 0, True

    def replay(self, records: Iterable[tuple[str, bool | float, float | None, int | None]]) -> int:
        """Rebuild the bandit statistics on resume from ``(model, improved, cost_usd, tokens)``
        of past successful calls, oldest first. Rotation state is not rebuilt: a resumed run
        gives every model a fresh chance. Records of models no longer in the pool are skipped.

        Returns:
            How many records were used.
        """
        used = 0
        for model, improved, cost_usd, tokens in records:
            if model in self._stats:
                self.record_success(model, improved=improved, cost_usd=cost_usd, tokens=tokens)
                used += 1
        return used

    # --- outages -----------------------------------------------------------------------------

    def outage_for(self) -> float:
        """Seconds during which every model has been failing, with no success in between;
        0 while any model's last call succeeded or it has not been called yet."""
        since = [s.failing_since for s in self._stats.values()]
        if any(t is None for t in since):
            return 0.0
        return max(0.0, self._clock() - max(t for t in since if t is not None))

    def unreachable(self) -> str | None:
        """Why no model of the pool can answer, when each has failed with a kind that does not
        heal (``auth``: a missing, empty or refused key; ``not_found``: an unknown model or
        provider) and none has answered yet; else None. One line per model, with the fix."""
        stats = list(self._stats.values())
        if any(s.calls or s.last_error is None or s.last_error[0] not in _PERMANENT for s in stats):
            return None
        lines = []
        for s in stats:
            kind, message = s.last_error or ("?", "")
            what = "missing or refused credentials" if kind == "auth" else "model not found"
            lines.append(f"{what}: {message}")
        return redact(
            "no model can be reached: "
            + "; ".join(lines)
            + ". Fix that, or run without these models: --model offline/mutator (the "
            "built-in offline model)"
        )

    def check_outage(self) -> None:
        """Raise :class:`ModelOutage` once every model has failed for longer than
        ``outage_s``, or at once when no model can be reached (:meth:`unreachable`); its
        message names each model's last error (redacted)."""
        reason = self.unreachable()
        if reason is not None:
            raise ModelOutage(reason)
        down = self.outage_for()
        if down <= self.outage_s:
            return
        lines = []
        for s in self._stats.values():
            kind, message = s.last_error or ("?", "")
            lines.append(f"{s.spec.model}: last error {kind}: {message}")
        raise ModelOutage(
            redact(
                f"every model has been failing for {down:.0f} s with no success "
                f"(outage_s = {self.outage_s:g}): " + "; ".join(lines) + ". Check the keys "
                "(api_key_env), api_base and the providers' status; the run can be resumed "
                "once a model answers again"
            )
        )


def _call_cost(cost_usd: float | None, tokens: int | None) -> float | None:
    """A call's cost in USD-equivalents: its price, else its tokens at $1 per million."""
    if cost_usd is not None:
        return float(cost_usd)
    if tokens is not None:
        return tokens / 1e6
    return None
