"""The ``evoforge`` command line."""

from __future__ import annotations

import logging
import os

import click

from evoforge.evolve.cli._common import main_group
from evoforge.evolve.cli._inspect import show, status, top
from evoforge.evolve.cli._plugins import plugins_command, problems_command
from evoforge.evolve.cli._run import resume, run


@click.group(cls=main_group())
@click.version_option(package_name="evoforge")
def cli() -> None:
    """Evolve programs with LLMs: island-model MAP-Elites in SQLite, sandboxed evaluators.

    \b
    Example (offline, no API key needed):
        evoforge run circle_packing --budget 300
        evoforge top
        evoforge show <program-id> --diff
    """


for command in (run, resume, status, top, show, plugins_command, problems_command):
    cli.add_command(command)


def main() -> None:
    from evoforge.plugins import PluginError, load_plugins, pm

    # Diagnostics go to stderr, results to stdout. EVOFORGE_LOG=info also shows each retried
    # model call; keys are redacted from every record (evoforge.evolve.models._redact).
    level = os.environ.get("EVOFORGE_LOG", "warning").upper()
    logging.basicConfig(
        level=getattr(logging, level, logging.WARNING),
        format="evoforge: %(levelname)s: %(message)s",
    )
    try:
        load_plugins()
        pm.hook.register_commands(cli=cli)
    except PluginError as exc:
        raise SystemExit(f"Error: {exc}") from None
    cli()


__all__ = ["cli", "main"]
