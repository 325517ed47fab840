"""Start a local model server as a subprocess that prints ``READY <url>`` (shared by benches)."""

from __future__ import annotations

import subprocess
from pathlib import Path


def start_server(command: list[str], cwd: Path, what: str) -> tuple[subprocess.Popen[str], str]:
    """Start ``command`` and return it with the URL it announced; raise if it did not start."""
    server = subprocess.Popen(command, cwd=cwd, stdout=subprocess.PIPE, text=True)
    line = (server.stdout.readline() if server.stdout else "").strip()
    if not line.startswith("READY "):
        server.kill()
        raise RuntimeError(f"{what} did not start: {line!r}")
    return server, line.removeprefix("READY ")
