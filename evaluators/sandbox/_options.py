"""How a problem's candidates are sandboxed: the spec's sandbox options, the environment and
the user of the processes that run candidates.

The options live in the problem's ``options`` mapping (see
:class:`~evoforge.evaluators.PythonEvaluator`) and are read here once for every evaluator that runs
candidates: the ``python`` evaluator's fork servers, the CPU timing runner and the kernel runners.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from evoforge._secrets import SECRET_NAME
from evoforge.evaluators.sandbox._host import resolve_user, unreadable_python_path
from evoforge.problems import SPEC_FILENAME, ProblemSpecError

if TYPE_CHECKING:
    from evoforge.problems import Problem

__all__ = [
    "NETWORK_MODES",
    "THREAD_VARIABLES",
    "candidate_user",
    "filesystem_arguments",
    "sandbox_options",
    "server_env",
]

THREAD_VARIABLES = (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "NUMEXPR_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
)
NETWORK_MODES = ("server", "candidate", "host")


def sandbox_options(problem: Problem) -> tuple[str | int | None, str, float, bool]:
    options = problem.options
    user = options.get("sandbox_user", "nobody")
    if user is not None and not isinstance(user, str | int):
        raise ProblemSpecError(
            problem.spec_path,
            "options['sandbox_user']",
            f"found {user!r}; use a user name, a numeric uid, or None",
        )
    network = options.get("sandbox_network", "server")
    if network not in NETWORK_MODES:
        raise ProblemSpecError(
            problem.spec_path,
            "options['sandbox_network']",
            f"found {network!r}; use one of {', '.join(NETWORK_MODES)}",
        )
    score_timeout = options.get("score_timeout_s", 60.0)
    if not isinstance(score_timeout, int | float) or not score_timeout > 0:
        raise ProblemSpecError(
            problem.spec_path,
            "options['score_timeout_s']",
            f"found {score_timeout!r}; use a positive number of seconds",
        )
    prefork = options.get("sandbox_prefork", True)
    if not isinstance(prefork, bool):
        raise ProblemSpecError(
            problem.spec_path, "options['sandbox_prefork']", f"found {prefork!r}; use True or False"
        )
    filesystem_arguments(problem)  # its options fail here, not when a server starts
    return user, network, float(score_timeout), prefork


def filesystem_arguments(problem: Problem) -> list[str]:
    """Fork-server flags for the candidates' filesystem: what to hide, or no isolation.

    Hidden: the problem's folder (its single spec file for a one-file problem), where the
    reference data and ``evaluate()``'s source live, and ``sandbox_hidden_paths``.
    """
    options = problem.options
    enabled = options.get("sandbox_filesystem", True)
    if not isinstance(enabled, bool):
        raise ProblemSpecError(
            problem.spec_path,
            "options['sandbox_filesystem']",
            f"found {enabled!r}; use True or False",
        )
    extra = options.get("sandbox_hidden_paths", ())
    paths = isinstance(extra, list | tuple) and all(isinstance(p, str | os.PathLike) for p in extra)
    if not paths:
        raise ProblemSpecError(
            problem.spec_path,
            "options['sandbox_hidden_paths']",
            f"found {extra!r}; use a list of paths (relative ones start at the spec's folder)",
        )
    if not enabled:
        return ["--no-filesystem"]
    folder = problem.spec_path.parent
    own = folder if problem.spec_path.name == SPEC_FILENAME else problem.spec_path
    return [arg for path in (own, *extra) for arg in ("--hide", str(folder / path))]


def server_env() -> dict[str, str]:
    """The fork servers' environment: ours without secrets, one thread per BLAS.

    Candidates can read their environment and print it into artifacts that reach prompts and
    the archive, so API keys and tokens are not passed on.
    """
    env = {k: v for k, v in os.environ.items() if not SECRET_NAME.search(k)}
    env.update(dict.fromkeys(THREAD_VARIABLES, "1"))
    return env


def candidate_user(name: str) -> tuple[tuple[int, int] | None, str]:
    """Whom candidates run as, and a note saying so (and why, when not switched)."""
    user = resolve_user(int(name) if name.isdigit() else name or None)
    if user is None:
        why = "not asked" if not name else "the server is not root"
        return None, f"uid {os.geteuid()} (unchanged: {why})"
    if blocked := unreadable_python_path(*user):
        return None, (
            f"uid {os.geteuid()} (unchanged: uid {user[0]} cannot read {blocked}, "
            "so candidates could not import from it)"
        )
    return user, f"uid {user[0]}"
