"""The sandbox's filesystem isolation: the mount plan, each way of isolating, and what the
sandbox reports against what a candidate gets."""

from __future__ import annotations

import json
import os
import subprocess
import textwrap

import pytest

import evoforge.evaluators.sandbox._mount_plan as mount_plan
from tests.conftest import ROOT
from tests.evaluators.conftest import IS_ROOT
from tests.evaluators.sandbox_helpers import PRELUDE, needs_root, sandbox_script

# --- filesystem isolation ---------------------------------------------------------------------


@pytest.fixture
def supported(monkeypatch):
    """Plan as if the host allowed a mount namespace (planning itself forks no probe then)."""
    monkeypatch.setattr(mount_plan, "_host_support", lambda: ("mount namespace", "", True))


def test_plan_hides_what_exists_once_and_leaves_out_what_holds_the_workdir(supported, tmp_path):
    workdir, data = tmp_path / "box" / "run", tmp_path / "data"
    outer, absent, elsewhere = data / "outer", data / "absent", tmp_path / "elsewhere"
    workdir.mkdir(parents=True)
    (outer / "inner").mkdir(parents=True)
    (outer / "file").write_text("x")
    elsewhere.mkdir()
    hidden = (str(outer), str(outer / "inner"), str(outer / "file"), str(absent), str(elsewhere))
    keep = (str(data), str(tmp_path / "box"))  # the second holds the workdir: left out
    plan = mount_plan.plan_filesystem(str(workdir), hidden, hide_secrets=False, keep=keep)
    assert plan.hidden == ((str(outer), True),)  # inside it, missing, or not in the root
    assert plan.root is not None and str(data) in plan.root.visible()
    assert plan.root.skipped == (str(tmp_path / "box"),)
    described = plan.describe()
    assert described["hidden"] == str(outer)
    assert described["filesystem"].startswith("a minimal root, read-only except the workdir")
    assert f"left out, holding other data: {tmp_path / 'box'}" in described["visible"]
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
    try:
        outcome["hidden"] = os.listdir(hidden)
    except OSError as exc:
        outcome["hidden"] = exc.strerror
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
    # The host's /tmp (the target's and the hidden folder's) is not in the candidate's root.
    assert outcome["outside"] == "No such file or directory" and not target.exists()
    assert outcome["workdir"] == outcome["null"] == "ok"
    assert outcome["disk"] == ("No such file or directory" if DISK != "/dev/null" else "ok")
    assert outcome["hidden"] == "No such file or directory"


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
    else:  # the target's folder, in the host's /tmp, is not in the candidate's root
        assert outcome == "No such file or directory" and not target.exists()
    assert protections["capabilities"] == "none held"


PROC_WRITES = """
    import threading
    def attempt(path, data):
        try:
            with open(path, "wb") as f:
                f.write(data)
            return "written"
        except OSError as exc:
            return exc.strerror
    def job():
        return {{"status": "ok"}}, json.dumps({{
            # what the NVIDIA driver does in cuInit (pthread_setname_np on its threads)
            "comm": attempt(f"/proc/self/task/{{threading.get_native_id()}}/comm", b"named"),
            "sysctl": attempt("/proc/sys/kernel/hostname", b"host"),
            "irq": attempt("/proc/irq/default_smp_affinity", b"1"),
        }}).encode()
    sandbox = sb.Sandbox(lambda _: job(), sb.Isolation(gpu={gpu}), workdir=tempfile.mkdtemp())
    run = sandbox.run(b"", sb.Limits(timeout_s=10))
    run.payload = json.dumps([sandbox.protections, json.loads(run.payload)]).encode()
    report(run)
"""


@pytest.mark.parametrize("gpu", [False, True])
def test_a_gpu_request_may_name_its_threads_and_nothing_system_wide(gpu):
    # cuInit fails with error 304 when the driver cannot write its threads' names (seen on an
    # H200); /proc is writable for GPU requests only, and its system-wide parts never are.
    report = sandbox_script(PROC_WRITES.format(gpu=gpu))
    protections, outcome = json.loads(report["payload"])
    if protections["filesystem"].startswith("off: "):
        pytest.skip(f"no filesystem isolation here: {protections['filesystem']}")
    assert outcome["comm"] == ("written" if gpu else "Read-only file system")
    assert outcome["sysctl"] == "Read-only file system"
    assert outcome["irq"] in ("Read-only file system", "No such file or directory")
    assert ("AF_UNIX" in protections["gpu"]) is gpu


def test_a_gpu_request_without_filesystem_isolation_keeps_the_drivers_system_calls():
    # The driver's AF_UNIX socket (the MPS daemon's) and NUMA calls do not depend on the root.
    report = sandbox_script("""
        def job():
            import socket
            socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET).close()
            return {"status": "ok"}, b"socket"
        sandbox = sb.Sandbox(lambda _: job(), sb.Isolation(gpu=True, filesystem=False),
                             workdir=tempfile.mkdtemp())
        run = sandbox.run(b"", sb.Limits(timeout_s=10))
        run.payload = json.dumps([sandbox.protections, run.status.value, run.error]).encode()
        report(run)
    """)
    protections, status, error = json.loads(report["payload"])
    assert status == "ok", error
    assert "AF_UNIX" in protections["gpu"]


NOBODY_PYTHON = "/usr/bin/python3"


def _as_nobody(code: str) -> subprocess.CompletedProcess[str]:
    """Run ``code`` with the system Python as uid 65534, outside any project folder."""
    return subprocess.run(
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


def _nobody_can_import_the_sandbox() -> str:
    if not IS_ROOT or not os.path.exists(NOBODY_PYTHON):
        return f"needs root and {NOBODY_PYTHON}"
    done = _as_nobody("import evoforge.evaluators.sandbox._run")
    return "" if done.returncode == 0 else f"uid 65534 cannot run the sandbox with {NOBODY_PYTHON}"


@pytest.mark.skipif(bool(why := _nobody_can_import_the_sandbox()), reason=why or "runs")
def test_an_unprivileged_user_gets_the_isolation_through_a_user_namespace():
    code = PRELUDE + textwrap.dedent("""
        def job():
            try:
                open("/etc/evoforge-nobody-probe", "w")
                return {"status": "ok"}, b"wrote"
            except OSError as exc:
                return {"status": "ok"}, exc.strerror.encode()
        sandbox = sb.Sandbox(lambda _: job(), workdir=tempfile.mkdtemp())
        run = sandbox.run(b"", sb.Limits(timeout_s=5))
        run.payload = json.dumps([sandbox.protections, run.payload.decode()]).encode()
        report(run)
    """)
    done = _as_nobody(code)
    assert done.returncode == 0, done.stderr
    protections, outcome = json.loads(json.loads(done.stdout.splitlines()[-1])["payload"])
    if protections["filesystem"].startswith("off: "):
        pytest.skip(f"user namespaces are not allowed here: {protections['filesystem']}")
    assert protections["filesystem"].endswith("(user namespace)")
    assert outcome == "Read-only file system"


@needs_root
def test_a_set_up_step_that_fails_fails_the_run_closed():
    report = sandbox_script("""
        data = tempfile.mkdtemp()
        hidden = os.path.join(data, "hidden")
        os.mkdir(hidden)
        sandbox = sb.Sandbox(lambda _: ({"status": "ok"}, b"ran"),
                             sb.Isolation(hidden_paths=(hidden,), keep=(data,)),
                             workdir=tempfile.mkdtemp())
        os.rmdir(hidden)  # after planning: covering it now fails
        report(sandbox.run(b"", sb.Limits(timeout_s=5)))
    """)
    assert report["status"] == "runtime_error"
    assert report["error"].startswith("sandbox set-up failed: ") and "mount" in report["error"]
    assert report["payload"] == ""  # the job never ran
