"""``evoforge plugins`` and ``evoforge problems``: what is installed and usable here."""

from __future__ import annotations

import json

import click

from evoforge.evolve.cli._common import json_option


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
    data = {
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
        click.echo(json.dumps(data, indent=2))
        return
    click.echo("plugins:")
    for p in data["plugins"]:
        click.echo(f"  {p['name']} ({p['origin']})")
    click.echo("evaluators:")
    width = max((len(e["name"]) for e in data["evaluators"]), default=0)
    for e in data["evaluators"]:
        state = "available" if e["available"] else f"unavailable: {e['reason']}"
        click.echo(
            f"  {e['name']:{width}}  [{', '.join(e['targets'])}]  {state}  "
            f"(plugin {e['plugin']}, {e['origin']})"
        )
    click.echo("selection strategies: " + ", ".join(data["selection_strategies"]))
    click.echo(
        "model providers: " + ", ".join(data["model_providers"]) + " (plus every litellm provider)"
    )
    click.echo("problems: " + ", ".join(data["problems"]))
    click.echo("candidate isolation on this host (default sandbox options):")
    for name, state in data["isolation"].items():
        click.echo(f"  {name}: {state}")


def _evaluator_row(name: str, cls: type, plugin: str, origin: str) -> dict:
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


@click.command("problems")
@json_option
def problems_command(as_json):
    """List registered problems with their objectives and evaluator."""
    from evoforge import plugins
    from evoforge.problems import load_problem

    rows = []
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
            }
        )
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    for row in rows:
        objectives = ", ".join(f"{k} ({v})" for k, v in row["objectives"].items())
        stages = f"; stages {' > '.join(row['stages'])}" if row["stages"] else ""
        click.echo(
            f"{row['name']:16} evaluator {row['evaluator']:8} {objectives}; "
            f"{row['cells']} cells{stages}  {row['path']}"
        )
