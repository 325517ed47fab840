"""The SQL behind the archive's read methods: find a program, top-k, Pareto front, lineage (and
its tree), diffs, progress.

These answer questions about stored rows and need nothing but the archive. Interpreting a run
(its objectives' directions, statistics, timelines, failures grouped by cause, what its model
calls bought, comparison of runs, export) is :mod:`evoforge.evolve.mining`, built on these
methods and on the rows of :mod:`~evoforge.archive._history` and the counts of
:mod:`~evoforge.archive._usage`: the one package for mining.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from evoforge.archive._errors import ArchiveError
from evoforge.archive._outcome import Status, status_of
from evoforge.archive._pareto import non_dominated
from evoforge.archive._patch import bundle_files, file_patch
from evoforge.archive._program import ID_LENGTH, SELECT_SQL, Program, from_row, select_list
from evoforge.base import jsonio

if TYPE_CHECKING:
    from evoforge.archive._archive import Archive
    from evoforge.problems import Objective

_SHOWN = 10  # candidates listed in an ambiguity error


def find_program(
    archive: Archive, id_or_prefix: str, run_id: str | None = None, *, latest: bool = False
) -> Program:
    """See :meth:`Archive.find_program`."""
    prefix = id_or_prefix.strip().lower()
    if not prefix:
        raise ArchiveError("no program id given; give an id or a prefix of one")
    # A range on the id index rather than LIKE, which would not use it.
    params: tuple[str, ...] = (prefix, prefix + "\uffff")
    where = "id >= ? AND id < ?"
    if run_id is not None:
        where, params = f"run_id = ? AND {where}", (run_id, *params)
    rows = archive.conn.execute(
        f"SELECT run_id, id FROM programs WHERE {where} ORDER BY id, run_id LIMIT {_SHOWN + 1}",
        params,
    ).fetchall()
    scope = f"run {run_id!r}" if run_id is not None else "any run"
    if not rows:
        if run_id is not None:
            archive.run(run_id)  # a missing run gets its own message
        raise ArchiveError(
            f"no program id starting with {prefix!r} in {scope} of {archive.path}; ids are "
            f"{ID_LENGTH} hex digits, shown by `evoforge status` and top()"
        )
    if len(rows) > 1 and latest and len({pid for _, pid in rows}) == 1:
        # one program in several runs (rows are capped: count the ids of every match)
        sql = f"SELECT count(DISTINCT id) FROM programs WHERE {where}"
        if archive.conn.execute(sql, params).fetchone()[0] == 1:
            return archive.get_program(program_runs(archive, rows[0][1])[0], rows[0][1])
    if len(rows) > 1:
        listed = ", ".join(f"{rid}:{pid}" for rid, pid in rows[:_SHOWN])
        more = " and more" if len(rows) > _SHOWN else ""
        fix = "give more digits" + (" or a run id" if run_id is None else "")
        raise ArchiveError(
            f"program id prefix {prefix!r} is ambiguous in {scope}: it matches {listed}{more}; "
            f"{fix}"
        )
    return archive.get_program(*rows[0])


def program_runs(archive: Archive, program_id: str) -> list[str]:
    """See :meth:`Archive.program_runs`."""
    rows = archive.conn.execute(
        "SELECT p.run_id FROM programs AS p JOIN runs AS r ON r.id = p.run_id "
        "WHERE p.id = ? ORDER BY r.created_at DESC, r.rowid DESC",
        (program_id,),
    )
    return [row[0] for row in rows]


def top(archive: Archive, run_id: str, k: int) -> list[Program]:
    """See :meth:`Archive.top`."""
    if k < 0:
        raise ValueError(f"k must be >= 0, got {k}")
    rows = archive.conn.execute(
        f"{SELECT_SQL} WHERE run_id = ? AND status = 'ok' AND score IS NOT NULL "
        "ORDER BY score DESC, seq LIMIT ?",
        (run_id, k),
    )
    return [from_row(row) for row in rows]


def pareto_front(archive: Archive, run_id: str, objectives: Sequence[Objective]) -> list[Program]:
    """The non-dominated ok programs of a run.

    Each objective is oriented by its direction (``Objective.oriented``) so bigger is better.
    A dominates B when A is at least as good on every objective and strictly better on one;
    programs with equal objective values are all kept. Ok programs that lack one of the
    objectives, or report NaN for it, take no part.

    Cost: for the objectives the run was created with, the front kept as programs are stored
    (:mod:`evoforge.archive._front`) is read: O(front). Other objectives scan the run's ok
    programs: O(run), seconds at a million.

    Returns:
        The front in ``seq`` order.
    """
    if not objectives:
        raise ValueError("pareto_front() needs at least one objective")
    kept = archive._stored_front(run_id, objectives)
    if kept is not None:
        return [archive.get_program(run_id, program_id) for program_id in kept]
    rows = archive.conn.execute(
        "SELECT id, objectives_json FROM programs WHERE run_id = ? AND status = 'ok' ORDER BY seq",
        (run_id,),
    )
    ids: list[str] = []
    points: list[list[float]] = []
    for program_id, objectives_json in rows:
        values = jsonio.loads(objectives_json)
        try:
            point = [o.oriented(float(values[o.name])) for o in objectives]
        except (KeyError, TypeError, ValueError):
            continue
        if any(math.isnan(v) for v in point):
            continue
        ids.append(program_id)
        points.append(point)
    front = non_dominated(np.asarray(points, dtype=float).reshape(len(points), len(objectives)))
    return [archive.get_program(run_id, ids[i]) for i in front]


def lineage(archive: Archive, run_id: str, program_id: str) -> list[Program]:
    """See :meth:`Archive.lineage`. Stops early at a parent missing from the archive.

    One recursive query walks the parent links through the primary key (run_id, id), keeping
    each step's rowid, and the rows are then read by rowid: a 2,000-generation lineage is one
    query of a few ms (plus decoding the programs), not 2,000 round trips. The walk is
    bounded by the run's number of programs, so even a (corrupt) cycle ends.
    """
    archive.get_program(run_id, program_id)  # raises for an unknown program
    bound = archive.count_programs(run_id) + 1
    columns = select_list("p.")
    rows = archive.conn.execute(
        "WITH RECURSIVE chain(rid, parent, depth) AS (SELECT rowid, parent_id, 0 FROM programs "
        "WHERE run_id = ? AND id = ? UNION ALL SELECT p.rowid, p.parent_id, c.depth + 1 "
        "FROM chain AS c JOIN programs AS p ON p.run_id = ? AND p.id = c.parent "
        "WHERE c.depth < ?) "
        f"SELECT c.depth, {columns} FROM chain AS c JOIN programs AS p ON p.rowid = c.rid "
        "ORDER BY c.depth",
        (run_id, program_id, run_id, bound),
    ).fetchall()
    chain: list[Program] = []
    seen: set[str] = set()
    for row in rows:
        if row[2] in seen:  # a cycle: stop where it closes
            break
        seen.add(row[2])
        chain.append(from_row(row[1:]))
    chain.reverse()
    return chain


def diff(archive: Archive, run_id: str, program_id: str) -> str:
    """See :meth:`Archive.diff`. File labels are ``a/<parent id>`` and ``b/<program id>``; a
    repository program's diff is per file (``a/<path>``, ``b/<path>``), as ``git diff`` shows it.

    Raises:
        ArchiveError: the program has no source (an edit that could not be applied).
    """
    program = archive.get_program(run_id, program_id)
    if program.source is None:
        raise ArchiveError(
            f"program {program.id} has no source (status {program.status}): its edit could "
            "not be applied; the model's raw answer is in Program.edit"
        )
    if program.parent_id is None:
        before, label = "", "/dev/null"
    else:
        parent = archive.get_program(run_id, program.parent_id)
        before, label = parent.source or "", f"a/{parent.id}"
        files = bundle_files(program.source), bundle_files(parent.source)
        if files[0] is not None and files[1] is not None:  # a repository's: per file
            return file_patch(files[1], files[0])
    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        program.source.splitlines(keepends=True),
        fromfile=label,
        tofile=f"b/{program.id}",
    )
    # A last line without a newline gets git's marker, so the diff stays well formed.
    return "".join(
        line if line.endswith("\n") else f"{line}\n\\ No newline at end of file\n" for line in lines
    )


def best_over_time(archive: Archive, run_id: str) -> list[tuple[int, float]]:
    """See :meth:`Archive.best_over_time`: one point per improvement, in ``seq`` order.

    The points are kept by a trigger as programs are stored (``run_best_points``, migration
    m003), so this reads O(points) rows, not the run.
    """
    rows = archive.conn.execute(
        "SELECT seq, score FROM run_best_points WHERE run_id = ? ORDER BY seq", (run_id,)
    )
    return [(seq, score) for seq, score in rows]


def metric_ranges(
    archive: Archive, run_id: str, metrics: Iterable[str]
) -> dict[str, tuple[float, float]]:
    """See :meth:`Archive.metric_ranges`: SQLite's JSON functions over the run's ok rows (one
    scan per metric, no source or JSON decoded in Python)."""
    ranges = {}
    for name in dict.fromkeys(metrics):
        path = f'$."{name}"'
        low, high = archive.conn.execute(
            "SELECT MIN(json_extract(metrics_json, ?1)), MAX(json_extract(metrics_json, ?1)) "
            "FROM programs WHERE run_id = ?2 AND status = 'ok' "
            "AND json_type(metrics_json, ?1) IN ('integer', 'real')",
            (path, run_id),
        ).fetchone()
        if low is not None and high is not None:
            ranges[name] = (float(low), float(high))
    return ranges


@dataclass(frozen=True)
class Node:
    """A program in a lineage tree: what a tree view needs, without the source.

    ``role`` is ``ancestor``, ``self`` or ``descendant``; ``depth`` counts steps from the
    program (negative for ancestors).
    """

    id: str
    parent_id: str | None
    seq: int
    generation: int
    island: int
    status: Status
    score: float | None
    edit_kind: str
    model: str | None
    role: str
    depth: int


_NODE_SQL = (
    "SELECT id, parent_id, seq, generation, island, status, score, edit_kind, model "
    "FROM programs WHERE run_id = ?"
)


def lineage_tree(
    archive: Archive, run_id: str, program_id: str, *, max_descendants: int = 300
) -> list[Node]:
    """The program's ancestors (back to the seed), itself, and its descendants.

    Descendants are taken breadth first (children, then grandchildren, ...; each program's
    children in the order they were recorded) until ``max_descendants``: the nearest ones,
    which a tree view can show. Each ancestor is one probe of the primary key, each parent's
    children one range of ``idx_programs_parent``.

    Returns:
        Nodes in ``seq`` order.

    Raises:
        ArchiveError: no such program in the run.
    """
    if max_descendants < 0:
        raise ValueError(f"max_descendants must be >= 0, got {max_descendants}")
    conn = archive.conn
    row = conn.execute(f"{_NODE_SQL} AND id = ?", (run_id, program_id)).fetchone()
    if row is None:
        archive.get_program(run_id, program_id)  # raises the archive's own message
    nodes = {program_id: _node(row, "self", 0)}
    parent, depth = row[1], 0
    while parent is not None and parent not in nodes:
        depth -= 1
        found = conn.execute(f"{_NODE_SQL} AND id = ?", (run_id, parent)).fetchone()
        if found is None:
            break
        nodes[parent] = _node(found, "ancestor", depth)
        parent = found[1]
    frontier, depth, budget = [program_id], 0, max_descendants
    while frontier and budget > 0:
        depth += 1
        next_frontier = []
        for parent in frontier:
            # idx_programs_parent holds rowid (commit order) last: the first `budget`
            # children come off the index without reading the others' rows.
            children = conn.execute(
                f"{_NODE_SQL} AND parent_id = ? ORDER BY rowid LIMIT ?", (run_id, parent, budget)
            ).fetchall()
            for child in children:
                if child[0] not in nodes:
                    nodes[child[0]] = _node(child, "descendant", depth)
                    next_frontier.append(child[0])
                    budget -= 1
            if budget <= 0:
                break
        frontier = next_frontier
    return sorted(nodes.values(), key=lambda n: n.seq)


def _node(row, role: str, depth: int) -> Node:
    return Node(
        id=row[0], parent_id=row[1], seq=row[2], generation=row[3], island=row[4],
        status=status_of(row[5]), score=row[6], edit_kind=row[7], model=row[8], role=role,
        depth=depth,
    )  # fmt: skip
