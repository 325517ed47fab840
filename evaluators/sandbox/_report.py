"""What isolation candidates get, and how it is reported (``evoforge plugins``, a server's
handshake).

For each run of :class:`~evoforge.evaluators.sandbox.Sandbox`:

- the child gets its own session and process group (``setsid``); when it ends or overruns, the
  whole group is killed, and descendants that left the group (``setsid`` in a grandchild) are
  found and killed too, because the server is a child subreaper (Linux; see
  :func:`evoforge.evaluators.sandbox._host.harden_server`);
- a fresh, empty working directory is its cwd, ``HOME`` and ``TMPDIR``; with a private ``/tmp``
  the only places on disk it can write, one ``tmpfs`` of ``Isolation.disk_mb`` (its disk quota;
  more is ``ENOSPC``, and a run that failed on it is ``disk_limit``); it runs in a private mount
  namespace whose root is a minimal one (:mod:`evoforge.evaluators.sandbox._root`: the system,
  what it imports, a minimal ``/etc``), read-only, with only ``/dev/null`` and friends (and
  accelerators; NVIDIA's for GPU requests) in its ``/dev``, its own ``/dev/shm``, and hidden
  paths inside what is bound (the problem's folder, credential files) covered by empty mounts
  (:mod:`evoforge.evaluators.sandbox._mount_plan`; as root directly, as another user through a
  user namespace, and off, saying why, where the host allows neither);
- no capabilities: a candidate that runs as root cannot remount, unmount, load modules, or
  read other processes' memory (:mod:`evoforge.evaluators.sandbox._caps`), and
  ``PR_SET_NO_NEW_PRIVS`` keeps setuid binaries from giving any back;
- rlimits: address space (``memory_mb``), CPU time (``ceil(timeout_s) + 1`` s, then SIGKILL one
  second later), file size (writes fail with EFBIG instead of killing), no core files, and a
  process count: the candidate tree's own where the ``pids`` cgroup controller is there, else
  ``RLIMIT_NPROC`` when it runs as a dedicated user (shared by every process of that uid; as
  root it is not enforced);
- stdin is ``/dev/null``; stdout and stderr are pipes the server drains, keeping only the tails,
  so a candidate that prints 100 MB neither fills a disk nor fails;
- optionally: a fresh network namespace, and a drop from root to an unprivileged user, which
  also keeps it away from the signals of root's processes (the server refuses to run
  candidates as root unless asked, see ``candidate_user``);
- a PID namespace and an IPC namespace, where the host allows (``Isolation.namespaces``).
  The PID namespace is the server's candidates' (:mod:`~evoforge.evaluators.sandbox._pidns`):
  a fresh read-only ``/proc`` shows a child only its own processes, so it can neither see
  (command lines, the engine's ``--db``) nor signal anything else, and after each candidate
  everything left in the namespace is killed, ``setsid`` escapees included, before the next
  child is forked. The IPC namespace is made per candidate (System V objects and POSIX queues
  die with it; about 0.15 ms of the child's set-up with the ``proc`` mount, off the latency
  path when the child is forked ahead);
- a seccomp filter at least as strict as Docker's default profile
  (:mod:`~evoforge.evaluators.sandbox._seccomp`): no keyrings, namespaces, ``bpf``,
  ``io_uring``, ``ptrace``, ... and no socket but ``AF_INET``/``AF_INET6`` (so a host service
  listening on a socket file, netlink and vsock stay out of reach);
- a cgroup for the memory of its whole process tree (:mod:`~evoforge.evaluators.sandbox._cgroup`),
  reused by a server's candidates one at a time, and a descriptor limit (``Limits.max_files``);
- a wall-clock deadline enforced by the server (``pidfd`` + ``poll``, no polling sleeps;
  :mod:`~evoforge.evaluators.sandbox._supervise`);
- the result comes back over a pipe as one JSON header line plus opaque payload bytes, capped in
  size; nothing from the child is ever unpickled.

:func:`protections` words what a server set up (``Sandbox.protections``, which a fork server
sends in its handshake and ``PythonEvaluator.sandbox_info`` reports). :func:`host_isolation`
answers without starting a fork server: each mechanism is tried the way a server would use it
(in throwaway children, cached), for the default sandbox options.
"""

from __future__ import annotations

import functools
import os

from evoforge.evaluators.sandbox._caps import held_capabilities
from evoforge.evaluators.sandbox._cgroup import CandidateCgroup, candidate_cgroup
from evoforge.evaluators.sandbox._host import host_network_namespace
from evoforge.evaluators.sandbox._mount_plan import COVERED, FilesystemPlan, filesystem_mode
from evoforge.evaluators.sandbox._ns_probe import namespace_support
from evoforge.evaluators.sandbox._options import RootRefusedError, SandboxOptions, candidate_user
from evoforge.evaluators.sandbox._seccomp import filter_program

SYSCALLS_NOTE = (
    "seccomp, Docker's default and stricter: keyrings, namespaces, bpf, perf, io_uring, "
    "ptrace, mounts, modules, kexec refused; sockets AF_INET/AF_INET6 only"
)
"""What the seccomp filter refuses, in a line (``sandbox_info`` and ``evoforge plugins``)."""

ISOLATION_KEYS = (
    "user",
    "mount namespace",
    "network namespace",
    "pid namespace",
    "ipc namespace",
    "memory",
    "unix sockets",
    "system calls",
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
        f"on: a minimal root ({mode}): /usr and /bin, /lib*, what candidates import, a minimal "
        "/etc, their own /dev, /proc and /dev/shm, read-only; the workdir and a private /tmp "
        f"share the disk quota; nothing of {', '.join(COVERED)} but what they import"
        if mode
        else "off: the host refuses it"
    )
    why_net = host_network_namespace()
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
    report["system calls"] = f"on: {SYSCALLS_NOTE}" if prog is not None else f"off: {why_seccomp}"
    return report


def protections(
    plan: FilesystemPlan,
    *,
    why_no_pid: str,
    why_no_ipc: str,
    seccomp: bool,
    why_no_seccomp: str,
    cgroup: CandidateCgroup,
    unix_sockets: bool = False,
) -> dict[str, str]:
    """``{protection: what it does, or "off: why"}`` for the children of one server.

    Args:
        plan: the children's filesystem plan.
        why_no_pid: why they get no PID namespace ("" when they do).
        why_no_ipc: why they get no IPC namespace ("" when they do).
        seccomp: whether the seccomp filter is installed.
        why_no_seccomp: why it is not.
        unix_sockets: whether the problem asked for UNIX sockets (the filter lets them through).
        cgroup: the candidates' cgroup (version 0 when there is none).
    """
    held = held_capabilities()
    if held:
        capabilities = f"all dropped (the server holds {held})"
    elif plan.mode == "user namespace":
        capabilities = "all dropped (those of its user namespace)"
    else:
        capabilities = "none held"
    return {
        **plan.describe(),
        "capabilities": capabilities,
        "pid namespace": (
            f"off: {why_no_pid}"
            if why_no_pid
            else "candidates' own, with a /proc of their own (only their own processes are "
            "visible; read-only, or for a GPU request writable but for its system-wide parts), "
            "emptied after each candidate"
        ),
        "ipc namespace": (
            f"off: {why_no_ipc}"
            if why_no_ipc
            else "one per candidate (System V IPC and POSIX queues die with it)"
        ),
        "unix sockets": (
            "allowed (the problem asked)"
            if unix_sockets
            else "refused (seccomp: socket(AF_UNIX) fails; stream socketpairs work)"
            if seccomp
            else f"reachable: {why_no_seccomp}"
        ),
        "system calls": SYSCALLS_NOTE if seccomp else f"unfiltered: {why_no_seccomp}",
        "memory": (
            cgroup.note
            if cgroup.version
            else f"per process only (RLIMIT_AS); whole tree {cgroup.note}"
        ),
    }
