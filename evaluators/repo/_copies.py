"""Evaluation copies of a repository: prepared once per evaluation slot, reset per candidate.

A slot is a folder holding ``tree/`` (the copy candidates run in: their sandbox's only
writable place), ``pristine/`` (the same files as they were after ``setup``, readable only by
the engine's user), ``manifest.json`` (what ``tree/`` must hold) and ``stamp`` (touched just
before each candidate's files are written). The base repository is only ever read, once, when
the slot is prepared.

Resetting does not copy the repository again: it walks ``tree/`` once (``lstat`` per entry)
and restores only what changed since the stamp. A candidate cannot hide a change from that
walk: any write, ``chmod``, ``utime``, rename or replacement sets the entry's ``ctime`` to the
kernel's current time, which no unprivileged process can set back, so everything with a
``ctime`` at or after the stamp's is restored from ``pristine/`` (a few files restored in the
same clock tick as the stamp are restored again next time: the safe side). Entries that are
not in the manifest are removed, missing ones are put back, and an entry whose kind changed (a
folder replaced by a symbolic link) is removed without following it. For a repository of
1,000 files this costs a few milliseconds (``bench/repo_eval.py``), where copying it again
would cost a hundred; unlike ``git checkout && git clean``, it needs no git and keeps the
products of ``setup``.
"""

from __future__ import annotations

import fnmatch
import json
import os
import shutil
import stat
import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

SKIPPED = frozenset({".git", ".hg", ".svn", "__pycache__", ".pytest_cache", ".mypy_cache"})
_TAIL_LINES = 20


class SetupError(RuntimeError):
    """The repository's ``setup`` command failed in a new copy; the message has its output."""


def copy_repository(base: Path, target: Path, exclude: Iterable[str] = ()) -> None:
    """Copy ``base`` to ``target`` (version-control folders, caches and ``exclude`` globs,
    relative to ``base``, left out); symbolic links are copied as links."""
    patterns = tuple(exclude)

    def ignore(folder: str, names: list[str]) -> set[str]:
        relative = os.path.relpath(folder, base)
        skipped = {n for n in names if n in SKIPPED}
        for name in names:
            path = name if relative == "." else f"{relative}/{name}"
            if any(fnmatch.fnmatch(path, p) for p in patterns):
                skipped.add(name)
        return skipped

    shutil.copytree(base, target, symlinks=True, ignore=ignore)


def tail(text: str, lines: int = _TAIL_LINES) -> str:
    """The last ``lines`` lines of ``text`` (what a failing command's reader needs)."""
    return "\n".join(text.rstrip().splitlines()[-lines:])


@dataclass(frozen=True)
class Slot:
    """One evaluation copy (see the module docstring)."""

    root: Path

    @property
    def tree(self) -> Path:
        return self.root / "tree"

    @property
    def pristine(self) -> Path:
        return self.root / "pristine"

    @property
    def manifest(self) -> Path:
        """Written last by :meth:`prepare`: present means the copy is whole."""
        return self.root / "manifest.json"

    @classmethod
    def prepare(
        cls,
        root: Path,
        base: Path,
        *,
        exclude: Iterable[str] = (),
        setup: str | None = None,
        setup_timeout_s: float = 900.0,
        env: Mapping[str, str] | None = None,
    ) -> Slot:
        """Copy ``base`` into a new slot at ``root``, run ``setup`` there, snapshot it.

        Raises:
            SetupError: ``setup`` exited non-zero or ran past ``setup_timeout_s``.
        """
        slot = cls(root)
        root.mkdir(parents=True)
        os.chmod(root, 0o711)  # a switched candidate user may traverse to tree/, not list
        copy_repository(base, slot.tree, exclude)
        if setup:
            _run_setup(setup, slot.tree, setup_timeout_s, env)
        shutil.copytree(slot.tree, slot.pristine, symlinks=True)
        os.chmod(slot.pristine, 0o700)
        manifest = {rel: kind for rel, kind, _ in _walk(slot.tree)}
        slot.manifest.write_text(json.dumps(manifest, sort_keys=True))
        (root / "stamp").write_bytes(b"")  # the tree equals pristine/ now; the first reset
        return slot  # also gives it to the candidates' user (entries of another owner)

    def reset(self, owner: tuple[int, int] | None = None) -> int:
        """Make ``tree/`` equal to ``pristine/`` again, owned by ``owner`` (uid, gid) when
        given; touch the stamp. Returns how many entries were restored or removed."""
        manifest: dict[str, str] = json.loads(self.manifest.read_text())
        since = os.stat(self.root / "stamp").st_ctime_ns
        seen: set[str] = set()
        fixed = 0
        for rel, kind, st in _walk(self.tree):
            path = self.tree / rel
            if manifest.get(rel) != kind:
                _remove(path, kind)
                fixed += 1
                continue
            seen.add(rel)
            dirty = st.st_ctime_ns >= since or (owner is not None and st.st_uid != owner[0])
            if dirty:
                self._restore(rel, kind, owner, replace=True)
                fixed += 1
        if not self.tree.is_dir() or self.tree.is_symlink():
            _remove(self.tree, "l" if self.tree.is_symlink() else "f")
            self._restore("", "d", owner, replace=False)
            seen.clear()
        for rel in sorted(set(manifest) - seen):  # parents sort before their contents
            if rel and not (self.tree / rel).parent.is_symlink():
                self._restore(rel, manifest[rel], owner, replace=False)
                fixed += 1
        os.utime(self.root / "stamp")  # sets its ctime to now
        return fixed

    def write(self, files: Mapping[str, str], owner: tuple[int, int] | None = None) -> list[str]:
        """Write the candidate's files that differ from the copy's; returns their paths.

        Call right after :meth:`reset` (so the stamp is older than these writes, and the next
        reset restores them)."""
        changed = []
        for rel, text in files.items():
            path = self.tree / rel
            data = text.encode("utf-8")
            if path.is_file() and path.read_bytes() == data:
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            if owner is not None:
                os.lchown(path, *owner)
            changed.append(rel)
        return changed

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)

    def _restore(
        self, rel: str, kind: str, owner: tuple[int, int] | None, *, replace: bool
    ) -> None:
        source, target = self.pristine / rel, self.tree / rel
        if kind == "d":
            if not replace:
                target.mkdir(exist_ok=True)
            shutil.copymode(source, target)
        else:
            if replace:
                target.unlink()
            if kind == "l":
                os.symlink(os.readlink(source), target)
            else:
                shutil.copy2(source, target, follow_symlinks=False)
        if owner is not None:
            os.lchown(target, *owner)


def _walk(top: Path) -> Iterable[tuple[str, str, os.stat_result]]:
    """``(relative path, kind, lstat)`` of every entry under ``top``, parents first; kinds:
    ``d`` folder, ``f`` file, ``l`` symbolic link, ``o`` anything else. The root is ``""``."""
    if not top.is_dir() or top.is_symlink():
        return
    yield "", "d", os.lstat(top)
    stack = [""]
    while stack:
        rel = stack.pop()
        try:
            entries = list(os.scandir(top / rel if rel else top))
        except (FileNotFoundError, NotADirectoryError):
            continue  # removed by the caller since it was listed
        for entry in entries:
            path = f"{rel}/{entry.name}" if rel else entry.name
            st = entry.stat(follow_symlinks=False)
            kind = _KINDS.get(stat.S_IFMT(st.st_mode), "o")
            yield path, kind, st
            if kind == "d":
                stack.append(path)


_KINDS = {stat.S_IFDIR: "d", stat.S_IFREG: "f", stat.S_IFLNK: "l"}


def _remove(path: Path, kind: str) -> None:
    if kind == "d":
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def _run_setup(command: str, cwd: Path, timeout_s: float, env: Mapping[str, str] | None) -> None:
    """Run the repository's own ``setup`` (trusted: the user's command, not a candidate's)."""
    try:
        done = subprocess.run(
            ["/bin/sh", "-c", command],
            cwd=cwd,
            env=None if env is None else dict(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            timeout=timeout_s,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise SetupError(
            f"setup `{command}` ran past {timeout_s:g} s; raise setup_timeout_s in evoforge.toml"
        ) from None
    if done.returncode != 0:
        output = tail(done.stdout.decode("utf-8", "replace"), 5).replace("\n", " | ")
        raise SetupError(f"setup `{command}` exited with {done.returncode}: {output}")
