"""What runs inside the forked candidate before its job: session, pipes, mounts, user, rlimits."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import resource
import signal
import sys
import tempfile
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NoReturn

from evoforge.evaluators.sandbox._caps import drop_capabilities
from evoforge.evaluators.sandbox._host import PR_SET_PDEATHSIG, enter_network_namespace, prctl
from evoforge.evaluators.sandbox._mount_plan import FilesystemPlan
from evoforge.evaluators.sandbox._mounts import apply_filesystem
from evoforge.evaluators.sandbox._protocol import write_all
from evoforge.evaluators.sandbox._seccomp import install as install_seccomp

if TYPE_CHECKING:
    from evoforge.evaluators.sandbox._types import Isolation, Job, Limits

RESULT_FD = 3
"""The descriptor the child writes its result to (0-2 are stdin/stdout/stderr)."""
CHANNEL_FD = 4
"""Where the child finds the connected socket a server handed it (``Sandbox(channel=...)``):
its one way to talk to the server while it runs, since it may not create UNIX sockets."""

_MAXFD = 1 << 20


def run_child(
    job: Job,
    isolation: Isolation,
    containment: Containment,
    env: dict[str, str],
    server_pid: int,
    use_pidfd: bool,
    go_r: int,
    result_w: int,
    out_w: int,
    err_w: int,
    channel: int = -1,
) -> NoReturn:
    """Set up containment, wait for the request, run the job, write the result, ``_exit``.

    Everything that does not depend on the request (session, descriptors, mount namespace,
    network, user, capabilities) happens before it arrives, off the latency path when the
    child was forked ahead. A containment step that fails is reported as the run's result and
    the job is not run: never a candidate with less isolation than the server announced.

    Never returns: nothing of the server (its loop, atexit handlers, finally blocks) may run
    in the child. Kept lean: each Python object touched here costs a copy-on-write fault.
    """
    header: dict[str, Any] = {"status": "runtime_error", "error": "sandbox set-up failed"}
    payload = b""
    in_job = False  # an exception out of the job is the job's, not the set-up's
    try:
        os.setsid()
        if channel >= 0:  # out of the way of the dup2s below, which may land on its number
            channel = fcntl.fcntl(channel, fcntl.F_DUPFD, CHANNEL_FD + 16)
        # 0-2 are open in the server, so the pipes are >= 3: fill 0-2 first, then 3. The
        # request arrives on stdin, which becomes /dev/null once it is read.
        os.dup2(go_r, 0)
        os.dup2(out_w, 1)
        os.dup2(err_w, 2)
        os.dup2(result_w, RESULT_FD)
        if channel >= 0:
            os.dup2(channel, CHANNEL_FD)
        os.closerange((CHANNEL_FD if channel >= 0 else RESULT_FD) + 1, _MAXFD)
        if not use_pidfd:
            signal.set_wakeup_fd(-1)
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        failed = _contain(isolation, containment)
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # after the user switch, which clears it
        if os.getppid() not in (server_pid, 0):  # 0: the parent is outside our PID namespace
            os._exit(70)  # the server died before PDEATHSIG was armed (else stdin says so)
        chunks = []
        while chunk := os.read(0, 65536):
            chunks.append(chunk)
        if not chunks:
            os._exit(0)  # dismissed unused
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        if failed:
            header = {"status": "runtime_error", "error": f"sandbox set-up failed: {failed}"}
        else:
            rlimits, _, request = b"".join(chunks).partition(b"\n")
            for which, soft, hard in json.loads(rlimits):
                resource.setrlimit(which, (soft, hard))
            if env:
                os.environ.update(env)
                tempfile.tempdir = env.get("TMPDIR", tempfile.tempdir)
            in_job = True
            header, payload = job(request)
            if containment.filesystem.disk_mb and header.get("status") != "ok":
                header = _disk_limit(header, containment)
    except MemoryError:
        header = {"status": "memory_limit", "error": "ran out of memory (address-space limit)"}
    except BaseException as exc:  # the set-up failing, or a job that let an error out
        where = "the job raised" if in_job else "sandbox set-up failed"
        header = {"status": "runtime_error", "error": f"{where}: {exc!r}"}
    finally:
        try:
            for stream in (sys.stdout, sys.stderr):
                with contextlib.suppress(BaseException):
                    stream.flush()
            write_all(RESULT_FD, json.dumps(header).encode() + b"\n" + payload)
        except BaseException:
            pass
        os._exit(0)


@dataclass(frozen=True)
class Containment:
    """What a child does before its request, computed once by the server (see ``Sandbox``)."""

    workdir: str
    filesystem: FilesystemPlan
    seccomp: Any = None  # the filter program (evoforge.evaluators.sandbox._seccomp), or None


def out_of_disk(workdir: str, output: str) -> bool:
    """Whether a run failed for want of disk: the file system of ``workdir`` (the quota's
    ``tmpfs``) is full, or ``output`` names ``ENOSPC`` (a write larger than what is left, or an
    ``fallocate`` beyond the quota, fails without filling it)."""
    try:
        full = os.statvfs(workdir).f_bavail == 0
    except OSError:
        full = False
    return full or "[Errno 28]" in output or "No space left on device" in output


def _disk_limit(header: dict[str, Any], containment: Containment) -> dict[str, Any]:
    """``header`` as ``disk_limit`` when the job failed on a full disk quota.

    That is: the workdir's ``tmpfs`` is full, or the error names ``ENOSPC`` (a write larger
    than what is left, or an ``fallocate`` beyond the quota, fails without filling it).
    """
    error = str(header.get("error", ""))
    if not out_of_disk(containment.workdir, error):
        return header
    quota = containment.filesystem.disk_mb
    return {
        **header,
        "status": "disk_limit",
        "error": f"wrote more than its disk quota of {quota} MiB (the workdir, also HOME and "
        f"TMPDIR, together): {error}",
    }


def _contain(isolation: Isolation, containment: Containment) -> str:
    """Mount namespace, workdir, network, user, capabilities; "" or what failed."""
    try:
        apply_filesystem(containment.filesystem)
        os.chdir(containment.workdir)  # after the mounts: the cwd must be the writable bind
        if isolation.new_network and not enter_network_namespace():
            raise OSError("unshare(CLONE_NEWNET) was refused")
        if isolation.user is not None:
            _drop_privileges(*isolation.user)
        drop_capabilities()  # the steps above need them
        if containment.seccomp is not None:
            install_seccomp(containment.seccomp)  # last: it needs no_new_privs, set just above
    except OSError as exc:
        return str(exc)
    return ""


def rlimits(
    limits: Limits, isolation: Isolation, per_tree: bool = False
) -> list[tuple[int, int, int]]:
    """The child's rlimits, computed in the server (the child only calls ``setrlimit``).

    ``per_tree``: the candidate's cgroup holds its process count (``pids.max``); then
    ``RLIMIT_NPROC`` is left out, since it counts every process of the candidates' uid, so
    that the candidates of other evaluation slots and other runs would share one limit.
    """
    mib = 2**20
    wanted = [
        (resource.RLIMIT_CPU, limits.cpu_s, limits.cpu_s + 1),
        (resource.RLIMIT_FSIZE, limits.file_size_mb * mib, None),
        (resource.RLIMIT_CORE, 0, None),
        (resource.RLIMIT_NOFILE, limits.max_files, None),
    ]
    if limits.memory_mb is not None:
        wanted.append((resource.RLIMIT_AS, limits.memory_mb * mib, None))
    if isolation.user is not None and not per_tree and hasattr(resource, "RLIMIT_NPROC"):
        wanted.append((resource.RLIMIT_NPROC, limits.max_procs, None))  # counts all of the uid
    result = []
    for which, soft, hard in wanted:
        hard = soft if hard is None else hard
        _, current = resource.getrlimit(which)  # only root could raise the hard limit
        if current != resource.RLIM_INFINITY:
            soft, hard = min(soft, current), min(hard, current)
        result.append((which, soft, hard))
    return result


def _drop_privileges(uid: int, gid: int) -> None:
    os.setgroups([])
    if hasattr(os, "setresgid"):
        os.setresgid(gid, gid, gid)
        os.setresuid(uid, uid, uid)
    else:
        os.setgid(gid)
        os.setuid(uid)
