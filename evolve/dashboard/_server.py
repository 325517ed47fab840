"""Serve the dashboard with uvicorn, on a loopback address unless told otherwise."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable
from pathlib import Path

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765


class DashboardError(Exception):
    """The dashboard cannot start: a non-loopback address without consent, a port in use,
    missing dependencies. The message says what to do."""


def require_dependencies() -> None:
    """Check the ``ui`` extra is installed, plotly's bundled plotly.js included.

    Raises:
        DashboardError: something is missing, with the command that installs it.
    """
    try:
        import jinja2  # noqa: F401
        import pygments  # noqa: F401
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401

        from evoforge.evolve.dashboard._app import plotly_js

        plotly_js()
    except ImportError as exc:
        raise DashboardError(
            f"the dashboard needs its dependencies ({exc.name} is missing): "
            'pip install "evoforge[ui]"'
        ) from None
    except RuntimeError as exc:
        raise DashboardError(str(exc)) from None


def is_loopback(host: str) -> bool:
    """Whether ``host`` names this machine only (127.0.0.0/8, ::1, ``localhost``)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_host(host: str, allow_remote: bool) -> None:
    """Refuse an address other machines can reach unless ``allow_remote``.

    Raises:
        DashboardError: ``host`` is not a loopback address and ``allow_remote`` is False.
    """
    if not is_loopback(host) and not allow_remote:
        raise DashboardError(
            f"refusing to serve on {host}: other machines could read the archive (programs, "
            "model answers, errors) with no password. Use the default 127.0.0.1 (an SSH "
            f"tunnel reaches it: ssh -L {DEFAULT_PORT}:127.0.0.1:{DEFAULT_PORT} host), or pass "
            "--allow-remote if you mean it"
        )


def serve(
    db: Path,
    *,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    allow_remote: bool = False,
    on_ready: Callable[[str], None] | None = None,
) -> None:
    """Serve the dashboard of ``db`` until interrupted (Ctrl-C).

    Args:
        db: the archive (read-only).
        host: the address to bind; loopback unless ``allow_remote``.
        port: the port; 0 picks a free one (``on_ready`` gets the URL with it).
        allow_remote: allow a non-loopback ``host`` (and any ``Host`` header).
        on_ready: called with the dashboard's URL once the socket is bound.

    Raises:
        DashboardError: see :func:`check_host`, or the address cannot be bound.
    """
    import uvicorn

    from evoforge.evolve.dashboard._app import LOOPBACK_HOSTS, create_app

    check_host(host, allow_remote)
    allowed = ["*"] if allow_remote else [*LOOPBACK_HOSTS, host]
    app = create_app(db, allowed_hosts=allowed)
    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError as exc:
        sock.close()
        raise DashboardError(
            f"cannot listen on {host}:{port}: {exc.strerror or exc}; choose another --port "
            "(0 picks a free one)"
        ) from None
    sock.listen(128)  # connections wait in the backlog from now on: the URL is good at once
    bound = sock.getsockname()[1]
    shown = f"[{host.strip('[]')}]" if family == socket.AF_INET6 else host
    config = uvicorn.Config(
        app, log_level="warning", access_log=False, server_header=False, proxy_headers=False
    )
    server = uvicorn.Server(config)
    if on_ready is not None:
        on_ready(f"http://{shown}:{bound}/")
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
