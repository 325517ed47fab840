"""One writer per run: the lock refuses a second holder at once and outlives no holder."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from evoforge.archive import RunLock, RunLockedError, lock_path
from tests.conftest import ROOT

HOLDER = """
import sys, time
from pathlib import Path
from evoforge.archive import RunLock
lock = RunLock(Path(sys.argv[1]), sys.argv[2]).acquire()
print("held", flush=True)
time.sleep(120)
"""


def test_a_second_holder_is_refused_with_who_holds_it(tmp_path: Path) -> None:
    db = tmp_path / "evoforge.db"
    with RunLock(db, "run-1") as first:
        assert first.held and lock_path(db, "run-1").exists()
        with pytest.raises(RunLockedError, match=r"run 'run-1' .* is being run by another") as e:
            RunLock(db, "run-1").acquire()
        assert e.value.holder["pid"] == os.getpid()
        assert f"pid {os.getpid()}" in str(e.value)
        with RunLock(db, "run-2"):  # another run of the same archive: its own lock
            pass
    assert not lock_path(db, "run-1").exists()  # a clean release leaves no file
    with RunLock(db, "run-1"):
        pass


def test_a_killed_holder_leaves_the_lock_free_at_once(tmp_path: Path) -> None:
    db = tmp_path / "evoforge.db"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(db), "run-9"],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(RunLockedError, match=f"pid {holder.pid}"):
            RunLock(db, "run-9").acquire()
        holder.send_signal(signal.SIGKILL)
        holder.wait()
        assert lock_path(db, "run-9").exists()  # kill -9: the file stays, the lock does not
        started = time.monotonic()
        with RunLock(db, "run-9") as lock:
            assert lock.held
        assert time.monotonic() - started < 1.0
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()


def test_run_ids_that_are_not_file_names_get_a_hashed_lock(tmp_path: Path) -> None:
    db = tmp_path / "evoforge.db"
    odd = "../../etc/passwd run"
    path = lock_path(db, odd)
    assert path.parent == tmp_path and "/" not in path.name[1:] and ".." not in path.name[1:-5]
    with RunLock(db, odd):
        with pytest.raises(RunLockedError):
            RunLock(db, odd).acquire()


def test_an_unwritable_folder_is_a_clear_error(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root writes into read-only folders")
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        with pytest.raises(Exception, match="cannot create the lock file"):
            RunLock(folder / "evoforge.db", "r").acquire()
    finally:
        folder.chmod(0o700)
