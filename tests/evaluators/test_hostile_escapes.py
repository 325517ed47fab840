"""Hostile candidates, second round: poison values, deep trees, root, host sockets, shared IPC,
whole-tree memory, secrets in the environment, other processes, and the small ones (harness:
``hostile.py``).

Each case ends with a typed status, nothing changed outside the workdir (canaries, IPC objects),
no process left, the workdir emptied, and the evaluator still serving the next candidate.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from evoforge.evaluators import Status
from evoforge.evaluators.python._evaluator import PythonEvaluator
from evoforge.evaluators.sandbox import SandboxError
from evoforge.problems import load_problem
from tests.evaluators.conftest import IS_ROOT, PROBE_SPEC, SEED, dedent, wait_until_sync
from tests.evaluators.hostile import ROOT_OPTIONS, SET_NAME, Hostile, workdir_leftovers

FINE = "def main():\n    return {'metrics': {'score': 1.0, 'size': 1.0}}\n"


def still_serves(hostile: Hostile) -> None:
    """The run goes on: the next candidate is evaluated normally, on a clean workdir."""
    result = hostile.run(FINE)
    assert result.status is Status.OK, result.artifacts
    # The server empties the workdir right after answering (off the latency path).
    assert wait_until_sync(lambda: workdir_leftovers(hostile.evaluator) == [], 60), (
        workdir_leftovers(hostile.evaluator)
    )


def require(info: dict, key: str) -> None:
    """Skip, saying why, where this host gives candidates no such isolation."""
    if not info.get(key, "off").split(":")[0].strip() or info[key].startswith("off"):
        pytest.skip(f"{key} on this host: {info.get(key)}")


# --- 1. values that used to end the run -----------------------------------------------------------

DEEP = (
    "def main():\n    x = []\n    for _ in range(970):\n        x = [x]\n    return {'echo': x}\n"
)
POISON = {
    # candidate source -> the status it must end with
    "huge-int-score": (
        "def main():\n    return {'metrics': {'score': 10**400, 'size': 1.0}}\n",
        Status.INCORRECT,
    ),
    "huge-int-metric": (
        "import sys\nsys.set_int_max_str_digits(0)\n"
        "def main():\n    return {'metrics': {'score': 1.0, 'size': 1.0, 'n': 10**5000}}\n",
        Status.OK,
    ),
    "nested-970-deep-echoed": (DEEP, Status.OK),
    "nested-5000-deep": (DEEP.replace("970", "5000"), Status.RUNTIME_ERROR),
    "nan-score": (
        "def main():\n    return {'metrics': {'score': float('nan'), 'size': 1.0}}\n",
        Status.INCORRECT,
    ),
    "wide-metrics": (
        "def main():\n    return {'metrics': {'score': 1.0, 'size': 1.0, "
        "'many': {str(i): i for i in range(300000)}}}\n",
        Status.OK,
    ),
}


@pytest.mark.parametrize("case", POISON)
def test_poison_values_end_as_a_typed_status_and_can_be_stored(roomy, outside, tmp_path, case):
    from evoforge.archive import Archive, Program
    from evoforge.evaluators import contain_result

    source, status = POISON[case]
    with outside:
        result = roomy.run(source)
    assert result.status is status, result.artifacts
    # What the engine does next with it must work too: contain, build the row, store, read.
    program = Program.from_result(
        contain_result(result),
        roomy.evaluator.problem,
        run_id="r",
        seq=1,
        source=source,
        parent_id=None,
        island=0,
        generation=0,
    )
    with Archive(tmp_path / "a.db") as archive:
        run = archive.create_run(roomy.evaluator.problem, config={}, seed=0, run_id="r")
        program = Program(**{**program.__dict__, "run_id": run.id})
        archive.add_program(program)
        stored = archive.get_program(run.id, program.id)
    assert stored.status is status
    if case == "huge-int-metric":
        assert stored.metrics["n"] == float("inf")  # kept as a number, never a failure
    if case == "nested-970-deep-echoed":
        assert "[evoforge: cut] nested deeper than" in repr(stored.metrics)
    still_serves(roomy)


def test_a_valid_huge_integer_output_is_no_sandbox_violation(roomy, outside):
    source = "def main():\n    return 7**20000\n"  # 16,902 digits: decoded exactly
    with outside:
        result = roomy.run(source)
    assert result.status is Status.OK, result.artifacts
    assert result.metrics["echo"] == float("inf")  # evaluate() saw the int; stored as a float
    bigger = "def main():\n    return {'metrics': {'score': 1.0, 'size': 1.0}, 'n': 10**30000}\n"
    with outside:
        result = roomy.run(bigger)
    assert result.status is Status.OK, result.artifacts  # decoded as a float, not "tampering"


# --- 2. a deep tree in the workdir ----------------------------------------------------------------


def test_a_tree_deeper_than_the_recursion_limit_is_removed(roomy, outside):
    source = """
        import os
        def main():
            for _ in range(1300):
                os.mkdir("d")
                os.chdir("d")
            open("leaf", "w").write("x")
            return {"metrics": {"score": 1.0, "size": 1.0}}
    """
    with outside:
        result = roomy.run(source)
        assert result.status is Status.OK, result.artifacts
        still_serves(roomy)


def test_a_worker_that_cannot_be_replaced_fails_loudly(probe, monkeypatch):
    async def go() -> None:
        evaluator = PythonEvaluator(load_problem(probe(options={})))
        await evaluator.start()
        try:
            (server,) = evaluator._servers

            async def broken_spawn():
                raise RecursionError("maximum recursion depth exceeded")  # any failure at all

            monkeypatch.setattr(evaluator, "_spawn", broken_spawn)
            server.kill()  # the worker dies between two candidates
            died = await asyncio.wait_for(evaluator.evaluate(FINE), 30)
            assert died.status is Status.CRASHED
            with pytest.raises(SandboxError, match="could not be replaced: RecursionError"):
                await asyncio.wait_for(evaluator.evaluate(FINE), 30)  # never waits forever
        finally:
            await evaluator.close()

    asyncio.run(go())


# --- 3. never the host's root ---------------------------------------------------------------------

WHO = """
import os
def main():
    import decimal, fractions, json, sqlite3  # modules the server had not loaded
    return {"uid": os.getuid(), "euid": os.geteuid()}
"""


@pytest.mark.skipif(not IS_ROOT, reason="only a root server switches users")
def test_candidates_run_unprivileged_by_default_and_say_so(unprivileged, outside):
    info = unprivileged.evaluator.sandbox_info
    assert info["user"].startswith("uid 65534"), info["user"]
    with outside:
        result = unprivileged.run(WHO)
    assert result.status is Status.OK, result.artifacts
    assert result.metrics["echo"] == {"uid": 65534, "euid": 65534}
    still_serves(unprivileged)


@pytest.mark.skipif(not IS_ROOT, reason="only a root server switches users")
def test_root_is_refused_unless_the_problem_allows_it(probe):
    folder = probe(options={"sandbox_user": None})
    with pytest.raises(SandboxError, match="sandbox_allow_root"):
        asyncio.run(PythonEvaluator(load_problem(folder)).start())
    allowed = probe(options={"sandbox_user": None, "sandbox_allow_root": True})

    async def info() -> dict:
        async with PythonEvaluator(load_problem(allowed)) as evaluator:
            return evaluator.sandbox_info

    assert info_says_root(asyncio.run(info()))


def info_says_root(info: dict) -> bool:
    return info["user"].startswith("uid 0 (root, as asked")


PROBE_MODULE = "evoforge_reach_probe"


@pytest.mark.skipif(not IS_ROOT, reason="only a root server switches users")
def test_a_venv_inside_a_0700_home_still_runs_candidates_unprivileged(tmp_path):
    """The README's setup in a 0700 home: the venv (and what it installs) is out of reach of
    ``nobody``, so it is bound into each candidate's mount namespace at its own path."""
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    home.chmod(0o700)
    venv = home / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = next(venv.glob("lib/python*/site-packages"))
    ours = next(p for p in sys.path if p.endswith("site-packages") and Path(p).is_dir())
    (site / "evoforge-here.pth").write_text(f"import site; site.addsitedir({ours!r})\n")
    (site / f"{PROBE_MODULE}.py").write_text("WHERE = __file__\n")
    problem = home / "problem"
    problem.mkdir()
    (problem / "problem.py").write_text(
        PROBE_SPEC.format(preload=[], timeout_s=20, memory_mb=512, options={})
    )
    (problem / "seed.py").write_text(SEED)
    source = f"import os\ndef main():\n    import {PROBE_MODULE}\n"
    source += f"    return {{'uid': os.getuid(), 'where': {PROBE_MODULE}.WHERE}}\n"
    script = textwrap.dedent(
        f"""
        import asyncio, json
        from evoforge.evaluators.python._evaluator import PythonEvaluator
        from evoforge.problems import load_problem

        async def go():
            async with PythonEvaluator(load_problem({str(problem)!r})) as evaluator:
                result = await evaluator.evaluate({source!r})
                return evaluator.sandbox_info["user"], result.status.value, result.metrics

        print(json.dumps(asyncio.run(go())))
        """
    )
    done = subprocess.run(
        [str(venv / "bin" / "python"), "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=str(home),
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    import json

    user, status, metrics = json.loads(done.stdout.strip().splitlines()[-1])
    assert user.startswith("uid 65534") and str(home) in user, user
    assert status == "ok", metrics
    assert metrics["echo"]["uid"] == 65534
    assert metrics["echo"]["where"].startswith(str(site))


def test_a_candidate_cannot_signal_host_processes(roomy, outside):
    """Even a root candidate (the opt-in) sees no host process to signal: its own PID
    namespace holds only itself."""
    require(roomy.evaluator.sandbox_info, "pid namespace")
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        source = f"""
            import os, signal
            def main():
                out = {{}}
                for name, pid in (("host", {sleeper.pid}), ("all", -1)):
                    try:
                        os.kill(pid, signal.SIGKILL if pid > 0 else 0)
                        out[name] = "sent"
                    except OSError as exc:
                        out[name] = exc.errno
                out["self"] = os.kill(os.getpid(), 0)  # it can still signal itself
                return out
        """
        with outside:
            result = roomy.run(source)
        assert result.status is Status.OK, result.artifacts
        assert result.metrics["echo"]["host"] != "sent"
        assert result.metrics["echo"]["all"] != "sent"  # there is no one else to signal
        assert sleeper.poll() is None  # alive
    finally:
        sleeper.kill()
        sleeper.wait()
    still_serves(roomy)


# --- 4. filesystem sockets ------------------------------------------------------------------------

CONNECT = """
import socket
def main():
    out = {}
    for kind in (socket.SOCK_STREAM, socket.SOCK_DGRAM):
        try:
            s = socket.socket(socket.AF_UNIX, kind)
            s.settimeout(2)
            s.connect(PATH)
            s.sendall(b"hello") if kind == socket.SOCK_STREAM else s.send(b"hello")
            out[str(kind)] = "connected"
        except OSError as exc:
            out[str(kind)] = exc.errno
    try:
        a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
        a.sendto(b"hello", PATH)
        out["pair"] = "sent"
    except OSError as exc:
        out["pair"] = exc.errno
    a, b = socket.socketpair()  # asyncio and multiprocessing need these
    a.sendall(b"x")
    out["stream-pair"] = b.recv(1).decode()
    c, d = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)  # Rust's std::process
    c.send(b"y")
    out["seqpacket-pair"] = d.recv(1).decode()
    try:  # a connected seqpacket socket ignores the address: it reaches its own peer only
        c.sendto(b"hello", PATH)
        out["seqpacket-sendto"] = d.recv(5).decode()
    except OSError as exc:
        out["seqpacket-sendto"] = exc.errno
    return out
"""


@pytest.mark.parametrize("who", ["root", "nobody"])
def test_host_unix_sockets_are_unreachable(roomy, unprivileged, outside, who):
    hostile = roomy if who == "root" else unprivileged
    require(hostile.evaluator.sandbox_info, "unix sockets")
    path = f"/tmp/evoforge-sock-{secrets.token_hex(4)}"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    os.chmod(path, 0o777)  # anyone may connect, as to many a host service
    server.listen()
    server.setblocking(False)
    try:
        with outside:
            result = hostile.run(CONNECT.replace("PATH", repr(path)))
        assert result.status is Status.OK, result.artifacts
        echo = result.metrics["echo"]
        assert "connected" not in echo.values() and echo["pair"] != "sent", echo
        assert echo["stream-pair"] == "x"
        assert echo["seqpacket-pair"] == "y" and echo["seqpacket-sendto"] in ("hello", 106), echo
        with pytest.raises(BlockingIOError):
            server.accept()  # nobody knocked
    finally:
        server.close()
        os.unlink(path)
    still_serves(hostile)


# --- 5. System V IPC ------------------------------------------------------------------------------

IPC = """
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
KEY, IPC_CREAT = 0x7E5701, 0o1000
def main():
    out = {}
    create = MODE == "create"
    shm = libc.shmget(KEY, 4096, IPC_CREAT | 0o666) if create else libc.shmget(KEY, 0, 0o666)
    out["shm"] = shm if shm < 0 else "found"
    if MODE == "create" and shm >= 0:
        ctypes.memmove(libc.shmat(shm, None, 0), b"left behind", 11)
    msg = libc.msgget(KEY, IPC_CREAT | 0o666) if MODE == "create" else libc.msgget(KEY, 0o666)
    out["msg"] = msg if msg < 0 else "found"
    if MODE == "create" and msg >= 0:
        buf = ctypes.create_string_buffer(b"\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x00secret", 14)
        libc.msgsnd(msg, buf, 6, 0)
    return out
"""


def test_ipc_objects_die_with_their_candidate(roomy, outside):
    require(roomy.evaluator.sandbox_info, "ipc namespace")
    with outside:
        first = roomy.run(IPC.replace("MODE", "'create'"))
        second = roomy.run(IPC.replace("MODE", "'find'"))
    assert first.status is second.status is Status.OK, (first.artifacts, second.artifacts)
    assert first.metrics["echo"] == {"shm": "found", "msg": "found"}  # it did make them
    assert "found" not in second.metrics["echo"].values(), second.metrics["echo"]
    still_serves(roomy)


# --- 6. memory of the whole tree ------------------------------------------------------------------

FORK_AND_FILL = """
import os, time
def main():
    pids = []
    for _ in range(CHILDREN):
        pid = os.fork()
        if pid == 0:
            try:
                block = bytearray(MIB * 2**20)
                for i in range(0, len(block), 4096):
                    block[i] = 1  # every page touched: resident
                time.sleep(2)
            except MemoryError:  # RLIMIT_AS, per process: not what this test is about
                os._exit(3)
            os._exit(0)
        pids.append(pid)
    codes = [os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) for pid in pids]
    return {"metrics": {"score": 1.0, "size": 1.0}, "codes": codes}
"""


def test_memory_is_limited_for_the_whole_process_tree(unprivileged, outside):
    """Six children of 70 MiB each, under a 256 MiB limit: each alone fits (its address
    space too: about 175 MiB of it is the interpreter), together not."""
    info = unprivileged.evaluator.sandbox_info
    if info["memory"].startswith("per process only"):
        pytest.skip(f"no cgroup here: {info['memory']}")
    source = FORK_AND_FILL.replace("CHILDREN", "6").replace("MIB", "70")
    with outside:
        result = unprivileged.run(source)
    assert result.status is Status.MEMORY_LIMIT, (result.status, result.artifacts)
    assert "together" in result.artifacts["error"]
    fits = FORK_AND_FILL.replace("CHILDREN", "3").replace("MIB", "50")
    with outside:
        result = unprivileged.run(fits)
    assert result.status is Status.OK, result.artifacts
    assert result.timings["max_rss_mb"] >= 150  # the tree's peak, not one process's
    still_serves(unprivileged)


# --- 7. secrets in the environment ----------------------------------------------------------------


def test_candidates_get_an_allow_listed_environment(probe, outside, monkeypatch):
    secret_url = f"postgres://evo:{secrets.token_hex(8)}@db.internal/prod"
    token = f"github_pat_{secrets.token_hex(20)}"
    monkeypatch.setenv("DATABASE_URL", secret_url)
    monkeypatch.setenv("GITHUB_PAT", token)
    monkeypatch.setenv("EVOFORGE_DECLARED", "wanted")
    source = """
        import os
        def main():
            try:  # the environment it was started with (its server's)
                with open("/proc/self/environ", "rb") as f:
                    raw = f.read().decode()
            except OSError as exc:  # as nobody, a fork of a non-dumpable server may not
                raw = exc.strerror
            return {"env": sorted(os.environ), "raw": raw,
                    "declared": os.environ.get("EVOFORGE_DECLARED"), "home": os.environ["HOME"]}
    """
    folder = probe(options={**ROOT_OPTIONS, "sandbox_env": ["EVOFORGE_DECLARED"]})

    async def go():
        async with PythonEvaluator(load_problem(folder)) as evaluator:
            return await evaluator.evaluate(dedent(source))

    with outside:
        result = asyncio.run(go())
    assert result.status is Status.OK, result.artifacts
    echo = result.metrics["echo"]
    everything = repr(echo)
    assert secret_url not in everything and token not in everything
    assert "DATABASE_URL" not in echo["env"] and "GITHUB_PAT" not in echo["env"]
    assert set(echo["env"]) <= {
        "PATH", "HOME", "TMPDIR", "LANG", "LANGUAGE", "TZ", "PYTHONPATH", "PYTHONHASHSEED",
        "PYTHONDONTWRITEBYTECODE", "PYTHONIOENCODING", "PYTHONUTF8", "LD_LIBRARY_PATH",
        "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS",
        "VECLIB_MAXIMUM_THREADS", "EVOFORGE_DECLARED",
    } | {name for name in echo["env"] if name.startswith("LC_")}  # fmt: skip
    assert echo["declared"] == "wanted"
    assert echo["home"].endswith("/run")  # the workdir


# --- 8. other processes ---------------------------------------------------------------------------


def test_other_processes_are_invisible(roomy, outside):
    require(roomy.evaluator.sandbox_info, "pid namespace")
    source = """
        import os
        def main():
            pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
            cmdlines = []
            for pid in pids:
                try:
                    with open(f"/proc/{pid}/cmdline", "rb") as f:
                        cmdlines.append(f.read().decode(errors="replace"))
                except OSError:
                    pass
            child = os.fork()
            if child == 0:
                os._exit(0)
            os.waitpid(child, 0)
            return {"pids": pids, "cmdlines": cmdlines, "me": os.getpid(), "child": child}
    """
    with outside:
        result = roomy.run(source)
    assert result.status is Status.OK, result.artifacts
    echo = result.metrics["echo"]
    # Its namespace's first process (which empties it between candidates), itself: nothing
    # else, not even what earlier candidates started.
    assert echo["pids"] == [1, echo["me"]] and echo["child"] == echo["me"] + 1
    # Not the engine (whose command line names the archive), nor any other host process.
    first, itself = echo["cmdlines"]
    assert "evoforge sandbox: the first process" in first
    assert "evoforge.evaluators.python" in itself  # a fork of its server
    still_serves(roomy)


# --- 9. the small ones ----------------------------------------------------------------------------


def test_an_exception_in_evaluate_is_capped_and_redacted(roomy, outside):
    token = "ghp_" + secrets.token_hex(20)
    source = f"def main():\n    return {{'raise': {token!r} + ' ' + 'x' * 200000}}\n"
    with outside:
        result = roomy.run(source)
    assert result.status is Status.INCORRECT, result.artifacts
    error = result.artifacts["error"]
    assert "evaluate() raised ValueError" in error
    assert token not in error and "[REDACTED]" in error
    assert len(error) <= 10_000
    still_serves(roomy)


def test_the_file_descriptor_count_is_limited(roomy, outside):
    source = """
        import os, resource
        def main():
            opened = []
            try:
                while len(opened) < 100000:
                    opened.append(os.open("/dev/null", os.O_RDONLY))
            except OSError as exc:
                return {"opened": len(opened), "errno": exc.errno,
                        "limit": resource.getrlimit(resource.RLIMIT_NOFILE)}
            return {"opened": len(opened)}
    """
    with outside:
        result = roomy.run(source)
    assert result.status is Status.OK, result.artifacts
    echo = result.metrics["echo"]
    assert echo["opened"] < 1024 and echo["limit"] == [1024, 1024], echo


def test_a_candidate_that_kills_itself_is_crashed(roomy, outside):
    """Its own signals work as anywhere (it is not its PID namespace's first process)."""
    with outside:
        result = roomy.run("import os, signal\ndef main():\n    os.kill(os.getpid(), 11)\n")
    assert result.status is Status.CRASHED and "SIGSEGV" in result.artifacts["error"]
    still_serves(roomy)


def test_a_leftover_process_of_a_root_candidate_dies_with_it(roomy, outside):
    """Whatever it started goes when it ends (its PID namespace is emptied after it)."""
    source = f"""
        import os, time
        def main():
            if os.fork() == 0:
                os.setsid()
                if os.fork() == 0:
                    {SET_NAME.format(mark=outside.mark)}
                    time.sleep(60)
                os._exit(0)
            return {{"metrics": {{"score": 1.0, "size": 1.0}}}}
    """
    with outside:
        result = roomy.run(source)
    assert result.status is Status.OK, result.artifacts


def test_the_servers_say_which_isolation_is_on(roomy):
    info = roomy.evaluator.sandbox_info
    for key in ("user", "filesystem", "pid namespace", "ipc namespace", "unix sockets", "memory"):
        assert info.get(key), key
