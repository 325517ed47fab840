"""``evoforge plugins`` and ``evoforge problems``: what is installed and usable here."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import click

from evoforge.evolve.cli._common import echo, json_option

if TYPE_CHECKING:
    from evoforge.evaluators import Evaluator


@click.command("plugins")
@json_option
def plugins_command(as_json):
    """List loaded plugins, evaluators (available here or why not), strategies, models, and
    which isolation candidates get on this host (user, namespaces, memory accounting) and why
    any part is off.

    \b
    Example:
        evoforge plugins
        evoforge plugins --json | jq '.evaluators[] | select(.available)'
    """
    from evoforge import evaluators, plugins
    from evoforge.evaluators import sandbox

    origins = evaluators.evaluator_origins()
    data: dict[str, Any] = {
        "plugins": [{"name": n, "origin": o} for n, o in plugins.plugin_names()],
        "evaluators": [
            _evaluator_row(name, cls, *origins[name])
            for name, cls in sorted(evaluators.evaluators().items())
        ],
        "selection_strategies": sorted(plugins.selection_strategies()),
        "model_providers": sorted(plugins.model_providers()),
        "problems": sorted(plugins.problems()),
        "isolation": sandbox.host_isolation(),
    }
    if as_json:
        echo(json.dumps(data, indent=2))
        return
    echo("plugins:")
    for p in data["plugins"]:
        echo(f"  {p['name']} ({p['origin']})")
    echo("evaluators:")
    width = max((len(e["name"]) for e in data["evaluators"]), default=0)
    for e in data["evaluators"]:
        state = "available" if e["available"] else f"unavailable: {e['reason']}"
        echo(
            f"  {e['name']:{width}}  [{', '.join(e['targets'])}]  {state}  "
            f"(plugin {e['plugin']}, {e['origin']})"
        )
    echo("selection strategies: " + ", ".join(data["selection_strategies"]))
    echo(
        "model providers: " + ", ".join(data["model_providers"]) + " (plus every litellm provider)"
    )
    echo("problems: " + ", ".join(data["problems"]))
    echo("candidate isolation on this host (default sandbox options):")
    for name, state in data["isolation"].items():
        echo(f"  {name}: {state}")


def _evaluator_row(name: str, cls: type[Evaluator], plugin: str, origin: str) -> dict:
    """One evaluator's line; a plugin whose ``availability()`` raises is shown, not fatal."""
    try:
        availability = cls.availability()
        available, reason = bool(availability.available), str(availability.reason)
    except Exception as exc:
        available = False
        reason = f"availability() raised {type(exc).__name__}: {exc}"
    return {
        "name": name,
        "targets": list(cls.targets),
        "available": available,
        "reason": "" if available else reason or "no reason given",
        "plugin": plugin,
        "origin": origin,
    }


@click.group("problems", invoke_without_command=True)
@json_option
@click.pass_context
def problems_command(ctx, as_json):
    """List registered problems (evaluator, objectives, baselines, whether they run here),
    then the suites and the built-in examples in other formats, each run by its name.

    \b
    Example:
        evoforge problems
        evoforge problems setup llvm_inlining     # one-time data preparation
    """
    if ctx.invoked_subcommand is not None:
        return
    from evoforge import plugins
    from evoforge.problems import load_problem

    rows: list[dict[str, Any]] = []
    for name, path in sorted(plugins.problems().items()):
        problem = load_problem(path)
        rows.append(
            {
                "name": name,
                "path": path,
                "evaluator": problem.evaluator,
                "objectives": {o.name: str(o.direction) for o in problem.objectives},
                "cells": problem.num_cells,
                "stages": [stage.name for stage in problem.stages],
                "baselines": sorted(problem.baselines)
                + (["measured per session (baselines())"] if problem.measures_baselines else []),
                "tuning": problem.tuning is not None,
                "held_out": [stage.name for stage in problem.held_out],
                "runs_here": "",
            }
        )
        rows[-1]["runs_here"] = _runs_here(problem)
    for row in rows:
        row["kind"] = "problem"
    others = _suite_rows(rows) + _example_rows()
    if as_json:
        echo(json.dumps(rows + others, indent=2))
        return
    for row in rows:
        objectives = ", ".join(f"{k} ({v})" for k, v in row["objectives"].items())
        stages = f"; stages {' > '.join(row['stages'])}" if row["stages"] else ""
        extras = [f"baselines: {', '.join(row['baselines'])}"] if row["baselines"] else []
        if row["held_out"]:
            extras.append(f"held-out: {', '.join(row['held_out'])}")
        if row["tuning"]:
            extras.append("knob tuning")
        state = "runs here" if not row["runs_here"] else f"cannot run here: {row['runs_here']}"
        echo(
            f"{row['name']:16} evaluator {row['evaluator']:8} {objectives}; "
            f"{row['cells']} cells{stages}  {row['path']}"
        )
        echo(f"{'':16} {state}" + (f"; {'; '.join(extras)}" if extras else ""))
    for row in others:
        echo(f"{row['name']:16} {row['kind']:8} {row['about']}  {row['path']}")
        state = "runs here" if not row["runs_here"] else f"cannot run here: {row['runs_here']}"
        echo(f"{'':16} {state}; evoforge run {row['name']}{row['flags']}")


def _suite_rows(problem_rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per suite: its tasks, and why it cannot run here (its first task that cannot;
    a folder of KernelBench task files runs on the evaluator ``--target`` names)."""
    from evoforge.problems import suites

    by_name = {row["name"]: row for row in problem_rows}
    rows = []
    for name, members in sorted(suites().items()):
        if isinstance(members, tuple):
            why = next(
                (f"{m}: {by_name[m]['runs_here']}" for m in members if by_name[m]["runs_here"]),
                "",
            )
            about, path, flags = f"{len(members)} problems: {', '.join(members)}", "", ""
        else:
            tasks = sorted(p.stem for p in members.glob("*.py"))
            about = f"{len(tasks)} KernelBench task files"
            path, flags, why = str(members), " --target triton", _unavailable("triton")
        rows.append(
            {"name": name, "kind": "suite", "about": about, "path": path, "flags": flags}
            | {"runs_here": why}
        )
    return rows


def _example_rows() -> list[dict[str, Any]]:
    """One row per built-in folder in another format (``repo_example``): run through its
    adapter, checked when it runs."""
    from evoforge.problems import examples

    rows = []
    for name, folder in examples().items():
        repository = (folder / "evoforge.toml").is_file()
        about = "a repository (evoforge.toml)" if repository else "a folder an adapter runs"
        rows.append(
            {"name": name, "kind": "example", "about": about, "path": str(folder)}
            | {"flags": "", "runs_here": _unavailable("repo") if repository else ""}
        )
    return rows


def _unavailable(evaluator: str) -> str:
    """Why the evaluator ``evaluator`` cannot run here ("" when it can)."""
    from evoforge import evaluators

    try:
        availability = evaluators.evaluator_class(evaluator).availability()
    except Exception as exc:
        return f"evaluator {evaluator!r}: {exc}"
    return "" if availability.available else f"evaluator {evaluator}: {availability.reason}"


def _runs_here(problem) -> str:
    """Why ``problem`` cannot run on this host ("" when it can)."""
    from evoforge.problems import problem_unready

    return _unavailable(problem.evaluator) or problem_unready(problem)


@problems_command.command("setup")
@click.argument("problem")
def setup_command(problem):
    """Prepare PROBLEM's data once (e.g. fetch corpora from PyPI, collect profiles).

    Idempotent: a second call finds everything in the cache and returns at once.

    \b
    Example:
        evoforge problems setup llvm_inlining
    """
    from evoforge.evolve.run import resolve_problem
    from evoforge.problems import problem_unready, setup_problem

    loaded = resolve_problem(problem)
    missing = [c for c in loaded.requires if problem_unready(loaded).startswith(c)]
    if missing:
        raise click.ClickException(problem_unready(loaded))
    note = setup_problem(loaded)
    why = problem_unready(loaded)
    if why:
        raise click.ClickException(f"{loaded.name} is still not ready: {why}")
    echo(f"{loaded.name}: ready{f' ({note})' if note else ''}")
