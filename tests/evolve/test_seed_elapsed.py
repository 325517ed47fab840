"""A run's elapsed time (``evoforge status``) includes the seed's evaluation."""

from __future__ import annotations

import asyncio

from evoforge.archive import Archive
from evoforge.evolve import RunConfig, start_run
from tests.conftest import TRIVIAL_SPEC

# The seed works for a while (0.6 s of CPU, not a sleep), so its evaluation dominates a run
# of one evaluation.
SLOW_SEED = """
# EVOLVE-BLOCK-START
import time


def main():
    start = time.process_time()
    while time.process_time() - start < 0.6:
        pass
    return [0.5, 0.25]
# EVOLVE-BLOCK-END
"""


def test_the_seeds_evaluation_counts_in_the_elapsed_time(tmp_path):
    (tmp_path / "slow").mkdir()
    (tmp_path / "slow" / "problem.py").write_text(TRIVIAL_SPEC.replace("\n    ", "\n"))
    (tmp_path / "slow" / "seed.py").write_text(SLOW_SEED)
    db = tmp_path / "run.db"
    config = RunConfig(problem=str(tmp_path / "slow"), budget=1, workers=1)
    asyncio.run(start_run(config.replace(model="offline/mutator"), db))
    with Archive(db) as archive:
        run = archive.latest_run()
        seed = next(iter(archive.programs(run.id)))
        assert seed.timings["caller_s"] >= 0.6
        assert run.elapsed_s >= seed.timings["caller_s"]
