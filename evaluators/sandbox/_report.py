"""What isolation candidates get on this host, for ``evoforge plugins`` and a run's records.

:func:`host_isolation` answers without starting a fork server: each mechanism is tried the way
a server would use it (in throwaway children, cached), for the default sandbox options. A
running evaluator reports what its servers really set up (``PythonEvaluator.sandbox_info``).
"""

from __future__ import annotations

import functools
import os

from evoforge.evaluators.sandbox._cgroup import candidate_cgroup
from evoforge.evaluators.sandbox._fs import filesystem_mode, namespace_support
from evoforge.evaluators.sandbox._host import _host_network_namespace
from evoforge.evaluators.sandbox._options import RootRefusedError, SandboxOptions, candidate_user
from evoforge.evaluators.sandbox._seccomp import filter_program

ISOLATION_KEYS = (
    "user",
    "mount namespace",
    "network namespace",
    "pid namespace",
    "ipc namespace",
    "memory",
    "unix sockets",
)
"""The entries of :func:`host_isolation`, in order."""


@functools.cache
def host_isolation() -> dict[str, str]:
    """``{mechanism: "on: ..." or "off: why"}`` for candidates on this host, default options.

    Keys: :data:`ISOLATION_KEYS`.
    """
    defaults = SandboxOptions()
    report: dict[str, str] = {}
    try:
        _, note, _ = candidate_user(str(defaults.sandbox_user or ""))
        report["user"] = f"on: {note}"
    except (RootRefusedError, ValueError) as exc:
        report["user"] = f"off: {exc}"
    mode = filesystem_mode()
    report["mount namespace"] = (
        f"on: read-only view but the workdir ({mode})" if mode else "off: the host refuses it"
    )
    why_net = _host_network_namespace()
    report["network namespace"] = "on: no network" if not why_net else f"off: {why_net}"
    why_pid, why_ipc = namespace_support() if mode else ("no mount namespace",) * 2
    if mode == "user namespace" and not why_pid:
        why_pid = "needs a server with CAP_SYS_ADMIN"
    report["pid namespace"] = (
        "on: candidates only, own /proc, emptied after each" if not why_pid else f"off: {why_pid}"
    )
    report["ipc namespace"] = "on: one per candidate" if not why_ipc else f"off: {why_ipc}"
    cgroup = candidate_cgroup(f"probe-{os.getpid()}")
    cgroup.close()
    report["memory"] = (
        f"on: {cgroup.note}"
        if cgroup.version
        else f"off: per process only (RLIMIT_AS); {cgroup.note}"
    )
    prog, why_seccomp = filter_program()
    report["unix sockets"] = (
        "on: refused by seccomp" if prog is not None else f"off: reachable ({why_seccomp})"
    )
    return report
