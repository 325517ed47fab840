"""The shared sandbox helper on its own: user switch, process limits, exit detection, wire format.

Each scenario runs :func:`run_sandboxed` in a fresh interpreter (``python -c``): forking the
pytest process itself, which has threads, could deadlock the child on a lock held at fork time.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

import evoforge.evaluators.sandbox._mount_plan as mount_plan
from evoforge.evaluators import Status
from evoforge.evaluators.devices._fingerprint import cpu_fingerprint
from evoforge.evaluators.sandbox import Limits, SandboxRun
from evoforge.evaluators.sandbox._host import remove_workdir
from evoforge.evaluators.sandbox._protocol import ProtocolError, dumps, encode_frame, read_frame
from evoforge.evaluators.sandbox._supervise import _classify, _Tail
from tests.conftest import ROOT
from tests.evaluators.conftest import IS_ROOT

PRELUDE = """
import json, os, signal, sys, tempfile, time
import evoforge.evaluators.sandbox as sb
import evoforge.evaluators.sandbox._host as host
host.harden_server()

def report(run):
    print(json.dumps({"status": run.status.value, "error": run.error,
                      "payload": run.payload.decode(), "stragglers": run.stragglers}))
"""


def sandbox_script(body: str) -> dict:
    """Run PRELUDE + body in a fresh interpreter; it prints one JSON report."""
    code = PRELUDE + textwrap.dedent(body)
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


needs_root = pytest.mark.skipif(not IS_ROOT, reason="switching users needs root")


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
            except PermissionError:
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


@needs_root
def test_switched_user_is_held_to_its_process_limit():
    report = sandbox_script("""
        def job():
            made = 0
            try:
                for _ in range(500):
                    if os.fork() == 0:
                        time.sleep(60)
                        os._exit(0)
                    made += 1
            except BlockingIOError:
                pass
            return {"status": "ok"}, str(made).encode()
        limits = sb.Limits(timeout_s=10, max_procs=40)
        report(sb.run_sandboxed(job, limits, sb.Isolation(user=(65534, 65534))))
    """)
    assert report["status"] == "ok"
    assert int(report["payload"]) < 40  # the rest of the fork bomb was refused


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
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {
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


# --- filesystem isolation ---------------------------------------------------------------------


@pytest.fixture
def supported(monkeypatch):
    """Plan as if the host allowed a mount namespace (planning itself forks no probe then)."""
    monkeypatch.setattr(mount_plan, "_host_support", lambda: ("mount namespace", "", True))


def test_plan_hides_what_exists_once_and_notes_what_it_cannot(supported, tmp_path):
    workdir, outer, absent = tmp_path / "box" / "run", tmp_path / "outer", tmp_path / "absent"
    workdir.mkdir(parents=True)
    (outer / "inner").mkdir(parents=True)
    (outer / "file").write_text("x")
    hidden = (str(outer), str(outer / "inner"), str(outer / "file"), str(absent), str(tmp_path))
    plan = mount_plan.plan_filesystem(str(workdir), hidden, hide_secrets=False)
    assert plan.hidden == ((str(outer), True),)  # the rest is inside it, or missing
    assert plan.notes == (f"{tmp_path} contains the workdir",)
    described = plan.describe()
    assert described["hidden"] == f"{outer} (not hidden: {tmp_path} contains the workdir)"
    assert described["filesystem"].startswith("read-only except the workdir")
    assert "/dev/null" in described["devices"]


def test_plan_without_isolation_says_why(tmp_path):
    assert mount_plan.plan_filesystem(str(tmp_path), enabled=False).describe() == {
        "filesystem": "off: not asked"
    }


FORCED = """
import evoforge.evaluators.sandbox._mount_plan as mount_plan
mount_plan._host_support = lambda: {support!r}
hidden = tempfile.mkdtemp()
open(os.path.join(hidden, "secret"), "w").write("42")
target = {target!r}

def job():
    outcome = {{}}
    for name, path, flags in [("outside", target, os.O_WRONLY | os.O_CREAT),
                              ("workdir", "mine", os.O_WRONLY | os.O_CREAT),
                              ("null", "/dev/null", os.O_WRONLY),
                              ("disk", {disk!r}, os.O_RDONLY)]:
        try:
            os.close(os.open(path, flags))
            outcome[name] = "ok"
        except OSError as exc:
            outcome[name] = exc.strerror
    outcome["hidden"] = os.listdir(hidden)
    return {{"status": "ok"}}, json.dumps(outcome).encode()

sandbox = sb.Sandbox(lambda _: job(), sb.Isolation(hidden_paths=(hidden,)),
                     workdir=tempfile.mkdtemp())
print(json.dumps(sandbox.protections), file=sys.stderr)
report(sandbox.run(b"", sb.Limits(timeout_s=5)))
"""
DISK = next((d for d in ("/dev/vda", "/dev/sda", "/dev/nvme0n1") if os.path.exists(d)), "/dev/null")


@needs_root
@pytest.mark.parametrize(
    "support",
    [("mount namespace", "", True), ("mount namespace", "", False), ("user namespace", "", True)],
    ids=["mount-setattr", "remount-each-mount", "user-namespace"],
)
def test_each_way_of_isolating_gives_the_same_filesystem(support, tmp_path):
    target = tmp_path / "outside"
    report = sandbox_script(FORCED.format(support=support, target=str(target), disk=DISK))
    assert report["status"] == "ok", report
    outcome = json.loads(report["payload"])
    assert outcome["outside"] == "Read-only file system" and not target.exists()
    assert outcome["workdir"] == outcome["null"] == "ok"
    assert outcome["disk"] == ("Permission denied" if DISK != "/dev/null" else "ok")
    assert outcome["hidden"] == []


@needs_root
def test_without_isolation_the_same_writes_land(tmp_path):
    # The control for the test above: its checks can fail.
    target = tmp_path / "outside"
    support = ("", "refused here", True)
    report = sandbox_script(FORCED.format(support=support, target=str(target), disk=DISK))
    outcome = json.loads(report["payload"])
    assert outcome["outside"] == "ok" and target.exists()
    assert outcome["hidden"] == ["secret"]


def test_what_the_sandbox_reports_is_what_the_candidate_gets(tmp_path):
    # Without CAP_SYS_ADMIN (as in a container) the probe decides; whatever it decides, the
    # report must match what a candidate can do.
    target = tmp_path / "outside"
    report = sandbox_script(f"""
        from evoforge.evaluators.sandbox._caps import drop_capabilities
        drop_capabilities()
        def job():
            try:
                open({str(target)!r}, "w").write("x")
                return {{"status": "ok"}}, b"wrote"
            except OSError as exc:
                return {{"status": "ok"}}, exc.strerror.encode()
        sandbox = sb.Sandbox(lambda _: job(), workdir=tempfile.mkdtemp())
        run = sandbox.run(b"", sb.Limits(timeout_s=5))
        run.payload = json.dumps([sandbox.protections, run.payload.decode()]).encode()
        report(run)
    """)
    protections, outcome = json.loads(report["payload"])
    if protections["filesystem"].startswith("off: "):
        assert len(protections["filesystem"]) > len("off: ")  # and says why
        assert (outcome == "wrote") is target.exists()  # (a non-root user may lack the rights)
    else:
        assert outcome == "Read-only file system" and not target.exists()
    assert protections["capabilities"] == "none held"


NOBODY_PYTHON = "/usr/bin/python3"


def _nobody_can_import_the_sandbox() -> str:
    if not IS_ROOT or not os.path.exists(NOBODY_PYTHON):
        return f"needs root and {NOBODY_PYTHON}"
    done = subprocess.run(
        [NOBODY_PYTHON, "-c", "import evoforge.evaluators.sandbox._run"],
        capture_output=True,
        user=65534,
        group=65534,
        extra_groups=[],
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        cwd="/",
        timeout=60,
    )
    return "" if done.returncode == 0 else f"uid 65534 cannot run the sandbox with {NOBODY_PYTHON}"


@pytest.mark.skipif(bool(why := _nobody_can_import_the_sandbox()), reason=why or "runs")
def test_an_unprivileged_user_gets_the_isolation_through_a_user_namespace():
    code = PRELUDE + textwrap.dedent("""
        def job():
            try:
                open("/tmp/evoforge-nobody-probe", "w")
                return {"status": "ok"}, b"wrote"
            except OSError as exc:
                return {"status": "ok"}, exc.strerror.encode()
        sandbox = sb.Sandbox(lambda _: job(), workdir=tempfile.mkdtemp())
        run = sandbox.run(b"", sb.Limits(timeout_s=5))
        run.payload = json.dumps([sandbox.protections, run.payload.decode()]).encode()
        report(run)
    """)
    done = subprocess.run(
        [NOBODY_PYTHON, "-c", code],
        capture_output=True,
        text=True,
        user=65534,
        group=65534,
        extra_groups=[],
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        cwd="/",
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    protections, outcome = json.loads(json.loads(done.stdout.splitlines()[-1])["payload"])
    if protections["filesystem"].startswith("off: "):
        pytest.skip(f"user namespaces are not allowed here: {protections['filesystem']}")
    assert protections["filesystem"].endswith("(user namespace)")
    assert outcome == "Read-only file system"


@needs_root
def test_a_set_up_step_that_fails_fails_the_run_closed():
    report = sandbox_script("""
        hidden = tempfile.mkdtemp()
        sandbox = sb.Sandbox(lambda _: ({"status": "ok"}, b"ran"),
                             sb.Isolation(hidden_paths=(hidden,)), workdir=tempfile.mkdtemp())
        os.rmdir(hidden)  # after planning: covering it now fails
        report(sandbox.run(b"", sb.Limits(timeout_s=5)))
    """)
    assert report["status"] == "runtime_error"
    assert report["error"].startswith("sandbox set-up failed: ") and "mount" in report["error"]
    assert report["payload"] == ""  # the job never ran
