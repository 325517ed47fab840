"""Per-candidate cost of the archive's hot path at 1k, 10k and 100k stored programs.

Seeds a temporary archive with N programs (4 islands, a 10x10 grid), then times:

* one add transaction, as the controller records a candidate: ``island_state`` +
  ``add_program`` + ``offer`` to the island and the global grid + ``set_island_state`` +
  ``bump_run``, inside one ``transaction()``;
* one ``elites()`` + ``get_program()``, as islands select a parent.

Prints medians (and p90) only; asserts nothing. Run: ``python bench/archive_ops.py``.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from evoforge.archive import Archive, Program, program_id
from evoforge.evaluators import Status
from evoforge.problems import Descriptor, Objective, Problem

SIZES = (1_000, 10_000, 100_000)
REPEATS = 2_000
ISLANDS = 4
PROBLEM = Problem(
    name="bench",
    spec_path=Path("bench.py"),
    seed_source="",
    objectives=(Objective("score"),),
    descriptors=(Descriptor("a", 0, 1, 10), Descriptor("b", 0, 1, 10)),
)
BODY = "".join(f"    x{i} = math.sin({i} * t) + {i}  # a line of code\n" for i in range(24))


def make_program(run_id: str, seq: int, rng: np.random.Generator, parent: str | None) -> Program:
    source = f"import math\n\n\ndef main(t):\n    # candidate {seq}\n{BODY}    return x0\n"
    ok = rng.random() < 0.7
    score = float(rng.normal()) if ok else None
    return Program(
        run_id=run_id,
        id=program_id(source),
        seq=seq,
        source=source,
        parent_id=parent,
        island=seq % ISLANDS,
        generation=seq // 10,
        status=Status.OK if ok else Status.RUNTIME_ERROR,
        edit="<<<<<<< SEARCH\n    x0 = 1\n=======\n    x0 = 2\n>>>>>>> REPLACE\n",
        edit_kind="diff",
        score=score,
        cell=int(rng.integers(100)) if ok else None,
        metrics={"score": score, "a": 0.5, "b": 0.25, "extra": [1, 2, 3]},
        objectives={"score": score} if ok else {},
        descriptors={"a": 0.5, "b": 0.25},
        artifacts={} if ok else {"traceback": "Traceback ...\n" * 8},
        timings={"eval_s": 0.012, "compile_s": 0.001},
        device={"cpu": "x86_64", "host": "bench"},
        inspiration_ids=("0123456789abcdef", "fedcba9876543210"),
        model="offline/mutate",
        created_at=time.time(),
    )


def record(archive: Archive, program: Program) -> None:
    """What the controller does for one candidate, in one transaction."""
    run_id, island = program.run_id, program.island
    with archive.transaction():
        state = archive.island_state(run_id, island)
        archive.add_program(program)
        if program.status is Status.OK:
            archive.offer(run_id, island, program)
            archive.offer(run_id, -1, program)
        archive.set_island_state(
            run_id,
            island,
            accepted_since_migration=state.accepted_since_migration + 1,
            evals_since_improvement=state.evals_since_improvement + 1,
        )
        archive.bump_run(run_id, attempts=1, evaluations=1, next_seq=1)


def bench(size: int, directory: Path) -> tuple[list[float], list[float], float]:
    rng = np.random.default_rng(size)
    with Archive(directory / f"bench-{size}.db") as archive:
        run_id = archive.create_run(PROBLEM, config={}, seed=0).id
        seq = 0
        with archive.transaction():  # seeding: batched, not what is measured
            for seq in range(size):
                record(archive, make_program(run_id, seq, rng, None))
        adds = []
        for seq in range(size, size + REPEATS):
            program = make_program(run_id, seq, rng, None)
            start = time.perf_counter()
            record(archive, program)
            adds.append(time.perf_counter() - start)
        reads = []
        for i in range(REPEATS):
            start = time.perf_counter()
            elites = archive.elites(run_id, i % ISLANDS)
            archive.get_program(run_id, elites[i % len(elites)].program_id)
            reads.append(time.perf_counter() - start)
    db_mb = sum(p.stat().st_size for p in directory.glob(f"bench-{size}.db*")) / 2**20
    return adds, reads, db_mb


def main() -> None:
    print(f"median (p90) of {REPEATS} repeats, milliseconds; SQLite in WAL, synchronous=NORMAL")
    print(f"{'programs':>9}  {'add transaction':>18}  {'elites+get_program':>20}  {'db MB':>6}")
    with tempfile.TemporaryDirectory() as tmp:
        for size in SIZES:
            adds, reads, db_mb = bench(size, Path(tmp))

            def fmt(xs: list[float]) -> str:
                p90 = statistics.quantiles(xs, n=10)[-1]
                return f"{statistics.median(xs) * 1e3:.3f} ({p90 * 1e3:.3f})"

            print(f"{size:>9}  {fmt(adds):>18}  {fmt(reads):>20}  {db_mb:>6.0f}")


if __name__ == "__main__":
    main()
