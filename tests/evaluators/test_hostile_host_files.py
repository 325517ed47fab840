"""Hostile candidates, third round: the host's data folders (harness: ``hostile.py``).

A candidate's root holds only the system, what it imports and its own ``/tmp``: home folders,
``/root``, ``/srv``, ``/mnt``, ``/media``, ``/opt``, ``/var``, the host's ``/tmp`` (other
runs' archives, the workdir's siblings) and the rest of the project checkout are not there. A
candidate that walks ``/`` for planted marker files and archives finds none, and still imports
what it needs.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import shutil
import tempfile
from pathlib import Path

import pytest

from evoforge.archive import Archive
from evoforge.evaluators import Status
from evoforge.evaluators.sandbox._mount_plan import COVERED
from tests.conftest import ROOT
from tests.evaluators.conftest import dedent, run_candidates
from tests.evaluators.hostile import ROOT_OPTIONS

SEARCH = """
import os
def main():
    import decimal, json  # the standard library, imported now, is still there
    found = []
    for top in TOPS:
        if os.path.islink(top):
            continue
        for folder, dirs, files in os.walk(top):
            found += [os.path.join(folder, n) for n in files + dirs if MARK in n]
            found += [os.path.join(folder, n) for n in files if n.endswith((".db", ".db-wal"))]
    readable = []
    for path in PLANTED:
        try:
            with open(path, "rb") as f:
                readable.append(f.read(20).decode(errors="replace"))
        except OSError as exc:
            readable.append(exc.errno)
    return {"found": found, "read": readable, "decimal": str(decimal.Decimal("1.5"))}
"""


@pytest.fixture
def planted(tmp_path_factory):
    mark = f"evoforge-marker-{secrets.token_hex(4)}"
    made: list[Path] = []
    paths = []
    for top in COVERED:
        if not os.path.isdir(top):
            continue
        folder = Path(top) / mark
        folder.mkdir()
        made.append(folder)
        (folder / "secret.txt").write_text(f"{mark} secret\n")
        Archive(folder / "other-run.db").close()
        paths += [str(folder / "secret.txt"), str(folder / "other-run.db")]
    # Beside what candidates import: in the project checkout, and an archive beside the fork
    # servers' workdirs (the host's /tmp, where other runs keep theirs).
    project = ROOT / f".{mark}"
    project.mkdir()
    made.append(project)
    (project / "secret.txt").write_text(f"{mark} secret\n")
    sibling = Path(tempfile.gettempdir()) / f"{mark}-sibling-run.db"
    Archive(sibling).close()
    made.append(sibling)
    paths += [str(project / "secret.txt"), str(sibling)]
    yield mark, paths
    for folder in made:
        with contextlib.suppress(OSError):
            folder.unlink()
        with contextlib.suppress(OSError):
            shutil.rmtree(folder)


@pytest.mark.parametrize("who", ["root", "nobody"])
def test_a_candidate_finds_nothing_of_the_hosts_data(roomy, unprivileged, outside, planted, who):
    hostile = roomy if who == "root" else unprivileged
    mark, paths = planted
    # The whole root but the system's own folders (long to walk, and bound from the host as
    # they are: no data of anyone's lives there).
    tops = [f"/{name}" for name in os.listdir("/") if name not in ("usr", "proc", "sys", "dev")]
    source = SEARCH.replace("TOPS", repr(tops)).replace("MARK", repr(mark))
    with outside:
        result = hostile.run(source.replace("PLANTED", repr(paths)))
    assert result.status is Status.OK, result.artifacts
    echo = result.metrics["echo"]
    assert echo["found"] == []
    assert all(isinstance(r, int) for r in echo["read"]), echo["read"]  # ENOENT each
    assert echo["decimal"] == "1.5"


def test_a_declared_data_file_is_visible_and_nothing_beside_it(probe, planted):
    mark, paths = planted
    data, sibling = paths[0], paths[1]  # secret.txt and other-run.db of the first folder
    folder = probe(options={**ROOT_OPTIONS, "sandbox_visible_paths": [data]})
    source = dedent(
        f"""
        def main():
            out = []
            for path in ({data!r}, {sibling!r}):
                try:
                    out.append(open(path, "rb").read(40).decode(errors="replace"))
                except OSError as exc:
                    out.append(exc.errno)
            return out
        """
    )
    (result,) = run_candidates(folder, source)
    assert result.status is Status.OK, result.artifacts
    assert result.metrics["echo"] == [f"{mark} secret\n", errno.ENOENT]
