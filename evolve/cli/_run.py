"""``evoforge run`` and ``evoforge resume``."""

from __future__ import annotations

import sys
from contextlib import nullcontext
from pathlib import Path

import click

from evoforge.archive import DEFAULT_DB
from evoforge.evolve.cli._common import db_option, echo
from evoforge.evolve.models import POLICIES


def _quiet_option(func):
    return click.option("--quiet", "-q", is_flag=True, help="No live progress on stderr.")(func)


def _spending_options(func):
    func = click.option(
        "--token-budget", type=int, help="Stop once model calls used this many tokens."
    )(func)
    return click.option(
        "--usd-budget", type=float, help="Stop once model calls cost this many US dollars."
    )(func)


@click.command()
@click.argument("problem")
@click.option(
    "--budget",
    type=int,
    help="Evaluations to spend, the seed's included; for a suite, in total across its tasks.",
)
@click.option(
    "--budget-per-task",
    type=int,
    help="Suites: run each task on its own, one after the other, with this budget each.",
)
@click.option(
    "--allocation",
    type=click.Choice(["bandit", "equal"]),
    help="Suites: split the budget equally (the default) or grant evaluations where recent "
    "improvement is (bandit) ([suite] allocation).",
)
@click.option("--seed", type=int, help="Random seed (reproducible with --workers 1).")
@click.option("--islands", type=int, help="Number of islands.")
@click.option(
    "--model",
    "models",
    multiple=True,
    help="litellm model string, e.g. openai/gpt-4o-mini (default: the built-in "
    "offline/mutator). Repeat it for an ensemble; weights and per-model settings go in --config.",
)
@click.option("--api-base", help="Endpoint for self-hosted or proxy models.")
@click.option("--temperature", type=float, help="Sampling temperature (default 0.7).")
@click.option("--max-tokens", type=int, help="Longest answer, in tokens (default 4096).")
@click.option(
    "--max-context",
    type=int,
    help="The models' context window, in tokens (a local server's): prompts are trimmed to "
    "leave --max-tokens of it for the answer ([prompts] max_context).",
)
@click.option(
    "--ensemble",
    type=click.Choice(POLICIES),
    help="How each call picks its model: by weight, or UCB1 on improvement per unit cost.",
)
@click.option(
    "--outage",
    "outage_s",
    type=float,
    help="Stop (exit 1) when every model has failed for this many seconds (default 300).",
)
@click.option("--workers", type=int, help="Evaluations in flight (default: CPU cores).")
@click.option("--llm-concurrency", type=int, help="Model calls in flight.")
@click.option(
    "--proposal-workers",
    type=int,
    help="Processes that build prompts, call models and apply answers (default: half the cores).",
)
@click.option(
    "--executor",
    type=click.Choice(["local", "ray"]),
    help="Where evaluations run: this host (default) or a Ray cluster (needs evoforge[ray]).",
)
@click.option(
    "--ray-address", help="Ray cluster to evaluate on, e.g. HEAD:6379 (default: a local one)."
)
@click.option("--max-wall", "max_wall_s", type=float, help="Wall-time budget in seconds.")
@_spending_options
@click.option(
    "--tune/--no-tune",
    default=None,
    help="Tune the knobs candidates declare, for problems that ask for it (default: on).",
)
@click.option(
    "--selection",
    help="Parent selection: uniform, tournament, rank, fitness_weighted, pareto_instances "
    "(per-instance leaders, for problems that declare instances), or a plugin's.",
)
@click.option(
    "--target",
    help="KernelBench tasks: the kernel language, triton (default) or cuda.",
)
@click.option(
    "--seed-file",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    help="KernelBench task: start from this ModelNew program instead of the task's Model.",
)
@click.option(
    "--config",
    "config_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="TOML run configuration; flags override it.",
)
@db_option
@_quiet_option
def run(
    problem,
    config_file,
    db,
    quiet,
    islands,
    selection,
    models,
    api_base,
    target,
    seed_file,
    max_context,
    budget_per_task,
    allocation,
    **flags,
):
    """Start an evolution run on PROBLEM: a built-in name, a problem folder or spec file, a
    KernelBench task file, an OpenEvolve folder, or a suite: kernel_suite, pallas_suite,
    pie_suite, a folder of KernelBench tasks or of problem folders. A suite is one run with
    one budget (--budget, in total), granted to its tasks as they improve; --budget-per-task N
    runs each task on its own instead.

    \b
    Example:
        evoforge run circle_packing --budget 300 --seed 1
        evoforge run pie_suite --budget 600
        evoforge run KernelBench/level1/19_ReLU.py --target triton --budget 20
        evoforge run openevolve/examples/function_minimization --budget 50
    """
    from evoforge.evolve.config import RunConfig, layered, load_config_file
    from evoforge.evolve.run import resolve, start_run

    resolved = resolve(problem, target=target, seed_file=seed_file)
    for note in resolved.notes:
        echo(f"evoforge: {note}", err=True)
    file_data = load_config_file(config_file) if config_file else {}
    flag_data = {k: v for k, v in flags.items() if v is not None}
    if len(models) == 1:  # the command line's model replaces the file's ensemble
        flag_data["model"] = models[0]
    elif models:
        flag_data["models"] = [{"model": m, "api_base": api_base} for m in models]
    if api_base is not None:
        flag_data["api_base"] = api_base
    if max_context is not None:
        flag_data["prompts"] = {"max_context": max_context}
    island_flags = {"count": islands, "selection": selection}
    island_flags = {k: v for k, v in island_flags.items() if v is not None}
    if island_flags:
        flag_data["islands"] = island_flags
    if allocation is not None:
        flag_data["suite"] = {"allocation": allocation}
    origin = str(config_file or "command line")
    if not resolved.batch and budget_per_task is not None:
        raise click.UsageError(f"--budget-per-task applies to suites; {problem} is one problem")
    total = flag_data.pop("budget", None) if resolved.batch else None
    if budget_per_task is not None:
        if total is not None:
            raise click.UsageError("give --budget (the suite's) or --budget-per-task, not both")
        flag_data["budget"] = budget_per_task

    def settings(one) -> dict:
        data = layered(one.run_defaults, file_data, flag_data)
        # A suite's task is its own problem (its folder), never the suite's name.
        data["problem"] = str(one.spec_path.parent) if resolved.batch else problem
        return data

    if resolved.batch:
        from evoforge.evolve.cli._batch import run_batch_command, run_suite_command

        if budget_per_task is not None:
            run_batch_command(resolved, settings, db, quiet)
        else:
            run_suite_command(problem, resolved, settings, db, quiet, total)
        return
    config = RunConfig.from_dict(settings(resolved.problems[0]), origin=origin)
    _run_to_end(
        lambda progress: start_run(config, db, progress=progress, handle_signals=True), db, quiet
    )


@click.command()
@click.argument("run_id", required=False)
@click.option("--budget", type=int, help="Raise the run's evaluation budget.")
@_spending_options
@db_option
@_quiet_option
def resume(run_id, budget, usd_budget, token_budget, db, quiet):
    """Continue RUN_ID (default: the latest run) after any stop, kill -9 included. RUN_ID may
    be a suite's id (or one of its tasks' runs): the suite goes on, and --budget raises its
    total.

    \b
    Example:
        evoforge resume circle_packing-20261122-031500-a1b2 --budget 600
        evoforge resume suite-pie_suite-20261127-172322-9f91
    """
    from evoforge.evolve.cli._batch import resume_suite_command, suite_to_resume
    from evoforge.evolve.cli._common import require_db
    from evoforge.evolve.run import resume_run

    require_db(db)
    suite = suite_to_resume(db, run_id)
    if suite is not None:  # a suite, or a task of one: the suite goes on
        resume_suite_command(suite, db, quiet, budget)
        return
    _run_to_end(
        lambda progress: resume_run(
            run_id,
            db,
            budget=budget,
            usd_budget=usd_budget,
            token_budget=token_budget,
            progress=progress,
            handle_signals=True,
        ),
        db,
        quiet,
    )


def _run_to_end(start, db: Path, quiet: bool) -> None:
    import asyncio

    from evoforge.evolve.run import LiveProgress

    display = None if quiet else LiveProgress()
    with display or nullcontext():
        run, report = asyncio.run(start(display))
    _summary(run.id, report, db)
    if report.status == "failed":
        sys.exit(1)


def _summary(run_id: str, report, db: Path) -> None:
    from evoforge.archive import Archive
    from evoforge.problems import versus

    with Archive(db) as archive:
        seed = next(archive.programs(run_id), None)
        best = (
            archive.get_program(run_id, report.best_program_id) if report.best_program_id else None
        )
        baselines = archive.baselines(run_id)
        held_out = archive.events(run_id, "held_out")
        sessions = [e for e in archive.events(run_id) if e.kind in ("run_start", "run_resume")]
        checks_only = bool(sessions and sessions[-1].data.get("correctness_only"))
        passed = archive.count_programs(run_id, "ok")
    db_flag = "" if str(db) == DEFAULT_DB else f" --db {db}"
    echo(f"Run {run_id} {report.status}: {report.reason}")
    if checks_only:
        why = "; ".join(sorted(set(sessions[-1].data.get("unmeasurable", {}).values())))
        echo(
            f"Correctness only on this host ({why}): {passed} of {report.evaluations} "
            "programs passed; an error within tolerance is a pass, not a score"
        )
    inputs = (seed.metrics or {}).get("inputs") if seed is not None else None
    if isinstance(inputs, str) and "shrunk" in inputs:
        echo(f"Inputs: {inputs}")
    if best is not None:
        echo(f"Best  {_objectives(best)}  (program {best.id})")
    if seed is not None and seed.score is not None:
        echo(f"Seed  {_objectives(seed)}")
    if baselines:
        echo("Baselines:")
        for label, values in baselines.items():
            echo(f"  {label}: {_values(values)}")
    for label, ratios in versus(best.objectives, baselines) if best is not None else ():
        echo(f"Best vs {label}: {ratios}")
    if held_out:
        _held_out_lines(held_out[-1].data, baselines)
    echo(f"Archive: {db.resolve()}")
    echo("Look at it with:")
    echo(f"  evoforge status {run_id}{db_flag}")
    echo(f"  evoforge top {run_id}{db_flag}")
    if best is not None:
        echo(f"  evoforge show {best.id}{db_flag} --diff")
    if report.status != "finished":
        echo(f"Continue it with: evoforge resume {run_id}{db_flag}")


def _held_out_lines(data: dict, baselines: dict) -> None:
    """The best program's held-out result (code never shown to the model) and its ratios."""
    from evoforge.problems import versus

    if data.get("status") != "ok":
        echo(f"Held-out: the best program {data.get('status')} there: {data.get('error', '')}")
        return
    metrics = {k: v for k, v in data.get("metrics", {}).items() if k != "stages_passed"}
    shown = ", ".join(
        f"{k}={v:.10g}" if isinstance(v, float) else f"{k}={v}"
        for k, v in metrics.items()
        if isinstance(v, int | float) and not isinstance(v, bool)
    )
    stages = data.get("stages") or ["held_out"]
    echo(
        f"Held-out (program {data.get('program')}, stage {', '.join(stages)}, run once at the "
        f"end, never shown to the model): {shown}"
    )
    scoped = {f"{stages[-1]}.{k}": v for k, v in metrics.items() if isinstance(v, int | float)}
    for label, ratios in versus(scoped, baselines):
        echo(f"Held-out vs {label}: {ratios}")


def _objectives(program) -> str:
    return _values(program.objectives)


def _values(values) -> str:
    return ", ".join(f"{name}={value:.10g}" for name, value in values.items())
