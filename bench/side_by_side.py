"""evoforge and OpenEvolve side by side: candidates/s through one local model server.

Both engines evolve the same program (``problems/builtin/trivial``'s seed: two numbers, scored
by their distance to a target; evaluation is near free) with the same model: the server of
``bench/number_server.py`` on 127.0.0.1, which answers every request at once with one
SEARCH/REPLACE block that changes one number of the current program. Each engine is started as
a command, and its rate is evaluated candidates / wall time from the command's start to its
exit, so start-up is included for both.

- evoforge: ``evoforge run trivial --model openai/bench --api-base URL --workers W
  --budget N`` (evaluations from its archive, the seed's included);
- OpenEvolve: ``openevolve-run`` with ``diff_based_evolution: true``,
  ``parallel_evaluations: W``, ``max_iterations: N`` (evaluations counted by its evaluator, the
  initial program's included), in two settings: ``defaults`` (everything else as OpenEvolve
  ships it, checkpoints every 100 iterations included: the issue's protocol) and ``lean``
  (no checkpoints, warnings only, no cascade: its fastest, keeping nothing on disk).

OpenEvolve runs from its own virtualenv (``pip install openevolve==0.4.0`` there; it is never a
dependency of evoforge): ``--openevolve-python /tmp/oe-venv/bin/python`` or the environment
variable ``OPENEVOLVE_PYTHON``. Without it, or when it cannot import openevolve, its column is
skipped and the bench says so.

    python bench/side_by_side.py                          # 500 and 2000 candidates, 2 workers
    python bench/side_by_side.py --candidates 500 --repeats 3 --openevolve-python /tmp/oe/bin/python
    python bench/side_by_side.py --openevolve-config lean     # one OpenEvolve setting only

Asserts nothing; prints one table (medians of ``--repeats`` runs, and each run's figure).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

from _servers import start_server  # bench/ is on sys.path when run as a script

ROOT = Path(__file__).resolve().parents[1]
MODEL = "openai/bench-number-model"

OE_EVALUATOR = textwrap.dedent(
    '''\
    """OpenEvolve evaluator for the trivial problem (as evoforge's trivial/problem.py scores)."""
    import importlib.util
    import math
    import os

    COUNTER = os.environ["BENCH_EVAL_COUNTER"]


    def evaluate(program_path):
        with open(COUNTER, "ab") as f:  # one byte per evaluation: how many there were
            f.write(b".")
        spec = importlib.util.spec_from_file_location("candidate", program_path)
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
            a, b = (float(v) for v in module.main())
        except Exception as exc:
            return {"combined_score": 0.0, "error": str(exc)}
        if not (math.isfinite(a) and math.isfinite(b)):
            return {"combined_score": 0.0, "error": "not finite"}
        score = -((a - 3.7) ** 2 + (b + 1.2) ** 2)
        return {"combined_score": 1.0 / (1.0 - score), "score": score, "a": a, "b": b}
    '''
)

# What the comparison fixes (the protocol): diff-based evolution, as many parallel
# evaluations as evoforge's --workers, the same model server and seed. Everything else is
# OpenEvolve's default, as a user runs it: a checkpoint every 100 iterations (its way of
# keeping programs; evoforge commits each one to SQLite), INFO logging, the cascade setting.
OE_CONFIG_DEFAULTS = textwrap.dedent(
    """\
    max_iterations: {iterations}
    random_seed: 1
    diff_based_evolution: true
    llm:
      api_base: "{url}"
      api_key: "bench-needs-no-key"
      models:
        - name: "bench-number-model"
          weight: 1.0
    evaluator:
      parallel_evaluations: {workers}
    """
)
# The same with OpenEvolve's own overheads turned off: no checkpoints (it keeps nothing on
# disk), warnings only, no cascade. Its fastest setting, for scale. (Appended: the first two
# lines continue the `evaluator:` block that ends the defaults.)
OE_CONFIG_LEAN = OE_CONFIG_DEFAULTS + textwrap.dedent(
    """\
      timeout: 60
      cascade_evaluation: false
    checkpoint_interval: 100000
    log_level: "WARNING"
    database:
      num_islands: 4
    """
)
OE_CONFIGS = {"defaults": OE_CONFIG_DEFAULTS, "lean": OE_CONFIG_LEAN}


def start_number_server() -> tuple[subprocess.Popen[str], str]:
    command = [sys.executable, str(ROOT / "bench" / "number_server.py")]
    return start_server(command, ROOT, "the model server")


def trivial_seed() -> str:
    return (ROOT / "problems" / "builtin" / "trivial" / "seed.py").read_text()


def run_evoforge(
    url: str, candidates: int, workers: int, tmp: Path, extra: list[str]
) -> tuple[float, int]:
    db = tmp / f"evoforge-{candidates}-{time.monotonic_ns()}.db"
    command = [
        sys.executable,
        "-m",
        "evoforge",
        "run",
        "trivial",
        "--budget",
        str(candidates),
        "--workers",
        str(workers),
        "--model",
        MODEL,
        "--api-base",
        url,
        "--seed",
        "1",
        "--db",
        str(db),
        "-q",
        *extra,
    ]
    env = {**os.environ, "OPENAI_API_KEY": "bench-needs-no-key"}
    started = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"evoforge failed ({done.returncode}): {done.stderr[-2000:]}")
    with sqlite3.connect(db) as conn:
        (evaluations,) = conn.execute("SELECT evaluations FROM runs").fetchone()
    return wall, evaluations


def openevolve_python(choice: str | None) -> tuple[str | None, str]:
    """The interpreter that runs OpenEvolve, or None and why not."""
    candidates = [choice] if choice else []
    candidates += [os.environ.get("OPENEVOLVE_PYTHON", ""), sys.executable]
    for python in filter(None, candidates):
        probe = subprocess.run(
            [
                python,
                "-c",
                "import openevolve, importlib.metadata as m; print(m.version('openevolve'))",
            ],
            capture_output=True,
            text=True,
        )
        if probe.returncode == 0:
            return python, probe.stdout.strip()
    return None, (
        "OpenEvolve is not installed (pip install openevolve==0.4.0 in its own venv, then pass "
        "--openevolve-python VENV/bin/python or set OPENEVOLVE_PYTHON): its column is skipped"
    )


def run_openevolve(
    python: str, url: str, candidates: int, workers: int, tmp: Path, config: str
) -> tuple[float, int]:
    folder = tmp / f"openevolve-{candidates}-{time.monotonic_ns()}"
    folder.mkdir()
    (folder / "initial_program.py").write_text(trivial_seed())
    (folder / "evaluator.py").write_text(OE_EVALUATOR)
    # OpenEvolve counts the initial program as iteration 0: N - 1 iterations give N evaluations.
    (folder / "config.yaml").write_text(
        OE_CONFIGS[config].format(iterations=candidates - 1, url=url, workers=workers)
    )
    counter = folder / "evaluations"
    counter.touch()
    command = [
        python,
        "-m",
        "openevolve.cli",
        str(folder / "initial_program.py"),
        str(folder / "evaluator.py"),
        "--config",
        str(folder / "config.yaml"),
        "--output",
        str(folder / "output"),
    ]
    env = {**os.environ, "BENCH_EVAL_COUNTER": str(counter), "OPENAI_API_KEY": "bench"}
    started = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, cwd=folder)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"OpenEvolve failed ({done.returncode}): {done.stderr[-2000:]}")
    evaluations = counter.stat().st_size
    shutil.rmtree(folder / "output", ignore_errors=True)
    return wall, evaluations


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--candidates", type=int, nargs="+", default=[500, 2000])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--openevolve-python", default=None)
    parser.add_argument("--skip-openevolve", action="store_true")
    parser.add_argument(
        "--openevolve-config",
        nargs="+",
        choices=sorted(OE_CONFIGS),
        default=["defaults", "lean"],
        help="OpenEvolve's defaults (the issue's protocol) and/or its lean setting",
    )
    parser.add_argument(
        "--evoforge-arg", action="append", default=[], help="extra `evoforge run` flag"
    )
    args = parser.parse_args()
    python, oe_version = (None, "skipped (--skip-openevolve)")
    if not args.skip_openevolve:
        python, oe_version = openevolve_python(args.openevolve_python)
    print(
        f"{os.cpu_count()} CPU cores; {args.workers} workers; model server on 127.0.0.1 "
        f"answering at once; OpenEvolve: {oe_version if python else oe_version}",
        flush=True,
    )
    server, url = start_number_server()
    rows = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for candidates in args.candidates:
                ef: list[float] = []
                oe: dict[str, list[float]] = {c: [] for c in args.openevolve_config}
                for _ in range(args.repeats):
                    wall, n = run_evoforge(
                        url, candidates, args.workers, Path(tmp), args.evoforge_arg
                    )
                    ef.append(n / wall)
                    print(
                        f"  evoforge   {candidates:>5}: {n} evaluations in {wall:.2f} s", flush=True
                    )
                    for config in oe if python else ():
                        wall, n = run_openevolve(
                            python, url, candidates, args.workers, Path(tmp), config
                        )
                        oe[config].append(n / wall)
                        print(
                            f"  OpenEvolve {candidates:>5} ({config}): {n} evaluations in "
                            f"{wall:.2f} s",
                            flush=True,
                        )
                rows.append((candidates, ef, oe))
    finally:
        server.terminate()
        server.wait()
    print()
    head = f"{'candidates':>10} {'evoforge cand/s':>16}"
    for config in args.openevolve_config:
        head += f" {'OpenEvolve (' + config + ')':>22} {'ratio':>6}"
    print(head)
    for candidates, ef, oe in rows:
        e = statistics.median(ef)
        line = f"{candidates:>10} {e:>16.1f}"
        for config in args.openevolve_config:
            o = statistics.median(oe[config]) if oe.get(config) else None
            line += f" {o:>22.1f} {e / o:>5.1f}x" if o else f" {'skipped':>22} {'-':>6}"
        each = " ".join(f"{x:.1f}" for x in ef)
        print(f"{line}   (evoforge runs: {each})")


if __name__ == "__main__":
    main()
