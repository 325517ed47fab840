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

from __future__ import annotations

from typing import TYPE_CHECKING

from evoforge.base.lazy import lazy_package

if TYPE_CHECKING:
    from evoforge.evolve.dashboard._app import create_app as create_app
    from evoforge.evolve.dashboard._server import (
        DEFAULT_HOST as DEFAULT_HOST,
        DEFAULT_PORT as DEFAULT_PORT,
        DashboardError as DashboardError,
        check_host as check_host,
        is_loopback as is_loopback,
        require_dependencies as require_dependencies,
        serve as serve,
    )

__getattr__, __dir__, __all__ = lazy_package(__name__)
