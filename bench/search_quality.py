"""Search quality at equal evaluations: what each ``[search]`` feature brings, and to which model.

Protocol. Each run is ``evoforge run PROBLEM --budget B --seed S --workers 2 -q`` in a
subprocess (the public CLI, nothing inside the engine is touched), one run at a time, with a
``--config`` file whose ``[search]`` section selects a configuration:

- ``all_on``: the defaults (built-in descriptors, tolerant edit matching, novelty filter);
- ``descriptors=none``, ``edit_matching=exact``, ``novelty=false``: one feature off each;
- ``prompt_evolution=true``: the defaults plus prompt co-evolution (off by default);
- ``request_variation=false`` (on by default), ``nothing_new_feedback=true``,
  ``rest_after=3``, ``mark_fixed_code=true`` (off by default): one of the mechanisms against
  wasted model calls toggled from its default each; ``calls_off``: all four off (the engine
  as it was before them); ``calls_all_on``: all four on;
- ``tune_changed=0``: no tuning of the constants an edit changed (6 trials by default);
- ``split_edits=0``: an edit of several blocks that fell short is not tried block by block
  (3 blocks by default);
- ``carry_to_best=false``: an edit that improved its parent is not also applied to the run's
  best program (on by default);
- any other ``key=value`` pairs joined by ``+`` (``islands.count=1+islands.exploitation=1.0``):
  those settings, ``section.key`` for another section than ``[search]``.

Three model setups: ``offline`` (the built-in ``offline/mutator``, whose SEARCH texts are always
exact and whose answers draw on the request's seed), ``sloppy``
(``tests/evolve/sloppy_server.py`` as a subprocess, ``--model openai/sloppy --api-base URL``:
the same mutations, but a pure function of the prompt, like a greedy-decoded model, and
written sloppily 70 % of the time, as real models write edits) and ``clean`` (the same server
with ``--correct-share 1``: the same edits as ``sloppy``, always written cleanly; the pair
shows what sloppy writing costs). Two problems: the built-in ``circle_packing`` and
``bench/openevolve_example`` (an OpenEvolve folder, run unmodified: a scheduling rule, no
``feature_dimensions``, so the built-in descriptors apply); ``--folder NAME=PATH`` adds any
other OpenEvolve-format folder (OpenEvolve's own ``examples/circle_packing``, say).

What a user pays for is a model call, so each run is also read per call: model requests sent
(every ``llm_calls`` row, retried attempts included) per evaluation, the best score after 100,
300 and 600 calls, the attempts wasted by reason (duplicates; edit and syntax errors, whose sum
is the ``wasted`` column: what sloppy writing costs), and the migrations between islands.

Read from each run's archive (``evoforge.open_archive``): the best score after 100, 300 and
600 evaluations (``evoforge.evolve.mining.timeline().best_at``: evaluations in ``seq`` order,
knob-tuning trials included, as the budget counts them); the share of attempts that were
``edit_error`` and ``duplicate``; the occupied MAP-Elites cells over all islands; and, for each
pair of seeds of one configuration, the share of their first 100 stored programs (by ``seq``,
the seed left out) that both runs hold (program ids are content hashes). A high overlap means the
seeds explore the same programs: what a deterministic model plus a weak novelty filter gives.

Output on stdout: one line per run, then one table: mean ± sd over the seeds per problem,
model, configuration and budget, with a verdict per feature at the largest budget: ``helps``
or ``hurts`` when the means of ``all_on`` and the configuration differ by more than the larger
of the two sds, else ``no diff`` (with one seed there is no sd: the verdict is marked ``?``).
For the rows that turn a default off "helps" means all_on is better (the feature helps); for
those that turn a feature on (:data:`TURNED_ON`) it means that row is better. Progress goes
to stderr; ``--json FILE`` also writes every run's numbers.

Cost on 2 cores (measured): a circle_packing run of 600 evaluations takes 17 s alone on the
machine (20-35 s with other work running); OpenEvolve-folder evaluations start a fresh
sandboxed interpreter each (about 0.9 s of a slot), so an openevolve_example run of 100
evaluations takes about 50 s alone (estimated: 0.9 s x 100 over 2 slots; measured with a load
of 8: 75 s offline, 130 s sloppy, whose failed edits each cost one more model call). The
defaults are therefore reduced to stay near 25 minutes on an idle machine: circle_packing at
100/300/600 evaluations with 3 seeds (30 runs, ~9 min), openevolve_example at 100 evaluations
with 2 seeds (20 runs, ~15 min)::

    python bench/search_quality.py                                   # the default (~25 min)
    python bench/search_quality.py --problems circle_packing --seeds 1 --budget 100
    python bench/search_quality.py --models sloppy --configs all_on,edit_matching=exact \\
        --seeds 3 --budget 100,300,600 --json /tmp/sq.json

``--budget`` and ``--seeds`` given on the command line apply to every problem; ``--keep DIR``
keeps the runs' archives for ``evoforge`` to look at. ``--engine-python`` runs another engine
(an older checkout installed in its own venv) under the same protocol, server and reading: the
"before this change" row of a comparison (its archive is read, and migrated, by this one). With
``--workers 2`` (the protocol) two runs of one seed and configuration differ by timing alone
(which evaluation finishes first changes what is selected next), so one seed says nothing; with
``--workers 1`` runs are reproducible, for an A/A check that configurations the engine treats
alike give identical numbers (offline runs were identical; one sloppy run, on a loaded machine,
left the others at its 16th attempt, whose prompt differed: a time-dependent input to the prompt
remains to be found). Asserts nothing.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
from dataclasses import asdict, dataclass, field
from pathlib import Path

from _servers import start_server  # bench/ is on sys.path when run as a script

import evoforge
from evoforge.evolve import mining

ROOT = Path(__file__).resolve().parents[1]
WORKERS = 2  # evaluations in flight; with 1, a run is reproducible (same seed, same run)
FIRST_PROGRAMS = 100  # programs compared between two seeds' runs

PROBLEMS = {
    "circle_packing": "circle_packing",
    "openevolve_example": str(ROOT / "bench" / "openevolve_example"),
}
DEFAULT_PLAN = {  # problem -> (budgets, seeds): ~25 minutes on 2 cores in all
    "circle_packing": ((100, 300, 600), 3),
    "openevolve_example": ((100,), 2),
}
CONFIGS: dict[str, dict[str, object]] = {
    "all_on": {},
    "descriptors=none": {"descriptors": "none"},
    "edit_matching=exact": {"edit_matching": "exact"},
    "novelty=false": {"novelty": False},
    "prompt_evolution=true": {"prompt_evolution": True},
    # fewer wasted model calls: each mechanism off alone, then all four off (as before them)
    # the archive's spread: migration by evaluations off (by accepted programs alone, as before)
    "migration_evaluations=0": {"islands.migration_evaluations": 0},
    # the constants an edit changed, tuned by trials that are evaluations, not calls
    "tune_changed=0": {"tune_changed": 0},
    # the blocks of an edit that scored below its parent, each evaluated alone
    "split_edits=0": {"split_edits": 0},
    # request variation is on by default, the other three off: each is toggled from its default
    "request_variation=false": {"request_variation": False},
    "nothing_new_feedback=true": {"nothing_new_feedback": True},
    "rest_after=3": {"rest_after": 3},
    "mark_fixed_code=true": {"mark_fixed_code": True},
    "calls_off": {
        "request_variation": False,
        "nothing_new_feedback": False,
        "rest_after": 0,
        "mark_fixed_code": False,
    },
    "calls_all_on": {
        "request_variation": True,
        "nothing_new_feedback": True,
        "rest_after": 3,
        "mark_fixed_code": True,
    },
}
TURNED_ON = {"prompt_evolution=true", "nothing_new_feedback=true", "rest_after=3",
             "mark_fixed_code=true", "calls_all_on"}  # fmt: skip
"""Configurations that turn a feature on (off by default): "helps" means that row is better."""
MODELS = ("offline", "sloppy", "clean")
SERVED = {"sloppy": None, "clean": 1.0}  # model setup -> the server's --correct-share
SLOPPY_MODEL = "openai/sloppy"
CALL_CHECKPOINTS = (100, 300, 600)  # best score after this many model calls


@dataclass
class RunResult:
    """One run's numbers (what ``--json`` writes)."""

    problem: str
    model: str
    config: str
    seed: int
    budget: int
    wall_s: float
    best_at: dict[int, float | None]
    attempts: int
    edit_error: float
    duplicate: float
    cells: int
    first_ids: list[str] = field(default_factory=list)
    calls: int = 0  # model requests sent (every attempt, retries included)
    evaluations: int = 0
    best_at_calls: dict[int, float | None] = field(default_factory=dict)
    wasted: dict[str, int] = field(default_factory=dict)  # answers lost, by reason
    migrations: int = 0
    stopped: str = ""  # why a run ended before its budget (e.g. a stall of duplicates)


# --- running -----------------------------------------------------------------------------------


def start_sloppy_server(correct_share: float | None = None) -> tuple[subprocess.Popen[str], str]:
    command = [sys.executable, "-m", "tests.evolve.sloppy_server", "--port", "0"]
    if correct_share is not None:
        command += ["--correct-share", str(correct_share)]
    return start_server(command, ROOT, "the sloppy model server")


def toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value)  # strings and numbers are valid TOML this way


def write_config(folder: Path, name: str) -> Path:
    """The run configuration of ``name``: a key ``section.name`` goes to that section (e.g.
    ``islands.migration_evaluations``), a plain one to ``[search]``."""
    path = folder / f"{re.sub(r'[^A-Za-z0-9_.-]', '-', name)}.toml"
    sections: dict[str, list[str]] = {"search": []}
    for key, value in CONFIGS[name].items():
        section, _, setting = key.rpartition(".")
        sections.setdefault(section or "search", []).append(f"{setting} = {toml_value(value)}")
    lines = [line for section, body in sections.items() for line in (f"[{section}]", *body)]
    path.write_text("\n".join(lines) + "\n")
    return path


def run_one(
    problem: str,
    model: str,
    config: str,
    seed: int,
    budget: int,
    checkpoints: tuple[int, ...],
    tmp: Path,
    url: str | None,
    workers: int = WORKERS,
    engine_python: str = sys.executable,
) -> RunResult:
    db = tmp / f"{problem}-{model}-{config.replace('=', '-')}-{seed}.db"
    db.unlink(missing_ok=True)
    command = [
        engine_python,
        "-m",
        "evoforge",
        "run",
        PROBLEMS[problem],
        "--budget",
        str(budget),
        "--seed",
        str(seed),
        "--workers",
        str(workers),
        "--config",
        str(write_config(tmp, config)),
        "--db",
        str(db),
        "-q",
    ]
    if model in SERVED:
        command += ["--model", SLOPPY_MODEL, "--api-base", str(url)]
    env = {
        **os.environ,
        "OPENAI_API_KEY": "bench-needs-no-key",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    }
    started = time.perf_counter()
    done = subprocess.run(command, cwd=tmp, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode != 0 and not db.exists():
        raise RuntimeError(
            f"{problem}/{model}/{config}/seed {seed} failed ({done.returncode}): "
            f"{done.stderr[-2000:]}"
        )
    # A run that failed part way (e.g. 200 attempts in a row with nothing new to evaluate: a
    # deterministic model on one cell per island) counts with what it reached, never beyond.
    return read_run(db, problem, model, config, seed, budget, checkpoints, wall)


def read_run(
    db: Path,
    problem: str,
    model: str,
    config: str,
    seed: int,
    budget: int,
    checkpoints: tuple[int, ...],
    wall: float,
) -> RunResult:
    with evoforge.open_archive(db) as archive:
        run = archive.latest_run()
        assert run is not None, f"no run in {db}"
        timeline = mining.timeline(archive, run.id)
        best_at: dict[int, float | None] = {}
        for b in checkpoints:
            step = timeline.best_at(b) if b <= run.evaluations else None
            best_at[b] = None if step is None else step.score
        stopped = "" if run.status == "finished" else f"{run.status}: {run.stop_reason}"
        counts = archive.status_counts(run.id)
        attempts = max(1, sum(counts.values()) - 1)  # the seed is no attempt
        islands, first_ids = set(), []
        for program in archive.programs(run.id):
            islands.add(program.island)
            # sourceless rows (edit errors, copies) have ids made from seq: same in every run
            if program.seq > 0 and program.source and len(first_ids) < FIRST_PROGRAMS:
                first_ids.append(program.id)
        cells = sum(len(archive.elites(run.id, i)) for i in sorted(islands) if i >= 0)
        calls, best_at_calls = calls_and_best(archive, run.id)
        migrations = len(archive.events(run.id, "migration"))
    wasted = {k: counts.get(k, 0) for k in WASTE}
    return RunResult(
        problem=problem,
        model=model,
        config=config,
        seed=seed,
        budget=budget,
        wall_s=wall,
        best_at=best_at,
        attempts=attempts,
        edit_error=counts.get("edit_error", 0) / attempts,
        duplicate=counts.get("duplicate", 0) / attempts,
        cells=cells,
        first_ids=first_ids,
        stopped=stopped,
        calls=calls,
        evaluations=run.evaluations,
        best_at_calls=best_at_calls,
        wasted=wasted,
        migrations=migrations,
    )


WASTE = ("duplicate", "edit_error", "syntax_error")
"""Statuses of answers that cost a call and gave nothing to evaluate."""


def calls_and_best(archive: evoforge.Archive, run_id: str) -> tuple[int, dict[int, float | None]]:
    """Model requests sent, and the best score after each of :data:`CALL_CHECKPOINTS` calls.

    Every row of ``llm_calls`` is a request a user pays for (a retried attempt too). The
    best after ``c`` calls is the best ok score among programs up to the ``seq`` of the
    ``c``-th call (a call's row carries the attempt it was made for); None when the run made
    fewer calls (an offline run makes calls too: they are counted the same way).
    """
    seqs = [
        s
        for (s,) in archive.conn.execute(
            "SELECT seq FROM llm_calls WHERE run_id = ? ORDER BY seq, id", (run_id,)
        )
    ]
    best: dict[int, float | None] = {}
    for c in CALL_CHECKPOINTS:
        if c > len(seqs):
            best[c] = None
            continue
        (score,) = archive.conn.execute(
            "SELECT MAX(score) FROM programs WHERE run_id = ? AND status = 'ok' AND seq <= ?",
            (run_id, seqs[c - 1]),
        ).fetchone()
        best[c] = score
    return len(seqs), best


# --- reporting ---------------------------------------------------------------------------------


def mean_sd(values: list[float]) -> tuple[float, float]:
    if not values:
        return math.nan, math.nan
    return statistics.fmean(values), statistics.stdev(values) if len(values) > 1 else 0.0


def fmt(values: list[float], digits: int = 4) -> str:
    m, s = mean_sd(values)
    if math.isnan(m):
        return "-"
    return f"{m:.{digits}f}±{s:.{digits}f}" if len(values) > 1 else f"{m:.{digits}f}"


def overlap(runs: list[RunResult]) -> float | None:
    """Mean, over pairs of seeds, of the share of first programs both runs stored."""
    shares = []
    for a, b in itertools.combinations(runs, 2):
        n = min(len(a.first_ids), len(b.first_ids))
        if n:
            shares.append(len(set(a.first_ids[:n]) & set(b.first_ids[:n])) / n)
    return statistics.fmean(shares) if shares else None


def verdict(config: str, on: list[float], other: list[float]) -> str:
    """Whether the feature ``config`` toggles helps, hurts, or makes no difference within sd."""
    if config == "all_on" or not on or not other:
        return ""
    (m_on, s_on), (m_other, s_other) = mean_sd(on), mean_sd(other)
    gain = m_on - m_other  # > 0: all_on is better
    if config in TURNED_ON:  # a feature turned on, not off
        gain = -gain
    mark = "" if min(len(on), len(other)) > 1 else "?"
    if abs(gain) <= max(s_on, s_other) or gain == 0:
        return "no diff" + mark
    return ("helps" if gain > 0 else "hurts") + mark


def calls_per_eval(r: RunResult) -> float:
    return r.calls / max(r.evaluations, 1)


def wasted_share(r: RunResult, reasons: tuple[str, ...] = ("edit_error", "syntax_error")) -> float:
    """Share of the attempts lost for ``reasons`` (by default: edits that did not apply or
    did not parse, what sloppy writing costs)."""
    return sum(r.wasted.get(k, 0) for k in reasons) / max(r.attempts, 1)


def _best_text(best: dict[int, float | None], unit: str = "") -> str:
    return " ".join(
        f"@{b}{unit}={'-' if v is None else f'{v:.4f}'}" for b, v in sorted(best.items())
    )


def print_run(r: RunResult) -> None:
    print(
        f"run {r.problem:<18} {r.model:<7} {r.config:<21} seed {r.seed}  "
        f"{_best_text(r.best_at)}  {_best_text(r.best_at_calls, 'c')}  "
        f"calls/eval {calls_per_eval(r):4.2f}  edit_error {r.edit_error:5.1%}  "
        f"syntax_error {wasted_share(r, ('syntax_error',)):5.1%}  duplicate {r.duplicate:5.1%}  "
        f"cells {r.cells:3d}  migrations {r.migrations:3d}  "
        f"{r.wall_s:5.1f}s" + (f"  [{r.stopped[:90]}]" if r.stopped else ""),
        flush=True,
    )


def print_table(results: list[RunResult]) -> None:
    groups: dict[tuple[str, str, str], list[RunResult]] = {}
    for r in results:
        groups.setdefault((r.problem, r.model, r.config), []).append(r)
    budgets = sorted({b for r in results for b in r.best_at})
    call_marks = sorted({c for r in results for c in r.best_at_calls})
    head = (
        f"{'problem':<18} {'model':<7} {'config':<21} "
        + " ".join(f"{'best@' + str(b):>17}" for b in budgets)
        + " ".join(f"{'best@' + str(c) + 'c':>17}" for c in call_marks)
        + f" {'calls/ev':>8} {'edit_err':>8} {'syn_err':>7} {'wasted':>6} {'dup':>6}"
        + f" {'cells':>9} {'migr':>7} {'overlap':>7}  verdict"
    )
    print()
    print(head)
    print("-" * len(head))
    for (problem, model, config), runs in groups.items():
        top = max(runs[0].best_at)

        def scores(rs: list[RunResult], b: int) -> list[float]:
            return [v for r in rs if (v := r.best_at.get(b)) is not None]

        on = groups.get((problem, model, "all_on"), [])
        cells = fmt([float(r.cells) for r in runs], 1)
        shared = overlap(runs)
        print(
            f"{problem:<18} {model:<7} {config:<21} "
            + " ".join(
                f"{fmt(scores(runs, b)) if b in runs[0].best_at else '':>17}" for b in budgets
            )
            + " ".join(
                f"{fmt([v for r in runs if (v := r.best_at_calls.get(c)) is not None]):>17}"
                for c in call_marks
            )
            + f" {fmt([calls_per_eval(r) for r in runs], 2):>8}"
            + f" {statistics.fmean(r.edit_error for r in runs):8.1%}"
            + f" {statistics.fmean(wasted_share(r, ('syntax_error',)) for r in runs):7.1%}"
            + f" {statistics.fmean(wasted_share(r) for r in runs):6.1%}"
            + f" {statistics.fmean(r.duplicate for r in runs):6.1%}"
            + f" {cells:>9}"
            + f" {fmt([float(r.migrations) for r in runs], 1):>7}"
            + f" {'-' if shared is None else f'{shared:.0%}':>7}"
            + f"  {verdict(config, scores(on, top), scores(runs, top))}",
            flush=True,
        )


# --- main --------------------------------------------------------------------------------------


def adhoc_config(name: str) -> dict[str, object] | None:
    """The settings of a configuration named on the command line rather than in
    :data:`CONFIGS`: ``key=value`` pairs joined by ``+`` (``islands.count=1+exploitation=0.5``
    style: a key ``section.name`` or a plain ``[search]`` one; values are TOML). ``None`` when
    ``name`` is not of that form."""
    settings: dict[str, object] = {}
    for pair in name.split("+"):
        key, sep, value = pair.partition("=")
        if not sep or not key.strip() or not value.strip():
            return None
        try:
            settings[key.strip()] = tomllib.loads(f"v = {value.strip()}")["v"]
        except tomllib.TOMLDecodeError:
            settings[key.strip()] = value.strip()  # a bare word: a string
    return settings


def _names(text: str, known: dict[str, object] | tuple[str, ...], what: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    if known is CONFIGS:
        for name in names:
            settings = None if name in CONFIGS else adhoc_config(name)
            if settings is not None:
                CONFIGS[name] = settings
    unknown = [n for n in names if n not in known]
    if unknown:
        raise SystemExit(f"unknown {what} {unknown}: choose from {', '.join(known)}")
    return names


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Search quality at equal evaluations, per [search] feature and model.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--budget", help="checkpoints, e.g. 100,300,600 (default: per problem)")
    parser.add_argument("--seeds", type=int, help="seeds 1..N per configuration")
    parser.add_argument(
        "--first-seed", type=int, default=1, help="start the seeds here (more seeds for a run)"
    )
    parser.add_argument("--problems", default=",".join(PROBLEMS), help="comma-separated")
    parser.add_argument("--models", default="offline,sloppy", help="offline,sloppy,clean")
    parser.add_argument(
        "--configs",
        default=",".join(CONFIGS),
        help="comma-separated names, or ad-hoc settings: key=value pairs joined by + "
        "(e.g. islands.count=1+islands.exploitation=0.5)",
    )
    parser.add_argument(
        "--workers", type=int, default=WORKERS, help="evaluations in flight (1: reproducible)"
    )
    parser.add_argument(
        "--folder",
        action="append",
        default=[],
        metavar="NAME=PATH",
        help="another OpenEvolve-format folder to run as problem NAME (e.g. oe_circle_packing="
        "openevolve/examples/circle_packing); repeatable",
    )
    parser.add_argument("--json", type=Path, help="also write every run's numbers here")
    parser.add_argument("--keep", type=Path, help="keep the runs' archives in this folder")
    parser.add_argument(
        "--engine-python",
        default=sys.executable,
        help="the Python whose evoforge makes the runs: another checkout's venv measures that "
        "engine under the same protocol, server and reading (default: this one)",
    )
    args = parser.parse_args(argv)
    for item in args.folder:
        name, sep, path = item.partition("=")
        if not sep or not Path(path, "evaluator.py").is_file():
            raise SystemExit(f"--folder {item!r}: expected NAME=PATH to a folder with evaluator.py")
        PROBLEMS[name] = str(Path(path).resolve())
        DEFAULT_PLAN.setdefault(name, ((100, 300, 600), 3))
    problems = _names(args.problems, PROBLEMS, "problems")
    models = _names(args.models, MODELS, "models")
    configs = _names(args.configs, CONFIGS, "configs")
    plan = {}
    for problem in problems:
        budgets, seeds = DEFAULT_PLAN[problem]
        if args.budget:
            budgets = tuple(sorted(int(b) for b in args.budget.split(",")))
        plan[problem] = (budgets, args.seeds or seeds)
    total = sum(len(models) * len(configs) * seeds for _, seeds in plan.values())

    servers = {m: start_sloppy_server(SERVED[m]) for m in models if m in SERVED}
    results: list[RunResult] = []
    started = time.perf_counter()
    try:
        with tempfile.TemporaryDirectory(prefix="search-quality-") as scratch:
            tmp = str(args.keep) if args.keep else scratch
            Path(tmp).mkdir(parents=True, exist_ok=True)
            for problem, (budgets, seeds) in plan.items():
                numbers = range(args.first_seed, args.first_seed + seeds)
                for model, config, seed in itertools.product(models, configs, numbers):
                    print(
                        f"[{len(results) + 1}/{total}] {problem} {model} {config} seed {seed} "
                        f"(budget {budgets[-1]}; {time.perf_counter() - started:.0f}s so far)",
                        file=sys.stderr,
                        flush=True,
                    )
                    result = run_one(
                        problem,
                        model,
                        config,
                        seed,
                        budgets[-1],
                        budgets,
                        Path(tmp),
                        servers[model][1] if model in servers else None,
                        args.workers,
                        args.engine_python,
                    )
                    results.append(result)
                    print_run(result)
    finally:
        for server, _ in servers.values():
            server.terminate()
            server.wait(timeout=30)
    print_table(results)
    print(f"\n{len(results)} runs in {time.perf_counter() - started:.0f}s", flush=True)
    if args.json:
        args.json.write_text(json.dumps([asdict(r) for r in results], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
