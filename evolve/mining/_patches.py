"""Repository programs leave as patches: ``NN-<id>.patch`` beside each exported program, and a
commit on a new branch of the original repository (``evoforge export … --apply BRANCH``).

A patch is the program's changed files against the run's seed (the unchanged repository), in
``git apply`` form, headed by lines that say where it came from and what it scored against the
base (``git apply`` skips text before the first ``diff --git`` line). Applying commits through a
temporary index: the repository's working tree, its index and its checked-out branch are never
touched.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from evoforge.archive import bundle_files, file_patch
from evoforge.evolve.mining._export import Exported, ExportError
from evoforge.evolve.mining._view import RunView, fmt

if TYPE_CHECKING:
    from evoforge.archive import Program, RunInfo


def patch_text(run: RunInfo, program: Program, seed: Program, view: RunView) -> str | None:
    """The patch of a repository program against the seed; None for other programs."""
    after, before = bundle_files(program.source), bundle_files(seed.source)
    if after is None or before is None:
        return None
    lines = [f"evoforge patch: run {run.id}, program {program.id}, problem {run.problem}"]
    for objective in view.objectives:
        value, base = program.objectives.get(objective.name), seed.objectives.get(objective.name)
        if value is None:
            continue
        text = f"  {objective.name} = {fmt(value)} ({objective.direction})"
        if base:
            text += f"; base {fmt(base)}; ratio to base {value / base:.4g}x"
        lines.append(text)
    changed = [p for p in after if after[p] != before.get(p)]
    lines.append(f"  files changed: {', '.join(changed) or 'none'}")
    return "\n".join(lines) + "\n\n" + file_patch(before, after)


def write_patches(
    run: RunInfo, done: Sequence[Exported], seed: Program, view: RunView
) -> list[Path]:
    """Write ``NN-<id>.patch`` beside each exported repository program; their paths."""
    written = []
    for item in done:
        text = patch_text(run, item.program, seed, view)
        if text is None:
            continue
        path = item.source_path.with_suffix(".patch")
        path.write_text(text, encoding="utf-8", newline="")
        written.append(path)
    return written


def apply_patch(repo: Path, patch: Path, branch: str, message: str) -> str:
    """Commit ``patch`` on a new ``branch`` of the git repository at ``repo``, on top of its
    ``HEAD``, without touching its working tree or index; returns the commit's id.

    Raises:
        ExportError: ``repo`` is not in a git repository, ``branch`` exists or is not a valid
            name, or the patch does not apply to ``HEAD`` (the files changed since the run).
    """

    def git(*args: str, env: dict[str, str] | None = None) -> str:
        done = subprocess.run(
            ["git", "-C", str(repo), *args],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
        if done.returncode != 0:
            raise ExportError(
                f"git {args[0]} failed in {repo}: {done.stderr.strip().splitlines()[-1:]}"
            )
        return done.stdout.strip()

    try:
        prefix = git("rev-parse", "--show-prefix")
    except (ExportError, FileNotFoundError):
        raise ExportError(
            f"cannot --apply: {repo} is not in a git repository (or git is missing); apply "
            f"{patch} with `patch -p1` there instead"
        ) from None
    if subprocess.run(
        ["git", "-C", str(repo), "check-ref-format", "--branch", branch], capture_output=True
    ).returncode:
        raise ExportError(f"{branch!r} is not a valid branch name; choose another")
    if git("branch", "--list", branch):
        raise ExportError(f"branch {branch!r} already exists in {repo}; choose another name")
    with tempfile.TemporaryDirectory(prefix="evoforge-apply-") as scratch:
        env = {**os.environ, "GIT_INDEX_FILE": os.path.join(scratch, "index")}
        git("read-tree", "HEAD", env=env)
        args = ["apply", "--cached", *([f"--directory={prefix}"] if prefix else [])]
        try:
            git(*args, str(patch.resolve()), env=env)
        except ExportError as exc:
            raise ExportError(
                f"the patch does not apply to HEAD of {repo} ({exc}); were the files changed "
                "since the run? Apply it by hand with `git apply`"
            ) from None
        tree = git("write-tree", env=env)
    identity = {}
    if not _configured(repo, "user.email"):
        identity = {"GIT_AUTHOR_NAME": "evoforge", "GIT_AUTHOR_EMAIL": "evoforge@localhost"}
        identity |= {"GIT_COMMITTER_NAME": "evoforge", "GIT_COMMITTER_EMAIL": "evoforge@localhost"}
    commit = git("commit-tree", tree, "-p", "HEAD", "-m", message, env={**os.environ, **identity})
    git("branch", branch, commit)
    return commit


def _configured(repo: Path, key: str) -> bool:
    done = subprocess.run(["git", "-C", str(repo), "config", key], capture_output=True)
    return done.returncode == 0 and bool(done.stdout.strip())
