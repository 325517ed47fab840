"""How a problem's candidates are sandboxed: the spec's sandbox options, the environment and
the user of the processes that run candidates.

The options live in the problem's ``options`` mapping (see
:class:`~evoforge.evaluators.PythonEvaluator`) and are read here once for every evaluator that runs
candidates: the ``python`` evaluator's fork servers, the CPU timing runner and the kernel runners.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Annotated, Literal, get_args

from pydantic import Field, ValidationError

from evoforge._secrets import SECRET_NAME
from evoforge._validation import Settings, describe_item
from evoforge.evaluators.sandbox._host import resolve_user, unreadable_python_path
from evoforge.problems import SPEC_FILENAME, ProblemSpecError

if TYPE_CHECKING:
    from evoforge.problems import Problem


THREAD_VARIABLES = (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "NUMEXPR_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
)


class SandboxOptions(Settings):
    """The sandbox settings a problem spec can give in its ``options`` mapping.

    Attributes:
        sandbox_user: whom candidates run as (a user name or uid); None keeps the server's.
        sandbox_network: ``server`` (no network for candidates, one namespace per server),
            ``candidate`` (a namespace each) or ``host`` (the host's network).
        score_timeout_s: limit of one call of the spec's ``evaluate()``.
        sandbox_prefork: fork each candidate's process ahead of its request.
        sandbox_filesystem: a private read-only view of the filesystem (but the workdir).
        sandbox_hidden_paths: more paths hidden from candidates (relative ones start at the
            spec's folder); the problem's own folder is always hidden.
    """

    sandbox_user: str | Annotated[int, Field(ge=0)] | None = "nobody"
    sandbox_network: Literal["server", "candidate", "host"] = "server"
    score_timeout_s: Annotated[float, Field(gt=0)] = 60.0
    sandbox_prefork: bool = True
    sandbox_filesystem: bool = True
    sandbox_hidden_paths: Annotated[tuple[str, ...], Field(strict=False)] = ()

    @classmethod
    def of(cls, problem: Problem) -> SandboxOptions:
        """The options ``problem`` declares (its other options are other parts' business).

        Raises:
            ProblemSpecError: a bad value, naming ``options['<key>']`` and what is allowed.
        """
        given = {k: v for k, v in problem.options.items() if k in cls.model_fields}
        try:
            return cls.parse(given)
        except ValidationError as exc:
            item = exc.errors(include_url=False)[0]
            key = item["loc"][0] if item.get("loc") else "?"
            raise ProblemSpecError(
                problem.spec_path, f"options[{key!r}]", describe_item(item, field=None)
            ) from None

    def filesystem_arguments(self, problem: Problem) -> list[str]:
        """Fork-server flags for the candidates' filesystem: what to hide, or no isolation.

        Hidden: the problem's folder (its single spec file for a one-file problem), where the
        reference data and ``evaluate()``'s source live, and ``sandbox_hidden_paths``.
        """
        if not self.sandbox_filesystem:
            return ["--no-filesystem"]
        folder = problem.spec_path.parent
        own = folder if problem.spec_path.name == SPEC_FILENAME else problem.spec_path
        hidden = (own, *self.sandbox_hidden_paths)
        return [arg for path in hidden for arg in ("--hide", str(folder / path))]


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


NETWORK_MODES: tuple[str, ...] = get_args(SandboxOptions.model_fields["sandbox_network"].annotation)
