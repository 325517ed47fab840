"""The live progress display on stderr (rich); results go to stdout, never here."""

from __future__ import annotations

import time
from types import TracebackType

from rich.console import Console, Group
from rich.live import Live
from rich.text import Text

from evoforge.evolve._snapshot import Snapshot

_REFRESH_S = 0.25
_LOG_WIDTH = 100_000


class LiveProgress:
    """A compact, self-refreshing panel: budget, rate, best score, statuses, islands."""

    def __init__(self, console: Console | None = None) -> None:
        if console is None:
            console = Console(stderr=True)
            if not console.is_terminal:  # a log file: one line per line, never wrapped at 80
                console = Console(stderr=True, width=_LOG_WIDTH, soft_wrap=True)
        self.console = console
        self._live: Live | None = None
        self._last = 0.0
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
        now = time.monotonic()
        if self._live is None or now - self._last < _REFRESH_S:
            return
        self._last = now
        self._live.update(render(snapshot))


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
