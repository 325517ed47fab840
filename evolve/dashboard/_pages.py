"""What each dashboard page shows, as JSON-ready dicts (the same for the page and its API).

Every function takes an open read-only :class:`~evoforge.archive.Archive` and returns plain
data; the page template and ``dashboard.js`` turn it into HTML and charts, and ``/api/<page>``
returns it as JSON for live updates. Objective values are in each objective's own direction.
Text from candidates and models is returned as text: the template escapes it, the script sets
it with ``textContent``.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from evoforge.archive import Status, non_dominated
from evoforge.base import jsonio
from evoforge.evolve.mining import (
    RunView,
    arrow,
    compare_runs,
    prompt_variant_table,
    run_stats,
    run_summary,
    run_view,
    timeline as run_timeline,
)

if TYPE_CHECKING:
    from evoforge.archive import Archive, RunInfo

TOP_PROGRAMS = 10
MAX_POINTS = 20_000  # Pareto page: the front is always drawn; the other programs are sampled
LINEAGE_DESCENDANTS = 300


class NotFound(LookupError):
    """A run, program, island or objective the URL names does not exist."""


class _Cache:
    """Page data of runs that have not changed since: a finished run is computed once.

    Keyed by the run's id and ``updated_at`` (a run that moves gets new entries), bounded.
    """

    def __init__(self, size: int = 64) -> None:
        self._items: OrderedDict[tuple, Any] = OrderedDict()
        self._lock = threading.Lock()
        self._size = size

    def get(self, key: tuple, compute: Callable[[], Any]) -> Any:
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        value = compute()
        with self._lock:
            self._items[key] = value
            while len(self._items) > self._size:
                self._items.popitem(last=False)
        return value


CACHE = _Cache()


def _run(archive: Archive, run_id: str) -> RunInfo:
    from evoforge.archive import ArchiveError

    try:
        return archive.run(run_id)
    except ArchiveError as exc:
        raise NotFound(str(exc)) from None


def _key(archive: Archive, run: RunInfo, *parts: Any) -> tuple:
    return (str(archive.path.resolve()), run.id, run.updated_at, *parts)


def _view(archive: Archive, run: RunInfo) -> RunView:
    return CACHE.get(_key(archive, run, "view"), lambda: run_view(archive, run))


def _objective_info(view: RunView) -> dict[str, Any]:
    primary = view.primary
    return {
        "objective": None if primary is None else primary.name,
        "direction": None if primary is None else str(primary.direction),
        "arrow": None if primary is None else arrow(primary),
    }


def runs_page(archive: Archive) -> dict[str, Any]:
    """Every run: status, budget used, best in its own direction, cost, started, last update."""
    runs = archive.runs()
    rows = []
    for run in runs:
        view = _view(archive, run)
        rows.append({**run_summary(run, view), **_objective_info(view)})
    from evoforge.evolve.dashboard._suite_page import suites_summary

    suites = suites_summary(archive)
    return {
        "title": "Runs",
        "live": any(r["status"] == "running" for r in rows),
        "stamp": [(r["id"], r["updated_at"]) for r in rows]
        + [(s["id"], s["updated_at"]) for s in suites],
        "runs": rows,
        "suites": suites,
    }


def _program_row(program, view: RunView) -> dict[str, Any]:
    return {
        "id": program.id,
        "seq": program.seq,
        "island": program.island,
        "generation": program.generation,
        "status": str(program.status),
        "value": view.value(program.score),
        "edit_kind": program.edit_kind,
        "model": program.model,
    }


def run_page(archive: Archive, run_id: str) -> dict[str, Any]:
    """A run: its numbers, best over evaluations (overall and per island), evaluations per
    minute and statuses over time, model calls and cost per model, the top programs."""
    run = _run(archive, run_id)
    view = _view(archive, run)

    def compute() -> dict[str, Any]:
        timeline = run_timeline(archive, run.id)
        stats = run_stats(archive, run, view=view, timeline=timeline)
        return {
            "title": run.id,
            "live": str(run.status) == "running",
            "stamp": run.updated_at,
            **stats,
            **_objective_info(view),
            "bucket_s": timeline.bucket_s,
            "buckets": [
                {"start": b.start, "evaluations": b.evaluations, "statuses": b.statuses}
                for b in timeline.buckets
            ],
            "top": [_program_row(p, view) for p in archive.top(run.id, TOP_PROGRAMS)],
            "suite": archive.suite_of_run(run.id),  # [suite id, task] of a suite's task
        }

    return CACHE.get(_key(archive, run, "run"), compute)


def grid_page(
    archive: Archive, run_id: str, island: int = -1, x: str | None = None, y: str | None = None
) -> dict[str, Any]:
    """The MAP-Elites grid of an island (``-1``: the run's global grid) as a heatmap over two
    descriptors (others are folded: each shown cell holds the best of the cells it covers)."""
    run = _run(archive, run_id)
    view = _view(archive, run)
    count = int((run.config.get("islands") or {}).get("count") or 0)
    if island < -1 or (count and island >= count):
        raise NotFound(f"run {run.id} has no island {island} (islands 0 to {count - 1}, or -1)")
    names = [d.name for d in view.descriptors]
    for name in (x, y):
        if name is not None and name not in names:
            raise NotFound(f"no descriptor {name!r} in run {run.id} (descriptors: {names})")
    elites = archive.elites(run.id, island)
    axes = _axes(view, x, y)
    columns = axes[0].bins if axes else max((e.cell for e in elites), default=0) + 1
    rows_count = axes[1].bins if len(axes) > 1 else 1
    z: list[list[float | None]] = [[None] * columns for _ in range(rows_count)]
    ids: list[list[str | None]] = [[None] * columns for _ in range(rows_count)]
    best: dict[tuple[int, int], float] = {}
    for elite in elites:
        if axes:
            bins = dict(zip(names, view.cell_bins(elite.cell), strict=True))
            col = bins[axes[0].name]
            row = bins[axes[1].name] if len(axes) > 1 else 0
        else:
            col, row = elite.cell, 0
        if (row, col) not in best or elite.score > best[(row, col)]:
            best[(row, col)] = elite.score
            z[row][col] = view.value(elite.score)
            ids[row][col] = elite.program_id
    return {
        "title": f"Grid of {run.id}",
        "live": str(run.status) == "running",
        "stamp": run.updated_at,
        "run": run_summary(run, view),
        **_objective_info(view),
        "island": island,
        "islands": list(range(count)),
        "descriptors": view.to_dict()["descriptors"],
        "x": _axis(axes[0]) if axes else {"name": "cell", "labels": list(range(columns))},
        "y": _axis(axes[1]) if len(axes) > 1 else None,
        "z": z,
        "ids": ids,
        "elites": len(elites),
        "cells": view.num_cells,
        "folded": [d.name for d in view.descriptors if d not in axes],
    }


def _axes(view: RunView, x: str | None, y: str | None) -> list:
    ds = list(view.descriptors)
    if not ds:
        return []
    by_name = {d.name: d for d in ds}
    first = by_name[x] if x else ds[0]
    if len(ds) == 1:
        return [first]
    second = by_name[y] if y else next(d for d in ds if d is not first)
    return [first, second] if second is not first else [first]


def _axis(d) -> dict[str, Any]:
    step = (d.high - d.low) / d.bins
    return {
        "name": d.name,
        "labels": [f"{d.low + i * step:.3g}–{d.low + (i + 1) * step:.3g}" for i in range(d.bins)],
    }


def pareto_page(
    archive: Archive, run_id: str, x: str | None = None, y: str | None = None
) -> dict[str, Any]:
    """The run's ok programs on two objectives, with the Pareto front over those two."""
    run = _run(archive, run_id)
    view = _view(archive, run)
    objectives = list(view.objectives)
    base = {
        "title": f"Pareto front of {run.id}",
        "live": str(run.status) == "running",
        "stamp": run.updated_at,
        "run": run_summary(run, view),
        "objectives": view.to_dict()["objectives"],
    }
    if len(objectives) < 2:
        return {**base, "single": True, "points": [], "front": []}
    try:
        ox = view.objective(x) if x else objectives[0]
        oy = view.objective(y) if y else next(o for o in objectives if o is not ox)
    except KeyError as exc:
        raise NotFound(str(exc.args[0])) from None

    def compute() -> dict[str, Any]:
        rows = archive.conn.execute(
            "SELECT id, seq, json_extract(objectives_json, ?), json_extract(objectives_json, ?) "
            "FROM programs WHERE run_id = ? AND status = 'ok' ORDER BY seq",
            (_path(ox.name), _path(oy.name), run.id),
        ).fetchall()
        points = [r for r in rows if _number(r[2]) and _number(r[3])]
        oriented = [[ox.oriented(float(r[2])), oy.oriented(float(r[3]))] for r in points]
        front = [points[i] for i in non_dominated(oriented)] if points else []
        step = max(1, math.ceil(len(points) / MAX_POINTS))
        return {
            **base,
            "single": False,
            "x": {"name": ox.name, "direction": str(ox.direction), "arrow": arrow(ox)},
            "y": {"name": oy.name, "direction": str(oy.direction), "arrow": arrow(oy)},
            "programs": len(points),
            "points": [[r[0], r[2], r[3]] for r in points[::step]],
            "front": sorted(([r[0], r[2], r[3]] for r in front), key=lambda p: p[1]),
        }

    return CACHE.get(_key(archive, run, "pareto", ox.name, oy.name), compute)


def _path(name: str) -> str:
    return '$."' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and math.isfinite(value)


def failures_page(archive: Archive, run_id: str, status: str | None = None) -> dict[str, Any]:
    """The run's failures by status, and grouped by status and message."""
    run = _run(archive, run_id)
    view = _view(archive, run)
    if status is not None:
        try:
            if Status(status) is Status.OK:
                raise ValueError
        except ValueError:
            raise NotFound(f"{status!r} is not a failure status") from None

    def compute() -> dict[str, Any]:
        from evoforge.evolve.mining import failed_calls_summary, failure_groups, model_failures

        groups = failure_groups(archive, run.id, status=status)
        counts = archive.status_counts(run.id)
        # calls that brought no program (no key, unknown model, outages), as `evoforge
        # failures` shows them; a status filter is about programs, so it leaves them out
        model = model_failures(archive.llm_calls(run.id)) if status is None else []
        return {
            "title": f"Failures of {run.id}",
            "live": str(run.status) == "running",
            "stamp": run.updated_at,
            "run": run_summary(run, view),
            "status": status,
            "statuses": counts,
            "attempts": sum(counts.values()),
            "failed": sum(n for s, n in counts.items() if s != "ok"),
            "groups": [g.to_dict() for g in groups],
            **failed_calls_summary(model),
            "stop_reason": run.stop_reason if str(run.status) == "failed" else None,
        }

    return CACHE.get(_key(archive, run, "failures", status), compute)


def prompts_page(archive: Archive, run_id: str) -> dict[str, Any]:
    """The run's prompt variants: lineage, origin, children, improvement rate, best value,
    the first line each changed, and their templates (as ``evoforge prompts`` shows them)."""
    run = _run(archive, run_id)
    view = _view(archive, run)

    def compute() -> dict[str, Any]:
        table = prompt_variant_table(archive, run, view=view)
        return {
            "title": f"Prompt variants of {run.id}",
            "live": str(run.status) == "running",
            "stamp": run.updated_at,
            "run": run_summary(run, view),
            "arrow": None if view.primary is None else arrow(view.primary),
            **table,
        }

    return CACHE.get(_key(archive, run, "prompts"), compute)


def program_page(archive: Archive, run_id: str, program_id: str) -> dict[str, Any]:
    """One program: everything stored about it, its model calls and its children."""
    from evoforge.archive import ArchiveError

    run = _run(archive, run_id)
    view = _view(archive, run)
    try:
        program = archive.get_program(run.id, program_id)
    except ArchiveError as exc:
        raise NotFound(str(exc)) from None
    diff = archive.diff(run.id, program.id) if program.source is not None else None
    calls = archive.llm_calls(run.id, seq=program.seq) if program.parent_id else []
    children = [
        n
        for n in archive.lineage_tree(run.id, program.id, max_descendants=50)
        if n.role == "descendant" and n.depth == 1
    ]
    cell = None
    if program.cell is not None and view.descriptors:
        bins = view.cell_bins(program.cell)
        cell = {d.name: b for d, b in zip(view.descriptors, bins, strict=True)}
    return {
        "title": f"Program {program.id}",
        "live": False,
        "stamp": program.id,
        "run": run_summary(run, view),
        **_objective_info(view),
        "program": {
            **_program_row(program, view),
            "run_id": run.id,
            "parent_id": program.parent_id,
            "score": program.score,
            "cell": program.cell,
            "cell_bins": cell,
            "objectives": [
                {"name": k, "value": v, "arrow": _arrow_of(view, k)}
                for k, v in program.objectives.items()
            ],
            "metrics": program.metrics,
            "descriptors": program.descriptors,
            "artifacts": program.artifacts,
            "timings": program.timings,
            "device": program.device,
            "inspiration_ids": list(program.inspiration_ids),
            "created_at": program.created_at,
            "source": program.source,
            "edit": program.edit,
            "diff": diff,
        },
        "calls": [
            {
                "model": c.model,
                "status": c.status,
                "attempt": c.attempt,
                "prompt_tokens": c.prompt_tokens,
                "completion_tokens": c.completion_tokens,
                "cost_usd": c.cost_usd,
                "latency_s": c.latency_s,
                "error": c.error,
            }
            for c in calls
        ],
        "children": [
            {"id": n.id, "seq": n.seq, "status": str(n.status), "value": view.value(n.score)}
            for n in children
        ],
    }


def _arrow_of(view: RunView, name: str) -> str | None:
    try:
        return arrow(view.objective(name))
    except KeyError:
        return None


def lineage_page(archive: Archive, run_id: str, program_id: str) -> dict[str, Any]:
    """A program's ancestors, itself and its nearest descendants, as a tree."""
    from evoforge.archive import ArchiveError

    run = _run(archive, run_id)
    view = _view(archive, run)
    try:
        nodes = archive.lineage_tree(run.id, program_id, max_descendants=LINEAGE_DESCENDANTS)
    except ArchiveError as exc:
        raise NotFound(str(exc)) from None
    return {
        "title": f"Lineage of {program_id}",
        "live": str(run.status) == "running",
        "stamp": [run.updated_at, len(nodes)],
        "run": run_summary(run, view),
        **_objective_info(view),
        "program_id": program_id,
        "max_descendants": LINEAGE_DESCENDANTS,
        "nodes": [
            {
                "id": n.id,
                "parent_id": n.parent_id,
                "seq": n.seq,
                "generation": n.generation,
                "island": n.island,
                "status": str(n.status),
                "value": view.value(n.score),
                "edit_kind": n.edit_kind,
                "model": n.model,
                "role": n.role,
                "depth": n.depth,
            }
            for n in nodes
        ],
    }


def compare_page(archive: Archive, run_ids: list[str]) -> dict[str, Any]:
    """Runs side by side (see :func:`~evoforge.evolve.mining.compare_runs`)."""
    if len(run_ids) < 2:
        raise NotFound("choose at least two runs to compare (tick them on the runs page)")
    runs = [_run(archive, r) for r in run_ids]
    data = compare_runs(archive, runs)
    return {
        "title": "Compare runs",
        "live": any(str(r.status) == "running" for r in runs),
        "stamp": [(r.id, r.updated_at) for r in runs],
        **data,
    }


def to_json(data: dict[str, Any]) -> str:
    """JSON for the page and the API: NaN and infinities (which JSON lacks) become null, and
    ``<``, ``>``, ``&`` are escaped (``\\u003c``...), so the text can sit inside a
    ``<script type="application/json">`` element: no candidate's ``</script>`` ends it."""
    text = jsonio.dumps(_clean(data))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _clean(value: Any) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    return value
