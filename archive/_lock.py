"""One writer per run: a lock that the operating system releases when its holder dies.

A controller holds an exclusive ``flock`` on a small file next to the archive,
``.<archive name>.<run id>.lock``, for as long as it runs the run. A second controller on the
same run (another ``evoforge resume``, a second thread of a host program) fails at once with
:class:`~evoforge.archive.RunLockedError`, which says who holds the run, before it writes
anything. Readers (``evoforge status``, ``top``, a dashboard, :func:`evoforge.open_archive`)
never take it: SQLite's WAL lets them read while the writer writes.

``kill -9`` needs no clean-up: the kernel drops a dead process's locks, so the next ``resume``
takes the lock at once (the file itself may stay; it is reused). A clean release removes the
file. The lock is per open file, so two controllers in one process exclude each other too.

Why not a row in the archive: a row cannot tell a live writer from one killed a second ago
(pids are reused, hosts differ), so it would need timeouts and guesses; the kernel knows.
An in-memory archive (``:memory:``) cannot be shared, so it needs no lock.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import re
import socket
import sys
import time
from pathlib import Path
from typing import Any

from evoforge.archive._errors import ArchiveError, RunLockedError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no flock
    fcntl = None  # type: ignore[assignment]

_SAFE_ID = re.compile(r"[A-Za-z0-9_.-]{1,100}")


def lock_path(db: Path, run_id: str) -> Path:
    """Where the lock of run ``run_id`` of the archive ``db`` lives."""
    name = run_id if _SAFE_ID.fullmatch(run_id) else hashlib.sha256(run_id.encode()).hexdigest()
    return db.with_name(f".{db.name}.{name}.lock")


class RunLock:
    """The exclusive write lock of one run (see the module docstring).

    Example::

        with RunLock(Path("evoforge.db"), run_id):
            ...  # only this controller writes the run here
    """

    def __init__(self, db: Path, run_id: str) -> None:
        self.db, self.run_id = Path(db), run_id
        self.path = lock_path(self.db, run_id)
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self) -> RunLock:
        """Take the lock, or fail at once.

        Raises:
            RunLockedError: another controller holds it; the message names it.
            ArchiveError: the lock file cannot be created next to the archive.
        """
        if self._fd is not None:
            raise RuntimeError(f"the lock of run {self.run_id!r} is already held by this object")
        if fcntl is None or str(self.db) in ("", ":memory:"):
            self._fd = -1  # nothing to share: nothing to lock
            return self
        while True:
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
            except OSError as exc:
                raise ArchiveError(
                    f"cannot create the lock file {self.path} of run {self.run_id!r} "
                    f"({exc.strerror}); the archive's folder must be writable"
                ) from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                holder = _read_holder(fd)
                os.close(fd)
                if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                    message = _locked_message(self.run_id, self.db, holder)
                    raise RunLockedError(message, holder) from None
                raise ArchiveError(f"cannot lock {self.path}: {exc.strerror}") from None
            # A releasing holder unlinks the file while it still holds it: if that happened
            # between our open and our flock, we locked a file nobody else will find. Retry.
            try:
                same = os.stat(self.path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)
        _write_holder(fd)
        self._fd = fd
        return self

    def release(self) -> None:
        """Give the lock back and remove its file; does nothing when not held."""
        fd, self._fd = self._fd, None
        if fd is None or fd < 0:
            return
        with contextlib.suppress(OSError):
            os.unlink(self.path)  # while still holding it: see acquire()
        os.close(fd)

    def __enter__(self) -> RunLock:
        return self.acquire()

    def __exit__(self, *exc_info: object) -> None:
        self.release()


def _write_holder(fd: int) -> None:
    info = {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "since": time.strftime("%Y-%m-%d %H:%M:%S", time.localtime()),
        "command": " ".join(sys.argv)[:300],
    }
    data = json.dumps(info).encode()
    with contextlib.suppress(OSError):
        os.ftruncate(fd, 0)
        os.pwrite(fd, data, 0)


def _read_holder(fd: int) -> dict[str, Any]:
    try:
        data = os.pread(fd, 4096, 0)
        holder = json.loads(data.decode()) if data else {}
    except (OSError, ValueError):
        return {}
    return holder if isinstance(holder, dict) else {}


def _locked_message(run_id: str, db: Path, holder: dict[str, Any]) -> str:
    who = "another controller"
    if holder.get("pid"):
        who = f"another controller (pid {holder['pid']} on {holder.get('host', '?')}"
        who += f", since {holder['since']}" if holder.get("since") else ""
        who += ")"
    return (
        f"run {run_id!r} in {db} is being run by {who}; only one controller may write a run. "
        "Stop that one first (Ctrl-C in its terminal, or `kill` its pid) or wait until it "
        "ends; `evoforge status` and the other read-only commands work meanwhile"
    )
