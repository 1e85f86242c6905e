"""The web workbench: a Starlette app that serves one page and a JSON API over ``interpreter.api``.

Starlette (with uvicorn as the ASGI server) because it is small, maintained and
typed, has a test client, and needs nothing else: the page is static files and
every answer is JSON. The work itself runs in a pool of worker processes
(work.py) under a time limit, never on the event loop.

Endpoints (all JSON; POST bodies are JSON objects):
  GET  /api/rulesets                    the open rulesets, their shipped situations and house rules
  POST /api/describe   {ruleset, overlays}          procedures, tables (full grids), stacks, catalogues
  POST /api/schema     {ruleset, procedure, overlays}  a procedure's inputs schema (umpire schema)
  POST /api/source     {ruleset, kind, name}        a shipped situation's or house rule's text
  POST /api/resolve    {ruleset, situation, overlays, seed}         umpire resolve --json
  POST /api/odds       {ruleset, situation, overlays, by, all_dice} umpire odds --json
  POST /api/simulate   {..., runs, seed}                            umpire simulate --json
  POST /api/diff       {ruleset, overlays, situation?, by, keep_dice} umpire diff --json
  POST /api/charts     {ruleset, cells, name}       filled chart cells as an overlay file (checked)
  POST /api/chart_check {ruleset, tables, name}     the chart editor's grids checked cell by cell (web/charts.py)
A situation is {"shipped": NAME} or {"text": ..., "name": ...}; overlays are a list of the same.
Errors: status 400 (input) or 422 (cannot adjudicate) with {"error": {text, diagnostics}};
413 body too large, 503 busy, 504 time limit.
"""

from __future__ import annotations

import json
import tempfile
from contextlib import asynccontextmanager
from pathlib import Path

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from .work import Busy, TimeLimit, WorkerCrashed, WorkerPool

STATIC = Path(__file__).parent / "static"
MAX_BODY = 1_000_000
"""Largest request body accepted, in bytes (a situation or overlay file is a few kilobytes)."""


class BodyLimit:
    """ASGI middleware: refuse a request body over ``limit`` bytes with 413, before reading it all."""

    def __init__(self, app, limit: int):
        self.app, self.limit = app, limit

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        length = dict(scope.get("headers") or []).get(b"content-length")
        if length is not None and (not length.isdigit() or int(length) > self.limit):
            return await _too_large(self.limit)(scope, receive, send)
        seen = 0

        async def limited():
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    raise _TooLarge()
            return message
        try:
            await self.app(scope, limited, send)
        except _TooLarge:
            await _too_large(self.limit)(scope, receive, send)


class _TooLarge(Exception):
    pass


def _too_large(limit: int):
    return _error(413, f"error: the request is larger than the limit ({limit:,} bytes)")


def _error(status: int, text: str, kind: str = "input") -> JSONResponse:
    return JSONResponse({"error": {"kind": kind, "text": text, "diagnostics": []}}, status)


def create_app(rulesets: list, workers: int = 2, time_limit: float = 10.0, max_body: int = MAX_BODY,
               memory_mb: int = 2048) -> Starlette:
    """The workbench for these ruleset folders (each is checked first: a bad ruleset raises InputError)."""
    from .jobs import Workspace
    upload = tempfile.TemporaryDirectory(prefix="umpire-web-")
    roots = [str(Path(r).resolve()) for r in rulesets]
    Workspace(roots, upload.name)        # load and check each ruleset now, so errors show at start-up
    pool = WorkerPool(roots, upload.name, workers, time_limit, memory_mb)

    async def work(name: str, params) -> JSONResponse:
        try:
            status, data = await pool.run(name, params)
        except Busy as e:
            return _error(503, f"error: {e}", "busy")
        except TimeLimit as e:
            return _error(504, f"limit reached: {e}", "limit")
        except WorkerCrashed as e:
            return _error(500, f"error: {e}", "limit")
        if status == "ok":
            return JSONResponse(data)
        return JSONResponse({"error": data}, 400 if data.get("kind") == "input" else 422)

    async def body(request: Request):
        try:
            data = json.loads(await request.body())
        except (ValueError, UnicodeDecodeError) as e:
            return None, _error(400, f"error: the request body is not JSON ({e})")
        if not isinstance(data, dict):
            return None, _error(400, "error: the request body must be a JSON object")
        return data, None

    def post(name: str):
        async def endpoint(request: Request):
            data, problem = await body(request)
            return problem or await work(name, data)
        return Route(f"/api/{name}", endpoint, methods=["POST"], name=name)

    async def rulesets_endpoint(request: Request):
        return await work("rulesets", {})

    async def index(request: Request):
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache"})

    @asynccontextmanager
    async def lifespan(app):
        try:
            yield
        finally:
            pool.close()
            upload.cleanup()

    routes = [Route("/", index), Route("/api/rulesets", rulesets_endpoint)] + \
        [post(n) for n in ("describe", "schema", "source", "resolve", "odds", "simulate", "diff", "charts",
                           "chart_check")] + \
        [Mount("/static", StaticFiles(directory=STATIC), name="static")]
    app = Starlette(routes=routes, lifespan=lifespan)
    app.add_middleware(BodyLimit, limit=max_body)
    app.state.pool = pool
    return app


LOOPBACK = {"127.0.0.1", "localhost", "::1"}


def serve(rulesets: list, host: str = "127.0.0.1", port: int = 8000, allow_remote: bool = False,
          workers: int = 2, time_limit: float = 10.0, open_browser: bool = False) -> int:
    """Run the workbench with uvicorn until interrupted."""
    import sys

    import uvicorn

    from ..errors import InputError
    if host not in LOOPBACK and not host.startswith("127."):
        if not allow_remote:
            raise InputError(f"serving on {host} lets other machines use this workbench; "
                             "add --allow-remote if that is what you want")
        print(f"warning: serving on {host}: anyone who can reach this address can use the workbench "
              "(it reads only the rulesets you opened, but has no login)", file=sys.stderr)
    import socket
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as e:
        sock.close()
        raise InputError(f"cannot listen on {host} port {port}: {e.strerror or e}",
                         hint="another program may be using the port: try --port with another number") from None
    sock.listen(128)        # listening from here on: a browser opened now waits in the queue, never refused
    app = create_app(rulesets, workers, time_limit)
    app.state.pool.wait_ready()
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{port}/"
    print(f"Umpire workbench: {url}  (rulesets: {', '.join(Path(r).name for r in rulesets)}; Ctrl-C stops it)",
          flush=True)
    if open_browser:
        import webbrowser
        webbrowser.open(url)
    uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[sock])
    return 0
