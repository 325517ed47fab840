"""A user's script, for the type checker only (never run or collected): with the README's
install, mypy must see evoforge's real types here, not ``Any``. ``assert_type`` fails on
``Any``, so a package that mypy cannot find, or one without ``py.typed``, fails this file.

Checked by tests/packaging/test_types.py.
"""

from __future__ import annotations

from typing import assert_type

import evoforge
import evoforge.archive


def best_of_a_short_run(db: str) -> float | None:
    result = evoforge.run("circle_packing", budget=50, seed=1, db=db)
    assert_type(result, evoforge.RunResult)
    with evoforge.archive.Archive(db, read_only=True) as archive:
        assert_type(archive, evoforge.archive.Archive)
        top = archive.top(result.run_id, k=3)
        assert_type(top, list[evoforge.archive.Program])
    best = result.best
    return None if best is None else best.score
