"""The unchanged repository, checked and measured: a repository problem's baseline.

Called by the generated spec's ``baselines()`` once per session, before a run is created, so
a repository whose own tests fail, or whose measure prints no metrics, is refused with one
line and nothing is written.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from pathlib import Path

from evoforge.archive import Status
from evoforge.evaluators.repo._evaluator import RepoEvaluator
from evoforge.problems import ProblemSpecError, load_problem


def measure_base(spec_path: str | Path) -> dict[str, float]:
    """The objectives of the unchanged repository of the problem at ``spec_path``, evaluated
    exactly as a candidate is (a copy, the sandbox, check then measure).

    Costs one evaluation (and ``setup`` in one copy). Safe to call from inside a running
    event loop: the evaluation runs on its own loop in a helper thread.

    Raises:
        ProblemSpecError: the check fails at the base ("the repository's own tests fail
            before any change"), the measure fails or prints no JSON metrics, an objective
            is missing from them, or a command runs past the timeout; one line each.
    """
    problem = load_problem(Path(spec_path).parent)
    evaluator = RepoEvaluator(problem, workers=1)

    async def once():
        async with evaluator:
            return await evaluator.evaluate(problem.seed_source)

    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        result = pool.submit(asyncio.run, once()).result()
    repo = evaluator.options.repo_dir
    if result.status is Status.OK:
        return dict(result.objectives)
    error = result.artifacts.get("error", str(result.status))
    one_line = " | ".join(line.strip() for line in error.splitlines() if line.strip())
    if result.artifacts.get("stage") == "check" and result.status is Status.INCORRECT:
        raise ProblemSpecError(
            repo,
            "check",
            f"the repository's own tests fail before any change: {one_line}; fix the "
            "repository or the check command in evoforge.toml",
        )
    raise ProblemSpecError(
        repo,
        str(result.artifacts.get("stage") or "measure"),
        f"the unchanged repository does not evaluate ({result.status}): {one_line}",
    )
