"""Runner of the ``repo`` evaluator: ``python -m evoforge.evaluators.repo``.

One JSON request on stdin (see :mod:`evoforge.evaluators.repo._evaluator`), one JSON reply line
on stdout. Processes, one fresh runner per candidate::

    runner (trusted)   resets the slot's copy of the repository (restores what the last
                       candidate changed), writes this candidate's files, owned by the
                       candidates' user
     ├── job: check    forked in the shared sandbox with the copy as its working directory
     │                 (an overlay: what it writes counts against its disk quota and is gone
     │                 after it): `sh -c "<check>"`, exit status and output
     └── job: measure  the same, if the check exited 0: `sh -c "<measure>"`
    runner, after each job exited: reads the exit status, the output's tail and the
    measure's last stdout line (a JSON object of metrics), replies.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from evoforge.evaluators.repo._copies import Slot, tail
from evoforge.evaluators.sandbox import (
    Limits,
    Sandbox,
    out_of_disk,
    own_python_first,
    prepare_request,
    read_request,
    reply,
)
from evoforge.problems import Threshold

OUTPUT_BYTES = 1 << 20  # of each stream, kept by the job (the tail is what is reported)


def main() -> int:
    request = read_request()
    isolation, notes = prepare_request(request)
    own_python_first()  # `python` in the repository's commands
    start = time.perf_counter()
    slot = Slot(Path(request["slot"]))
    slot.reset(isolation.user)
    slot.write(request["files"], isolation.user)
    timings = {"reset_s": time.perf_counter() - start}
    # The workdir is the repository's copy, prepared here: the commands run on its files, and
    # what they write goes to the disk quota's tmpfs above it (an overlay), never to the copy.
    isolation = dataclasses.replace(isolation, workdir_base=True)
    sandbox = Sandbox(job, isolation, workdir=str(slot.tree))
    limits = Limits(
        timeout_s=float(request["timeout_s"]),
        memory_mb=request.get("memory_mb"),
        max_files=4096,
        result_mb=4,
    )
    try:
        if request.get("stages"):
            stages = run_stages(sandbox, request["stages"], limits)
            stages[0]["timings"]["reset_s"] = timings["reset_s"]
            reply({"status": "ok", "stages": stages, "sandbox": notes})
            return 0
        failure, metrics = run_command(sandbox, request["check"], limits, "check", timings)
        if failure is None:
            failure, metrics = run_command(sandbox, request["measure"], limits, "measure", timings)
    finally:
        sandbox.close()
    if failure is not None:
        reply({**failure, "timings": timings, "sandbox": notes})
    else:
        reply({"status": "ok", "metrics": metrics, "timings": timings, "sandbox": notes})
    return 0


def run_stages(
    sandbox: Sandbox, stages: list[dict[str, Any]], limits: Limits
) -> list[dict[str, Any]]:
    """Run a cascade's commands in order (see :mod:`evoforge.problems.adapters._repo_stages`), up to
    the first that fails or misses its threshold; one reply per stage run, in order."""
    replies: list[dict[str, Any]] = []
    for stage in stages:
        name, timings = str(stage["name"]), dict[str, float]()
        stage_limits = dataclasses.replace(limits, timeout_s=float(stage["timeout_s"]))
        failure, metrics = run_command(
            sandbox, stage["command"], stage_limits, name, timings, declared=True
        )
        if failure is not None:
            replies.append({**failure, "timings": timings})
            break
        threshold = stage.get("threshold")
        miss = None
        if threshold:
            miss = Threshold(**threshold).miss(name, metrics)
            if threshold["metric"] not in metrics:
                miss = (
                    f"stage {name!r} `{stage['command']}` printed no metric "
                    f"{threshold['metric']!r} (its last stdout line held "
                    f"{sorted(metrics) or 'no JSON object'}); print it there, or fix the "
                    "stage's threshold in evoforge.toml"
                )
                replies.append(
                    {
                        "status": "incorrect",
                        "artifacts": {"stage": name, "error": miss},
                        "timings": timings,
                    }  # fmt: skip
                )
                break
        replies.append({"status": "ok", "metrics": metrics, "timings": timings})
        if miss is not None:
            break  # the cascade reads the miss from the metrics and stops here too
    return replies


def run_command(
    sandbox: Sandbox,
    command: str,
    limits: Limits,
    stage: str,
    timings: dict[str, float],
    *,
    declared: bool = False,
) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    """Run one stage's command: ``(a failure reply or None, the metrics it printed)``.

    ``check`` prints none; ``measure`` must print them; a ``declared`` stage (of ``stages``)
    may print them (its last stdout line, when that is a JSON object)."""
    run = sandbox.run(json.dumps({"command": command}).encode(), limits)
    timings[f"{stage}_s"] = run.eval_s
    if run.status.value != "ok":
        artifacts = run.artifacts
        artifacts["stage"] = stage
        artifacts["error"] = f"{stage} `{command}`: {artifacts.get('error') or run.status.value}"
        return {"status": run.status.value, "artifacts": artifacts}, {}
    header = run.header
    code = int(header.get("exit", -1))
    out, err = str(header.get("stdout", "")), str(header.get("stderr", ""))
    artifacts = {"stage": stage, "stdout_tail": tail(out), "stderr_tail": tail(err)}
    artifacts = {k: v for k, v in artifacts.items() if v}
    if code != 0:
        last = tail(err or out, 8) or "no output"
        artifacts["error"] = f"{stage} `{command}` exited with {code}; its last lines:\n{last}"
        status = "runtime_error" if stage == "measure" else "incorrect"
        quota = header.get("disk_full_mb")
        if quota is not None:  # it failed for want of disk: the candidate's doing, not a bug
            status = "disk_limit"
            artifacts["error"] = (
                f"{stage} `{command}` wrote more than its disk quota of {quota} MiB (what it "
                "writes in the repository's copy, /tmp and HOME together; sandbox_disk_mb "
                f"raises it) and exited with {code}; its last lines:\n{last}"
            )
        return {"status": status, "artifacts": artifacts}, {}
    if stage == "check":
        return None, {}
    if declared and stage != "measure":
        return None, parse_metrics(out)[0] or {}
    metrics, why = parse_metrics(out)
    if metrics is None:
        artifacts["error"] = f"measure `{command}` {why}"
        return {"status": "runtime_error", "artifacts": artifacts}, {}
    return None, metrics


def parse_metrics(stdout: str) -> tuple[dict[str, Any] | None, str]:
    """The metrics on the last non-empty stdout line (a JSON object: its finite numbers and
    booleans), or None and what was printed instead."""
    lines = [line for line in stdout.splitlines() if line.strip()]
    if not lines:
        return None, (
            "printed nothing on stdout; its last stdout line must be a JSON object of "
            'metrics, e.g. print(json.dumps({"runtime_s": 1.23}))'
        )
    last = lines[-1].strip()
    try:
        value = json.loads(last)
    except ValueError:
        value = None
    if not isinstance(value, dict):
        return None, (
            f"printed no JSON object on its last stdout line (it printed {last[:120]!r}); "
            'print one last, e.g. print(json.dumps({"runtime_s": 1.23}))'
        )
    metrics = {
        str(k): v
        for k, v in value.items()
        if isinstance(v, bool) or (isinstance(v, int | float) and math.isfinite(v))
    }
    return metrics, ""


# --- the job, in the sandboxed child -------------------------------------------------------------


def job(request: bytes) -> tuple[dict[str, Any], bytes]:
    """Run the command with ``sh`` in the copy; its exit status and its output's ends."""
    command = json.loads(request)["command"]
    done = subprocess.run(
        ["/bin/sh", "-c", command],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        check=False,
    )
    out = done.stdout[-OUTPUT_BYTES:].decode("utf-8", "replace")
    err = done.stderr[-OUTPUT_BYTES:].decode("utf-8", "replace")
    header = {"status": "ok", "exit": done.returncode, "stdout": out, "stderr": err}
    if done.returncode != 0:
        header["disk_full_mb"] = _full_quota_mb(err + out)
    return header, b""


def _full_quota_mb(output: str) -> int | None:
    """The size in MiB of the disk the command ran out of (the quota's ``tmpfs`` under the
    overlay), or None when it did not run out of disk."""
    if not out_of_disk(".", output):
        return None
    st = os.statvfs(".")
    return round(st.f_blocks * st.f_frsize / (1 << 20))


if __name__ == "__main__":
    sys.exit(main())
