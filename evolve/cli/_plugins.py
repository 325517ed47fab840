"""``evoforge plugins`` and ``evoforge problems``: what is installed and usable here."""

from __future__ import annotations

import json

import click

from evolve.cli._common import json_option


@click.command("plugins")
@json_option
def plugins_command(as_json):
    """List loaded plugins, evaluators (available here or why not), strategies and models."""
    import plugins

    data = {
        "plugins": [{"name": n, "origin": o} for n, o in plugins.plugin_names()],
        "evaluators": [
            {
                "name": name,
                "targets": list(cls.targets),
                "available": (a := cls.availability()).available,
                "reason": a.reason,
            }
            for name, cls in sorted(plugins.evaluators().items())
        ],
        "selection_strategies": sorted(plugins.selection_strategies()),
        "model_providers": sorted(plugins.model_providers()),
        "problems": sorted(plugins.problems()),
    }
    if as_json:
        click.echo(json.dumps(data, indent=2))
        return
    click.echo("plugins:")
    for p in data["plugins"]:
        click.echo(f"  {p['name']} ({p['origin']})")
    click.echo("evaluators:")
    for e in data["evaluators"]:
        state = "available" if e["available"] else f"unavailable: {e['reason']}"
        click.echo(f"  {e['name']:10} [{', '.join(e['targets'])}] {state}")
    click.echo("selection strategies: " + ", ".join(data["selection_strategies"]))
    click.echo(
        "model providers: " + ", ".join(data["model_providers"]) + " (plus every litellm provider)"
    )
    click.echo("problems: " + ", ".join(data["problems"]))


@click.command("problems")
@json_option
def problems_command(as_json):
    """List registered problems with their objectives and evaluator."""
    import plugins
    from problems import load_problem

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
            }
        )
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    for row in rows:
        objectives = ", ".join(f"{k} ({v})" for k, v in row["objectives"].items())
        click.echo(
            f"{row['name']:16} evaluator {row['evaluator']:8} {objectives}; "
            f"{row['cells']} cells  {row['path']}"
        )
