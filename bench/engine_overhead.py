"""Engine overhead and throughput on the `trivial` problem with the offline model.

For each archive size (programs already stored in the run), runs a session of fresh candidates
and prints:
  - candidates/s (evaluated candidates per second of session wall time);
  - engine overhead per candidate: time on the event loop outside the model call and the
    evaluation (selection, prompt, edit, syntax check, SQLite commit, island bookkeeping);
  - model and evaluation time per candidate, for scale;
  - evaluation-slot utilisation: busy time of the evaluation slots / (wall time x slots);
  - CPU ms per candidate by part: the controller process (selection, prompt context, commit,
    message encoding), and in the proposal workers: building the prompt, the model client
    (litellm: request, response, accounting; the rest of the worker's CPU), applying the
    answer plus the syntax check, and message framing; "engine" is everything but the model
    client (the candidate's own run is in the sandboxes, not counted here);
  - the time from the session's start to its first model request (workers starting included).

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
from evoforge.evolve.prompts import OptimizationMemory
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
    size: int,
    candidates: int,
    workers: int,
    db: Path,
    problem_ref: str = "trivial",
    proposal_workers: int | None = None,
) -> dict[str, float]:
    problem = resolve_problem(problem_ref)
    config = RunConfig(
        problem=problem_ref,
        budget=size + candidates,
        workers=workers,
        seed=1,
        proposal_workers=proposal_workers,
    )
    prepare(config.model)  # litellm import and provider set-up are start-up, not per candidate
    with Archive(db) as archive:
        run = archive.create_run(problem, config=config.to_dict(), seed=config.seed)
        islands = Islands(archive, run.id, config.islands, BUILTIN_STRATEGIES["tournament"])
        seed_archive(archive, islands, run.id, problem, size)
        # A run that reached `size` has checkpointed its prompt memory at each refresh; the
        # session then reads only newer attempts (without it: ~1 s at 100k, O(run)).
        OptimizationMemory(refresh_every=config.memory_every).digest(archive, run.id, problem, size)
        cls = evaluator_class(problem.evaluator)
        async with cls(problem, workers=workers) as evaluator:
            controller = Controller(
                archive, archive.run(run.id), problem, config, evaluator, islands
            )
            started, started_mono = time.perf_counter(), time.monotonic()
            cpu_before = time.process_time()
            report = await controller.run_session()
            wall = time.perf_counter() - started
            controller_cpu = time.process_time() - cpu_before
        assert report.status == "finished", report
        t = controller.timings
        evaluated = controller.snapshot.session_evaluations
        pool = t.proposals
        worker_cpu = pool.total("cpu_s") if pool and pool.workers else float("nan")
        prompt, edit = sum(t.prompt_cpu_s), sum(t.edit_cpu_s)
        frames = pool.total("frame_cpu_s") if pool and pool.workers else 0.0
        per = 1e3 / max(1, evaluated)
        first = (t.first_proposal_at or started_mono) - started_mono
        return {
            "cpu_controller_ms": controller_cpu * per,
            "cpu_prompt_ms": prompt * per,
            "cpu_client_ms": (worker_cpu - prompt - edit - frames) * per,
            "cpu_edit_ms": edit * per,
            "cpu_frames_ms": frames * per,
            "cpu_engine_ms": (controller_cpu + prompt + edit + frames) * per,
            "first_request_s": first,
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
        f"{row['slot_utilisation']:>8.1%}   "
        f"{row['cpu_controller_ms']:>6.2f} {row['cpu_prompt_ms']:>6.2f} "
        f"{row['cpu_client_ms']:>6.2f} {row['cpu_edit_ms']:>6.2f} {row['cpu_frames_ms']:>6.2f} "
        f"{row['cpu_engine_ms']:>6.2f} {row['first_request_s']:>7.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--candidates", type=int, default=400)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--eval-ms", type=float, default=20.0)
    parser.add_argument(
        "--proposal-workers", type=int, nargs="+", default=[None], help="one row set per value"
    )
    args = parser.parse_args()
    print(
        f"{'programs':>9} {'cand/s':>8} {'overhead ms (median/p90)':>25} {'model ms':>9} "
        f"{'eval ms':>8} {'slot util':>9}   CPU ms/candidate: {'ctrl':>6} {'prompt':>6} "
        f"{'client':>6} {'edit':>6} {'frames':>6} {'engine':>6} {'1st req s':>9}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for processes in args.proposal_workers:
            if len(args.proposal_workers) > 1:
                print(f"proposal workers: {processes or 'default'}")
            for size in args.sizes:
                db = Path(tmp) / f"bench-{size}-{processes}.db"
                row = asyncio.run(
                    measure(size, args.candidates, args.workers, db, proposal_workers=processes)
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
