"""The python evaluator contains hostile candidates: processes, files, network, secrets."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from evaluators import Status
from tests.conftest import ROOT
from tests.evaluators.conftest import (
    IS_ROOT,
    gone,
    processes_in_session,
    run_candidates,
)

# --- containment ------------------------------------------------------------------------------


def test_sleeping_grandchild_is_killed(probe):
    source = """
        import os, time
        def main():
            pid = os.fork()
            if pid == 0:
                time.sleep(60)
                os._exit(0)
            return {"metrics": {"score": 1.0, "size": 1.0, "pid": pid}}
    """
    (result,) = run_candidates(probe(), source)
    assert result.status is Status.OK
    assert gone(result.metrics["pid"])


def test_grandchild_that_left_the_process_group_is_killed(probe):
    source = """
        import os, time
        def main():
            r, w = os.pipe()
            middle = os.fork()
            if middle == 0:
                os.setsid()  # a new session: out of reach of the group kill
                if os.fork() == 0:
                    time.sleep(60)
                    os._exit(0)
                os._exit(0)
            os.waitpid(middle, 0)
            return {"metrics": {"score": 1.0, "size": 1.0, "middle": middle}}
    """
    (result,) = run_candidates(probe(), source)
    assert result.status is Status.OK
    assert not processes_in_session(result.metrics["middle"])


def test_bounded_fork_bomb_is_contained(probe):
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
            return {"metrics": {"score": 1.0, "size": 1.0,
                                "pids": [int(p) for p in data.split()] + flat}}
    """
    # As root RLIMIT_NPROC is not enforced: the group kill and the sweep are the containment.
    (result,) = run_candidates(probe(timeout_s=20, options={"sandbox_user": None}), source)
    assert result.status is Status.OK, result.artifacts
    pids = result.metrics["pids"]
    assert len(pids) == 327
    assert [pid for pid in pids if not gone(pid)] == []


def test_writes_land_in_a_private_workdir_that_is_emptied(probe):
    source = """
        import os, tempfile
        def main():
            with open("evoforge-escape-probe.txt", "w") as f:
                f.write("x")
            return {"cwd": os.getcwd(), "home": os.environ["HOME"], "tmp": tempfile.mkstemp()[1]}
    """
    (result,) = run_candidates(probe(), source)
    paths = result.metrics["echo"]
    cwd = Path(paths["cwd"])
    assert paths["home"] == paths["cwd"] and Path(paths["tmp"]).parent == cwd
    assert not cwd.is_relative_to(ROOT)
    assert not (ROOT / "evoforge-escape-probe.txt").exists()
    assert not (cwd / "evoforge-escape-probe.txt").exists()


@pytest.mark.skipif(not IS_ROOT, reason="documents a limit of running candidates as root")
def test_as_root_absolute_writes_are_not_prevented(probe, tmp_path):
    # Without a user switch (or a mount namespace), root can write anywhere by absolute path.
    target = tmp_path / "written-by-candidate"
    source = f"def main():\n    open({str(target)!r}, 'w').write('x')\n    return 1\n"
    (result,) = run_candidates(probe(options={"sandbox_user": None}), source)
    assert result.status is Status.OK and target.exists()


def test_candidate_has_no_network(probe):
    listener = socket.create_server(("127.0.0.1", 0))
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
    try:
        isolated, candidate_ns, host = (
            run_candidates(probe(options={"sandbox_network": mode}), source)[0]
            for mode in ("server", "candidate", "host")
        )
    finally:
        listener.close()
    assert isolated.metrics["echo"] != "connected"
    assert candidate_ns.metrics["echo"] != "connected"
    assert host.metrics["echo"] == "connected"  # the option really is what blocks it


def test_candidate_cannot_see_spec_data_or_what_evaluate_cached(probe, tmp_path):
    spec = PROBE_WITH_SECRET
    folder = probe(spec=spec)
    source = """
        import gc, sys
        def main():
            needle = "retnuh"[::-1] + "-spec"
            cached = "retnuh"[::-1] + "-cache"
            found = []
            for obj in gc.get_objects():
                if isinstance(obj, dict):
                    for value in list(obj.values()):
                        if isinstance(value, str) and (needle in value or cached in value):
                            found.append(value)
            specs = [m for m in sys.modules if m.startswith("_evoforge_problem_")]
            return {"found": found, "spec_modules": specs}
    """
    first, second = run_candidates(folder, source, source)
    for result in (first, second):
        assert result.status is Status.OK, result.artifacts
        assert result.metrics["found"] == [] and result.metrics["spec_modules"] == []
    assert second.metrics["cache_size"] == 2  # evaluate() did cache, in the scorer only


PROBE_WITH_SECRET = """
name = "secretive"
objectives = {{"score": "maximize"}}
preload = []
timeout_s = {timeout_s!r}
memory_mb = {memory_mb!r}
options = {options!r}
SECRET = "hunter-spec: the reference answer is 42"
CACHE = []

def evaluate(output):
    CACHE.append("hunter-cache: the hidden test input")
    return {{"score": 1.0, "found": output["found"], "spec_modules": output["spec_modules"],
             "cache_size": len(CACHE)}}
"""


def test_a_candidate_deleting_its_workdir_harms_no_later_candidate(probe):
    deletes = """
    import os, shutil

    def main():
        here = os.getcwd()
        os.chdir("/")
        shutil.rmtree(here)
        return {"metrics": {"score": 2.0, "size": 1.0}}
    """
    fine = "def main():\n    return {'metrics': {'score': 1.0, 'size': 1.0}}\n"
    results = run_candidates(probe(), deletes, fine, fine, fine)
    assert [r.status for r in results] == [Status.OK] * 4
