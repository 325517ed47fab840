"""Per-candidate cost of the prompt path on a large archive: repair pick, context, prompt.

Builds a run of ``--size`` synthetic attempts of the circle_packing seed with real lineage
(each attempt's parent is a recent ok program of its island), a realistic mix of statuses
(65 % ok, 10 % incorrect, 10 % runtime_error, 5 % timeout, 10 % edit_error, with error
artifacts) and the grids filled as a run would, then times, for ``--candidates`` candidates
with the default settings: :func:`pick_repair`, :func:`choose_mode`, :func:`gather_context`
(with the memory digest, refreshed every 50 evaluations) and :func:`build_messages`.

    python bench/prompt_context.py                  # 100k attempts, 2000 candidates
    python bench/prompt_context.py --size 10000
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from evoforge.archive import Archive, Program, program_id
from evoforge.evaluators import Status
from evoforge.evolve import resolve_problem
from evoforge.evolve.prompts import PromptConfig, build_messages
from evoforge.evolve.prompts._context import gather_context
from evoforge.evolve.prompts._memory import OptimizationMemory
from evoforge.evolve.prompts._modes import Mode, ModeConfig, choose_mode, pick_repair
from evoforge.islands import BUILTIN_STRATEGIES, IslandConfig, Islands

STATUSES = (
    (Status.OK, 0.65),
    (Status.INCORRECT, 0.10),
    (Status.RUNTIME_ERROR, 0.10),
    (Status.TIMEOUT, 0.05),
    (Status.EDIT_ERROR, 0.10),
)
ERRORS = {
    Status.INCORRECT: "circles {} and {} overlap by {:.3g}",
    Status.RUNTIME_ERROR: "IndexError: index {} is out of bounds for axis 0 with size {}",
    Status.TIMEOUT: "the candidate ran longer than {} s (and {}) {}",
    Status.EDIT_ERROR: "block 1: its SEARCH text was not found ({} {} {})",
}


def build(archive: Archive, problem, size: int, islands: int) -> str:
    run_id = archive.create_run(problem, config={}, seed=0).id
    rng = np.random.default_rng(0)
    base = problem.seed_source
    kinds, weights = zip(*STATUSES, strict=True)
    recent: list[list[Program]] = [[] for _ in range(islands)]
    for start in range(0, size, 2000):
        with archive.transaction():
            for seq in range(start, min(size, start + 2000)):
                island = seq % islands
                pool = recent[island] or recent[0]
                parent = pool[int(rng.integers(len(pool)))] if pool else None
                status = Status.OK if parent is None else kinds[rng.choice(5, p=weights)]
                ok = status is Status.OK
                source = None
                if status is not Status.EDIT_ERROR:
                    source = base.replace("GROW_PASSES = 1", f"GROW_PASSES = 1  # v{seq}")
                numbers = rng.integers(0, 30, size=3)
                program = Program(
                    run_id=run_id,
                    id=program_id(source) if source else f"e{seq:015d}",
                    seq=seq,
                    source=source,
                    parent_id=parent.id if parent else None,
                    island=island,
                    generation=parent.generation + 1 if parent else 0,
                    status=status,
                    edit_kind="diff" if parent else "seed",
                    score=float(rng.uniform(1.0, 2.6)) if ok else None,
                    cell=int(rng.integers(0, 100)) if ok else None,
                    model="offline/mutator" if parent else None,
                    artifacts={} if ok else {"error": ERRORS[status].format(*numbers)},
                )
                archive.add_program(program)
                if ok:
                    for grid in (island, -1):
                        archive.offer(run_id, grid, program)
                    recent[island] = (recent[island] + [program])[-200:]
    return run_id


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--candidates", type=int, default=2000)
    args = parser.parse_args()
    problem = resolve_problem("circle_packing")
    with tempfile.TemporaryDirectory() as tmp, Archive(Path(tmp) / "bench.db") as archive:
        started = time.perf_counter()
        run_id = build(archive, problem, args.size, islands=4)
        print(f"built {args.size} attempts in {time.perf_counter() - started:.1f} s")
        config = IslandConfig()
        islands = Islands(archive, run_id, config, BUILTIN_STRATEGIES[config.selection])
        modes, prompts, memory = ModeConfig(), PromptConfig(), OptimizationMemory()
        timings: dict[str, list[float]] = {"pick_repair": [], "gather_context": [], "build": []}
        counts: dict[str, int] = {}
        chars = []
        for seq in range(args.candidates):
            rng = np.random.default_rng([0, seq])
            selection = islands.select(islands.island_for(seq), rng)
            t0 = time.perf_counter()
            failed = pick_repair(archive, run_id, selection.island, rng, modes)
            t1 = time.perf_counter()
            mode = (
                Mode.REPAIR
                if failed
                else choose_mode(rng, modes, can_crossover=bool(selection.inspirations))
            )
            context = gather_context(
                archive, run_id, problem, selection, mode, prompts, rng,
                parent=failed, memory=memory, evaluations=args.size + seq,
            )  # fmt: skip
            t2 = time.perf_counter()
            messages = build_messages(problem, context, prompts)
            t3 = time.perf_counter()
            timings["pick_repair"].append(t1 - t0)
            timings["gather_context"].append(t2 - t1)
            timings["build"].append(t3 - t2)
            counts[context.mode] = counts.get(context.mode, 0) + 1
            chars.append(sum(len(m["content"]) for m in messages))
        print(f"modes: {counts}; prompt chars median {statistics.median(chars):.0f}")
        for name, values in timings.items():
            ms = sorted(v * 1e3 for v in values)
            print(
                f"{name:15s} median {statistics.median(ms):.3f} ms  p90 "
                f"{ms[int(0.9 * len(ms))]:.3f} ms  max {ms[-1]:.2f} ms"
            )


if __name__ == "__main__":
    main()
