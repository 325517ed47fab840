"""Hostile candidates: each case is an attack, run through the real python evaluator as root.

Every case asserts the status the attack ends with, and runs inside :class:`Outside`, which
proves that nothing outside the candidate's working directory changed (a snapshot of canary
trees: the problem folders, the test's tmp dir, a canary folder in ``/tmp``), that no file
named like the attack's targets appeared anywhere it tried, and that no process the candidate
started outlives the evaluation (each renames itself to a marker).

Candidates run as root (``sandbox_user=None``): the hard case, and the one on CI machines.
The one-shot :func:`~evaluators._sandbox.run_sandboxed` gets the attacks that make sense for a
bare job at the end.
"""

from __future__ import annotations

import asyncio
import errno
import json
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from evaluators import EvalResult, Status
from evaluators._python import PythonEvaluator
from problems import load_problem
from tests.conftest import ROOT
from tests.evaluators.conftest import (
    PROBE_SPEC,
    SEED,
    dedent,
    gone,
    run_candidates,
    wait_until_sync,
)

ROOT_OPTIONS = {"sandbox_user": None}  # candidates stay root where the tests run as root

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


def _marked_processes(mark: str) -> list[int]:
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

    def __enter__(self) -> Outside:
        self._before = _snapshot(self._trees)
        return self

    def __exit__(self, kind: object, *_: object) -> None:
        if kind is not None:
            return
        after = _snapshot(self._trees)
        paths = self._before.keys() | after.keys()
        changed = sorted(p for p in paths if after.get(p) != self._before.get(p))
        assert changed == [], "changed outside the workdir"
        assert [t for t in self.targets.values() if os.path.lexists(t)] == []
        assert wait_until_sync(lambda: not _marked_processes(self.mark)), "a process survived"

    def cleanup(self) -> None:
        shutil.rmtree(self.tmp_canaries, ignore_errors=True)
        for target in self.targets.values():  # only ever there if a test failed
            if os.path.isdir(target) and not os.path.islink(target):
                shutil.rmtree(target)
            elif os.path.lexists(target):
                os.unlink(target)


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


@pytest.fixture
def outside(tmp_path, problems_dir, roomy) -> Iterator[Outside]:
    require_filesystem(roomy.evaluator.sandbox_info)
    guard = Outside(tmp_path, [problems_dir])
    yield guard
    guard.cleanup()


def test_the_candidates_run_as_root_with_every_protection_on(roomy):
    info = roomy.evaluator.sandbox_info
    require_filesystem(info)
    assert info["filesystem"].startswith("read-only except the workdir"), info
    assert str(roomy.folder) in info["hidden"]
    assert info["capabilities"].startswith(("all dropped", "none held"))
    if os.geteuid() == 0:
        assert info["user"].startswith("uid 0")


# --- processes and resources ------------------------------------------------------------------

SPINNING_BOMB = """
import os
def main():
    for _ in range(6):  # 64 processes, all spinning: it never returns
        os.fork()
    SET_NAME
    while True:
        pass
"""


@pytest.mark.parametrize(
    ("source", "error"),
    [
        ("def main():\n    while True:\n        pass\n", "wall-clock limit of 1 s"),
        (SPINNING_BOMB, "wall-clock limit of 1 s"),
    ],
    ids=["infinite-loop", "fork-bomb"],
)
def test_what_never_returns_times_out_and_is_killed_whole(quick, outside, source, error):
    # As root RLIMIT_NPROC does not hold, so the bomb is not refused: it times out, and the
    # group kill plus the subreaper sweep take every process with it.
    source = source.replace("SET_NAME", SET_NAME.format(mark=outside.mark))
    with outside:
        result = quick.run(source)
    assert result.status is Status.TIMEOUT, result.artifacts
    assert error in result.artifacts["error"]


@pytest.mark.parametrize(
    ("source", "status", "error"),
    [
        ("def main():\n    return len(bytearray(50 * 10**9))\n", Status.MEMORY_LIMIT, "memory"),
        ("import os\ndef main():\n    os._exit(3)\n", Status.CRASHED, "exited with code 3"),
        ("import ctypes\ndef main():\n    ctypes.string_at(0)\n", Status.CRASHED, "SIGSEGV"),
    ],
    ids=["memory-bomb", "exit-3", "segfault"],
)
def test_a_candidate_that_dies_is_classified(roomy, outside, source, status, error):
    with outside:
        result = roomy.run(source)
    assert result.status is status, result.artifacts
    assert error in result.artifacts["error"]


def test_100_mb_of_output_is_capped_and_the_run_completes(roomy, outside):
    source = """
        import sys
        def main():
            chunk = "x" * (1 << 20)
            for _ in range(100):
                sys.stdout.write(chunk)
            print("the end")
            return {"metrics": {"score": 1.0, "size": 1.0}}
    """
    with outside:
        result = roomy.run(source)
    assert result.status is Status.OK, result.artifacts
    tail = result.artifacts["stdout_tail"]
    assert tail.endswith("xxthe end\n") and len(tail) < 4100
    assert f"{100 * 2**20 + len('the end') + 1} bytes" in tail


LEFT_BEHIND = {
    "fork-sleep": """
        import os, time
        def main():
            pid = os.fork()
            if pid == 0:
                SET_NAME
                time.sleep(60)
                os._exit(0)
            return {"pids": [pid]}
    """,
    "double-fork-setsid": """
        import os, time
        def main():
            r, w = os.pipe()
            if os.fork() == 0:
                os.setsid()  # out of the candidate's session and group
                pid = os.fork()
                if pid == 0:
                    SET_NAME
                    time.sleep(60)
                    os._exit(0)
                os.write(w, b"%d" % pid)
                os._exit(0)
            return {"pids": [int(os.read(r, 32))]}
    """,
    "daemon": """
        import os, time
        def main():
            r, w = os.pipe()
            if os.fork() == 0:
                os.setsid()
                if os.fork() == 0:
                    os.chdir("/")
                    os.umask(0)
                    os.write(w, b"%d" % os.getpid())
                    for fd in range(3):
                        os.close(fd)
                    SET_NAME
                    while True:
                        time.sleep(1)
                os._exit(0)
            return {"pids": [int(os.read(r, 32))]}
    """,
    "exec-sleeper": """
        import subprocess, sys
        def main():
            code = "import time; time.sleep(60)"
            proc = subprocess.Popen([sys.executable, "-c", code, MARK], start_new_session=True)
            return {"pids": [proc.pid]}
    """,
}


@pytest.mark.parametrize("case", LEFT_BEHIND)
def test_processes_left_behind_are_killed_before_the_answer(roomy, outside, case):
    source = LEFT_BEHIND[case].replace("SET_NAME", SET_NAME.format(mark=outside.mark))
    source = source.replace("MARK", repr(outside.mark))
    with outside:
        result = roomy.run(source)
        assert result.status is Status.OK, result.artifacts
        pids = result.metrics["echo"]["pids"]
        assert [pid for pid in pids if not gone(pid)] == []  # already, not eventually


def test_fork_bomb_of_sleepers_is_swept_up(roomy, outside):
    source = """
        import os, time
        def main():
            r, w = os.pipe()
            root = os.getpid()
            for _ in range(7):  # 2**7 processes, each forking further
                os.fork()
            if os.getpid() != root:
                os.write(w, b"%8d" % os.getpid())
                time.sleep(60)
                os._exit(0)
            data = b""
            while len(data) < 8 * 127:
                data += os.read(r, 8 * 127 - len(data))
            flat = []
            for _ in range(200):
                pid = os.fork()
                if pid == 0:
                    time.sleep(60)
                    os._exit(0)
                flat.append(pid)
            return {"pids": [int(p) for p in data.split()] + flat}
    """
    with outside:
        result = roomy.run(source)
    assert result.status is Status.OK, result.artifacts
    pids = result.metrics["echo"]["pids"]
    assert len(pids) == 327
    assert [pid for pid in pids if not gone(pid)] == []


def test_patched_clocks_do_not_change_the_timings(roomy, outside):
    source = """
        import select, time
        def main():
            for name in ("perf_counter", "monotonic", "time", "process_time"):
                setattr(time, name, lambda: 0.0)
                setattr(time, name + "_ns", lambda: 0)
            select.select([], [], [], 0.3)  # 0.3 s, on the kernel's clock
            return {"metrics": {"score": 1.0, "size": 1.0}}
    """
    with outside:
        result = roomy.run(source)
    assert result.status is Status.OK, result.artifacts
    timings = result.timings  # measured by the server and this process, not the candidate
    assert 0.3 <= timings["eval_s"] < 5.0
    assert timings["eval_s"] <= timings["total_s"] <= timings["caller_s"]


# --- the filesystem ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "target",
    ["tmp", "var-tmp", "project", "server-home", "etc", "test-tmp", "canary-folder", "problem"],
)
def test_writes_outside_the_workdir_fail(roomy, outside, target):
    path = str(roomy.folder / outside.name) if target == "problem" else outside.targets[target]
    source = f"def main():\n    open({path!r}, 'w').write('x')\n    return 1\n"
    with outside:
        result = roomy.run(source)
    assert result.status is Status.RUNTIME_ERROR, result.artifacts
    assert "Read-only file system" in result.artifacts["error"]
    assert not os.path.lexists(path)


TRICKS = {
    "symlink-out": """
        import os
        def main():
            os.symlink(TARGET, "link")
            open("link", "w").write("x")
    """,
    "rename-out": """
        import os
        def main():
            open("here", "w").write("x")
            os.rename("here", TARGET)
    """,
    "hardlink-canary": """
        import os
        def main():
            os.link(CANARY, "mine")
            open("mine", "a").write("x")
    """,
    "append-canary": "def main():\n    open(CANARY, 'a').write('x')\n",
    "chmod-canary": "import os\ndef main():\n    os.chmod(CANARY, 0o777)\n",
    "delete-canary": "import os\ndef main():\n    os.unlink(CANARY)\n",
    "touch-canary": "import os\ndef main():\n    os.utime(CANARY, (0, 0))\n",
    "mkdir-etc": "import os\ndef main():\n    os.mkdir(TARGET.replace('/tmp/', '/etc/'))\n",
}


@pytest.mark.parametrize("trick", TRICKS)
def test_tricks_to_write_outside_fail(roomy, outside, trick):
    source = (
        dedent(TRICKS[trick])
        .replace("TARGET", repr(outside.targets["tmp"]))
        .replace("CANARY", repr(str(outside.canary)))
    )
    with outside:
        result = roomy.run(source)
    assert result.status is Status.RUNTIME_ERROR, result.artifacts
    assert any(
        why in result.artifacts["error"]
        for why in ("Read-only file system", "Invalid cross-device link")
    ), result.artifacts["error"]


def test_dev_shm_is_private_to_the_run(roomy, outside):
    source = f"""
        import os
        def main():
            open("/dev/shm/{outside.name}", "w").write("x")
            return sorted(os.listdir("/dev/shm"))
    """
    with outside:
        first, second = roomy.run(source), roomy.run(source)
    assert first.status is second.status is Status.OK, first.artifacts
    assert first.metrics["echo"] == second.metrics["echo"] == [outside.name]  # fresh each run
    assert not os.path.exists(f"/dev/shm/{outside.name}")


ESCAPES = {
    # Each returns 0 when it got out, else why not (an errno); the candidate then writes to a
    # target outside and lists the hidden folder.
    "mount-remount-rw": """
        import subprocess
        def escape(libc):
            done = subprocess.run(["mount", "-o", "remount,rw", "/"], capture_output=True)
            return done.returncode
    """,
    "umount-hidden-folder": """
        def escape(libc):
            return 0 if libc.umount2(FOLDER.encode(), 2) == 0 else ctypes.get_errno()
    """,
    "mount-setattr-rw": """
        class Attr(ctypes.Structure):
            _fields_ = [(n, ctypes.c_uint64) for n in ("set", "clr", "prop", "userns")]
        def escape(libc):
            attr = Attr(0, 1 | 4, 0, 0)  # clear read-only and nodev, everywhere
            ok = libc.syscall(442, -100, b"/", 0x8000, ctypes.byref(attr), 32) == 0
            return 0 if ok else ctypes.get_errno()
    """,
    "user-namespace": """
        def escape(libc):  # all capabilities, in a namespace of one's own
            if libc.unshare(0x10000000 | 0x20000) != 0:
                return ctypes.get_errno()
            for flags in (0x20 | 0x1000, 0x20):  # remount "/" rw, as a bind and as itself
                if libc.mount(None, b"/", None, ctypes.c_ulong(flags), None) == 0:
                    return 0
            if libc.umount2(FOLDER.encode(), 2) == 0:
                return 0
            return ctypes.get_errno()
    """,
    "bind-the-folders-parent-bare": """
        def escape(libc):  # a bind without submounts would show what the cover hides
            if libc.unshare(0x10000000 | 0x20000) != 0:
                return ctypes.get_errno()
            os.mkdir("peek")
            parent, name = os.path.split(FOLDER)
            if libc.mount(parent.encode(), b"peek", None, ctypes.c_ulong(0x1000), None) == 0:
                return 0 if os.listdir(os.path.join("peek", name)) else -1
            return ctypes.get_errno()
    """,
}
ESCAPE_MAIN = """
import ctypes, os
ESCAPE
def main():
    libc = ctypes.CDLL(None, use_errno=True)
    escaped = escape(libc)
    try:
        open(TARGET, "w").write("x")
        wrote = 0
    except OSError as exc:
        wrote = exc.errno
    return {"escape": escaped, "write": wrote, "folder": os.listdir(FOLDER)}
"""


@pytest.mark.parametrize("escape", ESCAPES)
def test_remounting_or_unmounting_fails(roomy, outside, escape):
    source = (
        ESCAPE_MAIN.replace("ESCAPE", dedent(ESCAPES[escape]))
        .replace("TARGET", repr(outside.targets["tmp"]))
        .replace("FOLDER", repr(str(roomy.folder)))
    )
    with outside:
        result = roomy.run(source)
    assert result.status is Status.OK, result.artifacts
    outcome = result.metrics["echo"]
    assert outcome["escape"] != 0
    assert outcome["write"] == errno.EROFS
    assert outcome["folder"] == []  # still hidden


def test_deleting_its_own_workdir_harms_no_later_candidate(roomy, outside):
    deletes = f"""
        import os, shutil
        def main():
            open("mine", "w").write("x")
            here = os.getcwd()
            os.chdir("/")
            errors = []
            for path in (here, {str(roomy.folder)!r}, {str(outside.tmp_canaries)!r}):
                try:
                    shutil.rmtree(path)
                except OSError as exc:
                    errors.append(exc.errno)
            return {{"errors": errors, "left": os.listdir(here)}}
    """
    after = """
        import os
        def main():
            found = os.listdir(".")
            open("mine", "w").write("x")
            return {"found": found}
    """
    with outside:
        deleted, fine, fine_again = roomy.run(deletes), roomy.run(after), roomy.run(after)
    assert deleted.status is Status.OK, deleted.artifacts
    # Its contents go; the workdir itself sits in a read-only folder, as does everything else.
    assert deleted.metrics["echo"] == {"errors": [errno.EROFS] * 3, "left": []}
    assert fine.status is fine_again.status is Status.OK
    assert fine.metrics["echo"] == fine_again.metrics["echo"] == {"found": []}


# --- the server, the scorer, the reference ----------------------------------------------------

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

PATTERN = 'PATTERN = re.compile(rb"evoforge-" + rb"answer-[0-9a-f]{32}")\n'
READS = {
    "read-the-file": """
        import os
        def main():
            try:
                return {"guess": open(os.path.join(FOLDER, "answer.txt")).read()}
            except OSError as exc:
                return {"notes": type(exc).__name__}
    """,
    "import-the-spec": """
        import importlib.util, os
        def main():
            try:
                path = os.path.join(FOLDER, "problem.py")
                spec = importlib.util.spec_from_file_location("s", path)
                module = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(module)
                return {"guess": module.ANSWER}
            except Exception as exc:
                return {"notes": type(exc).__name__}
    """,
    "search-gc-and-modules": """
        import gc, re, sys
        PATTERN
        def main():
            found = []
            for obj in gc.get_objects():
                values = obj.values() if isinstance(obj, dict) else obj
                if isinstance(obj, dict | list | tuple):
                    found += [v for v in values if PATTERN.search(str(v).encode())]
            specs = [m for m in sys.modules if m.startswith("_evoforge_problem_")]
            if found:
                return {"guess": PATTERN.search(found[0].encode()).group().decode()}
            return {"notes": f"gc: nothing; spec modules: {specs}"}
    """,
    "walk-proc-mem-and-environ": """
        import ctypes, os, re, time
        PATTERN
        DECOY = b"evoforge-" + b"answer-" + b"0" * 32

        def scan(pid):
            try:
                maps = open(f"/proc/{pid}/maps").read().splitlines()
                mem = open(f"/proc/{pid}/mem", "rb", 0)
            except OSError:
                return None
            found = set()
            with mem:
                for line in maps:
                    span, perms = line.split()[:2]
                    low, high = (int(x, 16) for x in span.split("-"))
                    if "r" not in perms or high - low > 64 << 20:
                        continue
                    try:
                        mem.seek(low)
                        found.update(PATTERN.findall(mem.read(high - low)))
                    except (OSError, ValueError, OverflowError):
                        pass
            return found

        def main():
            # The scanner must work: a child of ours that allows it holds a decoy.
            r, w = os.pipe()
            decoy_pid = os.fork()
            if decoy_pid == 0:
                ctypes.CDLL(None).prctl(4, 1, 0, 0, 0)  # PR_SET_DUMPABLE
                os.write(w, b"x")
                time.sleep(60)  # until the sweep kills it
                os._exit(0)
            os.read(r, 1)
            decoy_found = DECOY in (scan(decoy_pid) or ())
            readable, guesses = 0, set()
            for entry in os.listdir("/proc"):
                if not entry.isdigit() or int(entry) in (os.getpid(), decoy_pid):
                    continue
                found = scan(int(entry))
                readable += found is not None
                guesses |= (found or set()) - {DECOY}
                for name in ("environ", "cmdline"):
                    try:
                        guesses |= set(PATTERN.findall(open(f"/proc/{entry}/{name}", "rb").read()))
                    except OSError:
                        pass
            if guesses:
                return {"guess": sorted(guesses)[0].decode()}
            return {"notes": f"decoy found: {decoy_found}; readable: {readable}"}
    """,
}


@pytest.mark.parametrize("attack", READS)
def test_the_reference_answer_cannot_be_read(secretive, outside, attack):
    source = (
        dedent(READS[attack])
        .replace("PATTERN\n", PATTERN)
        .replace("FOLDER", repr(str(secretive.folder)))
    )
    with outside:
        result = secretive.run(source)
    assert result.status is Status.INCORRECT, result.artifacts
    error = result.artifacts["error"]
    assert error.startswith("wrong answer"), error
    if attack == "walk-proc-mem-and-environ":
        assert "decoy found: True" in error  # the search itself works
    if attack == "search-gc-and-modules":
        assert "spec modules: []" in error


def test_results_cannot_be_forged_through_the_servers_descriptors(roomy, outside):
    source = """
        import json, os, struct
        def main():
            forged = json.dumps({"status": "ok", "metrics": {"score": 1e9, "size": 1.0},
                                 "artifacts": {}, "timings": {}}).encode()
            opened = 0
            for fd in range(64):
                try:
                    f = os.open(f"/proc/{os.getppid()}/fd/{fd}", os.O_WRONLY)
                except OSError:
                    continue
                opened += 1
                os.write(f, struct.pack("!I", len(forged)) + forged)
                os.close(f)
            return {"metrics": {"score": 1.0, "size": 1.0, "opened": opened}}
    """
    with outside:
        result = roomy.run(source)
    assert result.status is Status.OK, result.artifacts
    assert result.objectives == {"score": 1.0} and result.metrics["opened"] == 0


def test_the_network_is_unreachable(probe, outside):
    listener = socket.create_server(("127.0.0.1", 0))
    listener.setblocking(False)
    port = listener.getsockname()[1]
    source = f"""
        import socket
        def main():
            try:
                socket.create_connection(("127.0.0.1", {port}), timeout=2).close()
                return "connected"
            except OSError as exc:
                return type(exc).__name__
    """
    folders = [
        probe(options={**ROOT_OPTIONS, "sandbox_network": mode}) for mode in ("server", "candidate")
    ]
    try:
        with outside:
            isolated, per_candidate = (run_candidates(folder, source)[0] for folder in folders)
        with pytest.raises(BlockingIOError):
            listener.accept()  # nobody knocked
        (host,) = run_candidates(probe(options={"sandbox_network": "host"}), source)
        listener.accept()[0].close()  # the control: with the network, it does connect
    finally:
        listener.close()
    assert isolated.status is per_candidate.status is Status.OK
    assert isolated.metrics["echo"] != "connected" and per_candidate.metrics["echo"] != "connected"
    assert host.metrics["echo"] == "connected"


# --- the one-shot sandbox ---------------------------------------------------------------------

PRELUDE = """
import json, os, sys
import evaluators._sandbox as sb
import evaluators._sandbox_host as host
host.harden_server()
"""
DISKS = ("/dev/vda", "/dev/sda", "/dev/xvda", "/dev/nvme0n1")
ONE_SHOT = {
    # job body -> (status, what the payload or error must contain)
    "infinite-loop": ("while True:\n    pass", "timeout", "wall-clock"),
    "exit-3": ("os._exit(3)", "crashed", "code 3"),
    "segfault": ("import ctypes\nctypes.string_at(0)", "crashed", "SIGSEGV"),
    "write-tmp": (
        "try:\n    open(TARGET, 'w')\nexcept OSError as exc:\n    payload = exc.strerror",
        "ok",
        "Read-only file system",
    ),
    "remount-rw": (
        "import subprocess\npayload = str(subprocess.run(['mount', '-o', 'remount,rw', '/'],"
        " capture_output=True).returncode)",
        "ok",
        "32",
    ),
    "read-parent-memory": (
        "try:\n    open(f'/proc/{os.getppid()}/mem', 'rb')\n"
        "except OSError as exc:\n    payload = exc.strerror",
        "ok",
        "Permission denied",
    ),
    "open-disk": (
        "try:\n    os.open(DISK, os.O_RDONLY)\n    payload = 'opened'\n"
        "except OSError as exc:\n    payload = exc.strerror",
        "ok",
        "Permission denied",
    ),
}


@pytest.mark.parametrize("case", ONE_SHOT)
def test_one_shot_sandbox_contains_the_same_attacks(outside, case):
    body, status, expected = ONE_SHOT[case]
    disks = [d for d in DISKS if os.path.exists(d)]
    if case == "open-disk" and not disks:
        pytest.skip(f"none of {DISKS} on this host")
    job = "def job():\n    payload = ''\n" + textwrap.indent(body, "    ") + "\n"
    job += "    return {'status': 'ok'}, payload.encode()\n"
    job = job.replace("TARGET", repr(outside.targets["tmp"]))
    job = job.replace("DISK", repr(disks[0] if disks else ""))
    code = (
        PRELUDE
        + job
        + (
            "run = sb.run_sandboxed(job, sb.Limits(timeout_s=1))\n"
            "print(json.dumps([run.status.value, run.error, run.payload.decode()]))\n"
        )
    )
    with outside:
        done = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            timeout=60,
            env={
                **os.environ,
                "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
            },
        )
    assert done.returncode == 0, done.stderr
    got_status, error, payload = json.loads(done.stdout.strip().splitlines()[-1])
    assert got_status == status, (error, payload)
    assert expected in (payload if status == "ok" else error)
