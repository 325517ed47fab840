"""The Ray executor on a real local cluster: a head and worker nodes, all on 127.0.0.1.

The cluster is real Ray processes (GCS, raylets, workers; ``ray.cluster_utils.Cluster``), one
per node, started once for the module. A run goes through it from the command line, a node is
killed mid-run, and every candidate must still have exactly one result; a candidate that
kills its own worker must end ``crashed`` after its re-queues; a resource no node has is
refused at once. Skipped, saying why, when Ray is not installed (CI installs the extra).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
import time
from collections import Counter

import pytest

# A cluster on loopback must be joined over loopback (see evoforge.evaluators.executors._ray).
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
ray = pytest.importorskip(
    "ray", reason='the Ray tests need Ray: pip install -e ".[ray]" (CI installs it)'
)

from evoforge.archive import Archive, Status  # noqa: E402
from evoforge.evaluators import PythonEvaluator  # noqa: E402
from evoforge.evaluators.executors import (  # noqa: E402
    MAX_REQUEUES,
    ExecutorError,
    RayExecutor,
    disconnect,
)
from evoforge.problems import load_problem  # noqa: E402
from tests.conftest import ROOT  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

SLOW_SPEC = """
    name = "slow_tiny"
    objectives = {"score": "maximize"}
    descriptors = {"a": (-10.0, 10.0, 4)}
    preload = []
    timeout_s = 10
    memory_mb = 512
    # Root candidates without their own PID namespace: only such a candidate can reach (and
    # kill) its Ray worker, which is how these tests lose a worker to a candidate.
    options = {"sandbox_user": None, "sandbox_allow_root": True, "sandbox_namespaces": False}

    def evaluate(output):
        a, b = output
        return {"score": -(a - 1.0) ** 2 - (b - 2.0) ** 2, "a": a}
"""
SLOW_SEED = """
    import time

    # EVOLVE-BLOCK-START
    def main():
        a = 0.5
        b = 0.25
        return [a, b]
    # EVOLVE-BLOCK-END


    def _wait():
        time.sleep(0.4)  # an evaluation in flight long enough to lose its node mid-way


    _wait()
"""
# Kills the Ray worker process that evaluates it: its parent is the fork server, whose parent
# is the actor's process (same user: the problem's sandbox_user is None).
KILLER = """
import os, signal

def _parent(pid):
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[1])

# EVOLVE-BLOCK-START
def main():
    os.kill(_parent(os.getppid()), signal.SIGKILL)
    return [0.0, 0.0]
# EVOLVE-BLOCK-END
"""


@pytest.fixture(scope="module")
def cluster():
    """A head (no CPUs for evaluations) and three one-CPU worker nodes, on 127.0.0.1."""
    from ray.cluster_utils import Cluster

    temp = tempfile.mkdtemp(prefix="evoray", dir="/tmp")  # short: Ray's socket paths
    # Cluster writes the head's address into Ray's *default* temp folder even with temp_dir
    # set, and fails where no Ray ever ran before (a fresh machine has no /tmp/ray).
    default = os.environ.get("RAY_TMPDIR") or os.environ.get("TMPDIR") or "/tmp"
    os.makedirs(os.path.join(default, "ray"), exist_ok=True)
    common = {"node_ip_address": "127.0.0.1", "object_store_memory": 80 * 2**20}
    cluster = Cluster(
        initialize_head=True,
        head_node_args={**common, "num_cpus": 0, "include_dashboard": False, "temp_dir": temp},
    )
    nodes = [cluster.add_node(num_cpus=1, **common) for _ in range(3)]
    try:
        yield cluster, nodes
    finally:
        disconnect()
        if ray.is_initialized():
            ray.shutdown()
        cluster.shutdown()
        shutil.rmtree(temp, ignore_errors=True)


@pytest.fixture
def slow_problem(make_problem):
    return make_problem(SLOW_SPEC, SLOW_SEED)


def _evaluated_nodes(db):
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        rows = conn.execute("SELECT device_json FROM programs WHERE seq > 0").fetchall()
    return Counter(json.loads(r[0]).get("ray_node") for r in rows)


def test_a_run_through_ray_survives_a_lost_node_with_one_result_per_candidate(
    cluster, slow_problem, tmp_path
):
    head, nodes = cluster
    db, budget = tmp_path / "ray.db", 24
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "evoforge", "run", str(slow_problem), "--budget", str(budget),
         "--workers", "2", "--proposal-workers", "1", "--executor", "ray",
         "--ray-address", head.address, "--seed", "3", "--db", str(db), "-q"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 300
        busy: Counter = Counter()
        while time.monotonic() < deadline and proc.poll() is None:
            if db.exists():
                try:
                    busy = _evaluated_nodes(db)
                except sqlite3.OperationalError:
                    busy = Counter()
                if sum(busy.values()) >= 6:
                    break
            time.sleep(0.1)
        assert proc.poll() is None, proc.communicate()
        victim_id = busy.most_common(1)[0][0]
        victim = next(n for n in nodes if n.node_id == victim_id)
        head.remove_node(victim, allow_graceful=False)  # SIGKILL: raylet, workers, sandboxes
        out, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    with Archive(db) as archive:
        run = archive.latest_run()
        programs = list(archive.programs(run.id))
        requeued = archive.events(run.id, "eval_requeued")
        ints = archive.conn.execute("PRAGMA integrity_check").fetchone()[0]
    assert run.status == "finished" and run.evaluations == budget
    seqs = [p.seq for p in programs]
    assert len(seqs) == len(set(seqs))  # exactly one result per candidate
    # each evaluation once: a program's tuning trials and edit blocks tried alone included
    assert sum(p.evaluations for p in programs if p.status.evaluated) == budget
    assert ints == "ok"
    assert requeued, "the evaluation in flight on the killed node was not re-queued"
    for event in requeued:
        program = next(p for p in programs if p.seq == event.seq)
        assert "re-queued 1 time" in program.artifacts["requeued"]
        if "split" not in program.artifacts:  # else the stored one may be another evaluation
            assert program.device["ray_node"] != victim_id  # finished on a live node


def test_a_candidate_that_kills_its_worker_ends_crashed_not_retried_forever(cluster, slow_problem):
    head, _ = cluster
    problem = load_problem(slow_problem)

    async def go():
        async with RayExecutor(
            PythonEvaluator, problem, workers=2, address=head.address
        ) as executor:
            killed = await executor.evaluate(KILLER)
            fine = await executor.evaluate(problem.seed_source)
            return killed, fine, executor.requeued

    killed, fine, requeued = asyncio.run(go())
    assert killed.status is Status.CRASHED
    assert f"lost {MAX_REQUEUES + 1} times" in killed.artifacts["error"]
    assert killed.artifacts["requeued"].startswith(f"re-queued {MAX_REQUEUES + 1} time(s)")
    assert requeued == MAX_REQUEUES + 1
    assert fine.status is Status.OK  # the slots were replaced: evaluation goes on


def test_a_resource_no_node_has_is_refused_at_once(cluster, make_problem):
    head, _ = cluster
    spec = SLOW_SPEC.replace(
        'options = {"sandbox_user": None, "sandbox_allow_root": True, "sandbox_namespaces": False}',
        'options = {"ray_resources": {"num_gpus": 1}}',
    )
    problem = load_problem(make_problem(spec, SLOW_SEED, name="gpu"))
    executor = RayExecutor(PythonEvaluator, problem, workers=1, address=head.address)
    started = time.monotonic()
    with pytest.raises(ExecutorError, match=r"GPU=1.*no node of the Ray cluster has that"):
        asyncio.run(executor.start())
    assert time.monotonic() - started < 60
    disconnect()


def test_ray_address_without_the_ray_executor_is_a_config_error():
    from evoforge.evolve import ConfigError, RunConfig

    with pytest.raises(ConfigError, match="ray_address.*executor = 'ray'"):
        RunConfig(problem="p", ray_address="127.0.0.1:6379")


def test_problem_files_travel_without_caches(make_problem, tmp_path):
    from evoforge.evaluators.executors import materialize, problem_files

    folder = make_problem(SLOW_SPEC, SLOW_SEED, name="shipped")
    (folder / "__pycache__").mkdir()
    (folder / "__pycache__" / "x.pyc").write_bytes(b"\0" * 10)
    (folder / "data").mkdir()
    (folder / "data" / "table.txt").write_text("1 2 3\n")
    problem = load_problem(folder)
    shipped = problem_files(problem)
    assert sorted(shipped.files) == ["data/table.txt", "problem.py", "seed.py"]
    copy = materialize(shipped, problem, parent=str(tmp_path))
    assert copy.spec_path.read_text() == (folder / "problem.py").read_text()
    assert (copy.spec_path.parent / "data" / "table.txt").read_text() == "1 2 3\n"
    assert load_problem(copy.spec_path.parent).name == "slow_tiny"
    assert textwrap.dedent(SLOW_SEED).strip() in copy.seed_source
