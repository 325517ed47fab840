"""The archive at a million programs: sampling, insert and mining queries, median and p99.

Grows one run of a temporary archive to each size (default 100k, then 1M programs), seeded
directly through :meth:`Archive.add_programs` in batches (the bulk path keeps the same
derived data as one candidate's transaction: grids, status counts, the Pareto front), then
times, each ``--repeats`` times:

* ``sample``: one parent and its inspirations, as the controller selects them
  (``Islands.select``: an island's elites, a tournament, programs by id);
* ``insert``: one candidate's transaction, as the controller commits it (program row, offers
  to the island and global grids, island counters, run counters);
* ``top-k``: ``Archive.top(run, 10)``;
* ``pareto``: ``Archive.pareto_front(run, objectives)`` (two objectives);
* ``lineage``: ``Archive.lineage`` of a program of the newest generation (its depth is
  printed);
* ``stats``: what ``evoforge status`` reads for a run: the run row, ``status_counts``,
  ``count_programs`` and the global grid's ``stats`` (coverage, QD score).

Lineages are realistic: each program's parent is drawn from the 1,000 programs before it,
so at 1M programs the newest are ~2,000 generations deep. 70 % of programs are ok (scored,
in one of 100 cells); the rest carry a failure status and an error artifact. Sources are about
1.2 kB, as a small evolved function.

    python bench/archive_scale.py                    # 100k and 1M programs (about 6 minutes)
    python bench/archive_scale.py --sizes 10000 --repeats 200

Prints figures only; asserts nothing. Targets (issue 13): sampling and insert under 1 ms median
at 1M; top-k, Pareto, lineage and stats under 50 ms.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from evoforge.archive import Archive, Program, program_id
from evoforge.evaluators import Status
from evoforge.islands import BUILTIN_STRATEGIES, IslandConfig, Islands
from evoforge.problems import Descriptor, Objective, Problem

ISLANDS = 4
WINDOW = 1_000  # a parent is one of the 1,000 programs before its child
BATCH = 20_000
PROBLEM = Problem(
    name="scale",
    spec_path=Path("scale.py"),
    seed_source="",
    objectives=(Objective("score"), Objective("size", "minimize")),
    descriptors=(Descriptor("a", 0, 1, 10), Descriptor("b", 0, 1, 10)),
)
BODY = "".join(f"    x{i} = math.sin({i} * t) + {i}  # a line of code\n" for i in range(24))
FAILURES = (Status.RUNTIME_ERROR, Status.INCORRECT, Status.TIMEOUT, Status.SYNTAX_ERROR)


def make_program(
    run_id: str, seq: int, rng: np.random.Generator, parent: Program | None
) -> Program:
    source = f"import math\n\n\ndef main(t):\n    # candidate {seq}\n{BODY}    return x0\n"
    ok = seq == 0 or rng.random() < 0.7
    a, b = float(rng.random()), float(rng.random())
    score = float(rng.normal()) if ok else None
    size = float(rng.integers(100, 2000))
    status = Status.OK if ok else FAILURES[int(rng.integers(len(FAILURES)))]
    return Program(
        run_id=run_id,
        id=program_id(source),
        seq=seq,
        source=source,
        parent_id=None if parent is None else parent.id,
        island=seq % ISLANDS,
        generation=0 if parent is None else parent.generation + 1,
        status=status,
        edit="<<<<<<< SEARCH\n    x0 = 1\n=======\n    x0 = 2\n>>>>>>> REPLACE\n",
        edit_kind="seed" if parent is None else "diff",
        score=score,
        cell=PROBLEM.cell_of({"a": a, "b": b}) if ok else None,
        metrics={"score": score, "size": size, "a": a, "b": b} if ok else {},
        objectives={"score": score, "size": size} if ok else {},
        descriptors={"a": a, "b": b} if ok else {},
        artifacts={} if ok else {"error": "Traceback ...\n" * 6},
        timings={"eval_s": 0.012},
        device={"cpu": "x86_64"},
        inspiration_ids=(),
        model="offline/mutator",
        created_at=time.time(),
    )


def grow(
    archive: Archive,
    islands: Islands,
    run_id: str,
    start: int,
    stop: int,
    rng: np.random.Generator,
    recent: list[Program],
) -> None:
    """Add programs ``start`` to ``stop - 1``, in batches, with their grids and counters."""
    for first in range(start, stop, BATCH):
        batch = []
        for seq in range(first, min(stop, first + BATCH)):
            parent = recent[int(rng.integers(len(recent)))] if recent else None
            program = make_program(run_id, seq, rng, parent)
            batch.append(program)
            recent.append(program)
            if len(recent) > WINDOW:
                del recent[0]
        with archive.transaction():
            archive.add_programs(batch)
            for program in batch:
                if program.seq == 0:
                    islands.seed(program)
                elif program.status is Status.OK:
                    islands.record(program)
            archive.bump_run(run_id, evaluations=len(batch), attempts=len(batch))
            archive.update_run(run_id, next_seq=batch[-1].seq + 1)


def timed(repeats: int, call: Callable[[int], object]) -> list[float]:
    out = []
    for i in range(repeats):
        start = time.perf_counter()
        call(i)
        out.append(time.perf_counter() - start)
    return out


def fmt(xs: list[float]) -> str:
    p99 = float(np.percentile(xs, 99))
    return f"{statistics.median(xs) * 1e3:8.3f} {p99 * 1e3:8.3f}"


def measure(
    archive: Archive,
    islands: Islands,
    run_id: str,
    next_seq: int,
    rng: np.random.Generator,
    recent: list[Program],
    repeats: int,
) -> tuple[list[list[float]], int]:
    """Time each operation ``repeats`` times; returns the timings and the next free seq."""
    newest = recent[-1]
    seq = [next_seq]

    def sample(i: int) -> None:
        islands.select(i % ISLANDS, np.random.default_rng([1, i]))

    def insert(i: int) -> None:
        parent = recent[int(rng.integers(len(recent)))]
        program = make_program(run_id, seq[0], rng, parent)
        seq[0] += 1
        with archive.transaction():
            archive.add_program(program)
            islands.record(program)
            archive.bump_run(run_id, evaluations=1, attempts=1)
            archive.update_run(run_id, next_seq=seq[0])

    def stats(i: int) -> None:
        archive.run(run_id)
        archive.status_counts(run_id)
        archive.count_programs(run_id)
        archive.stats(run_id, num_cells=PROBLEM.num_cells)

    few = max(20, repeats // 10)
    figures = [
        timed(repeats, sample),
        timed(repeats, insert),
        timed(repeats, lambda i: archive.top(run_id, 10)),
        timed(few, lambda i: archive.pareto_front(run_id, PROBLEM.objectives)),
        timed(few, lambda i: archive.lineage(run_id, newest.id)),
        timed(few, stats),
    ]
    return figures, seq[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--repeats", type=int, default=300)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    print(
        f"median and p99 of {args.repeats} repeats, in ms; one run, {ISLANDS} islands, "
        "100 cells, 2 objectives; SQLite WAL, synchronous=NORMAL"
    )
    header = (
        f"{'programs':>9} {'':>6} {'sample':>17} {'insert':>17} {'top-k':>17} "
        f"{'pareto':>17} {'lineage':>17} {'stats':>17} {'depth':>6} {'file MB':>8}"
    )
    print(header)
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "scale.db"
        with Archive(db) as archive:
            run_id = archive.create_run(PROBLEM, config={}, seed=0).id
            config = IslandConfig(count=ISLANDS, migration_interval=10**9, stagnation=0)
            islands = Islands(archive, run_id, config, BUILTIN_STRATEGIES["tournament"])
            recent: list[Program] = []
            have = 0
            for size in sorted(args.sizes):
                started = time.perf_counter()
                grow(archive, islands, run_id, have, size, rng, recent)
                have = size
                seeded = time.perf_counter() - started
                archive.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                figures, have = measure(archive, islands, run_id, have, rng, recent, args.repeats)
                newest = recent[-1]
                depth = len(archive.lineage(run_id, newest.id))
                mb = sum(p.stat().st_size for p in Path(tmp).glob("scale.db*")) / 2**20
                print(
                    f"{have:>9} {'':>6} "
                    + " ".join(fmt(f) for f in figures)
                    + f" {depth:>6} {mb:>8.0f}   (grown in {seeded:.0f} s)",
                    flush=True,
                )
                print(f"{'':>9} {'':>6} " + " ".join(f"{'median':>8} {'p99':>8}" for _ in figures))


if __name__ == "__main__":
    main()
