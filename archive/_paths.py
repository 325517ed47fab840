"""Where the archive file is when none is named (light, so that the ``evoforge`` command's
``--db`` option does not import the archive itself), and how a new one is created."""

from __future__ import annotations

import os
from pathlib import Path

from evoforge.archive._errors import ArchiveError

DEFAULT_DB = "evoforge.db"
"""The archive file when none is named (the CLI's ``--db``, the API's ``db``)."""

DB_ENV = "EVOFORGE_DB"
"""Environment variable naming the archive file when none is named explicitly."""


def default_db() -> Path:
    """``$EVOFORGE_DB``, else ``evoforge.db`` in the working directory."""
    return Path(os.environ.get(DB_ENV) or DEFAULT_DB)


def create_private(path: Path) -> None:
    """Create a new archive file 0600 (whatever the umask) before SQLite opens it.

    An archive holds a run's programs, scores and prompts (a held-out stage's results
    included); other users of the machine, and candidates running as another uid, must not
    read it. SQLite gives the ``-wal`` and ``-shm`` files the database file's permissions, so
    they are 0600 too. An existing file keeps the permissions its owner gave it.
    """
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except FileExistsError:
        pass
    except OSError as exc:
        raise ArchiveError(f"cannot create archive {path}: {exc.strerror}") from exc
