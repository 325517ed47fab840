"""``evoforge ui``: the dashboard, served from this machine to this machine."""

from __future__ import annotations

import click

from evoforge.evolve.cli._common import db_option, echo, require_db


@click.command()
@db_option
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--port", default=8765, show_default=True, type=click.IntRange(0, 65535), help="0: any free."
)
@click.option(
    "--allow-remote",
    is_flag=True,
    help="Allow a --host other machines can reach. The dashboard has no login: anyone who "
    "reaches it reads the archive.",
)
def ui(db, host, port, allow_remote):
    """Serve a read-only dashboard of the archive (runs, progress, MAP-Elites grid, Pareto
    front, lineage, programs, failures) at http://127.0.0.1:8765/; it follows a run live.

    \b
    Example:
        evoforge ui --db runs.db
        ssh -L 8765:127.0.0.1:8765 gpu-box   # then open it on your laptop
    """
    from evoforge.evolve.dashboard import DashboardError, require_dependencies, serve

    try:
        require_dependencies()
    except DashboardError as exc:
        raise click.ClickException(str(exc)) from None
    require_db(db)
    from evoforge.archive import Archive

    with Archive(db, read_only=True) as archive:
        pending = archive.pending_migrations
    if pending:
        echo(
            f"evoforge ui: {db} lacks this version's indexes ({', '.join(pending)}); pages "
            "work, more slowly on large runs. Any writing command adds them (`evoforge status`).",
            err=True,
        )

    def ready(url: str) -> None:
        echo(f"evoforge ui: {db} (read-only) at {url}  (Ctrl-C stops it)", err=True)

    try:
        serve(db, host=host, port=port, allow_remote=allow_remote, on_ready=ready)
    except DashboardError as exc:
        raise click.ClickException(str(exc)) from None
    except KeyboardInterrupt:
        pass
