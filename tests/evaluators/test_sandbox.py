"""The shared sandbox helper on its own: user switch, process limits, exit detection, wire format.

Each scenario runs :func:`run_sandboxed` in a fresh interpreter (``python -c``): forking the
pytest process itself, which has threads, could deadlock the child on a lock held at fork time.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import signal
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from evoforge.evaluators import Status
from evoforge.evaluators.devices._fingerprint import cpu_fingerprint
from evoforge.evaluators.sandbox import Limits, SandboxRun
from evoforge.evaluators.sandbox._host import remove_workdir
from evoforge.evaluators.sandbox._protocol import ProtocolError, dumps, encode_frame, read_frame
from evoforge.evaluators.sandbox._supervise import _classify, _Tail
from tests.conftest import ROOT
from tests.evaluators.sandbox_helpers import needs_root, run_script, sandbox_script


@needs_root
def test_switched_user_cannot_write_root_files_or_signal_the_server(tmp_path):
    protected = tmp_path / "project"
    protected.mkdir(mode=0o755)
    report = sandbox_script(f"""
        def job():
            outcome = []
            try:
                open({str(protected / "x")!r}, "w")
                outcome.append("wrote")
            except (PermissionError, FileNotFoundError):  # (not in the minimal root at all)
                outcome.append("write denied")
            try:  # in a PID namespace of its own, the server is not even there to signal
                os.kill(SERVER, 0)
                outcome.append("could signal")
            except (PermissionError, ProcessLookupError):
                outcome.append("signal denied")
            outcome.append(str(os.getuid()))
            return {{"status": "ok"}}, ",".join(outcome).encode()
        SERVER = os.getpid()
        report(sb.run_sandboxed(job, sb.Limits(timeout_s=5), sb.Isolation(user=(65534, 65534))))
    """)
    assert report["payload"] == "write denied,signal denied,65534"
    assert not (protected / "x").exists()


FORKS = """
    def job():
        made = 0
        try:
            for _ in range({forks}):
                if os.fork() == 0:
                    time.sleep(30)
                    os._exit(0)
                made += 1
        except BlockingIOError:
            pass
        time.sleep({hold})
        return {{"status": "ok"}}, str(made).encode()
    workdir = tempfile.mkdtemp()
    os.chown(workdir, 65534, 65534)
    sandbox = sb.Sandbox(lambda _: job(), sb.Isolation(user=(65534, 65534)), workdir=workdir)
    run = sandbox.run(b"", sb.Limits(timeout_s=20, max_procs=40))
    run.payload = json.dumps([sandbox.protections["memory"], run.payload.decode()]).encode()
    report(run)
"""


@needs_root
def test_switched_user_is_held_to_its_process_limit():
    report = sandbox_script(FORKS.format(forks=500, hold=0))
    assert report["status"] == "ok"
    assert int(json.loads(report["payload"])[1]) < 40  # the rest of the fork bomb was refused


def _processes_of(uid: int) -> int:
    """How many processes of ``uid`` exist now."""
    count = 0
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/status") as f:
                count += any(line.split()[1:2] == [str(uid)] for line in f if line[:4] == "Uid:")
        except (OSError, ValueError):
            continue
    return count


@needs_root
def test_candidates_of_one_user_in_two_runs_do_not_share_a_process_limit():
    # RLIMIT_NPROC counts every process of the uid: a run's forking candidate would starve
    # another run's. Where the cgroup counts each tree's processes, each has its own 40.
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        holder = pool.submit(sandbox_script, FORKS.format(forks=30, hold=12))
        deadline = time.monotonic() + 60  # however slow the machine: until they all exist
        while _processes_of(65534) < 30 and time.monotonic() < deadline and not holder.done():
            time.sleep(0.05)
        other = sandbox_script(FORKS.format(forks=30, hold=0))
        held = holder.result()
    note, made = json.loads(other["payload"])
    if "process count limited (pids)" not in note:
        pytest.skip(f"no pids cgroup here: {note}")
    assert json.loads(held["payload"])[1] == "30" and made == "30"


@pytest.mark.parametrize("scenario", ["ok", "timeout", "exit-code"])
def test_exit_detection_without_pidfds_uses_sigchld(scenario):
    report = sandbox_script(f"""
        import evoforge.evaluators.sandbox._run as run_module
        run_module.pidfds_work = lambda: False  # as on kernels before 5.3, or macOS
        jobs = {{
            "ok": lambda: ({{"status": "ok"}}, b"fine"),
            "timeout": lambda: time.sleep(30),
            "exit-code": lambda: os._exit(4),
        }}
        report(sb.run_sandboxed(jobs[{scenario!r}], sb.Limits(timeout_s=1)))
    """)
    expected = {
        "ok": ("ok", ""),
        "timeout": ("timeout", "wall-clock"),
        "exit-code": ("crashed", "code 4"),
    }[scenario]
    assert report["status"] == expected[0]
    assert expected[1] in report["error"]


def test_rlimits_and_environment_are_applied_in_the_child():
    report = sandbox_script("""
        import resource
        def job():
            names = ["RLIMIT_AS", "RLIMIT_CPU", "RLIMIT_FSIZE", "RLIMIT_CORE"]
            limits = {n: resource.getrlimit(getattr(resource, n)) for n in names}
            limits["cwd_is_home"] = os.getcwd() == os.environ["HOME"] == os.environ["TMPDIR"]
            limits["session_leader"] = os.getsid(0) == os.getpid() == os.getpgrp()
            limits["stdin"] = sys.stdin.read()
            return {"status": "ok"}, json.dumps(limits).encode()
        report(sb.run_sandboxed(job, sb.Limits(timeout_s=2.5, memory_mb=300, file_size_mb=2)))
    """)
    limits = json.loads(report["payload"])
    mib = 2**20
    assert limits["RLIMIT_AS"] == [300 * mib, 300 * mib]
    assert limits["RLIMIT_CPU"] == [4, 5]  # SIGXCPU at ceil(2.5) + 1 s, SIGKILL a second later
    assert limits["RLIMIT_FSIZE"] == [2 * mib, 2 * mib]
    assert limits["RLIMIT_CORE"] == [0, 0]
    assert limits["cwd_is_home"] and limits["session_leader"] and limits["stdin"] == ""


def test_an_error_out_of_the_job_is_the_jobs_not_the_set_ups():
    report = sandbox_script("""
        def job():
            raise ValueError("the candidate's own bug")
        report(sb.run_sandboxed(job, sb.Limits(timeout_s=5)))
    """)
    assert report["status"] == "runtime_error"
    assert report["error"] == 'the job raised: ValueError("the candidate\'s own bug")'


def test_oversized_file_writes_fail_instead_of_killing():
    report = sandbox_script("""
        def job():
            try:
                with open("big", "wb") as f:
                    f.write(b"x" * (3 * 2**20))
            except OSError as exc:
                return {"status": "ok"}, exc.strerror.encode()
            return {"status": "ok"}, b"no error"
        report(sb.run_sandboxed(job, sb.Limits(timeout_s=5, file_size_mb=1)))
    """)
    assert report == {"status": "ok", "error": "", "payload": "File too large", "stragglers": 0}


@pytest.mark.parametrize(
    ("signum", "cpu_s", "status", "error"),
    [
        (signal.SIGXCPU, 2.0, Status.TIMEOUT, "CPU-time limit of 2 s"),
        (signal.SIGKILL, 3.0, Status.TIMEOUT, "CPU-time limit"),  # the hard limit
        (signal.SIGKILL, 0.1, Status.CRASHED, "out-of-memory killer"),
        (signal.SIGABRT, 0.1, Status.CRASHED, "killed by signal SIGABRT"),
    ],
    ids=["sigxcpu", "hard-cpu-limit", "sigkill-from-outside", "abort"],
)
def test_death_by_signal_is_classified(signum, cpu_s, status, error):
    run = SandboxRun(Status.CRASHED, cpu_s=cpu_s)
    _classify(run, signum, "", b"", Limits(timeout_s=1))  # a wait status of "killed by signum"
    assert run.status is status
    assert error in run.error


def test_stragglers_outside_the_group_are_counted_and_killed():
    # Without a PID namespace (a host that refuses them) the subreaper sweep finds them.
    report = sandbox_script("""
        def job():
            if os.fork() == 0:
                os.setsid()
                time.sleep(60)
                os._exit(0)
            return {"status": "ok"}, b""
        report(sb.run_sandboxed(job, sb.Limits(timeout_s=5), sb.Isolation(namespaces=False)))
    """)
    assert report["status"] == "ok"
    assert report["stragglers"] == 1


def test_stragglers_die_with_the_pid_namespace_of_their_candidate():
    report = sandbox_script("""
        def job():
            r, w = os.pipe()
            if os.fork() == 0:
                os.setsid()
                __import__("ctypes").CDLL(None).prctl(15, b"evoforge-strag", 0, 0, 0)
                os.write(w, b"x")
                time.sleep(60)
                os._exit(0)
            os.read(r, 1)
            return {"status": "ok"}, b""
        run = sb.run_sandboxed(job, sb.Limits(timeout_s=5))
        left = []
        for entry in os.listdir("/proc"):
            try:
                with open(f"/proc/{entry}/comm") as f:
                    if f.read().strip() == "evoforge-strag":
                        with open(f"/proc/{entry}/stat") as g:
                            if g.read().rsplit(")", 1)[1].split()[0] not in "ZX":
                                left.append(entry)
            except OSError:
                pass
        run.payload = ",".join(left).encode()
        report(run)
    """)
    assert report["status"] == "ok"
    assert report["payload"] == ""  # gone already, killed by the kernel with its namespace


def test_the_pid_namespace_is_empty_for_each_candidate_and_remade_if_its_first_dies():
    report = sandbox_script("""
        from evoforge.evaluators.sandbox import _pidns
        def job(request):
            pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
            if request == b"leave":  # a setsid escapee, re-parented to the first process
                if os.fork() == 0:
                    os.setsid()
                    if os.fork() == 0:
                        time.sleep(60)
                    os._exit(0)
                time.sleep(0.05)
            return {"status": "ok", "pids": pids}, b""
        workdir = tempfile.mkdtemp()
        box = sb.Sandbox(job, sb.Isolation(user=None), workdir=workdir)
        if not box.protections["pid namespace"].startswith("candidates' own"):
            print(json.dumps({"skip": box.protections["pid namespace"]}))
            sys.exit(0)
        seen = []
        for request in (b"leave", b"look", b"kill-first", b"look"):
            if request == b"kill-first":  # as the OOM killer might: the kernel ends the namespace
                (first,) = _pidns.live_first_processes
                os.kill(first, signal.SIGKILL)
                time.sleep(0.1)
            run = box.run(request, sb.Limits(timeout_s=5))
            seen.append([run.status.value, len(run.header.get("pids", [])), run.stragglers])
        box.close()
        print(json.dumps({"seen": seen, "left": sorted(host.children())}))
    """)
    if "skip" in report:
        pytest.skip(report["skip"])
    # Each candidate sees the first process and itself; the escapee was swept (2 processes:
    # its parent's zombie and itself) before the next candidate, and a killed first process
    # is replaced by a new namespace.
    assert report["seen"] == [["ok", 2, 2], ["ok", 2, 0], ["ok", 2, 0], ["ok", 2, 0]]
    assert report["left"] == []


@needs_root
def test_a_root_candidate_cannot_end_its_namespaces_first_process():
    # At once, while that process's interpreter may still be starting.
    report = sandbox_script("""
        from evoforge.evaluators.sandbox import _pidns
        def job():
            for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGKILL, signal.SIGSTOP):
                os.kill(1, sig)
            return {"status": "ok"}, b""
        box = sb.Sandbox(lambda _: job(), sb.Isolation(user=None), workdir=tempfile.mkdtemp())
        if not box.protections["pid namespace"].startswith("candidates' own"):
            print(json.dumps({"skip": box.protections["pid namespace"]}))
            sys.exit(0)
        runs = [box.run(b"x", sb.Limits(timeout_s=5)).status.value for _ in range(2)]
        first = set(_pidns.live_first_processes)
        runs.append(box.run(b"x", sb.Limits(timeout_s=5)).status.value)
        print(json.dumps({"runs": runs, "same": first == _pidns.live_first_processes}))
        box.close()
    """)
    if "skip" in report:
        pytest.skip(report["skip"])
    assert report == {"runs": ["ok", "ok", "ok"], "same": True}


def test_a_handed_channel_is_the_childs_one_socket_and_its_exit_reads_as_the_end():
    # The candidate may not create UNIX sockets (seccomp); a server that talks to it while it
    # runs (the LLVM policies) hands it one end of a socketpair as CHANNEL_FD instead.
    report = sandbox_script("""
        import socket
        from evoforge.evaluators.sandbox import CHANNEL_FD
        def job(request):
            try:
                socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                made = "made a socket"
            except PermissionError:
                made = "refused"
            os.write(CHANNEL_FD, made.encode())
            return {"status": "ok"}, os.read(CHANNEL_FD, 100)
        ours, theirs = socket.socketpair()
        workdir = tempfile.mkdtemp()
        os.chmod(workdir, 0o777)
        sandbox = sb.Sandbox(job, sb.Isolation(), workdir=workdir, channel=theirs.fileno())
        sandbox.prepare()
        theirs.close()
        ours.sendall(b"answer")
        run = sandbox.run(b"go", sb.Limits(timeout_s=10))
        said = ours.recv(100)
        ended = ours.recv(100)
        run.payload = run.payload + b"|" + said + b"|" + repr(ended).encode()
        report(run)
    """)
    assert report["status"] == "ok", report
    assert report["payload"] == "answer|refused|b''"


def test_a_process_that_is_not_a_subreaper_keeps_its_other_children():
    # A controller (or a third-party evaluator) may call run_sandboxed directly: the sweep must
    # kill the candidate's group only, never the caller's unrelated children.
    code = """
import json, subprocess, sys
import evoforge.evaluators.sandbox as sb
helper = subprocess.Popen(["sleep", "30"])
run = sb.run_sandboxed(lambda: ({"status": "ok"}, b""), sb.Limits(timeout_s=5))
print(json.dumps({"status": run.status.value, "helper_alive": helper.poll() is None}))
helper.kill()
"""
    assert run_script(code) == {
        "status": "ok",
        "helper_alive": True,
    }


def test_limits_cpu_allowance_rounds_up_plus_one_second():
    assert Limits(timeout_s=1).cpu_s == 2
    assert Limits(timeout_s=2.5).cpu_s == 4


def test_tail_keeps_the_last_characters_and_says_how_much_there_was():
    tail = _Tail(10)
    for _ in range(1000):
        tail.add(b"0123456789")
    text = tail.text("stdout")
    assert text.endswith("\n0123456789") and "10000 bytes" in text
    short = _Tail(10)
    short.add("é".encode())
    assert short.text("stdout") == "é"


def test_frames_round_trip_and_reject_hangups():
    r, w = os.pipe()
    os.write(w, encode_frame(dumps({"a": [1, 2.5, None]})) + encode_frame(b"")[:2])
    os.close(w)
    assert json.loads(read_frame(r)) == {"a": [1, 2.5, None]}
    with pytest.raises(ProtocolError):
        read_frame(r)
    os.close(r)


def test_dumps_converts_numpy_and_refuses_other_objects():
    np = pytest.importorskip("numpy")
    assert json.loads(dumps({"x": np.arange(2), "y": np.bool_(True)})) == {"x": [0, 1], "y": True}
    with pytest.raises(TypeError, match="cannot be stored or sent as JSON"):
        dumps(object())


def test_cpu_fingerprint_is_cached_and_returns_copies():
    first = cpu_fingerprint()
    assert {"hostname", "platform", "cpu", "logical_cores", "python"} <= set(first)
    first["cpu"] = "changed"
    assert cpu_fingerprint()["cpu"] != "changed"


def test_removing_a_missing_workdir_leaves_its_parent_alone(tmp_path):
    parent = tmp_path / "shared"
    parent.mkdir()
    parent.chmod(0o1777)  # like /tmp
    remove_workdir(str(parent / "already-gone"))
    assert stat.S_IMODE(parent.stat().st_mode) == 0o1777


@needs_root
def test_a_candidate_cannot_make_its_workdir_undeletable():
    # As an unprivileged owner, a candidate can lock subdirectories (chmod 0); removal (by
    # the same user, here) unlocks them, inside the tree only.
    parent = Path(tempfile.mkdtemp())  # under /tmp: pytest's tmp_path is not reachable by uid 65534
    root = parent / "root"
    (root / "a" / "b" / "c").mkdir(parents=True)
    (root / "a" / "b" / "c" / "f").write_text("x")
    for path in (
        parent,
        root,
        root / "a",
        root / "a" / "b",
        root / "a" / "b" / "c",
        root / "a" / "b" / "c" / "f",
    ):
        os.chown(path, 65534, 65534)
    parent.chmod(0o755)
    code = f"""
import os, sys
sys.path.insert(0, {str(ROOT)!r})
from evoforge.evaluators.sandbox._host import remove_workdir  # imported before the switch
os.setgid(65534); os.setuid(65534)
os.chmod({str(root / "a" / "b")!r}, 0)
os.chmod({str(root / "a")!r}, 0o500)
remove_workdir({str(root)!r})
print(os.path.exists({str(root)!r}))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
    try:
        assert done.stdout.strip() == "False", done.stderr
        assert stat.S_IMODE(parent.stat().st_mode) == 0o755
    finally:
        remove_workdir(str(parent))


def test_the_childs_pid_is_recorded_before_it_runs():
    # A candidate may kill its server at once; whoever cleans up after the server must
    # already know the group to kill (it was recorded after the child was let go).
    report = sandbox_script("""
        def job():
            return {"status": "ok"}, repr(time.monotonic()).encode()
        recorded = []
        def on_start(pid):
            time.sleep(0.3)  # ample time for a child already let go to start its job
            recorded.append(time.monotonic())
        sandbox = sb.Sandbox(lambda _: job(), sb.Isolation(), workdir=tempfile.mkdtemp(),
                             on_start=on_start)
        run = sandbox.run(b"", sb.Limits(timeout_s=10))
        run.payload = json.dumps([float(run.payload), recorded]).encode()
        report(run)
    """)
    assert report["status"] == "ok", report
    job_started, recorded = json.loads(report["payload"])
    assert len(recorded) == 1 and recorded[0] < job_started
