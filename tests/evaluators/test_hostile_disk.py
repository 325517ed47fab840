"""Hostile candidates, third round: the disk quota (harness: ``hostile.py``).

A candidate's workdir (also its ``HOME`` and ``TMPDIR``) is a private ``tmpfs`` of
``sandbox_disk_mb`` (default half of ``memory_mb``: 256 MiB for these problems), so 5 GiB of
``fallocate`` or eighty 64 MiB files stop at the quota with ``ENOSPC`` inside and the run ends
``disk_limit`` with the figure; nothing reaches the host's disk.
"""

from __future__ import annotations

import os

import pytest

from evoforge.evaluators import Status
from evoforge.evaluators.sandbox import SandboxOptions
from tests.evaluators.hostile import require_filesystem, workdir_leftovers

ATTACKS = {
    "fallocate-5-gib": """
        import os
        def main():
            for n in range(80):  # each at RLIMIT_FSIZE (64 MiB): 5 GiB of real blocks in all
                fd = os.open(f"big{n}", os.O_CREAT | os.O_WRONLY, 0o600)
                os.posix_fallocate(fd, 0, 64 * 2**20)
                os.close(fd)
            return {"metrics": {"score": 1.0, "size": 1.0}}
    """,
    "many-files": """
        import os, tempfile
        def main():
            chunk = b"x" * 2**20
            for n in range(80):  # each under RLIMIT_FSIZE (64 MiB); 5 GiB in all
                where = tempfile.gettempdir() if n % 2 else os.getcwd()
                with open(os.path.join(where, f"part{n}"), "wb") as f:
                    for _ in range(64):
                        f.write(chunk)
            return {"metrics": {"score": 1.0, "size": 1.0}}
    """,
    "tmp-folder": """
        import os
        def main():
            chunk = b"x" * 2**20
            for n in range(80):  # the private /tmp shares the workdir's quota
                with open(f"/tmp/part{n}", "wb") as f:
                    for _ in range(64):
                        f.write(chunk)
            return {"metrics": {"score": 1.0, "size": 1.0}}
    """,
}


def _require_quota(info: dict) -> None:
    require_filesystem(info)  # the quota is part of it: on wherever it is
    assert "disk quota" in info["filesystem"], info["filesystem"]


@pytest.mark.parametrize("attack", ATTACKS)
@pytest.mark.parametrize("who", ["root", "nobody"])
def test_writes_stop_at_the_disk_quota(roomy, unprivileged, outside, attack, who):
    hostile = roomy if who == "root" else unprivileged
    _require_quota(hostile.evaluator.sandbox_info)
    quota = 256 if who == "root" else 128  # half of memory_mb
    with outside:
        result = hostile.run(ATTACKS[attack])
    assert result.status is Status.DISK_LIMIT, (result.status, result.artifacts)
    assert f"disk quota of {quota} MiB" in result.artifacts["error"]
    assert "No space left on device" in result.artifacts["error"]
    assert workdir_leftovers(hostile.evaluator) == []
    assert not any(os.path.exists(f"/tmp/part{n}") for n in range(80))  # the host's /tmp
    after = hostile.run("import os\ndef main():\n    return {'files': os.listdir('.')}\n")
    assert after.status is Status.OK and after.metrics["echo"]["files"] == []  # a fresh quota each


def test_the_quota_is_a_sandbox_option():
    assert SandboxOptions().disk_mb(512) == 256
    assert SandboxOptions().disk_mb(None) == 1024
    assert SandboxOptions.parse({"sandbox_disk_mb": 40}).disk_mb(512) == 40
    with pytest.raises(ValueError, match="sandbox_disk_mb"):
        SandboxOptions.parse({"sandbox_disk_mb": 0})
