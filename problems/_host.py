"""Whether a problem can run on this host, and its one-time set-up.

A spec says what it needs with ``requires = {"opt-19": "apt-get install -y llvm-19"}``
(commands looked up on ``PATH``, each with how to get it) and, for data prepared once (a
corpus fetched from a package registry, profiles), defines ``setup()`` (idempotent; run by
``evoforge problems setup NAME``) and ``ready() -> str`` (why it cannot run yet, "" when it
can). Both run in the engine's process: spec code is trusted.
"""

from __future__ import annotations

import shutil
from typing import TYPE_CHECKING

from evoforge.problems._declaration import ProblemSpecError
from evoforge.problems._loader import import_spec

if TYPE_CHECKING:
    from evoforge.problems._spec import Problem


def problem_unready(problem: Problem) -> str:
    """Why ``problem`` cannot run on this host ("" when it can): missing commands first (with
    how to install them), then what the spec's ``ready()`` says. Costs a ``PATH`` lookup per
    command and whatever ``ready()`` does (a few file checks)."""
    missing = [command for command in problem.requires if shutil.which(command) is None]
    if missing:
        hints = sorted(dict.fromkeys(problem.requires[command] for command in missing))
        return f"{', '.join(missing)} not found; {'; '.join(hints)}"
    if not problem.checks_ready:
        return ""
    try:
        why = import_spec(problem.spec_path).ready()
    except Exception as exc:
        return f"ready() raised {type(exc).__name__}: {exc}"
    return str(why or "")


def setup_problem(problem: Problem) -> str:
    """Run the spec's ``setup()`` (idempotent); returns what it reports ("" if nothing).

    Raises:
        ProblemSpecError: the spec has no ``setup()``, or it raised (the message says why).
    """
    if not problem.prepares:
        raise ProblemSpecError(
            problem.spec_path, "setup", f"{problem.name} needs no set-up (no setup() function)"
        )
    try:
        return str(import_spec(problem.spec_path).setup() or "")
    except ProblemSpecError:
        raise
    except Exception as exc:
        raise ProblemSpecError(
            problem.spec_path, "setup()", f"raised {type(exc).__name__}: {exc}"
        ) from exc
