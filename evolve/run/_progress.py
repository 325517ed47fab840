"""The live progress display on stderr (rich); results go to stdout, never here.

On a terminal it is a panel that refreshes in place. Where stderr is not one (a log file, a
pipe, ``nohup``), rich would print nothing until the run ends; there the display is one plain
line every :data:`LINE_EVERY_S` seconds (evaluations, best, model calls and calls per
evaluation, model errors), and the whole panel once at the end.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from types import TracebackType

from rich.console import Console, Group
from rich.live import Live
from rich.text import Text

from evoforge.evolve.run._snapshot import Snapshot

_REFRESH_S = 0.25
_LOG_WIDTH = 100_000
LINE_EVERY_S = 30.0
"""Seconds between progress lines where stderr is not a terminal."""


class LiveProgress:
    """A compact, self-refreshing panel: budget, rate, best score, statuses, islands.

    Args:
        console: where to draw (default: stderr).
        every_s: seconds between plain progress lines where stderr is not a terminal.
        clock: tells the time for those lines (tests pass their own).
    """

    def __init__(
        self,
        console: Console | None = None,
        *,
        every_s: float = LINE_EVERY_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if console is None:
            console = Console(stderr=True)
            if not console.is_terminal:  # a log file: one line per line, never wrapped at 80
                console = Console(stderr=True, width=_LOG_WIDTH, soft_wrap=True)
        self.console = console
        self.every_s, self.clock = every_s, clock
        self._live: Live | None = None
        self._last = 0.0
        self._next_line = clock() + every_s
        self._snapshot: Snapshot | None = None

    def __enter__(self) -> LiveProgress:
        self._live = Live(console=self.console, refresh_per_second=4, transient=False)
        self._live.__enter__()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._live is not None:
            if self._snapshot is not None:
                self._live.update(render(self._snapshot))  # the final state, unthrottled
            self._live.__exit__(exc_type, exc, traceback)
            if not self.console.is_terminal:
                self.console.line()

    def update(self, snapshot: Snapshot) -> None:
        self._snapshot = snapshot
        if not self.console.is_terminal:
            now = self.clock()
            if now >= self._next_line:  # a log shows the run going on, not only its end
                self._next_line = now + self.every_s
                self.console.out(line(snapshot), highlight=False)
            return
        now = time.monotonic()
        if self._live is None or now - self._last < _REFRESH_S:
            return
        self._last = now
        self._live.update(render(snapshot))


def line(s: Snapshot) -> str:
    """One plain line of progress, for a log."""
    best = _value(s, s.best_score)
    if s.objective is not None:
        best = f"{s.objective.name} {best}"
    per_eval = f"{s.model_calls / s.evaluations:.2f}" if s.evaluations else "—"
    errors = f", model errors {s.model_errors}" if s.model_errors else ""
    return (
        f"{s.run_id}: evaluations {s.evaluations}/{s.budget}, best {best}, model calls "
        f"{s.model_calls} ({per_eval} per evaluation){errors}"
    )


def _value(s: Snapshot, score: float | None) -> str:
    """A stored score as its objective's own value (a minimised one is not negated)."""
    if score is None:
        return "—"
    value = score if s.objective is None else s.objective.oriented(score)
    return f"{value + 0.0:.6g}"  # + 0.0: never "-0"


def render(s: Snapshot) -> Group:
    best = _value(s, s.best_score)
    if s.objective is not None:
        way = "min" if str(s.objective.direction) == "minimize" else "max"
        best = f"{s.objective.name} {best} ({way})"
    statuses = " ".join(f"{k}={v}" for k, v in sorted(s.status_counts.items()))
    if s.duplicates:
        statuses += f" duplicates={s.duplicates}"
    if s.model_errors:
        statuses += f" model_errors={s.model_errors}"
    islands = " ".join(f"{i}:{_value(s, b)}" for i, b in sorted(s.island_best.items()))
    lines = [
        Text.from_markup(
            f"[bold]{s.run_id}[/]  evaluations {s.evaluations}/{s.budget}  "
            f"{s.evals_per_s:.1f} eval/s  best [bold green]{best}[/]"
        ),
        Text(f"  {statuses}  tokens in/out {s.tokens_in}/{s.tokens_out}  {_cost(s)}", style="dim"),
    ]
    if islands:
        lines.append(Text(f"  island bests {islands}", style="dim"))
    return Group(*lines)


def _cost(s: Snapshot) -> str:
    unpriced = f" (+{s.unpriced_calls} calls of unknown price)" if s.unpriced_calls else ""
    return f"cost ${s.cost_usd:.4f}{unpriced}"
