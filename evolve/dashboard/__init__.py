"""The dashboard: ``evoforge ui`` serves a read-only web view of an archive.

Pages: the runs; a run (best over evaluations overall and per island, evaluations per minute,
statuses over time, model calls and cost); its MAP-Elites grid (global and per island); its
Pareto front; its failures; a program (highlighted source, diff against its parent, metrics,
artifacts, model calls); a program's lineage tree; runs compared. Live pages follow a run as
it goes (the archive is WAL: reading never blocks the run).

Safe by default: 127.0.0.1 only (another address needs ``allow_remote``), a read-only SQLite
connection, autoescaped templates, a Content-Security-Policy without inline script, no debug.
Works offline: plotly.js comes from the ``plotly`` package, nothing from a CDN.

Needs the ``ui`` extra: ``pip install "evoforge[ui]"`` (starlette, uvicorn, jinja2, plotly,
pygments).

Example::

    evoforge ui --db runs.db          # http://127.0.0.1:8765/
"""

from evoforge.evolve.dashboard._server import (
    DEFAULT_HOST,
    DEFAULT_PORT,
    DashboardError,
    check_host,
    is_loopback,
    require_dependencies,
    serve,
)


def create_app(*args, **kwargs):
    """The ASGI app (see :func:`evoforge.evolve.dashboard._app.create_app`); imported on use,
    so ``evoforge`` works without the ``ui`` extra until the dashboard is asked for."""
    from evoforge.evolve.dashboard._app import create_app as create

    return create(*args, **kwargs)


__all__ = [
    # serving
    "DEFAULT_HOST",
    "DEFAULT_PORT",
    "create_app",
    "serve",
    # safety
    "DashboardError",
    "check_host",
    "is_loopback",
    "require_dependencies",
]
