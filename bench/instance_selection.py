"""Parents chosen per instance (GEPA's rule) against the default selection, at equal evaluations.

Protocol. Each run is ``evoforge run PROBLEM --budget B --seed S --workers 2 -q --config C`` in
a subprocess (the public CLI), one run at a time, offline model, where ``C`` selects:

- ``default``: the default selection (``tournament``, ``exploitation = 0.8``: the island's best
  as the parent 80 % of the time);
- ``pareto``: ``selection = "pareto_instances"``, ``exploitation = 0``: every parent drawn
  among the elites best on at least one instance, weighted by how many they lead on.

Problems (both declare per-instance scores): ``bin_packing`` (its five training datasets'
excess over the L1 bound; minimised) and ``pie_shortest_paths`` (callgrind instructions of
each of its four tests; minimised).

Read from each run's archive: the best primary objective after ``B`` evaluations and, for
the seed-relative figure, ``seed / best`` (both objectives are minimised). Output: one line
per run, then per problem and configuration the mean ± sd over the seeds, and a verdict for
``pareto`` against ``default``: ``helps`` or ``hurts`` when the means differ by more than the
larger sd, else ``no diff``. ``--json FILE`` writes every run's numbers.

Cost (loaded 2-core machine): a bin_packing evaluation takes 1-3 s of a slot, a
pie_shortest_paths one 1-4 s; the default plan (100 evaluations, 3 seeds, 2 configurations,
2 problems: 1,200 evaluations) takes about 1-2 hours::

    python bench/instance_selection.py
    python bench/instance_selection.py --problems bin_packing --budget 60 --seeds 1

Asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import evoforge

ROOT = Path(__file__).resolve().parents[1]
WORKERS = 2
PROBLEMS = ("bin_packing", "pie_shortest_paths")
CONFIGS = {
    "default": "",
    "pareto": '[islands]\nselection = "pareto_instances"\nexploitation = 0.0\n',
}


@dataclass
class Outcome:
    problem: str
    config: str
    seed: int
    budget: int
    wall_s: float
    best: float
    vs_seed: float


def run_one(problem: str, config: str, seed: int, budget: int, workdir: Path) -> Outcome:
    db = workdir / f"{problem}-{config}-{seed}.db"
    toml = workdir / f"{config}.toml"
    toml.write_text(CONFIGS[config])
    command = [
        sys.executable, "-m", "evoforge", "run", problem, "--budget", str(budget), "--seed",
        str(seed), "--workers", str(WORKERS), "--config", str(toml), "--db", str(db), "-q",
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    started = time.monotonic()
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    wall = time.monotonic() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stdout}\n{done.stderr}")
    with evoforge.open_archive(db) as archive:
        run = archive.latest_run()
        seed_program = next(archive.programs(run.id))
    # both problems' primary objectives are minimised: the stored score is the value negated
    best, seed_value = -run.best_score, -seed_program.score
    return Outcome(problem, config, seed, budget, wall, best, seed_value / best)


def report(outcomes: list[Outcome]) -> None:
    print()
    print(f"{'problem':20} {'config':8} {'seeds':>5}  {'best (min)':>20}  {'seed / best':>16}")
    for problem in dict.fromkeys(o.problem for o in outcomes):
        means = {}
        for config in CONFIGS:
            runs = [o for o in outcomes if o.problem == problem and o.config == config]
            if not runs:
                continue
            best = [r.best for r in runs]
            ratio = [r.vs_seed for r in runs]
            sd = statistics.stdev(best) if len(best) > 1 else 0.0
            rsd = statistics.stdev(ratio) if len(ratio) > 1 else 0.0
            means[config] = (statistics.fmean(best), sd)
            print(
                f"{problem:20} {config:8} {len(runs):>5}  {statistics.fmean(best):>11.6g} ± "
                f"{sd:<7.3g} {statistics.fmean(ratio):>8.4f} ± {rsd:.4f}"
            )
        if "pareto" in means and "default" in means:
            (p, p_sd), (d, d_sd) = means["pareto"], means["default"]
            verdict = "no diff"
            if abs(p - d) > max(p_sd, d_sd):
                verdict = "helps" if p < d else "hurts"  # minimised
            print(f"{problem:20} pareto vs default: {verdict}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--problems", default=",".join(PROBLEMS))
    parser.add_argument("--budget", type=int, default=100)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--configs", default=",".join(CONFIGS))
    parser.add_argument("--json", type=Path)
    parser.add_argument("--keep", type=Path)
    args = parser.parse_args()
    outcomes = []
    with tempfile.TemporaryDirectory() as tmp:
        workdir = args.keep or Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        for problem in args.problems.split(","):
            for seed in range(1, args.seeds + 1):
                for config in args.configs.split(","):
                    print(f"running {problem} {config} seed {seed}...", file=sys.stderr)
                    o = run_one(problem, config, seed, args.budget, workdir)
                    outcomes.append(o)
                    print(
                        f"{problem} {config:7} seed {seed} budget {o.budget}: best {o.best:.6g} "
                        f"(seed / best {o.vs_seed:.4f}, {o.wall_s:.0f} s)",
                        flush=True,
                    )
    report(outcomes)
    if args.json:
        args.json.write_text(json.dumps([asdict(o) for o in outcomes], indent=2))


if __name__ == "__main__":
    main()
