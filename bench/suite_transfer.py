"""Cross-task transfer in a suite: children offered another task's elite against the others,
and the suite with transfer on against off, at equal evaluations.

Protocol. The suite is ``circle_packing`` and ``circle_packing_32`` (one declared family: each
is offered the other's best program), run as ``evoforge run FOLDER --budget B --seed S
--workers 2 --allocation equal -q --config C`` in a subprocess (an equal split, so transfer is
the only difference), ``C`` setting ``[suite] transfer`` on (``transfer_rate`` 0.5: half the
prompts offer the other task's best, once it improved on its seed) or off. Two model setups:
``offline`` (the built-in offline model) and ``sloppy`` (``tests/evolve/sloppy_server.py``, the
fake model server: the same mutations as a pure function of the prompt, sloppily written 70 %
of the time; ``--model openai/sloppy --api-base URL``).

Read from each run's archive: per task, its best over its seed (``sum_radii`` ratio) and, in
transfer-on runs, the children whose prompt offered the other task's elite
(``programs.transfer_from``) and those whose prompt did not, with how many improved on their
parent (``Archive.transfer_outcomes``, what ``evoforge stats`` shows).

Output on stdout: one line per run; then per model setup the pooled improvement rate of
children with and without an offer (a two-proportion z score beside it), and the mean ± sd of
the geometric-mean ratio to the seeds with transfer on and off, with a verdict: ``helps`` or
``hurts`` when the means differ by more than the larger sd, else ``no diff``. ``--json FILE``
writes every run's numbers.

Cost: a circle_packing evaluation takes about 0.05 s alone and 0.2-0.5 s on a loaded 2-core
machine; the default plan (400 evaluations, 3 seeds, on/off, 2 model setups: 4,800
evaluations) takes 20-40 minutes there::

    python bench/suite_transfer.py
    python bench/suite_transfer.py --models offline --seeds 1 --budget 200

Asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from _servers import start_server  # bench/ is on sys.path when run as a script

import evoforge

ROOT = Path(__file__).resolve().parents[1]
BUILTIN = ROOT / "problems" / "builtin"
TASKS = ("circle_packing", "circle_packing_32")
WORKERS = 2
SLOPPY_MODEL = "openai/sloppy"


@dataclass
class Outcome:
    model: str
    transfer: bool
    seed: int
    budget: int
    wall_s: float
    geomean: float | None
    tasks: dict[str, float | None] = field(default_factory=dict)  # vs seed
    offered: tuple[int, int] = (0, 0)  # children offered another task's elite, improved
    plain: tuple[int, int] = (0, 0)  # the others


def suite_folder(workdir: Path) -> Path:
    folder = workdir / "circle_suite"
    folder.mkdir(exist_ok=True)
    for task in TASKS:
        link = folder / task
        if not link.exists():
            link.symlink_to(BUILTIN / task, target_is_directory=True)
    return folder


def run_one(
    model: str, transfer: bool, seed: int, budget: int, workdir: Path, url: str | None
) -> Outcome:
    db = workdir / f"{model}-{'on' if transfer else 'off'}-{seed}.db"
    config = workdir / f"transfer-{transfer}.toml"
    config.write_text(f"[suite]\ntransfer = {'true' if transfer else 'false'}\n")
    command = [
        sys.executable, "-m", "evoforge", "run", str(suite_folder(workdir)), "--budget",
        str(budget), "--seed", str(seed), "--workers", str(WORKERS), "--allocation", "equal",
        "--config", str(config), "--db", str(db), "-q",
    ]  # fmt: skip
    if url is not None:
        command += ["--model", SLOPPY_MODEL, "--api-base", url]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    env.setdefault("OPENAI_API_KEY", "bench-needs-no-key")  # the fake server takes any
    started = time.monotonic()
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    wall = time.monotonic() - started
    if done.returncode != 0 or "Suite" not in done.stdout or " finished: budget" not in done.stdout:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stdout}\n{done.stderr}")
    from evoforge.evolve.mining import suite_view

    offered, plain = [0, 0], [0, 0]
    with evoforge.open_archive(db) as archive:
        view = suite_view(archive, archive.suites()[0].id)
        for task in view.tasks:
            if task.run_id is None:
                continue
            outcomes = archive.transfer_outcomes(task.run_id)
            for total, key in ((offered, True), (plain, False)):
                total[0] += outcomes[key][0]
                total[1] += outcomes[key][1]
    ratios = {t.problem: t.vs_seed for t in view.tasks}
    return Outcome(
        model, transfer, seed, budget, wall, view.geomean_vs_seed, ratios,
        (offered[0], offered[1]), (plain[0], plain[1]),
    )  # fmt: skip


def _z(a: tuple[int, int], b: tuple[int, int]) -> float | None:
    """Two-proportion z score of a's improvement rate against b's."""
    (n1, k1), (n2, k2) = a, b
    if not n1 or not n2:
        return None
    pooled = (k1 + k2) / (n1 + n2)
    sd = math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2))
    return (k1 / n1 - k2 / n2) / sd if sd > 0 else None


def report(outcomes: list[Outcome]) -> None:
    print()
    for model in dict.fromkeys(o.model for o in outcomes):
        runs = [o for o in outcomes if o.model == model]
        on = [o for o in runs if o.transfer]
        off = [o for o in runs if not o.transfer]
        offered = (sum(o.offered[0] for o in on), sum(o.offered[1] for o in on))
        plain = (sum(o.plain[0] for o in on), sum(o.plain[1] for o in on))
        rate = lambda c: f"{c[1]}/{c[0]} ({100 * c[1] / c[0]:.1f}%)" if c[0] else "—"  # noqa: E731
        z = _z(offered, plain)
        print(
            f"{model}: children improving with another task's elite offered {rate(offered)}, "
            f"without {rate(plain)} (transfer-on runs; z = {'—' if z is None else f'{z:.2f}'})"
        )
        means = {}
        for label, group in (("on", on), ("off", off)):
            if not group:
                continue
            values = [o.geomean or 1.0 for o in group]
            sd = statistics.stdev(values) if len(values) > 1 else 0.0
            means[label] = (statistics.fmean(values), sd)
            per_task = "  ".join(
                f"{t} {statistics.fmean(o.tasks[t] or 1.0 for o in group):.4f}x" for t in TASKS
            )
            print(
                f"{model}: transfer {label:3} ({len(group)} seeds): geomean vs seed "
                f"{means[label][0]:.4f} ± {sd:.4f}  {per_task}"
            )
        if "on" in means and "off" in means:
            (a, a_sd), (b, b_sd) = means["on"], means["off"]
            verdict = "no diff"
            if abs(a - b) > max(a_sd, b_sd):
                verdict = "helps" if a > b else "hurts"
            print(f"{model}: transfer on vs off: {verdict}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default="offline,sloppy")
    parser.add_argument("--budget", type=int, default=400, help="evaluations in total")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--keep", type=Path)
    args = parser.parse_args()
    outcomes = []
    server = None
    with tempfile.TemporaryDirectory() as tmp:
        workdir = args.keep or Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        try:
            for model in args.models.split(","):
                url = None
                if model == "sloppy":
                    command = [sys.executable, "-m", "tests.evolve.sloppy_server", "--port", "0"]
                    server, url = start_server(command, ROOT, "the sloppy model server")
                for seed in range(1, args.seeds + 1):
                    for transfer in (True, False):
                        print(f"running {model} transfer={transfer} seed {seed}", file=sys.stderr)
                        o = run_one(model, transfer, seed, args.budget, workdir, url)
                        outcomes.append(o)
                        tasks = "  ".join(f"{t} {o.tasks[t] or 1.0:.4f}x" for t in TASKS)
                        print(
                            f"{model} transfer {'on ' if transfer else 'off'} seed {seed}: "
                            f"geomean {o.geomean or 1.0:.4f}  {tasks}  offered "
                            f"{o.offered[1]}/{o.offered[0]} improved, not offered "
                            f"{o.plain[1]}/{o.plain[0]} ({o.wall_s:.0f} s)",
                            flush=True,
                        )
                if server is not None:
                    server.kill()
                    server = None
        finally:
            if server is not None:
                server.kill()
    report(outcomes)
    if args.json:
        args.json.write_text(json.dumps([asdict(o) for o in outcomes], indent=2))


if __name__ == "__main__":
    main()
