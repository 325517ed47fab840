"""The dashboard's ASGI application (Starlette): pages, their JSON API, static files.

Safe by default, because what it shows is untrusted (candidate source, model answers, a
candidate's stderr):

* every page is a Jinja2 template with autoescaping; the page's data travels as JSON in a
  ``<script type="application/json">`` element with ``<``, ``>`` and ``&`` escaped, and the
  script builds the DOM with ``textContent`` only;
* a Content-Security-Policy allows scripts from this server only (no inline script, no
  ``eval``), no frames, no form posts elsewhere, no other origin to connect to; plus
  ``nosniff``, ``no-referrer``;
* the archive is opened read-only (SQLite ``mode=ro``, ``query_only``) for each request;
* requests must name a loopback host (``127.0.0.1``, ``localhost``, ``[::1]``), so a web page
  that rebinds its DNS name to 127.0.0.1 cannot read the archive through the user's browser;
* no debug mode: an error is a short page, the traceback goes to the server's log.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.resources
import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.gzip import GZipMiddleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from evoforge.archive import Archive
from evoforge.evolve.dashboard import _pages
from evoforge.evolve.dashboard._highlight import highlight_diff, highlight_python, style_css
from evoforge.evolve.dashboard._suite_page import SuiteNotFound, suite_page

log = logging.getLogger("evoforge.dashboard")
PACKAGE = importlib.resources.files("evoforge.evolve.dashboard")
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]", "::1")
POLL_MS = 2000  # live pages ask for new data this often (slower when the server is slow)
# Scripts: this server's files only (no inline script, no eval). Styles may be inline because
# plotly.js writes its own <style> rules at run time; CSS cannot run script, and nothing
# untrusted reaches the page unescaped to inject any.
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'"
)
SECURITY_HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
]


def plotly_js() -> Path:
    """plotly.js as the ``plotly`` package ships it for offline use (no CDN)."""
    import plotly

    path = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    if not path.is_file():
        raise RuntimeError(
            f"the plotly package has no {path}; reinstall it: pip install 'evoforge[ui]'"
        )
    return path


class SecurityHeaders:
    """Adds :data:`SECURITY_HEADERS` to every response (plain ASGI: no copy of the body)."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message) -> None:
            if message["type"] == "http.response.start":
                names = {name for name, _ in message.get("headers", [])}
                message["headers"] = list(message.get("headers", [])) + [
                    h for h in SECURITY_HEADERS if h[0] not in names
                ]
            await send(message)

        await self.app(scope, receive, with_headers)


def _environment() -> Environment:
    env = Environment(
        loader=FileSystemLoader(str(PACKAGE / "templates")),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["page_json"] = lambda data: Markup(_pages.to_json(data))  # escaped in to_json
    env.filters["python"] = lambda text: Markup(highlight_python(text))  # pygments escapes
    env.filters["diff"] = lambda text: Markup(highlight_diff(text))
    return env


def create_app(
    db: str | Path, *, allowed_hosts: Sequence[str] = LOOPBACK_HOSTS, poll_ms: int = POLL_MS
) -> Starlette:
    """The dashboard for the archive at ``db`` (opened read-only per request).

    Args:
        db: the SQLite archive; it must exist.
        allowed_hosts: ``Host`` header values accepted (``*`` accepts any: only with
            ``--allow-remote``).
        poll_ms: how often live pages ask for new data, in milliseconds.
    """
    db = Path(db)
    Archive(db, read_only=True).close()  # fail now, with the archive's own message
    env = _environment()
    version = hashlib.sha256((PACKAGE / "static" / "dashboard.js").read_bytes()).hexdigest()[:12]

    def page(template: str, builder: Callable[..., dict[str, Any]], *params: str):
        def args(request: Request) -> list[Any]:
            values = [request.path_params[p] for p in params if p in request.path_params]
            return values + _query_args(request, template)

        def data(request: Request) -> dict[str, Any]:
            with Archive(db, read_only=True) as archive:
                archive.conn.execute("PRAGMA mmap_size = 268435456")  # share the OS page cache
                return builder(archive, *args(request))

        async def html(request: Request) -> Response:
            from starlette.concurrency import run_in_threadpool

            try:
                found = await run_in_threadpool(data, request)
            except (_pages.NotFound, SuiteNotFound, ValueError) as exc:
                return _error(env, 404, str(exc), version)
            body = env.get_template(f"{template}.html").render(
                data=found, page=template, version=version, poll_ms=poll_ms, db=db.name
            )
            return HTMLResponse(body, headers={"cache-control": "no-store"})

        async def api(request: Request) -> Response:
            from starlette.concurrency import run_in_threadpool

            try:
                found = await run_in_threadpool(data, request)
            except (_pages.NotFound, SuiteNotFound, ValueError) as exc:
                return Response(
                    _pages.to_json({"error": str(exc)}), 404, media_type="application/json"
                )
            return Response(
                _pages.to_json(found),
                media_type="application/json",
                headers={"cache-control": "no-store"},
            )

        return html, api

    routes: list[BaseRoute] = []
    for path, template, builder, params in (
        ("/", "runs", _pages.runs_page, ()),
        ("/compare", "compare", _pages.compare_page, ()),
        ("/suites/{suite_id}", "suite", suite_page, ("suite_id",)),
        ("/runs/{run_id}", "run", _pages.run_page, ("run_id",)),
        ("/runs/{run_id}/grid", "grid", _pages.grid_page, ("run_id",)),
        ("/runs/{run_id}/pareto", "pareto", _pages.pareto_page, ("run_id",)),
        ("/runs/{run_id}/failures", "failures", _pages.failures_page, ("run_id",)),
        ("/runs/{run_id}/prompts", "prompts", _pages.prompts_page, ("run_id",)),
        (
            "/runs/{run_id}/programs/{program_id}",
            "program",
            _pages.program_page,
            ("run_id", "program_id"),
        ),
        (
            "/runs/{run_id}/programs/{program_id}/lineage",
            "lineage",
            _pages.lineage_page,
            ("run_id", "program_id"),
        ),
    ):
        html, api = page(template, builder, *params)
        routes.append(Route(path, html, name=template))
        routes.append(Route("/api" + (path if path != "/" else "/runs"), api))

    async def source(request: Request) -> Response:
        """The program's source as a file to save (``text/plain``: never rendered)."""
        from starlette.concurrency import run_in_threadpool

        run_id, program_id = request.path_params["run_id"], request.path_params["program_id"]

        def read() -> str | None:
            with Archive(db, read_only=True) as archive:
                if not archive.has_program(run_id, program_id):
                    return None
                return archive.get_program(run_id, program_id).source

        text = await run_in_threadpool(read)
        if text is None:
            return _error(env, 404, f"no program {program_id!r} in run {run_id!r}", version)
        return Response(
            text,
            media_type="text/plain; charset=utf-8",
            headers={"content-disposition": f'attachment; filename="{program_id}.py"'},
        )

    routes.append(Route("/runs/{run_id}/programs/{program_id}/source.py", source))
    plotly_path = plotly_js()
    pygments_css = style_css()

    async def plotly_route(request: Request) -> Response:
        return FileResponse(
            plotly_path,
            media_type="text/javascript",
            headers={"cache-control": "public, max-age=86400"},
        )

    async def pygments_route(request: Request) -> Response:
        return Response(pygments_css, media_type="text/css")

    async def favicon(request: Request) -> Response:
        return Response(status_code=204)

    routes += [
        Route("/favicon.ico", favicon),
        Route("/vendor/plotly.min.js", plotly_route),
        Route("/vendor/pygments.css", pygments_route),
        Mount("/static", StaticFiles(directory=str(PACKAGE / "static")), name="static"),
    ]

    async def not_found(request: Request, exc: Exception) -> Response:
        return _error(env, 404, f"no page at {request.url.path}", version)

    async def server_error(request: Request, exc: Exception) -> Response:
        log.exception("dashboard error on %s", request.url.path, exc_info=exc)
        return _error(env, 500, "the dashboard failed on this page; see its log", version)

    middleware = [
        Middleware(SecurityHeaders),
        Middleware(TrustedHostMiddleware, allowed_hosts=list(allowed_hosts)),
        Middleware(GZipMiddleware, minimum_size=1024),
    ]
    return Starlette(
        debug=False,
        routes=routes,
        middleware=middleware,
        exception_handlers={404: not_found, 500: server_error},
    )


def _query_args(request: Request, template: str) -> list[Any]:
    q = request.query_params
    if template == "grid":
        island = q.get("island", "-1")
        try:
            number = int(island)
        except ValueError:
            raise _pages.NotFound(f"island must be a whole number, got {island!r}") from None
        return [number, q.get("x") or None, q.get("y") or None]
    if template == "pareto":
        return [q.get("x") or None, q.get("y") or None]
    if template == "failures":
        return [q.get("status") or None]
    if template == "compare":
        return [[r for r in q.getlist("run") if r]]
    return []


@functools.cache
def _error_template(env: Environment):
    return env.get_template("error.html")


def _error(env: Environment, status: int, message: str, version: str) -> HTMLResponse:
    body = _error_template(env).render(
        data={"title": "Not found" if status == 404 else "Error", "message": message},
        page="error",
        version=version,
        poll_ms=0,
        db="",
    )
    return HTMLResponse(body, status_code=status)
