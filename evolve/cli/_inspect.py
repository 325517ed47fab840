"""``evoforge status``, ``top`` and ``show``: read the archive (results on stdout)."""

from __future__ import annotations

from dataclasses import asdict

import click

from evoforge.evolve.cli._common import (
    db_option,
    echo,
    emit_json,
    json_option,
    open_archive,
    run_or_latest,
)
from evoforge.evolve.mining import fmt as _fmt


@click.command()
@click.argument("run_id", required=False)
@db_option
@json_option
def status(run_id, db, as_json):
    """Show RUN_ID (default: every suite and run, newest first): budget, best, statuses, grid
    coverage, model calls per evaluation and the calls wasted by reason. RUN_ID may be a
    suite's id: then each task's share of the budget, its best and its ratio to its seed, and
    the allocation's last decisions.

    \b
    Example:
        evoforge status --json
        evoforge status suite-pie_suite-20261127-172322-9f91
    """
    from evoforge.evolve.cli._suite_status import print_suite
    from evoforge.evolve.mining import cost_text, suite_view

    with open_archive(db) as archive:
        suite = archive.find_suite(run_id) if run_id else None
        if suite is not None:
            view = suite_view(archive, suite.id)
            if as_json:
                emit_json(view.to_dict())
            else:
                print_suite(view, db, last=12)
            return
        runs = [archive.find_run(run_id)] if run_id else archive.runs()
        rows = [_status_row(archive, run) for run in runs]
        suites = [] if run_id else [suite_view(archive, s.id) for s in archive.suites()]
    if as_json:
        emit_json(rows if not run_id else rows[0])
        return
    for view in suites:
        print_suite(view, db, last=0)
    if not rows:
        echo("no runs yet; start one with `evoforge run`")
    for row in rows:
        echo(f"{row['id']}  [{row['status']}]  problem {row['problem']}")
        if row["suite"]:
            echo(f"  task {row['suite']['task'] + 1} of suite {row['suite']['id']}")
        echo(
            f"  evaluations {row['evaluations']}/{row['budget']}  attempts "
            f"{row['attempts']}  duplicates {row['duplicates']}  elapsed "
            f"{row['elapsed_s']:.1f} s"
        )
        echo(
            f"  best {row['best_text']} ({row['best_program_id']})  "
            f"elites {row['elites']}/{row['cells']} cells  QD score "
            f"{_fmt(row['qd_score'])}"
        )
        echo("  statuses " + ", ".join(f"{k} {v}" for k, v in row["statuses"].items()))
        echo("  " + cost_text(row["cost"]))
        for m in row["models"]:
            cost = "unknown price" if m["cost_usd"] is None else f"${m['cost_usd']:.4f}"
            if m["unpriced"] and m["cost_usd"] is not None:
                cost += f" (+{m['unpriced']} calls of unknown price)"
            echo(
                f"  model {m['model']}: {m['calls']} calls, {m['improvements']} improved, "
                f"{m['retries']} retries, {m['errors']} failed; tokens "
                f"{m['tokens_in']}/{m['tokens_out']}, {cost}"
            )
        if row["stop_reason"]:
            echo(f"  last stop: {row['stop_reason']}")


def _status_row(archive, run) -> dict:
    from evoforge.archive import model_usage
    from evoforge.evolve.mining import call_cost, run_view

    view = run_view(archive, run)  # the spec may have moved: the run's own record says
    cells = view.num_cells
    stats = archive.stats(run.id, num_cells=cells or 1)
    primary = view.primary
    in_suite = archive.suite_of_run(run.id)
    return {
        "id": run.id,
        "suite": None if in_suite is None else {"id": in_suite[0], "task": in_suite[1]},
        "problem": run.problem,
        "status": run.status,
        "stop_reason": run.stop_reason,
        "evaluations": run.evaluations,
        "budget": run.config.get("budget"),
        "attempts": run.attempts,
        "duplicates": run.duplicates,
        "elapsed_s": run.elapsed_s or 0.0,
        "best_score": run.best_score,  # oriented: bigger is better
        "objective": None if primary is None else primary.name,
        "direction": None if primary is None else str(primary.direction),
        "best": view.value(run.best_score),  # the objective's own value
        "best_text": view.describe(run.best_score),
        "best_program_id": run.best_program_id,
        "elites": stats.num_elites,
        "cells": cells,
        "qd_score": stats.qd_score,
        "statuses": archive.status_counts(run.id),
        "tokens_in": run.tokens_in,
        "tokens_out": run.tokens_out,
        "cost_usd": run.cost_usd,
        "models": [u.to_dict() for u in model_usage(archive, run.id, improvements=True)],
        "cost": call_cost(archive, run.id).to_dict(),
    }


@click.command()
@click.argument("run_id", required=False)
@click.option("-n", "count", default=10, show_default=True, help="How many programs.")
@click.option(
    "--pareto",
    is_flag=True,
    help="The Pareto front over all the problem's "
    "objectives instead of the top by the primary one.",
)
@db_option
@json_option
def top(run_id, count, pareto, db, as_json):
    """List the best programs of RUN_ID (default: the latest run; an id prefix will do).

    Values are each objective's own (a minimised one is not negated).

    \b
    Example:
        evoforge top -n 5
        evoforge top --pareto --json
    """
    from evoforge.evolve.mining import arrow, run_view
    from evoforge.problems import versus

    with open_archive(db) as archive:
        run = run_or_latest(archive, run_id)
        view = run_view(archive, run)
        baselines = archive.baselines(run.id)
        if pareto:
            programs = sorted(
                archive.pareto_front(run.id, view.objectives),
                key=lambda p: (-(p.score or 0.0), p.seq),
            )
        else:
            programs = archive.top(run.id, count)
    if as_json:
        emit_json(
            [
                {
                    **_program_dict(p, with_source=False),
                    "versus": dict(versus(p.objectives, baselines)),
                }
                for p in programs
            ]
        )
        return
    primary = view.primary
    heading = "score" if primary is None else f"{primary.name} ({arrow(primary)})"
    echo(f"{'rank':>4}  {'program':16}  {heading:>16}  {'seq':>6}  {'gen':>4}  island  objectives")
    for rank, p in enumerate(programs, start=1):
        objectives = ", ".join(f"{k}={_fmt(v)}" for k, v in p.objectives.items())
        ratios = "".join(f"  [vs {label}: {r}]" for label, r in versus(p.objectives, baselines))
        echo(
            f"{rank:>4}  {p.id:16}  {_fmt(view.value(p.score)):>16}  {p.seq:>6}  "
            f"{p.generation:>4}  {p.island:>6}  {objectives}{ratios}"
        )


@click.command()
@click.argument("program_id")
@click.option("--run", "run_id", help="Run to look in when the id exists in several.")
@click.option("--diff", "as_diff", is_flag=True, help="Show the diff against the parent.")
@db_option
@json_option
def show(program_id, run_id, as_diff, db, as_json):
    """Show one program (an id or unique prefix, or RUN:ID): metrics, status, artifacts,
    source. A program stored in several runs (a seed, in every run of its problem) is shown
    from the latest of them; RUN:ID or --run chooses another. Run ids may be prefixes.

    \b
    Example:
        evoforge show 3fa2 --diff
        evoforge show circle_packing-20261122:090a4afd
    """
    try:
        program, diff, view, others = _find_shown(program_id, run_id, as_diff, db)
    except click.ClickException as exc:
        if not as_json:
            raise
        emit_json({"error": exc.format_message()})
        raise SystemExit(1) from None
    if others and not as_json:
        echo(
            f"program {program.id} is in {len(others) + 1} runs; showing the latest, "
            f"{program.run_id} (others: {', '.join(others[:5])}"
            f"{' ...' if len(others) > 5 else ''}; choose with RUN:ID or --run)",
            err=True,
        )
    if as_json:
        data = _program_dict(program, with_source=True)
        if diff is not None:
            data["diff"] = diff
        emit_json(data)
        return
    echo(
        f"program {program.id}  run {program.run_id}  seq {program.seq}  "
        f"generation {program.generation}  island {program.island}"
    )
    echo(
        f"status {program.status}  {view.describe(program.score)}  cell {program.cell}  "
        f"parent {program.parent_id}  model {program.model}"
    )
    for name, values in (("objectives", program.objectives), ("descriptors", program.descriptors)):
        if values:
            echo(f"{name}: " + ", ".join(f"{k}={_fmt(v)}" for k, v in values.items()))
    for name, text in program.artifacts.items():
        echo(f"--- {name} ---\n{text}")
    if diff is not None:
        echo(diff or "(no parent: this is the seed)")
    elif program.source is not None:
        echo("--- source ---")
        echo(program.source)
    else:
        echo("--- the model's answer (it could not be applied) ---")
        echo(program.edit or "")


def _find_shown(program_id: str, run_id: str | None, as_diff: bool, db):
    """``(program, diff, view, other runs holding it)`` for :func:`show`.

    Raises:
        click.ClickException: the archive, run or program is not found, or the id is
            ambiguous; the message says how to fix it.
    """
    from evoforge.archive import ArchiveError
    from evoforge.evolve.mining import run_view

    if ":" in program_id:
        ref, program_id = program_id.rsplit(":", 1)
        if run_id is not None and ref != run_id:
            raise click.ClickException(
                f"--run {run_id} and {ref}:{program_id} name two runs; give one of them"
            )
        run_id = ref
    try:
        with open_archive(db) as archive:
            if run_id is not None:
                run_id = run_or_latest(archive, run_id).id
            program = archive.find_program(program_id, run_id=run_id, latest=True)
            others = [] if run_id else archive.program_runs(program.id)[1:]
            diff = archive.diff(program.run_id, program.id) if as_diff else None
            view = run_view(archive, archive.run(program.run_id))
    except ArchiveError as exc:
        raise click.ClickException(str(exc)) from exc
    return program, diff, view, others


def _program_dict(program, *, with_source: bool) -> dict:
    data = asdict(program)
    if not with_source:
        data.pop("source", None)
        data.pop("edit", None)
    return data
