"""``evoforge export``: take the best programs (or the Pareto front) out of the archive."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from evoforge.evolve.cli._common import db_option, echo, emit_json, json_option, open_archive
from evoforge.evolve.mining import fmt


@click.command()
@click.argument("run_id")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@click.option("--best", "best", type=click.IntRange(min=1), help="Export the K best programs.")
@click.option("--pareto", is_flag=True, help="Export the Pareto front over the objectives.")
@click.option(
    "--objectives", help="With --pareto: comma-separated objectives (default: all the run's)."
)
@click.option("--force", is_flag=True, help="Overwrite files already in DIRECTORY.")
@click.option(
    "--apply",
    "branch",
    metavar="BRANCH",
    help="Repository runs: commit the best program's patch on a new BRANCH of the original "
    "repository (its working tree and checked-out branch are left alone).",
)
@click.option(
    "--verify",
    is_flag=True,
    help="Evaluate each exported program again through the problem and check it reproduces "
    "its stored objectives (exit 1 if not; timed objectives vary from run to run).",
)
@db_option
@json_option
def export(run_id, directory, best, pareto, objectives, force, branch, verify, db, as_json):
    """Write programs of RUN_ID (an id or unique prefix) into DIRECTORY: each program as its
    own file, exactly as scored, with a metadata JSON beside it (run, problem, objectives,
    metrics, descriptors, lineage, model). A repository run's programs also get a
    ``git apply``-able patch against the unchanged repository, its metrics in its header.

    \b
    Example:
        evoforge export circle_packing-20261122 --best 1 out/
        evoforge export circle_packing-20261122 --pareto front/ --verify
        evoforge export repo_example-20261126 --best 1 out/ --apply faster-stats
    """
    from evoforge.evolve.mining import export_programs, run_view

    if (best is None) == (not pareto):
        raise click.ClickException("choose what to export: --best K or --pareto")
    if branch is not None and best != 1:
        raise click.ClickException("--apply commits one patch: use it with --best 1")
    if objectives and not pareto:
        raise click.ClickException("--objectives goes with --pareto")
    with open_archive(db) as archive:
        run = archive.find_run(run_id)
        view = run_view(archive, run)
        if pareto:
            chosen = view.objectives
            if objectives:
                try:
                    chosen = tuple(view.objective(n.strip()) for n in objectives.split(","))
                except KeyError as exc:
                    raise click.ClickException(str(exc.args[0])) from None
            if not chosen:
                raise click.ClickException(f"run {run.id} records no objectives to compare on")
            programs = sorted(
                archive.pareto_front(run.id, chosen), key=lambda p: (-(p.score or 0.0), p.seq)
            )
        else:
            programs = archive.top(run.id, best)
        seed = next(archive.programs(run.id), None)
    done = export_programs(run, programs, directory, view=view, force=force)
    patches = _patches(run, done, seed, view, branch)
    checks = _verify(run, [e.program for e in done]) if verify else None
    rows: list[dict[str, Any]] = []
    for index, item in enumerate(done):
        row: dict[str, Any] = {
            "rank": item.rank,
            "program_id": item.program.id,
            "source": str(item.source_path),
            "metadata": str(item.metadata_path),
            "patch": patches.get(item.rank),
            "value": view.value(item.program.score),
            "objectives": item.program.objectives,
        }
        if checks is not None:
            row["verified"] = checks[index]
        rows.append(row)
    failed = checks is not None and not all(c["reproduced"] for c in checks)
    if as_json:
        emit_json({"run_id": run.id, "directory": str(directory), "programs": rows})
    else:
        for row in rows:
            line = f"{row['patch'] or row['source']}  "
            line += view.describe(done[row["rank"] - 1].program.score)
            check = row.get("verified")
            if check is not None:
                again = ", ".join(f"{k}={fmt(v)}" for k, v in check["objectives"].items())
                verdict = "reproduced" if check["reproduced"] else "DIFFERS"
                line += f"  [{verdict}: {check['status']}, {again or 'no objectives'}]"
            echo(line)
        echo(f"{len(rows)} program(s) with metadata written to {directory}", err=True)
    if failed:
        raise SystemExit(1)


def _patches(run, done, seed, view, branch) -> dict[int, str]:
    """Write the patches of a repository run's programs (by rank); with ``branch``, commit the
    first on that new branch of the repository."""
    from evoforge.evolve.mining import apply_patch, write_patches
    from evoforge.problems import load_problem

    written = write_patches(run, done, seed, view) if seed is not None else []
    if branch is not None:
        if not written:
            raise click.ClickException(
                f"--apply needs a repository run (an evoforge.toml problem); run {run.id} "
                "evolves a single program"
            )
        if "\ndiff --git " not in written[0].read_text():
            raise click.ClickException(
                f"the best program of run {run.id} is the unchanged repository: nothing to commit"
            )
        repo = Path(load_problem(run.problem_path).options["repo_dir"])
        message = written[0].read_text().split("\n\n", 1)[0]
        commit = apply_patch(repo, written[0], branch, message)
        echo(f"committed {written[0].name} on branch {branch} of {repo} ({commit[:12]})")
    return {
        item.rank: str(item.source_path.with_suffix(".patch"))
        for item in done
        if item.source_path.with_suffix(".patch") in written
    }


def _verify(run, programs) -> list[dict]:
    """Evaluate the programs again through the run's problem, as a run would."""
    import asyncio

    from evoforge.evolve.config import ConfigError
    from evoforge.evolve.mining import reproduced, verify
    from evoforge.problems import load_problem

    if not Path(run.problem_path).exists():
        raise ConfigError(
            f"cannot verify: run {run.id} was started from {run.problem_path}, which no "
            "longer exists; put the problem back there"
        )
    problem = load_problem(run.problem_path)
    results = asyncio.run(verify(problem, [p.source for p in programs]))
    return [
        {
            "status": str(result.status),
            "objectives": result.objectives,
            "reproduced": str(result.status) == "ok"
            and reproduced(program.objectives, result.objectives),
        }
        for program, result in zip(programs, results, strict=True)
    ]
