"""The ``evoforge`` command line."""

from __future__ import annotations

import logging
import os

import click

from evoforge.base.terminal import TerminalSafeFormatter
from evoforge.evolve.cli._common import main_group
from evoforge.evolve.cli._export import export
from evoforge.evolve.cli._inspect import show, status, top
from evoforge.evolve.cli._mine import compare, failures, lineage, pareto, stats
from evoforge.evolve.cli._plugins import plugins_command, problems_command
from evoforge.evolve.cli._prompts import prompts
from evoforge.evolve.cli._run import resume, run
from evoforge.evolve.cli._ui import ui


@click.group(cls=main_group())
@click.version_option(package_name="evoforge")
def cli() -> None:
    """Evolve programs with LLMs: island-model MAP-Elites in SQLite, sandboxed evaluators.

    \b
    Example (offline, no API key needed):
        evoforge run circle_packing --budget 300
        evoforge top
        evoforge show <program-id> --diff
        evoforge export <run-id> --best 1 out/
        evoforge ui
    """


for command in (
    # running
    run,
    resume,
    # mining (RUN: an id or a unique prefix; the latest run when it is optional)
    status,
    stats,
    top,
    show,
    lineage,
    pareto,
    failures,
    compare,
    prompts,
    export,
    ui,
    # what is installed
    plugins_command,
    problems_command,
):
    cli.add_command(command)


def main() -> None:
    from evoforge.plugins import PluginError, load_plugins, pm

    # Diagnostics go to stderr, results to stdout. EVOFORGE_LOG=info also shows each retried
    # model call; keys are redacted from every record (evoforge.evolve.models._redact).
    level = os.environ.get("EVOFORGE_LOG", "warning").upper()
    handler = logging.StreamHandler()  # a record may quote a candidate: terminal-safe lines
    handler.setFormatter(TerminalSafeFormatter("evoforge: %(levelname)s: %(message)s"))
    logging.basicConfig(level=getattr(logging, level, logging.WARNING), handlers=[handler])
    try:
        load_plugins()
        pm.hook.register_commands(cli=cli)
    except PluginError as exc:
        raise SystemExit(f"Error: {exc}") from None
    cli()


__all__ = ["cli", "main"]
