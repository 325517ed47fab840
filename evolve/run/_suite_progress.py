"""The live display of a suite on stderr: one row per task (its state, evaluations spent of
those granted, best, gain over its seed) under the suite's totals and its last allocation
decision. Where stderr is not a terminal, one plain line every
:data:`~evoforge.evolve.run._progress.LINE_EVERY_S` seconds instead."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from types import TracebackType

from rich.console import Console
from rich.live import Live
from rich.table import Table

from evoforge.archive import SuiteInfo
from evoforge.evolve.mining import gain_of
from evoforge.evolve.run._allocation import Arm
from evoforge.evolve.run._progress import LINE_EVERY_S
from evoforge.evolve.run._snapshot import Snapshot

_REFRESH_S = 0.25


class LiveSuiteProgress:
    """A self-refreshing table of a suite's tasks (see the module docstring)."""

    def __init__(
        self,
        console: Console | None = None,
        *,
        every_s: float = LINE_EVERY_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if console is None:
            console = Console(stderr=True)
            if not console.is_terminal:
                console = Console(stderr=True, width=100_000, soft_wrap=True)
        self.console, self.every_s, self.clock = console, every_s, clock
        self._live: Live | None = None
        self._last = 0.0
        self._next_line = clock() + every_s
        self.suite: SuiteInfo | None = None
        self.arms: list[Arm] = []
        self.snapshots: dict[int, Snapshot] = {}
        self.note = ""

    def __enter__(self) -> LiveSuiteProgress:
        if self.console.is_terminal:
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
            if self.suite is not None:
                self._live.update(self.table())
            self._live.__exit__(exc_type, exc, traceback)
        elif self.suite is not None:
            self.console.out(self.line(), highlight=False)

    # --- what the scheduler tells -------------------------------------------------------------

    def task(self, arm: Arm, snapshot: Snapshot) -> None:
        self.snapshots[arm.ord] = snapshot
        self._show()

    def allocation(self, suite: SuiteInfo, arms: Sequence[Arm], note: str) -> None:
        self.suite, self.arms, self.note = suite, list(arms), note
        self._show(force=True)

    # --- drawing ------------------------------------------------------------------------------

    def _show(self, force: bool = False) -> None:
        if self.suite is None:
            return
        now = self.clock()
        if self._live is None:
            if now >= self._next_line:
                self._next_line = now + self.every_s
                self.console.out(self.line(), highlight=False)
            return
        if force or now - self._last >= _REFRESH_S:
            self._last = now
            self._live.update(self.table())

    def _spent(self, arm: Arm) -> int:
        snapshot = self.snapshots.get(arm.ord)
        return max(arm.spent, snapshot.evaluations if snapshot else 0)

    def _ratio(self, arm: Arm) -> str:
        snapshot = self.snapshots.get(arm.ord)
        best = snapshot.best_score if snapshot is not None else None
        gain = gain_of(arm.seed_score, best) if best is not None else arm.gain
        return "—" if arm.seed_score is None else f"{math.exp(gain):.3g}x"

    def _state(self, arm: Arm) -> str:
        if not arm.live:
            return "ended"
        if arm.busy:
            return "running"
        return "waiting" if arm.cap else "queued"

    def table(self) -> Table:
        """The suite as a table (the terminal's display)."""
        assert self.suite is not None
        spent = sum(self._spent(a) for a in self.arms)
        granted = sum(a.cap for a in self.arms)
        title = (
            f"{self.suite.id}  evaluations {spent}/{self.suite.budget} (granted {granted})  "
            f"allocation {self.suite.allocation}"
        )
        table = Table(title=title, title_justify="left", caption=self.note, caption_justify="left")
        for column in ("task", "state", "spent/granted", "best", "vs seed"):
            table.add_column(column, justify="left" if column in ("task", "state") else "right")
        for arm in self.arms:
            snapshot = self.snapshots.get(arm.ord)
            best = "—"
            if snapshot is not None and snapshot.best_score is not None:
                objective = snapshot.objective
                value = (
                    snapshot.best_score
                    if objective is None
                    else objective.oriented(snapshot.best_score)
                )
                best = f"{value + 0.0:.6g}"
            table.add_row(
                arm.name,
                self._state(arm),
                f"{self._spent(arm)}/{arm.cap}",
                best,
                self._ratio(arm),
            )
        return table

    def line(self) -> str:
        """The suite in one plain line (a log's display)."""
        assert self.suite is not None
        spent = sum(self._spent(a) for a in self.arms)
        tasks = ", ".join(f"{a.name} {self._spent(a)}/{a.cap} {self._ratio(a)}" for a in self.arms)
        return f"{self.suite.id}: evaluations {spent}/{self.suite.budget}; {tasks}"
