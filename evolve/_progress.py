"""The live progress display on stderr (rich); results go to stdout, never here."""

from __future__ import annotations

import time

from rich.console import Console, Group
from rich.live import Live
from rich.text import Text

from evoforge.evolve._controller import Snapshot

_REFRESH_S = 0.25


class LiveProgress:
    """A compact, self-refreshing panel: budget, rate, best score, statuses, islands."""

    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console(stderr=True)
        self._live: Live | None = None
        self._last = 0.0
        self._snapshot: Snapshot | None = None

    def __enter__(self) -> LiveProgress:
        self._live = Live(console=self.console, refresh_per_second=4, transient=False)
        self._live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._live is not None:
            if self._snapshot is not None:
                self._live.update(render(self._snapshot))  # the final state, unthrottled
            self._live.__exit__(*exc)
            if not self.console.is_terminal:
                self.console.line()

    def update(self, snapshot: Snapshot) -> None:
        self._snapshot = snapshot
        now = time.monotonic()
        if self._live is None or now - self._last < _REFRESH_S:
            return
        self._last = now
        self._live.update(render(snapshot))


def render(s: Snapshot) -> Group:
    best = "—" if s.best_score is None else f"{s.best_score:.6g}"
    statuses = " ".join(f"{k}={v}" for k, v in sorted(s.status_counts.items()))
    if s.duplicates:
        statuses += f" duplicates={s.duplicates}"
    if s.model_errors:
        statuses += f" model_errors={s.model_errors}"
    islands = " ".join(
        f"{i}:{'—' if b is None else f'{b:.6g}'}" for i, b in sorted(s.island_best.items())
    )
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
