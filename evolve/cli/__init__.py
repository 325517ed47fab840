"""The ``evoforge`` command line."""

from __future__ import annotations

import logging
import os

import click

from evoforge.base.terminal import TerminalSafeFormatter
from evoforge.evolve.cli._common import main_group

# Each command's module is imported when that command runs (or `--help` lists them all), so
# `evoforge status` does not import what `run` or `export` need. name -> (module, attribute).
COMMANDS = {
    # running
    "run": ("_run", "run"),
    "resume": ("_run", "resume"),
    # mining (RUN: an id or a unique prefix; the latest run when it is optional)
    "status": ("_inspect", "status"),
    "stats": ("_mine", "stats"),
    "top": ("_inspect", "top"),
    "show": ("_inspect", "show"),
    "lineage": ("_mine", "lineage"),
    "pareto": ("_mine", "pareto"),
    "failures": ("_mine", "failures"),
    "compare": ("_mine", "compare"),
    "prompts": ("_prompts", "prompts"),
    "export": ("_export", "export"),
    "ui": ("_ui", "ui"),
    # what is installed
    "plugins": ("_plugins", "plugins_command"),
    "problems": ("_plugins", "problems_command"),
    "new": ("_new", "new"),  # a problem folder to start from
}


@click.group(cls=main_group(COMMANDS))
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


def main() -> None:
    from evoforge.plugins import PluginError, load_plugins, pm

    # Diagnostics go to stderr, results to stdout. EVOFORGE_LOG=info also shows each retried
    # model call; keys are redacted from every record (evoforge.evolve.models._redact).
    level = os.environ.get("EVOFORGE_LOG", "warning").upper()
    handler = logging.StreamHandler()  # a record may quote a candidate: terminal-safe lines
    handler.setFormatter(TerminalSafeFormatter("evoforge: %(levelname)s: %(message)s"))
    logging.basicConfig(level=getattr(logging, level, logging.WARNING), handlers=[handler])
    from evoforge.evolve.checks import quiet_candidate_warnings

    quiet_candidate_warnings()
    try:
        load_plugins()
        pm.hook.register_commands(cli=cli)
    except PluginError as exc:
        raise SystemExit(f"Error: {exc}") from None
    cli()


__all__ = ["cli", "main"]
