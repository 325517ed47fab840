"""Shared CLI pieces: the archive option, terminal-safe output, and turning library errors into
one clear line."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from pathlib import Path

import click

from evoforge.archive import DB_ENV, DEFAULT_DB, default_db
from evoforge.base.terminal import terminal_safe


def echo(message: object = "", **kwargs) -> None:
    """``click.echo`` of :func:`~evoforge.base.terminal.terminal_safe` text: every command
    prints through it, since what it prints may quote a candidate, an evaluator or a model."""
    click.echo(terminal_safe(str(message)), **kwargs)


def db_option(func):
    return click.option(
        "--db",
        "db",
        type=click.Path(dir_okay=False, path_type=Path),
        default=default_db,
        show_default=DEFAULT_DB,
        help=f"SQLite archive file (env {DB_ENV}).",
    )(func)


def json_option(func):
    return click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")(func)


def _user_errors() -> tuple[type[Exception], ...]:
    from evoforge.archive import ArchiveError
    from evoforge.evolve.config import ConfigError
    from evoforge.evolve.mining import ExportError
    from evoforge.evolve.models import ModelError
    from evoforge.evolve.run import SeedError
    from evoforge.plugins import PluginError
    from evoforge.problems import ProblemSpecError

    return (
        ArchiveError,
        ConfigError,
        SeedError,
        ModelError,
        PluginError,
        ProblemSpecError,
        ExportError,
    )


def main_group(lazy: Mapping[str, tuple[str, str]]) -> type[click.Group]:
    """The top-level group: commands in ``lazy`` (``name -> (module of evoforge.evolve.cli,
    attribute)``) are imported on first use; plugins add theirs with ``add_command``."""

    class Group(click.Group):
        """Library errors become one line (``Error: ...``) and exit status 1, not a traceback."""

        def list_commands(self, ctx: click.Context) -> list[str]:
            return sorted({*lazy, *self.commands})

        def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
            if cmd_name not in self.commands and cmd_name in lazy:
                module, attribute = lazy[cmd_name]
                found = importlib.import_module(f"evoforge.evolve.cli.{module}")
                self.add_command(getattr(found, attribute), cmd_name)
            return self.commands.get(cmd_name)

        def invoke(self, ctx: click.Context):
            try:
                return super().invoke(ctx)
            except _user_errors() as exc:  # a seed's error quotes the candidate
                raise click.ClickException(terminal_safe(str(exc))) from exc
            except click.ClickException as exc:
                # Kept as it is (a UsageError keeps its exit status 2), its text made safe.
                setattr(exc, "message", terminal_safe(exc.message))  # noqa: B010 (Final in click)
                raise

    return Group


def require_db(db: Path) -> Path:
    if not db.exists():
        raise click.ClickException(
            f"no archive at {db}; start a run with `evoforge run` or "
            f"pass --db PATH (or set {DB_ENV})"
        )
    return db


def open_archive(db: Path):
    """The archive at ``db``, which must exist (reading never creates one)."""
    from evoforge.archive import Archive

    return Archive(require_db(db))


def run_or_latest(archive, ref: str | None):
    """The run ``ref`` names (an id or a unique prefix of one), or the latest run."""
    run = archive.find_run(ref) if ref else archive.latest_run()
    if run is None:
        raise click.ClickException("the archive has no runs yet; start one with `evoforge run`")
    return run


def emit_json(data) -> None:
    """Machine-readable output on stdout."""
    import json

    echo(json.dumps(data, indent=2, default=str))
