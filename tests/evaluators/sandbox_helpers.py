"""Running the shared sandbox helper in a fresh interpreter, for the sandbox's tests.

Forking the pytest process itself, which has threads, could deadlock the child on a lock held at
fork time; each scenario runs :func:`run_sandboxed` under ``python -c`` instead.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

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
    return run_script(PRELUDE + textwrap.dedent(body))


def run_script(code: str) -> dict:
    """Run ``code`` in a fresh interpreter; the JSON object on its last stdout line."""
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
