"""What a repository problem pays per candidate for its own copy, against the check itself.

Builds a git repository of N files (default 1,000: 100 folders of 10 small modules, plus a
check), then measures:

- prepare: a slot's copy made once (copy, pristine snapshot, manifest), amortised over a run;
- reset: a clean copy restored after a candidate that changed 2 evolving files, created 20
  files (caches, outputs) and deleted one (the per-candidate cost; target: under 50 ms);
- git reset: ``git checkout -- . && git clean -fdx`` on a worktree after the same changes,
  the alternative the design was compared with;
- check: the example check (``python -c "import pkg0.m0"``, an interpreter start and an
  import) as a subprocess, which any real test suite exceeds.

Prints medians over the repeats, in milliseconds.

    python bench/repo_eval.py [--files 1000] [--repeats 20]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from evoforge.evaluators.repo import Slot


def make_repository(root: Path, files: int) -> None:
    per_folder = 10
    for index in range(files):
        folder = root / f"pkg{index // per_folder}"
        folder.mkdir(exist_ok=True)
        (folder / f"m{index % per_folder}.py").write_text(
            f"VALUE = {index}\n\ndef f(x):\n    return x + VALUE\n" * 5
        )
    for folder in root.iterdir():
        (folder / "__init__.py").touch()
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(
        ["git", "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "base"],
        cwd=root,
        check=True,
    )


def dirty(tree: Path) -> None:
    """What a candidate leaves: 2 files changed, 20 created, 1 deleted."""
    (tree / "pkg0" / "m0.py").write_text("VALUE = -1\n")
    (tree / "pkg1" / "m1.py").write_text("VALUE = -2\n")
    cache = tree / "__pycache__"
    cache.mkdir(exist_ok=True)
    for index in range(20):
        (cache / f"c{index}.pyc").write_bytes(b"x" * 256)
    (tree / "pkg2" / "m2.py").unlink()


def median_ms(samples: list[float]) -> str:
    return f"{statistics.median(samples) * 1000:8.2f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="repo-eval-") as scratch:
        base = Path(scratch) / "base"
        base.mkdir()
        make_repository(base, args.files)
        prepare, reset, git_reset, check = [], [], [], []
        for index in range(3):
            start = time.perf_counter()
            slot = Slot.prepare(Path(scratch) / f"slot{index}", base)
            prepare.append(time.perf_counter() - start)
        slot.reset()
        for _ in range(args.repeats):
            dirty(slot.tree)
            start = time.perf_counter()
            slot.reset()
            reset.append(time.perf_counter() - start)
        worktree = Path(scratch) / "worktree"
        subprocess.run(["git", "worktree", "add", "-q", "--detach", str(worktree)], cwd=base)
        for _ in range(args.repeats):
            dirty(worktree)
            start = time.perf_counter()
            subprocess.run(["git", "checkout", "--", "."], cwd=worktree, check=True)
            subprocess.run(["git", "clean", "-fdxq"], cwd=worktree, check=True)
            git_reset.append(time.perf_counter() - start)
        for _ in range(args.repeats):
            start = time.perf_counter()
            subprocess.run([sys.executable, "-c", "import pkg0.m0"], cwd=slot.tree, check=True)
            check.append(time.perf_counter() - start)
    print(f"repository of {args.files} files, medians of {args.repeats} (prepare: of 3)")
    print(f"  prepare a copy (once per slot)   {median_ms(prepare)}")
    print(f"  reset a copy (per candidate)     {median_ms(reset)}")
    print(f"  git checkout + clean (compared)  {median_ms(git_reset)}")
    print(f"  the check (python -c import)     {median_ms(check)}")


if __name__ == "__main__":
    main()
