"""A new archive and its WAL/SHM files are private to their owner (0600), whatever the umask:
they hold a run's programs, scores and prompts, held-out results included."""

from __future__ import annotations

import os
import stat

import pytest

from evoforge.archive import Archive


@pytest.mark.parametrize("umask", [0o022, 0o000])
def test_a_new_archive_and_its_wal_files_are_0600(tmp_path, umask):
    path = tmp_path / "new.db"
    old = os.umask(umask)
    try:
        with Archive(path) as archive:
            archive.conn.execute("CREATE TABLE t (x)")  # a write: the WAL and SHM exist now
            modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in tmp_path.iterdir()}
    finally:
        os.umask(old)
    assert {"new.db", "new.db-wal", "new.db-shm"} <= modes.keys()
    assert set(modes.values()) == {0o600}, modes


def test_an_existing_archive_keeps_the_mode_its_owner_gave_it(tmp_path):
    path = tmp_path / "shared.db"
    Archive(path).close()
    path.chmod(0o640)
    Archive(path).close()
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
