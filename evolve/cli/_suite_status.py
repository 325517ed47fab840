"""``evoforge status SUITE``: a suite's tasks, their shares of its budget, and its allocation."""

from __future__ import annotations

from pathlib import Path

from evoforge.archive import DEFAULT_DB
from evoforge.evolve.cli._common import echo
from evoforge.evolve.mining import SuiteView


def print_suite(view: SuiteView, db: Path, *, last: int) -> None:
    """The suite's header, one line per task, and its ``last`` allocation decisions."""
    suite = view.suite
    geomean = "" if view.geomean_vs_seed is None else f"  vs seeds {view.geomean_vs_seed:.4g}x"
    echo(f"{suite.id}  [{suite.status}]  suite {suite.name}  allocation {suite.allocation}")
    echo(
        f"  evaluations {view.spent}/{suite.budget} (granted {view.granted}) across "
        f"{len(view.tasks)} tasks{geomean} (geometric mean)"
    )
    width = max(len(t.problem) for t in view.tasks)
    for task in view.tasks:
        ratio = "—" if task.vs_seed is None else f"{task.vs_seed:.4g}x"
        ended = f"  ({task.ended})" if task.ended else ""
        echo(
            f"  {task.problem:{width}}  {task.status:8}  {task.spent:>5}/{task.granted:<5} "
            f"{task.grants:>3} grants  best {task.best_text}  vs seed {ratio}  "
            f"{task.run_id or ''}{ended}"
        )
    if last:
        names = {t.ord: t.problem for t in view.tasks}
        shown = view.grants[-last:]
        echo(f"  last {len(shown)} of {len(view.grants)} decisions:")
        for grant in shown:
            echo(
                f"    #{grant.seq} {names.get(grant.ord, grant.ord)} {grant.evaluations:+d} -> "
                f"{grant.cap} at {grant.spent} spent (x{_exp(grant.gain)} vs seed): {grant.why}"
            )
    if suite.stop_reason:
        echo(f"  last stop: {suite.stop_reason}")
    if str(suite.status) != "finished":
        db_flag = "" if str(db) == DEFAULT_DB else f" --db {db}"
        echo(f"  continue it with: evoforge resume {suite.id}{db_flag}")


def _exp(gain: float) -> str:
    import math

    return f"{math.exp(gain):.4g}"
