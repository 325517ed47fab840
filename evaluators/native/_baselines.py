"""The seed's references as baselines, for a native spec's ``baselines()``::

def baselines():
    from evoforge.evaluators.native import seed_baselines
    return seed_baselines(__file__)
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from pathlib import Path

from evoforge.problems import load_problem


def seed_baselines(spec_file: str | Path) -> dict[str, dict[str, float]]:
    """``{"seed": {objective: value}, "seed -O3": {...}}`` measured now (a few runs of the
    measure); references that failed or lack an objective are left out."""
    from evoforge.evaluators.native._evaluator import NativeEvaluator

    problem = load_problem(Path(spec_file).parent)
    evaluator = NativeEvaluator(problem)
    # baselines() may be called from a running event loop (a session's): measure on a thread
    # of its own with its own loop.
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        references = pool.submit(asyncio.run, evaluator.references()).result()
    names = [o.name for o in problem.objectives]
    result = {}
    for label, metrics in references.items():
        values = {n: float(metrics[n]) for n in names if isinstance(metrics.get(n), int | float)}
        if len(values) == len(names) and all(values.values()):
            result["seed" if label == "seed" else f"seed -{label}"] = values
    return result
