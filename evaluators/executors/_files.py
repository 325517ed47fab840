"""A problem's files, shipped to the cluster nodes that evaluate it.

Evaluators load a problem from its spec file (the fork server imports it to score candidates),
so a node needs the problem's folder: the head reads it once (:func:`problem_files`), Ray
stores it in its object store, and each evaluation actor writes it to a fresh temporary folder
on its node (:func:`materialize`) and evaluates the problem from there. The problem folder is
all that travels; evoforge itself (and any evaluator plugin) must be installed on every node.

A folder problem (``<folder>/problem.py``) ships its folder, without caches, version-control
folders and hidden files; a one-file problem ships just its file. A folder above
:data:`MAX_BYTES` is refused rather than copied to every node.
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from evoforge.problems import Problem

MAX_BYTES = 64 * 2**20
_SKIPPED_DIRS = {"__pycache__", ".git", ".hg", ".svn", ".venv", "node_modules"}


class ProblemFilesError(ValueError):
    """The problem's files cannot be shipped to the cluster (too large, unreadable)."""


@dataclasses.dataclass(frozen=True)
class ProblemFiles:
    """The files of a problem, by path relative to its root, and where its spec is."""

    root_name: str
    spec: str  # relative to the root, POSIX separators
    files: dict[str, bytes]

    @property
    def size(self) -> int:
        return sum(len(data) for data in self.files.values())


def problem_files(problem: Problem) -> ProblemFiles:
    """Read what a node needs to evaluate ``problem``.

    Raises:
        ProblemFilesError: the folder holds more than :data:`MAX_BYTES`, or a file cannot be
            read.
    """
    spec = Path(problem.spec_path).resolve()
    if spec.name != "problem.py":  # a one-file problem: its folder may be anything
        return ProblemFiles(spec.parent.name or "problem", spec.name, {spec.name: _read(spec)})
    root = spec.parent
    files: dict[str, bytes] = {}
    total = 0
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in _SKIPPED_DIRS and not d.startswith("."))
        for name in sorted(names):
            if name.startswith(".") or name.endswith((".pyc", ".pyo")):
                continue
            path = Path(folder, name)
            if not path.is_file():
                continue
            data = _read(path)
            total += len(data)
            if total > MAX_BYTES:
                raise ProblemFilesError(
                    f"the problem folder {root} holds more than {MAX_BYTES // 2**20} MiB; "
                    "the Ray executor copies it to every node: move large data out of it "
                    "(read it from a path every node has, or download it in evaluate())"
                )
            files[path.relative_to(root).as_posix()] = data
    return ProblemFiles(root.name, "problem.py", files)


def materialize(shipped: ProblemFiles, problem: Problem, parent: str | None = None) -> Problem:
    """Write ``shipped`` under a new temporary folder; ``problem`` as evaluated from there."""
    base = Path(tempfile.mkdtemp(prefix="evoforge-ray-problem-", dir=parent))
    root = base / shipped.root_name
    for relative, data in shipped.files.items():
        target = root.joinpath(*PurePosixPath(relative).parts)
        if root not in target.resolve().parents and target.resolve() != root:
            raise ProblemFilesError(f"a shipped file escapes its folder: {relative!r}")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    spec = root.joinpath(*PurePosixPath(shipped.spec).parts)
    return dataclasses.replace(problem, spec_path=spec)


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise ProblemFilesError(f"cannot read {path} to ship it to the cluster: {exc}") from None
