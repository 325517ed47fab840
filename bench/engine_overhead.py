"""Engine overhead and throughput on the `trivial` problem with the offline model.

For each archive size (programs already stored in the run), runs a session of fresh candidates
and prints:
  - candidates/s (evaluated candidates per second of session wall time);
  - engine overhead per candidate: time on the event loop outside the model call and the
    evaluation (selection, prompt, edit, syntax check, SQLite commit, island bookkeeping);
  - model and evaluation time per candidate, for scale;
  - evaluation-slot utilisation: busy time of the evaluation slots / (wall time x slots).

Large archives are seeded directly (synthetic programs through the same archive and island
calls the controller makes), so reaching 100k programs takes seconds, not hours.

    python bench/engine_overhead.py                 # sizes 1k, 10k, 100k; 400 candidates each
    python bench/engine_overhead.py --sizes 1000 --candidates 200 --workers 2

A last row repeats the smallest size with candidates that take ``--eval-ms`` (default 20 ms)
each, the regime where evaluation, not the model, is the bottleneck: that is where the
evaluation-slot utilisation target (>= 95 %) applies.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from evoforge.archive import Archive, Program, program_id
from evoforge.evaluators import Status, evaluator_class
from evoforge.evolve import Controller, RunConfig, resolve_problem
from evoforge.evolve.models._client import prepare
from evoforge.islands import BUILTIN_STRATEGIES, Islands


def seed_archive(archive: Archive, islands: Islands, run_id: str, problem, size: int) -> None:
    """Store ``size`` synthetic, evaluable programs (variants of the seed) with random scores."""
    rng = np.random.default_rng(0)
    base = problem.seed_source
    batch = 2000
    for start in range(0, size, batch):
        with archive.transaction():
            for seq in range(start, min(size, start + batch)):
                source = f"{base}\n# synthetic variant {seq}\n"
                values = {d.name: float(rng.uniform(d.low, d.high)) for d in problem.descriptors}
                score = float(-rng.uniform(1.0, 60.0)) if seq else -40.0
                program = Program(
                    run_id=run_id,
                    id=program_id(source),
                    seq=seq,
                    source=source,
                    parent_id=None,
                    island=seq % islands.config.count,
                    generation=0,
                    status=Status.OK,
                    score=score,
                    cell=problem.cell_of(values),
                    objectives={problem.primary.name: score},
                    descriptors=values,
                    edit_kind="seed",
                )
                archive.add_program(program)
                if seq == 0:
                    islands.seed(program)
                else:
                    islands.record(program)
            archive.bump_run(
                run_id,
                evaluations=min(size, start + batch) - start,
                attempts=min(size, start + batch) - start,
            )
            archive.update_run(run_id, next_seq=min(size, start + batch))


def slow_trivial(folder: Path, eval_ms: float) -> Path:
    """A copy of ``trivial`` whose candidates sleep ``eval_ms`` outside the EVOLVE-BLOCK."""
    builtin = Path(resolve_problem("trivial").spec_path).parent
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(builtin / "problem.py", folder / "problem.py")
    seed = (builtin / "seed.py").read_text()
    seed = seed.replace(
        "def main():\n", f"def main():\n    import time\n    time.sleep({eval_ms / 1000.0!r})\n"
    )
    (folder / "seed.py").write_text(seed)
    return folder


async def measure(
    size: int, candidates: int, workers: int, db: Path, problem_ref: str = "trivial"
) -> dict[str, float]:
    problem = resolve_problem(problem_ref)
    config = RunConfig(problem=problem_ref, budget=size + candidates, workers=workers, seed=1)
    prepare(config.model)  # litellm import and provider set-up are start-up, not per candidate
    with Archive(db) as archive:
        run = archive.create_run(problem, config=config.to_dict(), seed=config.seed)
        islands = Islands(archive, run.id, config.islands, BUILTIN_STRATEGIES["tournament"])
        seed_archive(archive, islands, run.id, problem, size)
        cls = evaluator_class(problem.evaluator)
        async with cls(problem, workers=workers) as evaluator:
            controller = Controller(
                archive, archive.run(run.id), problem, config, evaluator, islands
            )
            started = time.perf_counter()
            report = await controller.run_session()
            wall = time.perf_counter() - started
        assert report.status == "finished", report
        t = controller.timings
        evaluated = controller.snapshot.session_evaluations
        return {
            "programs": archive.count_programs(run.id),
            "candidates_per_s": evaluated / wall,
            "overhead_median_ms": 1e3 * statistics.median(t.overhead_s),
            "overhead_p90_ms": 1e3 * float(np.percentile(t.overhead_s, 90)),
            "model_median_ms": 1e3 * statistics.median(t.model_s),
            "eval_median_ms": 1e3 * statistics.median(t.eval_s),
            "slot_utilisation": t.eval_busy_s / (wall * workers),
        }


def format_row(row: dict[str, float]) -> str:
    return (
        f"{row['programs']:>9} {row['candidates_per_s']:>8.1f} "
        f"{row['overhead_median_ms']:>14.3f} / {row['overhead_p90_ms']:<8.3f} "
        f"{row['model_median_ms']:>9.2f} {row['eval_median_ms']:>8.2f} "
        f"{row['slot_utilisation']:>8.1%}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--candidates", type=int, default=400)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--eval-ms", type=float, default=20.0)
    args = parser.parse_args()
    print(
        f"{'programs':>9} {'cand/s':>8} {'overhead ms (median/p90)':>25} {'model ms':>9} "
        f"{'eval ms':>8} {'slot util':>9}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for size in args.sizes:
            row = asyncio.run(
                measure(size, args.candidates, args.workers, Path(tmp) / f"bench-{size}.db")
            )
            print(format_row(row), flush=True)
        slow = slow_trivial(Path(tmp) / "slow_trivial", args.eval_ms)
        size = min(args.sizes)
        row = asyncio.run(
            measure(size, args.candidates, args.workers, Path(tmp) / "bench-slow.db", str(slow))
        )
        print(f"with {args.eval_ms:g} ms evaluations (model not the bottleneck):")
        print(format_row(row), flush=True)


if __name__ == "__main__":
    main()
