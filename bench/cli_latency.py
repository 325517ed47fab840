"""How long the ``evoforge`` command takes to answer: CPU and wall time per command.

Each command runs ``--runs`` times as a fresh process (``python -m evoforge ...``, what the
``evoforge`` script runs); the table shows the median CPU time of that process (user + system,
from ``os.wait4``: the child alone, its own children included only once they are waited for)
and the median wall time. CPU is the figure to compare across machines and loads: wall time
on a busy host includes waiting for a core. The read-only commands run on a small archive made
first with ``evoforge run trivial --budget 20`` (the offline model: no key, no network).

The target (issue 25): ``--help``, ``status``, ``top``, ``show`` and ``problems`` at most
0.3 s of CPU each.

    python bench/cli_latency.py               # 5 runs of each command
    python bench/cli_latency.py --runs 11
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_CPU_S = 0.3
"""Most CPU seconds a command marked with a target may cost."""
WITH_TARGET = ("--help", "status", "top", "show", "problems")


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one run of ``argv``; raises when it fails."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, text=False
    )
    assert proc.stderr is not None
    errors = proc.stderr.read()  # the child's stderr is small: read it before reaping
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
    proc.stderr.close()
    if proc.returncode:
        raise SystemExit(
            f"{' '.join(argv)} failed (exit status {proc.returncode}):\n"
            + errors.decode(errors="replace")
        )
    return usage.ru_utime + usage.ru_stime, wall


def make_archive(db: Path, env: dict[str, str]) -> str:
    """Run ``trivial`` for 20 evaluations into ``db``; the id of its best program."""
    evoforge = [sys.executable, "-m", "evoforge"]
    subprocess.run(
        [*evoforge, "run", "trivial", "--budget", "20", "--seed", "1", "--quiet", "--db", str(db)],
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    top = subprocess.run(
        [*evoforge, "top", "-n", "1", "--json", "--db", str(db)],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    program_id: str = json.loads(top.stdout)[0]["id"]
    return program_id


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="runs of each command (median)")
    args = parser.parse_args()
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "EVOFORGE_LOG": "warning"}
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "cli.db"
        program = make_archive(db, env)
        commands = {
            "--help": ["--help"],
            "status": ["status", "--db", str(db)],
            "top": ["top", "--db", str(db)],
            "show": ["show", program, "--db", str(db)],
            "problems": ["problems"],
            "stats": ["stats", "--db", str(db)],
            "prompts": ["prompts", "--db", str(db)],
        }
        print(f"{'command':10} {'CPU s':>7} {'wall s':>7}  (median of {args.runs}; target CPU)")
        for name, rest in commands.items():
            argv = [sys.executable, "-m", "evoforge", *rest]
            timed(argv, env)  # warm the file cache and the bytecode
            samples = [timed(argv, env) for _ in range(args.runs)]
            cpu = statistics.median(s[0] for s in samples)
            wall = statistics.median(s[1] for s in samples)
            note = ""
            if name in WITH_TARGET:
                note = f"  <= {TARGET_CPU_S:g} " + ("ok" if cpu <= TARGET_CPU_S else "OVER")
            print(f"{name:10} {cpu:>7.3f} {wall:>7.3f}{note}", flush=True)


if __name__ == "__main__":
    main()
