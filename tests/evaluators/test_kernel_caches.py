"""Compiler caches are private to each sandboxed run, and the trusted ``torch.compile``
baseline computes inside the sandbox on a CPU."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from evoforge.evaluators import Status
from tests.evaluators.kernel_helpers import (
    evaluate_all,
    make_kernel_problem,
    measurable,
    needs_torch,
)

pytestmark = needs_torch

TASK = """
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.randn(16, 48)]


def get_init_inputs():
    return []
"""

SEED = """
import torch
import torch.nn as nn


# EVOLVE-BLOCK-START
class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
# EVOLVE-BLOCK-END
"""

POISONER = """
import os
import shutil
import sys

import torch
import torch.nn as nn

POISON = 'raise RuntimeError("POISONED CACHE ENTRY LOADED")\\n'


def _poison(folder):
    for root, _, files in os.walk(folder):
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(root, name)
                with open(path) as f:
                    text = f.read()
                with open(path, "w") as f:
                    f.write(POISON + text)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        # Compile the task's own Model, as the trusted baseline will, so the cache holds the
        # entries under the keys the baseline computes; then poison them and plant them
        # wherever a later process may look.
        task = sys.modules["kernelbench_task"].Model()
        with torch.no_grad():
            torch.compile(task)(torch.randn(16, 48))
        from torch._inductor.runtime.cache_dir_utils import cache_dir

        mine = cache_dir()
        _poison(mine)
        for target in (SHARED, "/tmp/torchinductor_root", "/tmp/torchinductor_nobody"):
            try:
                shutil.copytree(mine, target, dirs_exist_ok=True)
            except OSError:
                pass

    def forward(self, x):
        return torch.relu(x)
"""

COMPILING = """
import torch
import torch.nn as nn


class Relu(nn.Module):
    def forward(self, x):
        return torch.relu(x)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.relu = torch.compile(Relu())
        with torch.no_grad():  # compiled here: forward() must not leave compile threads
            self.relu(torch.randn(16, 48))

    def forward(self, x):
        return self.relu(x)
"""


def test_every_cache_is_pointed_into_the_run_s_own_folder(tmp_path):
    """Whatever the runner inherited (a host's shared cache, triton's home read at import),
    the caches a run uses lie in its own folder, and kernel overrides are off."""
    shared = tmp_path / "shared"
    run = tmp_path / "run"
    run.mkdir()
    script = textwrap.dedent(
        f"""
        import json, os
        import triton, triton.knobs
        import torch._inductor.config as config
        from evoforge.evaluators.kernels.kernelbench._caches import private_caches
        from torch._inductor.runtime.cache_dir_utils import cache_dir

        set_ = private_caches({str(run)!r})
        print(json.dumps({{
            "set": set_,
            "inductor": cache_dir(),
            "triton": [triton.knobs.cache.dir, triton.knobs.cache.home_dir,
                       triton.knobs.cache.override_dir, triton.knobs.cache.dump_dir],
            "override": triton.knobs.compilation.override,
            "pch": config.cpp_cache_precompile_headers,
        }}))
        """
    )
    env = {
        **__import__("os").environ,
        "TORCHINDUCTOR_CACHE_DIR": str(shared / "inductor"),
        "TRITON_CACHE_DIR": str(shared / "triton"),
        "TRITON_HOME": str(shared),
        "TRITON_KERNEL_OVERRIDE": "1",
        "XDG_CACHE_HOME": str(shared / "xdg"),
    }
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=240
    )
    assert out.returncode == 0, out.stderr[-3000:]
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    own = str(run / ".caches")
    assert seen["inductor"].startswith(own)
    assert all(path.startswith(own) for path in seen["triton"]), seen["triton"]
    folders = [v for k, v in seen["set"].items() if k.endswith(("_DIR", "_HOME", "_PATH"))]
    assert len(folders) >= 8 and all(v.startswith(own) for v in folders), seen["set"]
    assert seen["override"] is False and seen["pch"] is False
    assert not [p for p in shared.rglob("*") if p.is_file()]  # nothing written there


def _context(tmp_path, source):
    from evoforge.evaluators.kernels.kernelbench._harness import Context, load_task, make_inputs

    path = tmp_path / "task.py"
    path.write_text(TASK)
    task = load_task(path)
    trials = [make_inputs(task, "get_inputs", seed, seed) for seed in range(2)]
    return Context(
        source=source, task=task, kind="triton", cuda=False, init_seed=7, init_inputs=[],
        trials=trials,
    )  # fmt: skip


@pytest.mark.slow
@pytest.mark.timeout(2400)
def test_a_planted_cache_entry_is_loaded_by_no_later_candidate_nor_the_baseline(
    tmp_path, monkeypatch
):
    """The sandbox as it is on a host without mount namespaces (one filesystem for all), with
    a cache folder the host shares (exported to compile faster). A candidate compiles the
    task's Model, as the baseline will, poisons the entries inductor wrote and copies them to
    the shared folder and the default ones. The trusted baseline (torch.compile of the same
    Model) and a later candidate that compiles the same graph must both run clean."""
    from evoforge.evaluators.kernels.kernelbench.__main__ import COMPILE_FILE_MB
    from evoforge.evaluators.kernels.kernelbench._harness import candidate_job, reference_job
    from evoforge.evaluators.kernels.kernelbench._timing import TimingSettings
    from evoforge.evaluators.sandbox import Isolation, Limits, run_sandboxed

    shared = tmp_path / "shared-inductor-cache"
    shared.mkdir()
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(shared))  # what the runner inherits
    one_filesystem = Isolation(filesystem=False, namespaces=False)
    limits = Limits(timeout_s=900, memory_mb=4096, file_size_mb=COMPILE_FILE_MB)

    poisoner = _context(tmp_path, POISONER.replace("(SHARED,", f"({str(shared)!r},"))
    planted = run_sandboxed(lambda: candidate_job(poisoner), limits, one_filesystem)
    assert planted.status is Status.OK and "trials" in planted.header, planted.artifacts
    assert any(shared.rglob("*.py")), "the candidate planted nothing"

    settings = TimingSettings(warmups=1, repeats=10, flush_mib=8)
    baseline = run_sandboxed(
        lambda: reference_job(poisoner, precision=False, baseline=settings), limits, one_filesystem
    )
    assert baseline.status is Status.OK, baseline.artifacts
    measured = baseline.header["baseline"]
    assert "error" not in measured, measured["error"]
    assert measured["compile"]["median_ms"] > 0 and measured["device"] == "cpu"

    later = _context(tmp_path, COMPILING)
    run = run_sandboxed(lambda: candidate_job(later), limits, one_filesystem)
    assert run.status is Status.OK and "trials" in run.header, run.artifacts


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_the_compile_baseline_computes_inside_the_sandbox_on_cpu(tmp_path):
    """Through the evaluator: the reference's sandboxed run (mount namespace, disk quota,
    file-size and memory limits) compiles the task's Model with inductor's C++ backend."""
    options = '{"cpu_baseline": True, "timing_repeats": 10, "timing_warmups": 1, "flush_mib": 8}'
    problem = measurable(
        make_kernel_problem(tmp_path / "p", task=TASK, seed=SEED, options=options, timeout_s=600)
    )
    first, second = evaluate_all(problem, [SEED, SEED], workers=1)
    for result in (first, second):  # the second reuses the baseline measured for the first
        assert result.status is Status.OK, result.artifacts
        metrics = result.metrics
        assert "trusted_baseline_error" not in metrics, metrics["trusted_baseline_error"]
        assert metrics["trusted_eager_ms"] > 0 and metrics["trusted_compile_ms"] > 0
        assert metrics["trusted_device"] == "cpu"
    assert first.metrics["trusted_compile_ms"] == second.metrics["trusted_compile_ms"]
