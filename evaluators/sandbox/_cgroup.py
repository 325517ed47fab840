"""Memory (and process-count) limits for a candidate's whole process tree, through cgroups.

``RLIMIT_AS`` limits each process alone: six forked children of 170 MiB each pass a 256 MiB
limit. A control group holds the candidate and every process it starts, so its memory limit
holds for the tree, and its peak usage is what the tree used together.

Found once per server (:func:`candidate_cgroup`), in this order:

- cgroup v1 (and the hybrid layout, where the memory controller sits on v1): one group per
  server below the server's own memory group, reused by its candidates one at a time (the peak
  is reset before each run, about 10 us); a ``pids`` group beside it where that controller is
  mounted;
- cgroup v2: a group per candidate below the server's own group (``mkdir``/``rmdir``, so the
  peak and the OOM count start from zero), where the memory controller is enabled for the
  server's group's children (delegated) or can be.

Moving the prepared child into the group (a write to ``cgroup.procs``, about 0.1 ms) happens
when it is forked, off the latency path. Where no group can be made, :attr:`CandidateCgroup.note`
(and so ``evoforge plugins`` and the run's start event) says so and why: then only
``RLIMIT_AS``, per process, holds.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass

_V1_ROOT = "/sys/fs/cgroup"
_V2_ROOT = "/sys/fs/cgroup"


@dataclass
class CandidateCgroup:
    """Where a server's candidates are accounted; see the module docstring.

    Attributes:
        version: 1 or 2, or 0 when there is none (``note`` says why).
        note: what is enforced, for the server's handshake.
    """

    version: int
    note: str
    path: str = ""  # v1: the memory group; v2: the parent of the per-candidate groups
    pids_path: str = ""  # v1: the pids group, if any
    counts_processes: bool = False
    """``max_procs`` is each candidate tree's own (``pids.max``), so ``RLIMIT_NPROC``, which
    counts every process of the candidates' shared uid, is not needed (:func:`rlimits`)."""
    _limit: int = -2  # bytes; -1: no limit; -2: not set yet
    _counter: int = 0
    _current: str = ""
    _oom_before: int = 0

    # --- per candidate -----------------------------------------------------------------------

    def admit(self, pid: int) -> str:
        """Put ``pid`` (a child just forked, waiting for its request) into the candidates'
        group; "" or what failed (the child must then not run)."""
        if not self.version:
            return ""
        try:
            if self.version == 1:
                _write(os.path.join(self.path, "cgroup.procs"), b"%d" % pid)
                if self.pids_path:
                    _write(os.path.join(self.pids_path, "cgroup.procs"), b"%d" % pid)
            else:
                self._counter += 1
                self._current = os.path.join(self.path, f"candidate-{self._counter}")
                os.mkdir(self._current)
                _write_if_exists(os.path.join(self._current, "memory.swap.max"), b"0")
                _write_if_exists(os.path.join(self._current, "memory.oom.group"), b"1")
                self._limit = -2  # a new group: its limits are not set yet
                _write(os.path.join(self._current, "cgroup.procs"), b"%d" % pid)
        except OSError as exc:
            return f"could not put the candidate in its cgroup: {exc}"
        return ""

    def arm(self, memory_mb: int | None, max_procs: int | None) -> str:
        """Just before the run: set the limits, start the peak and the OOM count afresh."""
        if not self.version:
            return ""
        try:
            self._set_limits(memory_mb, max_procs)
            if self.version == 1:
                _write(os.path.join(self.path, "memory.max_usage_in_bytes"), b"0")
                self._oom_before = _count(os.path.join(self.path, "memory.oom_control"), "oom_kill")
        except OSError as exc:
            return f"could not set the candidate's cgroup limits: {exc}"
        return ""

    def collect(self) -> tuple[float, bool]:
        """After the candidate's processes are gone: ``(their peak memory in MiB, 0.0 when
        unknown; whether the kernel killed one for exceeding the limit)``."""
        if not self.version:
            return 0.0, False
        try:
            if self.version == 1:
                peak = _number(os.path.join(self.path, "memory.max_usage_in_bytes"))
                oom = _count(os.path.join(self.path, "memory.oom_control"), "oom_kill")
                return peak / 2**20, oom > self._oom_before
            peak_file = os.path.join(self._current, "memory.peak")
            peak = _number(peak_file) if os.path.exists(peak_file) else 0
            killed = _count(os.path.join(self._current, "memory.events"), "oom_kill") > 0
            return peak / 2**20, killed
        except (OSError, ValueError):
            return 0.0, False
        finally:
            if self.version == 2 and self._current:
                with contextlib.suppress(OSError):
                    os.rmdir(self._current)
                self._current = ""

    def close(self) -> None:
        """Remove the groups (after the last candidate is gone)."""
        for path in (self._current, self.path if self.version == 1 else "", self.pids_path):
            if path:
                with contextlib.suppress(OSError):
                    os.rmdir(path)
        if self.version == 2:
            with contextlib.suppress(OSError):
                os.rmdir(self.path)

    def _set_limits(self, memory_mb: int | None, max_procs: int | None) -> None:
        limit = -1 if memory_mb is None else memory_mb * 2**20
        if limit == self._limit:
            return
        if self.version == 2:
            memory = b"max" if limit < 0 else b"%d" % limit
            _write(os.path.join(self._current, "memory.max"), memory)
            if max_procs is not None:
                _write_if_exists(os.path.join(self._current, "pids.max"), b"%d" % max_procs)
            self._limit = limit
            return
        value = b"-1" if limit < 0 else b"%d" % limit
        names = ["memory.limit_in_bytes", "memory.memsw.limit_in_bytes"]
        if self._limit != -2 and (limit < 0 or (self._limit >= 0 and limit > self._limit)):
            names.reverse()  # raising: memsw first (it may never be below the plain limit)
        for name in names:
            try:
                _write_if_exists(os.path.join(self.path, name), value)
            except OSError:  # the order was wrong after all (EINVAL): the other one first
                names.reverse()
                for again in names:
                    _write_if_exists(os.path.join(self.path, again), value)
                break
        if self.pids_path and max_procs is not None:
            _write(os.path.join(self.pids_path, "pids.max"), b"%d" % max_procs)
        self._limit = limit


def candidate_cgroup(tag: str) -> CandidateCgroup:
    """The cgroup this server's candidates run in, named ``evoforge-<tag>``; ``tag`` starts
    with the server's pid and a dash. Groups of servers that are gone (killed before they
    could remove theirs) are removed first."""
    if not os.path.isdir(_V1_ROOT):
        return CandidateCgroup(0, "off: no cgroup filesystem at /sys/fs/cgroup")
    remove_stale_cgroups()
    own = _own_groups()
    memory_v1 = _v1_mount("memory")
    if memory_v1 and "memory" in own:
        return _v1(memory_v1, own, tag)
    if "" in own:
        return _v2(own[""], tag)
    return CandidateCgroup(0, "off: this process is in no memory cgroup")


def _v1(mount: str, own: dict[str, str], tag: str) -> CandidateCgroup:
    path = os.path.join(mount, own["memory"].lstrip("/"), f"evoforge-{tag}")
    try:
        os.mkdir(path)
    except FileExistsError:
        pass
    except OSError as exc:
        return CandidateCgroup(0, f"off: cannot create the memory cgroup {path}: {exc.strerror}")
    pids_path = ""
    pids_mount = _v1_mount("pids")
    if pids_mount and "pids" in own:
        candidate = os.path.join(pids_mount, own["pids"].lstrip("/"), f"evoforge-{tag}")
        with contextlib.suppress(OSError):
            os.makedirs(candidate, exist_ok=True)
            pids_path = candidate
    swap = os.path.exists(os.path.join(path, "memory.memsw.limit_in_bytes"))
    note = (
        "cgroup v1: memory of the whole process tree limited to memory_mb"
        + (" (swap included)" if swap else "")
        + " and its peak reported"
        + ("; process count limited (pids)" if pids_path else "")
    )
    return CandidateCgroup(
        1, note, path=path, pids_path=pids_path, counts_processes=bool(pids_path)
    )


def _v2(own: str, tag: str) -> CandidateCgroup:
    parent = os.path.join(_V2_ROOT, own.lstrip("/"))
    if not os.path.exists(os.path.join(_V2_ROOT, "cgroup.controllers")):
        return CandidateCgroup(0, "off: no memory controller (cgroup v1 without it, or none)")
    try:
        with open(os.path.join(parent, "cgroup.subtree_control")) as f:
            enabled = f.read().split()
        if "memory" not in enabled:
            _write(os.path.join(parent, "cgroup.subtree_control"), b"+memory")
        with contextlib.suppress(OSError):
            if "pids" not in enabled:
                _write(os.path.join(parent, "cgroup.subtree_control"), b"+pids")
        path = os.path.join(parent, f"evoforge-{tag}")
        os.makedirs(path, exist_ok=True)
        with open(os.path.join(path, "cgroup.controllers")) as f:
            if "memory" not in f.read().split():
                raise OSError("the memory controller is not available below it")
        _write(os.path.join(path, "cgroup.subtree_control"), b"+memory")
        with contextlib.suppress(OSError):
            _write(os.path.join(path, "cgroup.subtree_control"), b"+pids")
        with open(os.path.join(path, "cgroup.subtree_control")) as f:
            pids = "pids" in f.read().split()
    except OSError as exc:
        why = exc.strerror or str(exc)
        if getattr(exc, "errno", 0) == 16:  # EBUSY: the no-internal-processes rule
            why = (
                "it holds processes, so cgroup v2 does not allow enabling the memory "
                "controller below it; start evoforge in a cgroup delegated to it (e.g. "
                "systemd-run --scope -p Delegate=yes) or in a container with its own cgroup"
            )
        return CandidateCgroup(0, f"off: cannot use the memory controller below {parent}: {why}")
    return CandidateCgroup(
        2,
        "cgroup v2: memory of the whole process tree limited to memory_mb (no swap) and its "
        "peak reported; killed whole on OOM" + ("; process count limited (pids)" if pids else ""),
        path=path,
        counts_processes=pids,
    )


def remove_stale_cgroups(pid: int | None = None) -> None:
    """Remove the (empty) candidate groups of server ``pid``, or of every server that is gone,
    beside this process's own groups. Best effort: a group still in use cannot be removed."""
    own = _own_groups()
    parents = [
        os.path.join(_v1_mount(c), own[c].lstrip("/"))
        for c in ("memory", "pids")
        if _v1_mount(c) and c in own
    ]
    if "" in own and os.path.exists(os.path.join(_V2_ROOT, "cgroup.controllers")):
        parents.append(os.path.join(_V2_ROOT, own[""].lstrip("/")))
    for parent in parents:
        try:
            names = [n for n in os.listdir(parent) if n.startswith("evoforge-")]
        except OSError:
            continue
        for name in names:
            owner = name.removeprefix("evoforge-").split("-", 1)[0]
            if not owner.isdigit() or (pid is not None and int(owner) != pid):
                continue
            if pid is None and os.path.exists(f"/proc/{owner}"):
                continue  # its server still runs
            group = os.path.join(parent, name)
            with contextlib.suppress(OSError):
                for child in os.listdir(group):  # v2: per-candidate groups below it
                    if child.startswith("candidate-"):
                        os.rmdir(os.path.join(group, child))
            with contextlib.suppress(OSError):
                os.rmdir(group)


def _own_groups() -> dict[str, str]:
    """``{controller: path}`` of this process (``""`` for the v2 hierarchy)."""
    groups = {}
    with contextlib.suppress(OSError), open("/proc/self/cgroup") as f:
        for line in f:
            _, controllers, path = line.rstrip("\n").split(":", 2)
            for name in controllers.split(",") if controllers else [""]:
                groups[name] = path
    return groups


def _v1_mount(controller: str) -> str:
    with contextlib.suppress(OSError), open("/proc/self/mountinfo") as f:
        for line in f:
            before, _, after = line.partition(" - ")
            fields = after.split()
            if fields and fields[0] == "cgroup" and controller in fields[-1].split(","):
                return before.split()[4]
    return ""


def _write(path: str, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def _write_if_exists(path: str, data: bytes) -> None:
    with contextlib.suppress(FileNotFoundError):
        _write(path, data)


def _number(path: str) -> int:
    with open(path, "rb") as f:
        return int(f.read().split()[0])


def _count(path: str, key: str) -> int:
    with open(path, "rb") as f:
        for line in f:
            name, _, value = line.partition(b" ")
            if name.decode() == key:
                return int(value)
    return 0
