"""The harness of the hostile-candidate suites (``test_hostile*.py``).

Every case asserts the status an attack ends with, and runs inside :class:`Outside`, which
proves that nothing outside the candidate's working directory changed (a snapshot of canary
trees: the problem folders, the test's tmp dir, a canary folder in ``/tmp``), that no file
named like the attack's targets appeared anywhere it tried, and that no process the candidate
started outlives the evaluation (each renames itself to a marker).

Most candidates run as root (``sandbox_user=None`` with ``sandbox_allow_root``): the hard case,
which a problem must ask for (by default they run as ``nobody``; ``nobody`` gets fixtures of its
own). The fixtures here are made available to the suites by ``tests/evaluators/conftest.py``.
"""

from __future__ import annotations

import asyncio
import os
import pwd
import secrets
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from evoforge.evaluators import EvalResult
from evoforge.evaluators.python._evaluator import PythonEvaluator
from evoforge.problems import load_problem
from tests.conftest import ROOT
from tests.evaluators.conftest import (
    PROBE_SPEC,
    SEED,
    dedent,
    gone,
    wait_until_sync,
)

# Candidates stay root where the tests run as root: the hard case, which a problem must ask for.
ROOT_OPTIONS = {"sandbox_user": None, "sandbox_allow_root": True}

# Each hostile process renames itself to the marker (``SET_NAME`` in a source), so a survivor
# is found by /proc/*/comm; processes that exec carry it on their command line (``MARK``).
SET_NAME = "__import__('ctypes').CDLL(None).prctl(15, {mark!r}.encode(), 0, 0, 0)"


def require_filesystem(info: dict) -> None:
    """Skip where the host allows no filesystem isolation, unless it should have (we hold
    ``CAP_SYS_ADMIN``, so a mount namespace was ours to take): then fail."""
    if info["filesystem"].startswith("off"):
        if _has_sys_admin():
            pytest.fail(f"no filesystem isolation although root may: {info['filesystem']}")
        pytest.skip(f"this host allows no filesystem isolation: {info['filesystem']}")


def _has_sys_admin() -> bool:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("CapEff:"):
                return bool(int(line.split()[1], 16) >> 21 & 1)
    return False


# --- what lies outside ------------------------------------------------------------------------


def _snapshot(trees: list[Path]) -> dict[str, tuple[int, int, int]]:
    state = {}
    for tree in trees:
        for folder, dirs, files in os.walk(tree):
            for path in [folder, *(os.path.join(folder, n) for n in dirs + files)]:
                st = os.lstat(path)
                state[path] = (st.st_size, st.st_mtime_ns, st.st_mode)
    return state


def _ipc_objects() -> set[tuple[str, str]]:
    """The host's System V IPC objects (kind, id) and POSIX message queues."""
    found = set()
    for kind in ("shm", "msg", "sem"):
        try:
            with open(f"/proc/sysvipc/{kind}") as f:
                rows = f.read().splitlines()[1:]
        except OSError:
            continue
        found.update((kind, row.split()[1]) for row in rows if row.split())
    if os.path.isdir("/dev/mqueue"):
        found.update(("mqueue", name) for name in os.listdir("/dev/mqueue"))
    return found


def marked_processes(mark: str) -> list[int]:
    """Live host processes named (or with a command line holding) ``mark``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/comm", "rb") as f:
                comm = f.read().strip()
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read()
        except OSError:
            continue
        if (comm == mark.encode() or mark.encode() in cmdline) and not gone(int(entry)):
            found.append(int(entry))
    return found


class Outside:
    """Canaries and targets outside the workdir; a context that checks they stayed untouched.

    Attributes:
        mark: the process name every hostile process takes (15 characters: comm's limit).
        name: the file name every write attack uses.
        targets: where write attacks aim, by id: absolute paths outside the workdir.
        canary: an existing file in /tmp that attacks try to modify.
    """

    def __init__(self, tmp_path: Path, trees: list[Path]) -> None:
        token = secrets.token_hex(4)
        self.mark = f"hostile{token}"
        self.name = f"evoforge-hostile-{token}"
        self.tmp_canaries = Path(f"/tmp/evoforge-canary-{token}")
        self.tmp_canaries.mkdir()
        self.canary = self.tmp_canaries / "canary.txt"
        self.canary.write_text("canary\n")
        (tmp_path / "canary" / "sub").mkdir(parents=True)
        (tmp_path / "canary" / "sub" / "canary.txt").write_text("canary\n")
        home = pwd.getpwuid(os.geteuid()).pw_dir
        self.targets = {
            "tmp": f"/tmp/{self.name}",
            "var-tmp": f"/var/tmp/{self.name}",
            "project": str(ROOT / self.name),
            "server-home": os.path.join(home, self.name),
            "etc": f"/etc/{self.name}",
            "test-tmp": str(tmp_path / self.name),
            "canary-folder": str(self.tmp_canaries / self.name),
        }
        self._trees = [tmp_path, self.tmp_canaries, *trees]
        self._before: dict[str, tuple[int, int, int]] = {}
        self._ipc: set[tuple[str, str]] = set()

    def __enter__(self) -> Outside:
        self._before = _snapshot(self._trees)
        self._ipc = _ipc_objects()
        return self

    def __exit__(self, kind: object, *_: object) -> None:
        if kind is not None:
            return
        after = _snapshot(self._trees)
        paths = self._before.keys() | after.keys()
        changed = sorted(p for p in paths if after.get(p) != self._before.get(p))
        assert changed == [], "changed outside the workdir"
        assert [t for t in self.targets.values() if os.path.lexists(t)] == []
        assert wait_until_sync(lambda: not marked_processes(self.mark)), "a process survived"
        assert _ipc_objects() - self._ipc == set(), "an IPC object outlived the candidate"

    def cleanup(self) -> None:
        shutil.rmtree(self.tmp_canaries, ignore_errors=True)
        for target in self.targets.values():  # only ever there if a test failed
            if os.path.isdir(target) and not os.path.islink(target):
                shutil.rmtree(target)
            elif os.path.lexists(target):
                os.unlink(target)


def workdir_leftovers(evaluator: PythonEvaluator) -> list[str]:
    """What the fork server's working-directory root holds besides an empty ``run`` and the
    pid file (after an evaluation: nothing of the candidate may be left)."""
    root = evaluator.sandbox_info.get("workdir_root", "")
    if not root or not os.path.isdir(root):
        return []
    found = sorted(set(os.listdir(root)) - {"run", "candidate.pid"})
    run = os.path.join(root, "run")
    if os.path.isdir(run):
        found += [f"run/{name}" for name in os.listdir(run)]
    return found


class Hostile:
    """One evaluator kept open across tests (a server start costs a fraction of a second)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.loop = asyncio.new_event_loop()
        self.evaluator = PythonEvaluator(load_problem(folder))
        self.loop.run_until_complete(self.evaluator.start())

    def run(self, source: str) -> EvalResult:
        return self.loop.run_until_complete(self.evaluator.evaluate(dedent(source)))

    def close(self) -> None:
        self.loop.run_until_complete(self.evaluator.close())
        self.loop.close()


def _problem(folder: Path, spec: str = PROBE_SPEC, **values: object) -> Path:
    folder.mkdir()
    defaults = {"preload": [], "timeout_s": 20, "memory_mb": 512, "options": ROOT_OPTIONS}
    (folder / "problem.py").write_text(spec.format(**{**defaults, **values}))
    (folder / "seed.py").write_text(SEED)
    return folder


@pytest.fixture(scope="module")
def problems_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("hostile-problems")


@pytest.fixture(scope="module")
def quick(problems_dir) -> Iterator[Hostile]:
    """Candidates that never return: a 1 s limit."""
    hostile = Hostile(_problem(problems_dir / "quick", timeout_s=1))
    yield hostile
    hostile.close()


@pytest.fixture(scope="module")
def roomy(problems_dir) -> Iterator[Hostile]:
    hostile = Hostile(_problem(problems_dir / "roomy"))
    yield hostile
    hostile.close()


@pytest.fixture(scope="module")
def secretive(problems_dir) -> Iterator[Hostile]:
    """A problem whose reference answer is in its folder and in its evaluate()."""
    answer = f"evoforge-answer-{secrets.token_hex(16)}"
    folder = _problem(problems_dir / "secretive", SECRET_SPEC, answer=answer)
    (folder / "answer.txt").write_text(answer)
    hostile = Hostile(folder)
    yield hostile
    hostile.close()


@pytest.fixture(scope="module")
def unprivileged(problems_dir) -> Iterator[Hostile]:
    """The default options: candidates run as ``nobody`` (when the tests run as root)."""
    hostile = Hostile(_problem(problems_dir / "unprivileged", memory_mb=256, options={}))
    yield hostile
    hostile.close()


@pytest.fixture
def outside(tmp_path, problems_dir, roomy) -> Iterator[Outside]:
    require_filesystem(roomy.evaluator.sandbox_info)
    guard = Outside(tmp_path, [problems_dir])
    yield guard
    guard.cleanup()


SECRET_SPEC = """
from pathlib import Path

name = "secretive"
objectives = {{"score": "maximize"}}
preload = {preload!r}
timeout_s = {timeout_s!r}
memory_mb = 1024
options = {options!r}
ANSWER = {answer!r}
CACHE = []


def evaluate(output):
    CACHE.append("evaluate() saw " + ANSWER)  # in the scorer's memory, never the server's
    on_disk = (Path(__file__).parent / "answer.txt").read_text()  # trusted code may read it
    if isinstance(output, dict) and output.get("guess") == ANSWER == on_disk:
        return {{"score": 1.0}}
    notes = output.get("notes") if isinstance(output, dict) else output
    return {{"correct": False, "error": f"wrong answer; notes: {{notes}}"}}
"""
