"""``evoforge run`` and ``evoforge resume``."""

from __future__ import annotations

import asyncio
import sys
from contextlib import nullcontext
from pathlib import Path

import click

from evoforge.archive import DEFAULT_DB
from evoforge.evolve.cli._common import db_option
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
@click.option("--budget", type=int, help="Evaluations to spend, the seed's included.")
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
    "--selection",
    help="Parent selection: uniform, tournament, rank, fitness_weighted, or a plugin's.",
)
@click.option(
    "--config",
    "config_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="TOML run configuration; flags override it.",
)
@db_option
@_quiet_option
def run(problem, config_file, db, quiet, islands, selection, models, api_base, **flags):
    """Start an evolution run on PROBLEM (a built-in name, a folder, or a spec file).

    \b
    Example:
        evoforge run circle_packing --budget 300 --seed 1
    """
    from evoforge.evolve._config import RunConfig, load_config_file
    from evoforge.evolve._session import start_run

    data = load_config_file(config_file) if config_file else {}
    data["problem"] = problem
    data.update({k: v for k, v in flags.items() if v is not None})
    if len(models) == 1:  # the command line's model replaces the file's ensemble
        data["model"] = models[0]
        data.pop("models", None)
    elif models:
        data["models"] = [{"model": m, "api_base": api_base} for m in models]
    if api_base is not None:
        data["api_base"] = api_base
    island_data = dict(data.get("islands") or {})
    if islands is not None:
        island_data["count"] = islands
    if selection is not None:
        island_data["selection"] = selection
    data["islands"] = island_data
    config = RunConfig.from_dict(data, origin=str(config_file or "command line"))
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
    """Continue RUN_ID (default: the latest run) after any stop, kill -9 included.

    \b
    Example:
        evoforge resume circle_packing-20261122-031500-a1b2 --budget 600
    """
    from evoforge.evolve._session import resume_run
    from evoforge.evolve.cli._common import require_db

    require_db(db)
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
    from evoforge.evolve._progress import LiveProgress

    display = None if quiet else LiveProgress()
    with display or nullcontext():
        run, report = asyncio.run(start(display))
    _summary(run.id, report, db)
    if report.status == "failed":
        sys.exit(1)


def _summary(run_id: str, report, db: Path) -> None:
    from evoforge.archive import Archive

    with Archive(db) as archive:
        seed = next(archive.programs(run_id), None)
        best = (
            archive.get_program(run_id, report.best_program_id) if report.best_program_id else None
        )
    db_flag = "" if str(db) == DEFAULT_DB else f" --db {db}"
    click.echo(f"Run {run_id} {report.status}: {report.reason}")
    click.echo(
        f"{report.evaluations} evaluations; only programs that passed the problem's "
        "correctness check are scored"
    )
    if best is not None:
        click.echo(f"Best  {_objectives(best)}  (program {best.id})")
    if seed is not None and seed.score is not None:
        click.echo(f"Seed  {_objectives(seed)}")
    click.echo(f"Archive: {db.resolve()}")
    click.echo("Look at it with:")
    click.echo(f"  evoforge status {run_id}{db_flag}")
    click.echo(f"  evoforge top {run_id}{db_flag}")
    if best is not None:
        click.echo(f"  evoforge show {best.id}{db_flag} --diff")
    if report.status != "finished":
        click.echo(f"Continue it with: evoforge resume {run_id}{db_flag}")


def _objectives(program) -> str:
    return ", ".join(f"{name}={value:.10g}" for name, value in program.objectives.items())
