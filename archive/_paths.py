"""Where the archive file is when none is named: light, so that the ``evoforge`` command's
``--db`` option does not import the archive itself."""

from __future__ import annotations

import os
from pathlib import Path

DEFAULT_DB = "evoforge.db"
"""The archive file when none is named (the CLI's ``--db``, the API's ``db``)."""

DB_ENV = "EVOFORGE_DB"
"""Environment variable naming the archive file when none is named explicitly."""


def default_db() -> Path:
    """``$EVOFORGE_DB``, else ``evoforge.db`` in the working directory."""
    return Path(os.environ.get(DB_ENV) or DEFAULT_DB)
