"""A seccomp filter for candidates, at least as strict as Docker's default profile (Linux).

Hand-written classic BPF (no libseccomp: the engine must not need a C library to contain its
candidates), assembled once in the server (:func:`filter_program`) from the rule tables below;
a child installs it with one ``prctl`` after its capabilities are gone (it needs
``PR_SET_NO_NEW_PRIVS``, which that sets). System calls of another architecture (32-bit ones on
x86-64, x32) are refused as a whole, so none of the rules can be side-stepped through them.

Docker's default profile is an allow-list; this filter is a deny-list of what that allow-list
leaves out (for a container without added capabilities), plus what Docker allows and a
candidate does not need. Compared call by call (``moby/profiles/seccomp/default.json``):

- the same as Docker (``EPERM``): keyrings (``add_key``, ``request_key``, ``keyctl``: the user
  keyring outlives the candidate and is shared by every process of the uid, a channel between
  candidates and runs), ``bpf``, ``perf_event_open``, ``userfaultfd``, ``kexec_*``,
  ``open_by_handle_at``/``name_to_handle_at``, module loading, ``mount``/``umount2``/
  ``pivot_root`` and the new mount API, ``unshare``/``setns`` and ``clone`` with a namespace
  flag, ``clone3`` (``ENOSYS``, so libc falls back to ``clone``, whose flags a filter can read),
  ``personality`` other than Docker's five values, clocks (``settimeofday``, ``clock_settime``,
  ``clock_adjtime``), ``reboot``, swap, quotas, ``acct``, ``iopl``/``ioperm``, ``syslog``,
  ``vhangup``, ``lookup_dcookie``, ``fanotify_init``, NUMA policy (``mbind``,
  ``set_mempolicy``, ``get_mempolicy``, ``move_pages``, ``migrate_pages``), host names, and the
  obsolete calls (``uselib``, ``ustat``, ``sysfs``, ``_sysctl``, ``nfsservctl``, ...);
- stricter than Docker: ``io_uring_*`` (``ENOSYS``; Docker 25 also dropped it), because its
  operations open and connect sockets without system calls a filter sees; ``ptrace``,
  ``process_vm_readv``/``writev``, ``kcmp``, ``pidfd_getfd``, ``process_madvise`` (Docker allows
  them on kernels >= 4.8: no candidate debugs another process); ``chroot`` (Docker grants
  ``CAP_SYS_CHROOT``); ``modify_ldt`` and ``memfd_secret``; and socket families: only
  ``AF_INET``/``AF_INET6`` (in an empty network namespace, where the host lets the server make
  one) are allowed, where Docker refuses only ``AF_VSOCK``. ``AF_UNIX`` (``EACCES``): a
  network namespace does not take away the filesystem's sockets, and ``connect()`` to a socket
  file needs only write permission on it, not a writable mount, so a candidate could talk to
  any host service listening on a socket file it can see. ``AF_NETLINK``, ``AF_VSOCK`` (the
  hypervisor's channel), ``AF_PACKET`` and the rest: ``EACCES`` too (glibc's ``getaddrinfo``
  and ``getifaddrs`` cope without netlink). ``socketpair(AF_UNIX, SOCK_STREAM)`` and
  ``SOCK_SEQPACKET`` still work (asyncio's self-pipe and ``multiprocessing`` pipes use the
  first; Rust's ``std::process`` the second, to pass a child's pidfd, so ``rustc`` cannot run
  its linker without it): such a pair is connected from birth and cannot be re-connected or
  ``sendto`` another address; datagram pairs are refused (a datagram socket can ``sendto`` a
  path);
- looser than Docker: nothing of what Docker refuses is allowed; calls neither lists (new ones)
  are allowed, where Docker's allow-list refuses what it does not know.

What stops working in candidates: ``multiprocessing`` managers and ``forkserver`` (they listen
on a UNIX socket), ``logging.handlers.SysLogHandler``, debuggers and profilers that attach to a
process, CUDA IPC between processes (``pidfd_getfd``). A problem that needs UNIX sockets says
``sandbox_unix_sockets`` (``Isolation.unix_sockets``): then only ``AF_UNIX`` is let through; the
rest of the filter stays. A GPU request gets ``AF_UNIX`` and the NUMA policy calls (``mbind``,
``get_mempolicy``, ``set_mempolicy``) too: the NVIDIA driver fails without them
(:mod:`~evoforge.evaluators.sandbox._gpu`).
"""

from __future__ import annotations

import ctypes
import errno
import functools
import os
import platform
from typing import Any

from evoforge.evaluators.sandbox._host import load_libc

PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
_RET_ALLOW, _RET_ERRNO = 0x7FFF0000, 0x00050000
_LD_W_ABS, _JEQ_K, _JGE_K, _JSET_K, _AND_K, _RET_K = 0x20, 0x15, 0x35, 0x45, 0x54, 0x06
_AF_UNIX, _AF_INET, _AF_INET6, _SOCK_STREAM, _SOCK_TYPE_MASK = 1, 2, 10, 1, 0xF
_SOCK_SEQPACKET = 5
_X32_BIT = 0x40000000
# clone(2) flags that make a namespace: NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID,
# NEWNET (Docker's mask; CLONE_NEWTIME, 0x80, is only for unshare and clone3, both refused).
_CLONE_NAMESPACES = 0x7E020000
# personality(2) values Docker allows: PER_LINUX, UNAME26, ADDR_NO_RANDOMIZE (and with
# UNAME26), and the query 0xffffffff.
_PERSONALITIES = (0x0, 0x8, 0x20000, 0x20008, 0xFFFFFFFF)
# seccomp_data offsets: nr, arch, args[0] and args[1] (low words, little-endian).
_NR, _ARCH, _ARG0, _ARG1 = 0, 4, 16, 24

# System call numbers by machine (asm/unistd_64.h; asm-generic/unistd.h for aarch64).
_X86_64 = {
    "socket": 41, "socketpair": 53, "clone": 56, "clone3": 435, "personality": 135,
    "acct": 163, "add_key": 248, "bpf": 321, "chroot": 161,
    "clock_adjtime": 305, "clock_settime": 227, "create_module": 174, "delete_module": 176,
    "fanotify_init": 300, "finit_module": 313, "fsconfig": 431, "fsmount": 432, "fsopen": 430,
    "fspick": 433, "get_kernel_syms": 177, "get_mempolicy": 239, "init_module": 175,
    "ioperm": 173, "iopl": 172, "kcmp": 312, "kexec_file_load": 320, "kexec_load": 246,
    "keyctl": 250, "lookup_dcookie": 212, "mbind": 237, "memfd_secret": 447,
    "migrate_pages": 256, "modify_ldt": 154, "mount": 165, "mount_setattr": 442,
    "move_mount": 429, "move_pages": 279, "name_to_handle_at": 303, "nfsservctl": 180,
    "open_by_handle_at": 304, "open_tree": 428, "perf_event_open": 298, "pidfd_getfd": 438,
    "pivot_root": 155, "process_madvise": 440, "process_vm_readv": 310,
    "process_vm_writev": 311, "ptrace": 101, "query_module": 178, "quotactl": 179,
    "quotactl_fd": 443, "reboot": 169, "request_key": 249, "set_mempolicy": 238,
    "set_mempolicy_home_node": 450, "setdomainname": 171, "sethostname": 170, "setns": 308,
    "settimeofday": 164, "swapoff": 168, "swapon": 167, "_sysctl": 156, "sysfs": 139,
    "syslog": 103, "umount2": 166, "unshare": 272, "uselib": 134, "userfaultfd": 323,
    "ustat": 136, "vhangup": 153, "afs_syscall": 183, "getpmsg": 181, "putpmsg": 182,
    "security": 185, "tuxcall": 184, "vserver": 236,
    "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
}  # fmt: skip
_AARCH64 = {
    "socket": 198, "socketpair": 199, "clone": 220, "clone3": 435, "personality": 92,
    "acct": 89, "add_key": 217, "bpf": 280, "chroot": 51, "clock_adjtime": 266,
    "clock_settime": 112, "delete_module": 106, "fanotify_init": 262, "finit_module": 273,
    "fsconfig": 431, "fsmount": 432, "fsopen": 430, "fspick": 433, "get_mempolicy": 236,
    "init_module": 105, "kcmp": 272, "kexec_file_load": 294, "kexec_load": 104, "keyctl": 219,
    "lookup_dcookie": 18, "mbind": 235, "memfd_secret": 447, "migrate_pages": 238,
    "mount": 40, "mount_setattr": 442, "move_mount": 429, "move_pages": 239,
    "name_to_handle_at": 264, "nfsservctl": 42, "open_by_handle_at": 265, "open_tree": 428,
    "perf_event_open": 241, "pidfd_getfd": 438, "pivot_root": 41, "process_madvise": 440,
    "process_vm_readv": 270, "process_vm_writev": 271, "ptrace": 117, "quotactl": 60,
    "quotactl_fd": 443, "reboot": 142, "request_key": 218, "set_mempolicy": 237,
    "set_mempolicy_home_node": 450, "setdomainname": 162, "sethostname": 161, "setns": 268,
    "settimeofday": 170, "swapoff": 225, "swapon": 224, "syslog": 116, "umount2": 39,
    "unshare": 97, "userfaultfd": 282, "vhangup": 58,
    "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
}  # fmt: skip
_ARCHES = {"x86_64": (0xC000003E, _X86_64), "aarch64": (0xC00000B7, _AARCH64)}

_CHECKED = ("socket", "socketpair", "clone", "personality")
"""Calls allowed or refused by their arguments (their own blocks in the program)."""
_NOT_THERE = ("clone3", "io_uring_setup", "io_uring_enter", "io_uring_register")
"""Refused with ``ENOSYS``: callers take it for an old kernel and fall back to plain calls."""
REFUSED = tuple(
    sorted(name for name in {**_X86_64, **_AARCH64} if name not in _CHECKED + _NOT_THERE)
)
"""Calls refused outright with ``EPERM`` (where the machine has them)."""


class _SockFilter(ctypes.Structure):
    _fields_ = [
        ("code", ctypes.c_uint16),
        ("jt", ctypes.c_uint8),
        ("jf", ctypes.c_uint8),
        ("k", ctypes.c_uint32),
    ]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_uint16), ("filter", ctypes.POINTER(_SockFilter))]


# An instruction with symbolic jumps: (code, k, jump if true, jump if false); a jump is a
# label or None (the next instruction). A str alone is a label for the instruction after it.
_Op = tuple[int, int, str | None, str | None]


def _ret(value: int) -> _Op:
    return (_RET_K, value, None, None)


def _load(offset: int) -> _Op:
    return (_LD_W_ABS, offset, None, None)


def _deny(code: int) -> _Op:
    return _ret(_RET_ERRNO | code)


def _assemble(source: list[_Op | str]) -> list[tuple[int, int, int, int]]:
    """Resolve labels into the relative jumps of classic BPF (each at most 255 ahead)."""
    where: dict[str, int] = {}
    ops: list[_Op] = []
    for item in source:
        if isinstance(item, str):
            where[item] = len(ops)
        else:
            ops.append(item)
    program = []
    for index, (code, k, true, false) in enumerate(ops):
        jumps = [0 if label is None else where[label] - index - 1 for label in (true, false)]
        if not all(0 <= jump <= 255 for jump in jumps):
            raise ValueError(f"a seccomp jump out of range at {index}: {jumps}")
        program.append((code, jumps[0], jumps[1], k))
    return program


_GPU_CALLS = ("mbind", "get_mempolicy", "set_mempolicy")
"""NUMA policy calls the NVIDIA driver makes (:mod:`~evoforge.evaluators.sandbox._gpu`):
allowed for GPU requests, with ``AF_UNIX``."""


def _source(machine: str, unix_sockets: bool, gpu: bool = False) -> list[_Op | str]:
    """The filter's instructions for ``machine`` (one of :data:`_ARCHES`), with labels."""
    arch, numbers = _ARCHES[machine]
    source: list[_Op | str] = [
        _load(_ARCH),
        (_JEQ_K, arch, None, "nosys"),  # another architecture's system calls
        _load(_NR),
    ]
    if machine == "x86_64":
        source.append((_JGE_K, _X32_BIT, "nosys", None))  # x32 calls
    for name in _CHECKED:
        source.append((_JEQ_K, numbers[name], name, None))
    for name in _NOT_THERE:
        source.append((_JEQ_K, numbers[name], "nosys", None))
    for name in REFUSED:
        if name in numbers and not (gpu and name in _GPU_CALLS):
            source.append((_JEQ_K, numbers[name], "eperm", None))
    families = (_AF_INET, _AF_INET6, _AF_UNIX) if unix_sockets else (_AF_INET, _AF_INET6)
    source += [
        _ret(_RET_ALLOW),  # every other call
        "socket",  # its domain, the low word of args[0]
        _load(_ARG0),
        *((_JEQ_K, family, "allow", None) for family in families),
        (_RET_K, _RET_ERRNO | errno.EACCES, None, None),
        "socketpair",  # only AF_UNIX pairs exist; its type without SOCK_NONBLOCK/CLOEXEC
        *(
            [_ret(_RET_ALLOW)]  # pairs of every type
            if unix_sockets
            else [
                _load(_ARG1),
                (_AND_K, _SOCK_TYPE_MASK, None, None),
                (_JEQ_K, _SOCK_STREAM, "allow", None),
                (_JEQ_K, _SOCK_SEQPACKET, "allow", "eacces"),
            ]
        ),
        "clone",  # its flags, the low word of args[0] (on x86-64 and aarch64 alike)
        _load(_ARG0),
        (_JSET_K, _CLONE_NAMESPACES, "eperm", "allow"),
        "personality",
        _load(_ARG0),
        *((_JEQ_K, value, "allow", None) for value in _PERSONALITIES),
        "eperm",  # the shared returns last: classic BPF jumps only forward
        _deny(errno.EPERM),
        "allow",
        _ret(_RET_ALLOW),
        "nosys",
        _deny(errno.ENOSYS),
        "eacces",
        _deny(errno.EACCES),
    ]
    return source


@functools.cache
def filter_program(unix_sockets: bool = False, gpu: bool = False) -> tuple[Any, str]:
    """``(prog, "")`` ready for ``prctl``, or ``(None, why not)`` on this machine.

    Args:
        unix_sockets: let ``AF_UNIX`` sockets (and pairs of every type) through; the rest of
            the filter stays.
        gpu: a GPU request: ``AF_UNIX`` and the NUMA policy calls the driver needs are let
            through (:mod:`~evoforge.evaluators.sandbox._gpu` says why that is safe).
    """
    if load_libc() is None:
        return None, "needs Linux seccomp"
    machine = platform.machine()
    if machine not in _ARCHES:
        return None, f"no filter for the {machine} architecture"
    program = _assemble(_source(machine, unix_sockets or gpu, gpu))
    filters = (_SockFilter * len(program))(*(_SockFilter(*op) for op in program))
    prog = _SockFprog(len(program), filters)
    prog._keep = filters
    return ctypes.pointer(prog), ""


def install(prog: Any) -> None:
    """Install the filter in this process (after ``PR_SET_NO_NEW_PRIVS``).

    Raises:
        OSError: ``prctl`` refused it.
    """
    libc = load_libc()
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, prog, 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"prctl(PR_SET_SECCOMP): {os.strerror(err)}")
