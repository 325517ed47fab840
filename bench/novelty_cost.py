"""Per-candidate cost of the novelty filter and the built-in descriptors.

Builds a run whose island 0 holds ``--elites`` elites, each a variant of a ``--lines``-line
program (one constant changed, as a model's small edits do), then times for ``--candidates``
new variants: the fingerprint (equivalence key, tokens, shingles: computable in the proposal
worker), :meth:`NoveltyFilter.check` given the fingerprint (the controller's part) and
:meth:`BuiltinDescriptors.values`. Prints medians and 90th percentiles in milliseconds of
wall time and of the thread's CPU time (the latter is what to read on a busy machine).

    python bench/novelty_cost.py                    # 200 lines, 100 elites, 300 candidates
    python bench/novelty_cost.py --lines 400 --elites 200
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from evoforge.archive import Archive, Program, program_id
from evoforge.evaluators import Status
from evoforge.islands import BuiltinDescriptors, NoveltyFilter, _similarity, ast_key, fingerprint
from evoforge.problems import Objective, Problem


def program(lines: int, rng: np.random.Generator) -> str:
    """A ``lines``-line program of helper functions, constants drawn from ``rng``."""
    out = ["import numpy as np", "", "# EVOLVE-BLOCK-START"]
    per = 8
    for f in range(max(1, (lines - 6) // per)):
        a, b, c = (round(float(x), 3) for x in rng.uniform(0, 10, 3))
        out += [
            f"def helper_{f}(points, scale={a}):",
            '    """Move the points a little."""',
            "    total = 0.0",
            "    for index, value in enumerate(points):",
            f"        total += value * {b} - index / {c}  # weighted",
            f"    best = np.sqrt(abs(total)) + scale * {f}",
            "    return best",
            "",
        ]
    out += ["def main():", "    return helper_0([1.0, 2.0])", "# EVOLVE-BLOCK-END", ""]
    return "\n".join(out)


def mutate(source: str, rng: np.random.Generator) -> str:
    """``source`` with one of its float constants changed."""
    lines = source.split("\n")
    while True:
        i = int(rng.integers(len(lines)))
        if "total += value *" in lines[i]:
            lines[i] = lines[i].replace("value *", f"value * {rng.integers(2, 99)} *", 1)
            return "\n".join(lines)


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) * 1e3


def timed(call: Callable[[], Any], wall: list[float], cpu: list[float]) -> Any:
    """``call()``, appending its wall and CPU seconds."""
    start, start_cpu = time.perf_counter(), time.thread_time()
    result = call()
    cpu.append(time.thread_time() - start_cpu)
    wall.append(time.perf_counter() - start)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=200)
    parser.add_argument("--elites", type=int, default=100)
    parser.add_argument("--candidates", type=int, default=300)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    base = program(args.lines, rng)
    with tempfile.TemporaryDirectory() as folder:
        problem = Problem("bench", Path(folder) / "p.py", base, (Objective("score"),))
        archive = Archive(Path(folder) / "bench.db")
        run = archive.create_run(problem, config={}, seed=0)
        with archive.transaction():
            for seq in range(args.elites):
                source = mutate(base, rng) if seq else base
                p = Program(
                    run_id=run.id, id=program_id(source), seq=seq, source=source,
                    parent_id=None, island=0, generation=0, status=Status.OK, score=float(seq),
                    cell=seq, ast_key=ast_key(source),
                )  # fmt: skip
                if not archive.has_program(run.id, p.id):
                    archive.add_program(p)
                    archive.offer(run.id, 0, p)
        novelty = NoveltyFilter(archive, run.id, similarity=0.95, rejection=0.5)
        builtin = BuiltinDescriptors(archive, run.id, base)
        novelty.check(base, 0, rng)  # warm the elites' shingle and sketch caches
        builtin.values(base, 0)
        times: dict[str, tuple[list[float], list[float]]] = {
            name: ([], [])
            for name in (
                "fingerprint (key + tokens + shingles)",
                "NoveltyFilter.check given it",
                "BuiltinDescriptors.values",
            )
        }
        prints, checks, descriptors = times.values()
        rejected = 0
        for _ in range(args.candidates):
            source = mutate(mutate(base, rng), rng)
            _similarity.ast_key.cache_clear()
            _similarity._token_view.cache_clear()
            known = timed(lambda: fingerprint(source), *prints)  # noqa: B023
            verdict = timed(
                lambda: novelty.check(source, 0, rng, precomputed=known),  # noqa: B023
                *checks,
            )
            rejected += verdict is not None
            timed(lambda: builtin.values(source, 0), *descriptors)  # noqa: B023
        archive.close()
    print(
        f"{args.lines}-line program ({known.size} tokens, {len(known.shingles)} shingles), "
        f"{args.elites} elites on the island, {args.candidates} candidates "
        f"({rejected} rejected)"
    )
    for name, (wall, cpu) in times.items():
        print(
            f"  {name:38} wall median {statistics.median(wall) * 1e3:6.3f} ms "
            f"p90 {percentile(wall, 90):6.3f}   CPU median {statistics.median(cpu) * 1e3:6.3f} ms "
            f"p90 {percentile(cpu, 90):6.3f}"
        )


if __name__ == "__main__":
    main()
