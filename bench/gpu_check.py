"""The evolution steps of ``bench/gpu_check.sh``: short offline runs on kernel tasks, with a
report per task. On a GPU they time candidates against eager and ``torch.compile``; on a CPU
(``--cpu``) the same steps run through the Triton interpreter and torch's CPU build, with the
trusted eager vs ``torch.compile`` baseline measured on the CPU (so the compile path, its
sandbox limits and its private caches are exercised everywhere).

    python bench/gpu_check.py suite --out OUT [--cpu] [--budget 4] [--tasks 9]
    python bench/gpu_check.py kernelbench --out OUT [--cpu] [--budget 4] [--targets triton,cuda]

``suite`` runs ``kernel_suite --target triton`` (its first ``--tasks`` tasks); ``kernelbench``
runs three KernelBench level-1 tasks as KernelBench writes them (19_ReLU: elementwise, 47_Sum:
a reduction, a matmul with a large K: matmul-like), from the seed the adapter writes
(``ModelNew`` = the task's ``Model``). Each task's row is written to ``OUT/<step>.md`` and
``OUT/<step>.jsonl`` as soon as the task ends, so a step cut short keeps the tasks it finished.
Per task: correct, speedup vs eager and vs ``torch.compile`` (GPU), the timing's coefficient of
variation, the trusted baseline (eager and compile medians and CVs), the profiler's top kernels.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # tests/: the KernelBench task files the tests use

from evoforge.archive import Archive  # noqa: E402
from evoforge.evolve import resolve  # noqa: E402
from evoforge.evolve.run._batch import TaskResult, run_batch  # noqa: E402

CPU_OPTIONS = {"cpu_baseline": True, "timing_repeats": 10, "timing_warmups": 1, "flush_mib": 64}
"""Added to each task's options in ``--cpu`` mode: the trusted baseline on the CPU, briefly."""
GPU_OPTIONS = {"timing_repeats": 50, "sanity_repeats": 10}
"""Added on a GPU: fewer timed calls than the default 100, to fit the device's minutes."""
BASELINE_KEYS = ("trusted_eager_ms", "trusted_compile_ms", "trusted_eager_cv", "trusted_compile_cv")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("step", choices=("suite", "kernelbench"))
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--cpu", action="store_true", help="the dry run on this CPU")
    parser.add_argument("--budget", type=int, default=4, help="evaluations per task")
    parser.add_argument("--tasks", type=int, default=9, help="suite: its first N tasks")
    parser.add_argument("--targets", default="triton", help="kernelbench: triton,cuda")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="gpu-check-"))
    os.environ.setdefault("EVOFORGE_CACHE", str(work / "cache"))
    if args.step == "suite":
        problems = list(resolve("kernel_suite", target="triton").problems)[: args.tasks]
    else:
        problems = [
            problem
            for target in args.targets.split(",")
            for problem in _kernelbench(work / "level1", target.strip())
        ]
    extra = CPU_OPTIONS if args.cpu else GPU_OPTIONS
    folders = [
        _with_options(problem.spec_path.parent, work / "problems", extra) for problem in problems
    ]
    report = Report(args.out / args.step, work / f"{args.step}.db")

    def settings(problem: Any) -> dict[str, Any]:
        return {"problem": str(folders[names.index(problem.name)]), "budget": args.budget,
                "workers": 1, "seed": 1}  # fmt: skip

    names = [problem.name for problem in problems]
    asyncio.run(run_batch(problems, settings, report.db, on_task=report.add))
    return 0 if report.rows and all(row["correct"] for row in report.rows) else 1


def _kernelbench(folder: Path, target: str) -> list[Any]:
    """The three level-1 tasks, as KernelBench writes them, adapted for ``target``."""
    from tests.problems.formats import RELU, SUM_REDUCTION

    folder.mkdir(parents=True, exist_ok=True)
    matmul = ROOT / "tests" / "evaluators" / "kernelbench_corpus" / "matmul_large_k.py"
    files = {
        "19_ReLU.py": RELU,
        "47_Sum_reduction_over_a_dimension.py": SUM_REDUCTION,
        "6_Matmul_with_large_K_dimension_.py": matmul.read_text(),
    }
    problems = []
    for name, text in files.items():
        (folder / name).write_text(text.lstrip())
        problems.extend(resolve(str(folder / name), target=target).problems)
    return problems


def _with_options(folder: Path, into: Path, extra: dict[str, Any]) -> Path:
    """A copy of a problem folder whose spec adds ``extra`` to its ``options``."""
    import shutil

    copy = into / folder.name
    shutil.copytree(folder, copy, dirs_exist_ok=True)
    spec = copy / "problem.py"
    spec.write_text(spec.read_text() + f"\noptions = {{**options, **{extra!r}}}\n")
    return copy


class Report:
    """One row per task, written as soon as it is known (markdown and JSON lines)."""

    def __init__(self, stem: Path, db: Path) -> None:
        self.db, self.rows = db, []
        self._md, self._jsonl = stem.with_suffix(".md"), stem.with_suffix(".jsonl")
        self._start = time.monotonic()
        self._md.write_text(
            "| task | correct | vs eager | vs compile | time CV | trusted eager ms (CV) | "
            "trusted compile ms (CV) | evals | s |\n|---|---|---:|---:|---:|---:|---:|---:|---:|\n"
        )
        self._jsonl.write_text("")

    def add(self, result: TaskResult) -> None:
        metrics, profile = self._best(result)
        row = {
            "task": result.problem,
            "correct": result.correct,
            "reason": result.reason if not result.correct else "",
            "speedup_vs_eager": result.speedups.get("eager"),
            "speedup_vs_compile": result.speedups.get("compile"),
            "time_cv": result.time_cv,
            "timing": result.timing,
            "evaluations": result.evaluations,
            "profile_top": profile.splitlines()[:4],
            "elapsed_s": round(time.monotonic() - self._start, 1),
            **{key: metrics.get(key) for key in (*BASELINE_KEYS, "trusted_baseline_error")},
        }
        self.rows.append(row)
        with self._jsonl.open("a") as out:
            out.write(json.dumps(row) + "\n")
        with self._md.open("a") as out:
            out.write(
                f"| {row['task']} | {'yes' if row['correct'] else 'NO: ' + row['reason'][:80]} "
                f"| {_x(row['speedup_vs_eager'])} | {_x(row['speedup_vs_compile'])} "
                f"| {_pct(row['time_cv'])} "
                f"| {_ms(row['trusted_eager_ms'])} ({_pct(row['trusted_eager_cv'])}) "
                f"| {_ms(row['trusted_compile_ms'])} ({_pct(row['trusted_compile_cv'])}) "
                f"| {row['evaluations']} | {row['elapsed_s']} |\n"
            )
            if row["trusted_baseline_error"]:
                out.write(f"\n  baseline error: {row['trusted_baseline_error'][:300]}\n\n")
            if profile:
                out.write("\n```\n" + "\n".join(profile.splitlines()[:6]) + "\n```\n\n")
        print(json.dumps(row), flush=True)

    def _best(self, result: TaskResult) -> tuple[dict[str, Any], str]:
        """The metrics of the run's best program (its seed's, for the baseline) and the
        profile artifact of the best program that has one."""
        if result.run_id is None:
            return {}, ""
        with Archive(self.db) as archive:
            info = archive.run(result.run_id)
            programs = list(archive.programs(result.run_id))
        best = next((p for p in programs if p.id == info.best_program_id), None)
        metrics = dict(programs[0].metrics) if programs else {}
        if best is not None:
            metrics.update({k: v for k, v in best.metrics.items() if v is not None})
        profiles = [p.artifacts.get("profile", "") for p in ([best] if best else []) + programs]
        return metrics, next((text for text in profiles if text), "")


def _x(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}x"


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f} %"


def _ms(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4f}"


if __name__ == "__main__":
    sys.exit(main())
