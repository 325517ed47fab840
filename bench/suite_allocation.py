"""A suite's one budget: the bandit's allocation against an equal split, at equal evaluations.

Protocol. Each run is ``evoforge run SUITE --budget B --seed S --workers 2 --allocation P -q``
in a subprocess (the public CLI; nothing inside the engine is touched), one run at a time, with
the built-in offline model. ``P`` is ``bandit`` (every task gets ``[suite] floor``
evaluations, then grants of ``[suite] grant`` go to the task with the highest sliding-window
UCB index on its recent gain per evaluation) or ``equal`` (every task gets ``B / tasks``,
concurrently: the same search as ``--budget-per-task B/tasks``, in one run).

Read from each run's archive (:func:`evoforge.evolve.mining.suite_view`): per task, the
evaluations it got and its best over its seed (``seed / best`` for ``pie_suite``'s
instruction counts: the speedup over the seed, as callgrind counts it); per run, the
geometric mean of those ratios over the tasks (the suite's figure).

Output on stdout: one line per run (its geometric mean, then each task's evaluations and
ratio), then per policy the mean ± sd over the seeds of the geometric mean and each task's
mean evaluations and ratio, and a verdict: the bandit ``helps`` or ``hurts`` when the two
means differ by more than the larger sd, else ``no diff``. Progress goes to stderr; ``--json
FILE`` also writes every run's numbers.

Cost: a ``pie_suite`` evaluation (compile with clang, run callgrind on 4 tests) takes about
1-2 s of a slot on a loaded 2-core machine, so one run of 600 evaluations takes 10-20 min
and the default (3 seeds x 2 policies) 1-2 hours::

    python bench/suite_allocation.py                                  # the acceptance figure
    python bench/suite_allocation.py --budget 120 --seeds 1           # a quick look
    python bench/suite_allocation.py --suite path/to/folder --budget 90 --json /tmp/sa.json

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
from dataclasses import asdict, dataclass, field
from pathlib import Path

import evoforge

ROOT = Path(__file__).resolve().parents[1]
WORKERS = 2
POLICIES = ("bandit", "equal")


@dataclass
class Outcome:
    """One suite run's numbers."""

    suite: str
    policy: str
    seed: int
    budget: int
    wall_s: float
    geomean: float | None
    tasks: dict[str, dict[str, float | int | None]] = field(default_factory=dict)


def run_one(suite: str, policy: str, seed: int, budget: int, workdir: Path) -> Outcome:
    db = workdir / f"{Path(suite).name}-{policy}-{seed}.db"
    command = [
        sys.executable, "-m", "evoforge", "run", suite, "--budget", str(budget), "--seed",
        str(seed), "--workers", str(WORKERS), "--allocation", policy, "--db", str(db), "-q",
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    started = time.monotonic()
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    wall = time.monotonic() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stdout}\n{done.stderr}")
    from evoforge.evolve.mining import suite_view

    with evoforge.open_archive(db) as archive:
        view = suite_view(archive, archive.suites()[0].id)
    tasks = {t.problem: {"evaluations": t.spent, "vs_seed": t.vs_seed} for t in view.tasks}
    return Outcome(Path(suite).name, policy, seed, budget, wall, view.geomean_vs_seed, tasks)


def _mean_sd(values: list[float]) -> tuple[float, float]:
    mean = statistics.fmean(values)
    return mean, statistics.stdev(values) if len(values) > 1 else 0.0


def report(outcomes: list[Outcome]) -> None:
    by_policy: dict[str, list[Outcome]] = {}
    for o in outcomes:
        by_policy.setdefault(o.policy, []).append(o)
    names = list(outcomes[0].tasks)
    print()
    print(f"{'policy':8} {'seeds':>5}  {'geomean vs seed':>18}  " + "  ".join(names))
    means = {}
    for policy, runs in by_policy.items():
        mean, sd = _mean_sd([r.geomean or 1.0 for r in runs])
        means[policy] = (mean, sd)
        cells = []
        for name in names:
            evals = statistics.fmean(float(r.tasks[name]["evaluations"] or 0) for r in runs)
            ratio = statistics.fmean(float(r.tasks[name]["vs_seed"] or 1.0) for r in runs)
            cells.append(f"{evals:.0f} ev {ratio:.4f}x")
        print(f"{policy:8} {len(runs):>5}  {mean:>10.4f} ± {sd:.4f}  " + "  ".join(cells))
    if "bandit" in means and "equal" in means:
        (b, b_sd), (e, e_sd) = means["bandit"], means["equal"]
        verdict = "no diff"
        if abs(b - e) > max(b_sd, e_sd):
            verdict = "helps" if b > e else "hurts"
        if len(by_policy["bandit"]) < 2:
            verdict += " (?: one seed)"
        print(f"bandit vs equal: {b / e:.4f}x the equal split's geometric mean: {verdict}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--suite", default="pie_suite", help="a suite's name or folder")
    parser.add_argument("--budget", type=int, default=600, help="evaluations in total")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--policies", default=",".join(POLICIES))
    parser.add_argument("--json", type=Path, help="write every run's numbers here")
    parser.add_argument("--keep", type=Path, help="keep the archives in this folder")
    args = parser.parse_args()
    outcomes = []
    with tempfile.TemporaryDirectory() as tmp:
        workdir = args.keep or Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        for seed in range(1, args.seeds + 1):
            for policy in args.policies.split(","):
                print(f"running {args.suite} {policy} seed {seed}...", file=sys.stderr)
                o = run_one(args.suite, policy, seed, args.budget, workdir)
                outcomes.append(o)
                tasks = "  ".join(
                    f"{n} {t['evaluations']} ev {t['vs_seed'] or 1.0:.4f}x"
                    for n, t in o.tasks.items()
                )
                geomean = "—" if o.geomean is None else f"{o.geomean:.4f}x"
                print(
                    f"{o.suite} {policy:6} seed {seed} budget {o.budget}: geomean {geomean} "
                    f"({o.wall_s:.0f} s)  {tasks}",
                    flush=True,
                )
    report(outcomes)
    if args.json:
        args.json.write_text(json.dumps([asdict(o) for o in outcomes], indent=2))


if __name__ == "__main__":
    main()
