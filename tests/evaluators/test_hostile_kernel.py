"""Hostile candidates, third round: the kernel's surfaces that a seccomp filter closes (keyrings,
namespaces, socket families, bpf, perf, io_uring, ptrace, ...) (harness: ``hostile.py``).

Each attack is what a candidate would try to reach the host or to pass data to a later
candidate; each must fail, and a legitimate program's needs (threads, subprocesses, sockets of
the empty network namespace, stream socketpairs) must keep working.
"""

from __future__ import annotations

import errno
import platform

import pytest

from evoforge.evaluators import Status

ATTACKS = """
import ctypes, errno, os, socket, subprocess, threading
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
NR = {NUMBERS!r}

def call(name, *args):
    if libc.syscall(NR[name], *args) == -1:
        return ctypes.get_errno()
    return "done"

def attempt(f):
    try:
        f()
        return "done"
    except OSError as exc:
        return exc.errno

def forked():
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    return os.waitpid(pid, 0)[1]

def main():
    user_keyring = ctypes.c_long(-4)  # KEY_SPEC_USER_KEYRING: shared by every process of the uid
    out = {
        "add_key": call("add_key", b"user", b"evoforge-stash", b"held-out", 8, user_keyring),
        "request_key": call("request_key", b"user", b"evoforge-stash", None, 0),
        "keyctl": call("keyctl", 0, user_keyring, 0),  # KEYCTL_GET_KEYRING_ID
        "unshare-user": call("unshare", 0x10000000),
        "unshare-net": call("unshare", 0x40000000),
        "setns": call("setns", 0, 0),
        "clone-newuser": call("clone", 0x10000000 | 17, 0, 0, 0, 0),
        "clone3": call("clone3", 0, 0),
        "bpf": call("bpf", 0, 0, 0),
        "perf_event_open": call("perf_event_open", 0, 0, -1, -1, 0),
        "userfaultfd": call("userfaultfd", 0),
        "io_uring_setup": call("io_uring_setup", 1, 0),
        "open_by_handle_at": call("open_by_handle_at", -100, 0, 0),
        "kexec_load": call("kexec_load", 0, 0, 0, 0),
        "init_module": call("init_module", 0, 0, b""),
        "personality": call("personality", 0x0040000),  # READ_IMPLIES_EXEC
        "ptrace": call("ptrace", 16, 1, 0, 0),  # PTRACE_ATTACH to the namespace's first
        "vsock": attempt(lambda: socket.socket(40, socket.SOCK_STREAM)),
        "netlink": attempt(lambda: socket.socket(16, socket.SOCK_RAW, 0)),
        "packet": attempt(lambda: socket.socket(17, socket.SOCK_RAW, 0)),
        "unix": attempt(lambda: socket.socket(socket.AF_UNIX)),
    }
    # What a legitimate program needs keeps working.
    socket.socket(socket.AF_INET).close()
    a, b = socket.socketpair()
    a.sendall(b"x")
    thread = threading.Thread(target=lambda: None)
    thread.start()
    thread.join()
    out["fine"] = [b.recv(1).decode(), subprocess.run(["true"]).returncode, forked()]
    return out
"""

NUMBERS = {
    "x86_64": {
        "add_key": 248, "request_key": 249, "keyctl": 250, "unshare": 272, "setns": 308,
        "clone": 56, "clone3": 435, "bpf": 321, "perf_event_open": 298, "userfaultfd": 323,
        "io_uring_setup": 425, "open_by_handle_at": 304, "kexec_load": 246, "init_module": 175,
        "personality": 135, "ptrace": 101,
    },
    "aarch64": {
        "add_key": 217, "request_key": 218, "keyctl": 219, "unshare": 97, "setns": 268,
        "clone": 220, "clone3": 435, "bpf": 280, "perf_event_open": 241, "userfaultfd": 282,
        "io_uring_setup": 425, "open_by_handle_at": 265, "kexec_load": 104, "init_module": 105,
        "personality": 92, "ptrace": 117,
    },
}  # fmt: skip


def _attacks() -> str:
    machine = platform.machine()
    if machine not in NUMBERS:
        pytest.skip(f"no system call numbers for {machine}")
    return ATTACKS.replace("{NUMBERS!r}", repr(NUMBERS[machine]))


@pytest.mark.parametrize("who", ["root", "nobody"])
def test_kernel_surfaces_are_closed(roomy, unprivileged, outside, who):
    hostile = roomy if who == "root" else unprivileged
    info = hostile.evaluator.sandbox_info
    if info.get("system calls", "").startswith("unfiltered"):
        pytest.skip(f"no seccomp here: {info['system calls']}")
    with outside:
        result = hostile.run(_attacks())
    assert result.status is Status.OK, result.artifacts
    echo = dict(result.metrics["echo"])
    assert echo.pop("fine") == ["x", 0, 0]
    refused = {errno.EPERM, errno.EACCES, errno.ENOSYS}
    assert {name: code for name, code in echo.items() if code not in refused} == {}
    assert echo["clone3"] == errno.ENOSYS  # so that libc falls back to clone
    assert echo["vsock"] == echo["netlink"] == echo["unix"] == errno.EACCES


def test_nothing_passes_between_candidates_through_the_keyring(roomy, outside):
    """A held-out stage's inputs stashed in the uid's keyring by one candidate must not be
    readable by the next (nor by the host's processes of that uid)."""
    info = roomy.evaluator.sandbox_info
    if info.get("system calls", "").startswith("unfiltered"):
        pytest.skip(f"no seccomp here: {info['system calls']}")
    stash = _attacks().replace("return out", "return {'stash': out['add_key']}", 1)
    find = _attacks().replace("return out", "return {'find': out['request_key']}", 1)
    with outside:
        stashed = roomy.run(stash)
        found = roomy.run(find)
    assert stashed.metrics["echo"]["stash"] == errno.EPERM, stashed.artifacts
    assert found.metrics["echo"]["find"] == errno.EPERM, found.artifacts


def test_a_problem_that_asks_for_unix_sockets_keeps_the_rest_of_the_filter():
    import ctypes
    import os
    import socket

    from evoforge.evaluators.sandbox._seccomp import filter_program, install

    prog, why = filter_program(unix_sockets=True)
    if prog is None:
        pytest.skip(why)
    if platform.machine() not in NUMBERS:
        pytest.skip(f"no system call numbers for {platform.machine()}")
    libc = ctypes.CDLL(None, use_errno=True)
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        code = 1
        try:
            libc.prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS
            install(prog)
            socket.socket(socket.AF_UNIX).close()
            socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
            failed = libc.syscall(NUMBERS[platform.machine()]["keyctl"], 0, -4, 0) == -1
            code = 0 if failed and ctypes.get_errno() == errno.EPERM else 2
        finally:
            os._exit(code)
    assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0
