"""OpenEvolve's own examples, folder by folder, as evoforge runs them unmodified.

For every folder of an OpenEvolve checkout's ``examples/`` that needs no GPU, no data download
and no network (``initial_program.*`` + ``evaluator.py``; the folders that need one are listed
with the reason), this prints one row:

- the seed's score as OpenEvolve 0.4.0's own ``Evaluator`` computes it (its cascade, then
  ``get_fitness_score`` with the config's ``feature_dimensions``), run with a separate
  interpreter where OpenEvolve is installed (``--openevolve-python`` or ``OPENEVOLVE_PYTHON``;
  ``pip install openevolve==0.4.0`` in its own venv): the column is skipped without it;
- the seed's score as evoforge computes it (``fitness``, the objective), and how far its
  cascade went;
- the outcome of ``evoforge run <folder> --budget 20 --model offline/mutator``: how the run
  ended, its best score, and the statuses of its attempts.

The examples' own requirements (numpy, scipy, matplotlib; jax and optax for several
``alphaevolve_math_problems``) must be installed in both interpreters; a missing one shows up
as the seed's error. Stage 1 of some evaluators is random (function_minimization), so the two
seed scores can differ between runs there. Asserts nothing.

    python bench/openevolve_examples.py /work/ref/openevolve/examples \\
        --openevolve-python /work/oe-venv/bin/python --markdown bench/openevolve_examples.md
    python bench/openevolve_examples.py EXAMPLES --only circle_packing --budget 5
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

NEEDS = {
    "attention_optimization": "an MLIR toolchain",
    "llm_prompt_optimization": "an LLM endpoint and a dataset download",
    "lm_eval": "lm-eval-harness with a model and a dataset download",
    "mlx_metal_kernel_opt": "Apple silicon (MLX, Metal) and a model download",
    "online_judge_programming": "the network (Kattis)",
    "r_robust_regression": "R (Rscript)",
    "sldbench": "a dataset download",
    "symbolic_regression": "a dataset download (LLM-SRBench)",
    "web_scraper_optillm": "the network (an optillm proxy and web pages)",
}
"""Folders left out, and why (needs a GPU, a download or the network)."""

OPENEVOLVE_SEED = r"""
import asyncio, json, sys
from pathlib import Path
from openevolve.config import load_config
from openevolve.evaluator import Evaluator
from openevolve.utils.metrics_utils import get_fitness_score

folder = Path(sys.argv[1])
names = ("config.yaml", "config.yml")
config_path = next((folder / n for n in names if (folder / n).is_file()), None)
config = load_config(str(config_path) if config_path else None)
initial = sorted(folder.glob("initial_program.*"))[0]
evaluator = Evaluator(config.evaluator, str(folder / "evaluator.py"), suffix=initial.suffix)
metrics = asyncio.run(evaluator.evaluate_program(initial.read_text(), "seed"))
fitness = get_fitness_score(metrics, config.database.feature_dimensions)
print("@@" + json.dumps({"fitness": fitness}))
"""


def folders(examples: Path, depth: int = 3) -> list[Path]:
    """Folders with ``initial_program.*`` and ``evaluator.py``, up to ``depth`` levels down
    (``alphaevolve_math_problems/heilbronn_convex/13``)."""
    found = []
    for path in sorted(p for p in examples.iterdir() if p.is_dir()):
        if (path / "evaluator.py").is_file() and list(path.glob("initial_program.*")):
            found.append(path)
        elif depth > 1:
            found += folders(path, depth - 1)
    return found


def openevolve_seed(python: str, folder: Path, timeout_s: float) -> tuple[float | None, str]:
    """OpenEvolve's score of the seed, or None and why."""
    with tempfile.TemporaryDirectory() as cwd:  # no checkout on sys.path
        try:
            run = subprocess.run(
                [python, "-c", OPENEVOLVE_SEED, str(folder)],
                capture_output=True, text=True, timeout=timeout_s, cwd=cwd,
            )  # fmt: skip
        except subprocess.TimeoutExpired:
            return None, f"timed out after {timeout_s:g} s"
    lines = [line for line in run.stdout.splitlines() if line.startswith("@@")]
    if run.returncode or not lines:
        return None, (run.stderr.strip().splitlines() or ["no output"])[-1][:120]
    return float(json.loads(lines[-1][2:])["fitness"]), ""


def evoforge_seed(folder: Path) -> tuple[float | None, str]:
    """evoforge's score of the seed (its status when it is not ok) and the cascade's note."""
    from evoforge.evaluators import OpenEvolveEvaluator, Status
    from evoforge.evolve import resolve

    (problem,) = resolve(str(folder)).problems

    async def go():
        async with OpenEvolveEvaluator(problem, workers=1) as evaluator:
            return await evaluator.evaluate(problem.seed_source)

    result = asyncio.run(go())
    if result.status is not Status.OK:
        error = result.artifacts.get("error", "").strip().splitlines()
        return None, f"{result.status.value}: {(error or [''])[-1][:100]}"
    cascade = result.artifacts.get("cascade", "")
    return result.objectives["fitness"], cascade.split(":")[0].split(";")[0]


def evoforge_run(folder: Path, budget: int, tmp: Path, timeout_s: float) -> dict[str, Any]:
    """``evoforge run FOLDER --budget N --model offline/mutator``: how it ended."""
    db = tmp / f"{folder.name}.db"
    command = [
        sys.executable, "-m", "evoforge", "run", str(folder), "--budget", str(budget),
        "--model", "offline/mutator", "--db", str(db), "-q",
    ]  # fmt: skip
    start = time.perf_counter()
    try:
        run = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return {"outcome": f"timed out after {timeout_s:g} s"}
    wall = time.perf_counter() - start
    out: dict[str, Any] = {"wall_s": wall, "exit": run.returncode}
    if not db.exists():
        out["outcome"] = (run.stderr.strip().splitlines() or ["no archive"])[-1][:160]
        return out
    from evoforge.archive import Archive

    with Archive(db) as archive:
        info = archive.latest_run()
        out["outcome"] = f"{info.status}" + (
            f": {info.stop_reason[:100]}" if info.stop_reason else ""
        )
        out["best"] = info.best_score
        out["statuses"] = archive.status_counts(info.id)
        out["cells"] = len({p.cell for p in archive.programs(info.id) if p.cell is not None})
    return out


def fmt(value: float | None) -> str:
    return "—" if value is None else f"{value:.4g}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("examples", type=Path, help="an OpenEvolve checkout's examples/")
    parser.add_argument("--openevolve-python", default=os.environ.get("OPENEVOLVE_PYTHON"))
    parser.add_argument("--budget", type=int, default=20)
    parser.add_argument("--only", nargs="*", help="folder names (or parent/name) to run")
    parser.add_argument("--timeout", type=float, default=900.0, help="per run, seconds")
    parser.add_argument("--markdown", type=Path, help="also write the table here")
    args = parser.parse_args()
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    rows = []
    header = (
        "| folder | seed: OpenEvolve 0.4.0 | seed: evoforge | cascade | "
        f"`--budget {args.budget}` offline run | best | cells | attempts |"
    )
    lines = [header, "|" + "---|" * 8]
    with tempfile.TemporaryDirectory() as tmp:
        os.environ.setdefault("EVOFORGE_CACHE", str(Path(tmp) / "cache"))
        for folder in folders(args.examples):
            name = str(folder.relative_to(args.examples))
            if args.only and name not in args.only and folder.name not in args.only:
                continue
            top = name.split("/")[0]
            if top in NEEDS:
                continue
            oe, oe_why = (None, "no OpenEvolve interpreter")
            if args.openevolve_python:
                oe, oe_why = openevolve_seed(args.openevolve_python, folder, args.timeout)
            try:
                ours, note = evoforge_seed(folder)
            except Exception as exc:  # a folder the adapter refuses: say why
                ours, note = None, f"{type(exc).__name__}: {exc}"[:120]
            run = evoforge_run(folder, args.budget, Path(tmp), args.timeout)
            statuses = ", ".join(f"{k} {v}" for k, v in sorted(run.get("statuses", {}).items()))
            row = (
                f"| {name} | {fmt(oe) if oe is not None else oe_why} | "
                f"{fmt(ours) if ours is not None else note} | "
                f"{note if ours is not None else ''} | {run['outcome']} | "
                f"{fmt(run.get('best'))} | {run.get('cells', '—')} | {statuses} |"
            )
            print(row, flush=True)
            rows.append(row)
            lines.append(row)
    for top, why in sorted(NEEDS.items()):
        lines.append(f"| {top} | not run: needs {why} | | | | | | |")
    table = "\n".join(lines)
    print("\n" + table)
    if args.markdown:
        args.markdown.write_text(
            PREAMBLE.format(budget=args.budget, cores=os.cpu_count()) + table + "\n"
        )
    return 0


PREAMBLE = """# OpenEvolve's examples, as evoforge runs them

Made by `python bench/openevolve_examples.py EXAMPLES --openevolve-python OE_VENV/bin/python
--markdown bench/openevolve_examples.md` ({cores} cores, shared, no GPU). Seed scores are
OpenEvolve's score (`combined_score`, else the mean of the numeric metrics): OpenEvolve
0.4.0's own `Evaluator` on the seed, and evoforge's `fitness`. The run is `evoforge run FOLDER
--budget {budget} --model offline/mutator`; *cells* counts the MAP-Elites cells its programs
reached (over all islands). "stopped after stage 1" is a seed below the first cascade
threshold, kept with its stage-1 score as in OpenEvolve.

"""


if __name__ == "__main__":
    sys.exit(main())
