"""A small git repository for the repository-problem tests: two evolving modules, a check
script, a measure script and an ``evoforge.toml``."""

from __future__ import annotations

import hashlib
import subprocess
import textwrap
from pathlib import Path

OPS = """\
MARK = "base"


def scale(x):
    return x * 2
"""
FMT = """\
def label(x):
    return "value=" + str(x)
"""
# The check fails if a file another candidate wrote is here (copies must not be shared), if a
# non-evolving file was changed by an earlier candidate, or if the behaviour changed.
CHECK = """\
import os, sys, time
from calc.ops import MARK, scale
from calc.fmt import label

if os.path.exists("scratch.txt"):
    sys.exit("scratch.txt left over: " + open("scratch.txt").read())
if open("calc/__init__.py").read() != "":
    sys.exit("calc/__init__.py was changed")
with open("scratch.txt", "w") as f:
    f.write(MARK)
time.sleep(float(os.environ.get("CHECK_PAUSE_S", "0")))
assert open("scratch.txt").read() == MARK, "another candidate wrote here"
assert scale(3) == 6, scale(3)
assert label(3) == "value=3", label(3)
print("checked", MARK)
"""
MEASURE = """\
import json, os
from calc.ops import MARK

size = sum(len(open(p).read()) for p in ("calc/ops.py", "calc/fmt.py"))
pause = float(os.environ.get("CHECK_PAUSE_S", "0"))  # what the check slept, as it saw it
print("measuring")
print(json.dumps({"size": size, "mark": len(MARK), "pause": pause}))
"""
TOML = """\
name = "calc"
files = ["calc/ops.py", "calc/fmt.py"]
check = "python check.py"
measure = "python measure.py"
objectives = { size = "minimize" }
timeout_s = 30
"""


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def make_repo(folder: Path, **overrides: str) -> Path:
    """A committed git repository at ``folder``; ``overrides`` replace files by name
    (``toml``, ``check``, ``measure``, ``ops``, ``fmt``)."""
    texts = {
        "calc/__init__.py": "",
        "calc/ops.py": overrides.get("ops", OPS),
        "calc/fmt.py": overrides.get("fmt", FMT),
        "check.py": overrides.get("check", CHECK),
        "measure.py": overrides.get("measure", MEASURE),
        "evoforge.toml": textwrap.dedent(overrides.get("toml", TOML)),
    }
    for name, text in texts.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    git(folder, "init", "-q", "-b", "main")
    git(folder, "add", "-A")
    git(folder, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base")
    return folder


def tree_digest(folder: Path) -> str:
    """A digest of every file (names, bytes, modes) under ``folder``, ``.git`` included."""
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        digest.update(str(path.relative_to(folder)).encode() + b"\0")
        if path.is_symlink():
            digest.update(b"link:" + str(path.readlink()).encode())
        elif path.is_file():
            digest.update(path.read_bytes())
        digest.update(str(path.lstat().st_mode).encode())
    return digest.hexdigest()
