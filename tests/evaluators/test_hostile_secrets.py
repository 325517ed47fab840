"""Hostile candidates after secrets: the reference answer, the server's descriptors and the
network stay out of reach, in the fork servers and in the one-shot sandbox (harness:
``hostile.py``)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap

import pytest

from evoforge.evaluators import Status
from tests.conftest import ROOT
from tests.evaluators.conftest import (
    dedent,
    run_candidates,
)
from tests.evaluators.hostile import ROOT_OPTIONS

# --- the server, the scorer, the reference ----------------------------------------------------


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
import evoforge.evaluators.sandbox as sb
import evoforge.evaluators.sandbox._host as host
host.harden_server()
"""
DISKS = ("/dev/vda", "/dev/sda", "/dev/xvda", "/dev/nvme0n1")
ONE_SHOT = {
    # job body -> (status, what the payload or error must contain)
    "infinite-loop": ("while True:\n    pass", "timeout", "wall-clock"),
    "exit-3": ("os._exit(3)", "crashed", "code 3"),
    "segfault": ("import ctypes\nctypes.string_at(0)", "crashed", "SIGSEGV"),
    "write-tmp": (
        "try:\n    open(TARGET, 'w').write('x')\n    payload = 'written in its own /tmp'\n"
        "except OSError as exc:\n    payload = exc.strerror",
        "ok",
        # /tmp is the candidate's own (the host's is not in its root; `outside` checks it)
        "written in its own /tmp",
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
        "Permission denied|No such file",  # not dumpable; in a PID namespace, not even there
    ),
    "open-disk": (
        "try:\n    os.open(DISK, os.O_RDONLY)\n    payload = 'opened'\n"
        "except OSError as exc:\n    payload = exc.strerror",
        "ok",
        "Permission denied|No such file or directory",  # the root's /dev has no disks
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
    assert any(e in (payload if status == "ok" else error) for e in expected.split("|"))
