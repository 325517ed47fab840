"""How a problem's candidates are sandboxed: the spec's sandbox options, the environment and
the user of the processes that run candidates.

The options live in the problem's ``options`` mapping (see
:class:`~evoforge.evaluators.PythonEvaluator`) and are read here once for every evaluator that runs
candidates: the ``python`` evaluator's fork servers, the CPU timing runner and the kernel runners.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TYPE_CHECKING, Annotated, Literal, get_args

from pydantic import Field, ValidationError

from evoforge.base.settings import Settings, describe_item
from evoforge.evaluators.sandbox._host import python_paths, resolve_user, unreachable
from evoforge.evaluators.sandbox._mount_plan import filesystem_mode
from evoforge.evaluators.sandbox._types import DEFAULT_DISK_MB
from evoforge.problems import SPEC_FILENAME, ProblemSpecError

if TYPE_CHECKING:
    from pathlib import Path

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
        sandbox_user: whom candidates run as when the server is root (a user name or uid);
            None keeps the server's (root: only with ``sandbox_allow_root``).
        sandbox_allow_root: let candidates run as the host's uid 0 (asked for, or when the
            user cannot be given the Python installation); otherwise that refuses to start.
        sandbox_network: ``server`` (no network for candidates, one namespace per server),
            ``candidate`` (a namespace each) or ``host`` (the host's network).
        score_timeout_s: limit of one call of the spec's ``evaluate()``.
        sandbox_prefork: fork each candidate's process ahead of its request.
        sandbox_filesystem: a private read-only view of the filesystem (but the workdir).
        sandbox_hidden_paths: more paths hidden from candidates (relative ones start at the
            spec's folder); the problem's own folder is always hidden.
        sandbox_visible_paths: files and folders candidates must read (data sets, libraries)
            that lie in a folder covered from them (``/home``, ``/opt``, ``/var``, ...: see
            ``Isolation.cover``); each is bound back, read-only (relative ones start at the
            spec's folder; inside the problem's own folder nothing is visible).
        sandbox_env: names of environment variables candidates (and ``evaluate()``) get from
            the engine's environment, besides :data:`ENV_NAMES` and ``LC_*``.
        sandbox_unix_sockets: let candidates create UNIX-domain sockets (by default refused,
            so no host service's socket file can be reached).
        sandbox_namespaces: a PID namespace for candidates (own ``/proc``, emptied after each
            one) and an IPC namespace per candidate.
        sandbox_cgroup: limit and account memory for the candidate's whole process tree.
        sandbox_disk_mb: the candidate's disk quota in MiB (its workdir, also ``HOME`` and
            ``TMPDIR``, is a private ``tmpfs`` of this size; more is ``ENOSPC`` and the run
            ends ``disk_limit``). Default: half of ``memory_mb`` (the ``tmpfs``'s pages count
            against the memory limit too), or 1024 without one.
    """

    sandbox_user: str | Annotated[int, Field(ge=0)] | None = "nobody"
    sandbox_allow_root: bool = False
    sandbox_network: Literal["server", "candidate", "host"] = "server"
    score_timeout_s: Annotated[float, Field(gt=0)] = 60.0
    sandbox_prefork: bool = True
    sandbox_filesystem: bool = True
    sandbox_hidden_paths: Annotated[tuple[str, ...], Field(strict=False)] = ()
    sandbox_visible_paths: Annotated[tuple[str, ...], Field(strict=False)] = ()
    sandbox_env: Annotated[
        tuple[Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")], ...], Field(strict=False)
    ] = ()
    sandbox_unix_sockets: bool = False
    sandbox_namespaces: bool = True
    sandbox_cgroup: bool = True
    sandbox_disk_mb: Annotated[int, Field(ge=1)] | None = None

    def disk_mb(self, memory_mb: int | None) -> int:
        """The disk quota for candidates limited to ``memory_mb``: ``sandbox_disk_mb`` when
        given, else half of ``memory_mb`` (at least 16), else the default."""
        if self.sandbox_disk_mb is not None:
            return self.sandbox_disk_mb
        return max(16, memory_mb // 2) if memory_mb else DEFAULT_DISK_MB

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
        hidden: tuple[Path | str, ...] = (own, *self.sandbox_hidden_paths)
        return [arg for path in hidden for arg in ("--hide", str(folder / path))] + [
            arg for path in self.sandbox_visible_paths for arg in ("--keep", str(folder / path))
        ]


ENV_NAMES = (
    "PATH",
    "LANG",
    "LANGUAGE",
    "TZ",
    "PYTHONPATH",
    "PYTHONHASHSEED",
    "PYTHONDONTWRITEBYTECODE",
    "PYTHONIOENCODING",
    "PYTHONUTF8",
    "LD_LIBRARY_PATH",
    # which accelerators the kernel evaluators may use
    "CUDA_VISIBLE_DEVICES",
    "NVIDIA_VISIBLE_DEVICES",
    "HIP_VISIBLE_DEVICES",
    "ROCR_VISIBLE_DEVICES",
    "TPU_VISIBLE_CHIPS",
    "NEURON_RT_VISIBLE_CORES",
    "JAX_PLATFORMS",
)
"""Environment variables the processes that run candidates get from the engine's environment
(with every ``LC_*`` locale variable and what the problem declares in ``sandbox_env``)."""


def server_env(declared: Iterable[str] = (), *, home: str | None = None) -> dict[str, str]:
    """The environment of the processes that run candidates, built from an allow-list.

    A candidate is a fork of such a process and can read its environment (``os.environ``,
    ``/proc/self/environ``) and print it into artifacts that reach prompts and the archive, so
    it gets only :data:`ENV_NAMES`, the locale (``LC_*``) and the names the problem declares
    (``options["sandbox_env"]``), never the engine's environment minus what looks secret (a
    ``DATABASE_URL`` with a password, a ``GITHUB_PAT``). Thread-count variables are 1;
    ``HOME`` and ``TMPDIR`` are ``home`` when given (the fork servers point them at the
    candidates' working directory).
    """
    wanted = set(declared)
    env = {
        name: value
        for name, value in os.environ.items()
        if name in ENV_NAMES or name.startswith("LC_") or name in wanted
    }
    env.update(dict.fromkeys(THREAD_VARIABLES, "1"))
    if home is not None:
        env["HOME"] = env["TMPDIR"] = home
    return env


class RootRefusedError(ValueError):
    """Candidates would run as the host's root, and the problem did not allow it."""


def candidate_user(
    name: str, *, allow_root: bool = False, filesystem: bool = True
) -> tuple[tuple[int, int] | None, str, tuple[tuple[str, tuple[str, ...]], ...]]:
    """Whom candidates run as: ``(uid and gid to switch to or None, a note for the run's
    records, the folders to make reachable)``.

    A server that runs as root switches candidates to ``name`` (an account or a uid). When
    that user cannot read the Python installation (a venv or an interpreter under a 0700
    home), the folders it cannot traverse are covered, in each candidate's mount namespace,
    by an empty traversable ``tmpfs`` with the installation bound back at its own place
    (``Isolation.reach``), so the switch still works and nothing else of those folders shows.

    Candidates never run as uid 0 of the host unless ``allow_root`` says so (the spec's
    ``sandbox_allow_root``): asked for root (``name`` empty, ``"root"`` or ``0``), or with no
    way to give the user the installation, this raises :class:`RootRefusedError` with the fix.
    A server that is not root keeps its own uid (it cannot switch, and it is not root).

    Args:
        filesystem: whether candidates get a mount namespace (``sandbox_filesystem``); the
            bind mounts need one.
    """
    euid = os.geteuid()
    if euid != 0:
        return None, f"uid {euid} (the server's own; it is not root)", ()
    user = resolve_user(int(name) if name.isdigit() else name or None)
    if user is None or user[0] == 0:
        asked = "sandbox_user is None" if not name else f"sandbox_user is {name!r}"
        if allow_root:
            return None, f"uid 0 (root, as asked: {asked} and sandbox_allow_root is True)", ()
        raise RootRefusedError(
            f"candidates would run as root ({asked}, and the server runs as root); name an "
            "unprivileged account in options['sandbox_user'] (the default is 'nobody'), or "
            "set options['sandbox_allow_root'] = True to run them as root knowingly"
        )
    uid, gid = user
    essential, other = python_paths()
    blocked, unfixable = unreachable(uid, gid, essential)
    other_blocked, _ = unreachable(uid, gid, other)  # nice to have; left out if unfixable
    for folder, paths in other_blocked.items():
        blocked.setdefault(folder, []).extend(paths)
    why = ""
    if unfixable:
        why = f"uid {uid} cannot read {unfixable[0]} itself (its own permissions)"
    elif blocked and not filesystem:
        why = (
            f"uid {uid} cannot reach {next(iter(blocked.values()))[0]}, and making it reachable "
            "needs the filesystem isolation (sandbox_filesystem is False)"
        )
    elif blocked and filesystem_mode() != "mount namespace":
        why = (
            f"uid {uid} cannot reach {next(iter(blocked.values()))[0]}, and this host allows "
            "the server no mount namespace to make it reachable in"
        )
    if why:
        if allow_root:
            return None, f"uid 0 (root: {why}; sandbox_allow_root is True)", ()
        raise RootRefusedError(
            f"candidates cannot run as uid {uid}: {why}. Install Python (or the venv) where "
            f"uid {uid} can read it, e.g. `python3 -m venv /opt/evoforge-venv` outside a "
            "0700 home, or set options['sandbox_user'] to an account that can, or set "
            "options['sandbox_allow_root'] = True to run candidates as root knowingly"
        )
    reach = tuple((folder, tuple(sorted(set(paths)))) for folder, paths in sorted(blocked.items()))
    note = f"uid {uid}" + (f" ({name})" if name and not name.isdigit() else "")
    if reach:
        shown = "; ".join(f"{folder} (binding back {', '.join(paths)})" for folder, paths in reach)
        note += f"; made reachable for it, in its mount namespace: {shown}"
    return user, note, reach


NETWORK_MODES: tuple[str, ...] = get_args(SandboxOptions.model_fields["sandbox_network"].annotation)
