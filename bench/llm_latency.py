"""Slow models must not idle the evaluators: throughput with a 2-second model.

Issue 3, acceptance 3: "With a 2-second response delay from the server, 4 evaluation slots and
32 model calls in flight, the evaluation slots stay busy."

The bench writes a copy of ``circle_packing`` whose fixed (non-evolved) ``main`` sleeps
``--eval-s`` (0.5 s) before it works, so every candidate costs the same and the CPU stays free;
starts the fake OpenAI-compatible server (``tests/evolve/openai_server.py``) as a subprocess
with ``--delay 2``; and runs the real controller with a real litellm model string against it
for ``--seconds`` of wall time, once per ``--concurrency`` value (model calls in flight, the
CLI's ``--llm-concurrency``). For each it prints:

  - candidates/s: evaluated candidates per second of session wall time (seed and the first
    model round trip included: the first candidates cannot be evaluated before 2 s);
  - steady candidates/s: the same from the first model-written candidate's commit to the last
    one's (commit times from the archive), i.e. without that start-up (it may count up to
    slots - 1 candidates that began before the window: under 1 % in a 60 s run);
  - slot utilisation: evaluation-slot busy time / (slots x wall time);
  - ideal candidates/s: slots / evaluation time (nominal, and from the measured median, which
    includes the sandbox's process start-up);
  - model limit: model calls in flight / delay, the most answers per second the model side
    can deliver; and the model calls/s actually made (answers that were duplicates or did
    not apply take a call but no evaluation).

    python bench/llm_latency.py                          # 4 slots; 32, then 4 calls in flight
    python bench/llm_latency.py --seconds 90 --concurrency 32 16 4
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODEL = "openai/gpt-4o-mini"


@dataclass(frozen=True)
class Result:
    concurrency: int
    wall_s: float
    evaluations: int
    model_calls: int
    steady_per_s: float
    eval_busy_s: float
    eval_median_s: float
    model_median_s: float

    def candidates_per_s(self) -> float:
        return self.evaluations / self.wall_s


def slow_circle_packing(folder: Path, eval_s: float) -> Path:
    """A copy of ``circle_packing`` whose fixed ``main`` first sleeps ``eval_s`` seconds."""
    from evoforge.evolve import resolve_problem

    builtin = Path(resolve_problem("circle_packing").spec_path).parent
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(builtin / "problem.py", folder / "problem.py")
    seed = (builtin / "seed.py").read_text()
    for old, new in (
        ("import numpy as np\n", "import time\n\nimport numpy as np\n"),
        ("def main():\n", f"def main():\n    time.sleep({eval_s!r})  # bench: a fixed cost\n"),
    ):
        if seed.count(old) != 1:
            raise RuntimeError(f"circle_packing's seed changed: expected one {old!r} in it")
        seed = seed.replace(old, new)
    (folder / "seed.py").write_text(seed)
    return folder


def start_server(delay_s: float) -> tuple[subprocess.Popen, str]:
    """The fake OpenAI-compatible server, answering every request after ``delay_s``."""
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.evolve.openai_server",
            "--port",
            "0",
            "--delay",
            f"{delay_s}",
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    line = server.stdout.readline().strip()
    if not line.startswith("READY "):
        server.kill()
        raise RuntimeError(f"the fake server did not start: {line!r}")
    return server, line.removeprefix("READY ")


async def measure(
    problem_dir: Path, url: str, db: Path, *, workers: int, concurrency: int, seconds: float
) -> Result:
    from evoforge.archive import Archive
    from evoforge.evaluators import evaluator_class
    from evoforge.evolve import Controller, RunConfig, resolve_problem
    from evoforge.evolve.models._client import prepare
    from evoforge.islands import Islands
    from evoforge.plugins import selection_strategy

    config = RunConfig(
        problem=str(problem_dir),
        budget=1_000_000,
        max_wall_s=seconds,
        model=MODEL,
        api_base=url,
        workers=workers,
        llm_concurrency=concurrency,
        seed=1,
    )
    problem = resolve_problem(config.problem)
    prepare(MODEL)  # litellm's import is start-up, not part of the session
    with Archive(db) as archive:
        run = archive.create_run(problem, config=config.to_dict(), seed=config.seed)
        strategy = selection_strategy(config.islands.selection)
        islands = Islands(archive, run.id, config.islands, strategy)
        async with evaluator_class(problem.evaluator)(problem, workers=workers) as evaluator:
            controller = Controller(
                archive, archive.run(run.id), problem, config, evaluator, islands
            )
            started = time.perf_counter()
            report = await controller.run_session()
            wall = time.perf_counter() - started
        if report.status != "finished":
            raise RuntimeError(f"the run ended {report.status}: {report.reason}")
        calls = archive.db.execute(
            "SELECT count(*) FROM llm_calls WHERE run_id = ? AND status = 'ok'", [run.id]
        ).fetchone()[0]
        commits = [
            p.created_at for p in archive.programs(run.id) if p.seq > 0 and p.status.evaluated
        ]
    t = controller.timings
    return Result(
        concurrency=concurrency,
        wall_s=wall,
        evaluations=controller.snapshot.session_evaluations,
        model_calls=calls,
        steady_per_s=(len(commits) - 1) / (max(commits) - min(commits)),
        eval_busy_s=t.eval_busy_s,
        eval_median_s=statistics.median(t.eval_s),
        model_median_s=statistics.median(t.model_s),
    )


def report(r: Result, *, workers: int, eval_s: float, delay_s: float) -> str:
    return (
        f"{r.concurrency:>8} {r.wall_s:>7.1f} {r.evaluations:>6} {r.candidates_per_s():>7.2f} "
        f"{r.steady_per_s:>7.2f} "
        f"{r.eval_busy_s / (workers * r.wall_s):>9.1%} "
        f"{workers / eval_s:>6.2f} / {workers / r.eval_median_s:<6.2f} "
        f"{r.concurrency / delay_s:>10.2f} {r.model_calls / r.wall_s:>8.2f} "
        f"{r.eval_median_s:>7.3f} {r.model_median_s:>7.3f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=4, help="evaluation slots")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[32, 4])
    parser.add_argument("--delay", type=float, default=2.0, help="model answer delay, seconds")
    parser.add_argument("--eval-s", type=float, default=0.5, help="fixed cost of a candidate")
    parser.add_argument("--seconds", type=float, default=60.0, help="wall time per setting")
    args = parser.parse_args()
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no price-map download
    os.environ.setdefault("OPENAI_API_KEY", "sk-bench-fake-server-needs-no-key")
    print(
        f"{args.workers} evaluation slots, {args.eval_s:g} s per evaluation, model answers "
        f"after {args.delay:g} s, {args.seconds:g} s per setting ({os.cpu_count()} CPU cores)"
    )
    print(
        f"{'in flight':>8} {'wall s':>7} {'evals':>6} {'cand/s':>7} {'steady':>7} {'slot util':>9} "
        f"{'ideal cand/s':>15} {'model limit':>10} {'calls/s':>8} {'eval s':>7} {'model s':>7}"
    )
    print(f"{'':>8} {'':>7} {'':>6} {'':>7} {'cand/s':>7} {'':>9} {'nominal/measured':>15}")
    server, url = start_server(args.delay)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            problem_dir = slow_circle_packing(Path(tmp) / "slow_circle_packing", args.eval_s)
            for concurrency in args.concurrency:
                result = asyncio.run(
                    measure(
                        problem_dir,
                        url,
                        Path(tmp) / f"bench-{concurrency}.db",
                        workers=args.workers,
                        concurrency=concurrency,
                        seconds=args.seconds,
                    )
                )
                print(
                    report(result, workers=args.workers, eval_s=args.eval_s, delay_s=args.delay),
                    flush=True,
                )
    finally:
        server.kill()
        server.wait()


if __name__ == "__main__":
    main()
