"""Patches of repository programs: a bundle's changed files as a ``git apply``-able diff.

A repository problem's program is a bundle of files (:func:`evoforge.problems.make_bundle`).
Against the seed (the unchanged repository) its changes are a patch of the repository; against
its parent, the per-file diff a person reads (``evoforge show --diff``).
"""

from __future__ import annotations

import difflib

from evoforge.problems import BundleError, split_bundle


def bundle_files(source: str | None) -> dict[str, str] | None:
    """The files of a bundle; None for a program that is not one."""
    if source is None:
        return None
    try:
        return split_bundle(source)
    except BundleError:
        return None


def file_patch(before: dict[str, str], after: dict[str, str]) -> str:
    """A git-style unified diff (``diff --git a/p b/p`` per changed file, paths relative to
    the repository's root) from the files ``before`` to those ``after``; "" when equal.

    ``git apply`` (and ``patch -p1``) apply it; a last line without a newline gets git's
    marker.
    """
    parts: list[str] = []
    for path in list(before) + [p for p in after if p not in before]:
        old, new = before.get(path), after.get(path)
        if old == new:
            continue
        lines = difflib.unified_diff(
            (old or "").splitlines(keepends=True),
            (new or "").splitlines(keepends=True),
            fromfile=f"a/{path}" if old is not None else "/dev/null",
            tofile=f"b/{path}" if new is not None else "/dev/null",
        )
        parts.append(f"diff --git a/{path} b/{path}\n")
        parts.extend(
            line if line.endswith("\n") else f"{line}\n\\ No newline at end of file\n"
            for line in lines
        )
    return "".join(parts)
