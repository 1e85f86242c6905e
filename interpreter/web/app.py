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
  POST /api/diff       {ruleset, overlays, situation?, by, all_dice | keep_dice} umpire diff --json
  POST /api/charts     {ruleset, cells, name}       filled chart cells as an overlay file (checked)
  POST /api/chart_check {ruleset, tables, name}     the chart editor's grids checked cell by cell (web/charts.py)
  GET  /sweep, POST /api/sweep_specs {}, POST /api/sweep {ruleset, text, name}   the sweep page (web/sweep.py)
A situation is {"shipped": NAME} or {"text": ..., "name": ...}; overlays are a list of the same.
Errors: status 400 (input) or 422 (cannot adjudicate) with {"error": {text, diagnostics}};
413 body too large, 503 busy, 504 time limit; 421/403/415/401 from the guard (guard.py: Host,
Origin, JSON-only bodies, the --allow-remote token).
"""

from __future__ import annotations

import json
import re
import tempfile
from contextlib import asynccontextmanager
from pathlib import Path

from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import FileResponse, JSONResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from .guard import Guard, host_names
from .work import HEAVY, Busy, TimeLimit, WorkerCrashed, WorkerPool

STATIC = Path(__file__).parent / "static"
MAX_BODY = 1_000_000
"""Largest request body accepted, in bytes (a situation or overlay file is a few kilobytes)."""


MAX_JSON_DEPTH = 100
"""Deepest nesting of arrays and objects a request body may have (the page's requests nest a few levels)."""
_STRINGS = re.compile(rb'"(?:[^"\\]|\\.)*"')
_BRACKETS = re.compile(rb"[\[\]{}]")


def too_deep(raw: bytes, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether a JSON text nests deeper than ``limit``: checked before parsing, so the parser's own
    recursion (whose limit depends on the process) never decides what is refused."""
    depth = 0
    for m in _BRACKETS.finditer(_STRINGS.sub(b'""', raw)):
        if m.group() in (b"[", b"{"):
            depth += 1
            if depth > limit:
                return True
        else:
            depth -= 1
    return False


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


def create_app(rulesets: list, workers: int = 2, time_limit: float = 20.0, max_body: int = MAX_BODY,
               memory_mb: int = 2048, host: str = "127.0.0.1", port: int | None = None,
               token: str | None = None) -> Starlette:
    """The workbench for these ruleset folders (each is checked first: a bad ruleset raises InputError).

    ``host`` and ``port`` are what the server listens on: requests naming another host are refused
    (``port`` None accepts any port, for a test client); ``token``, when given, is required of every request.
    """
    from .jobs import Workspace
    upload = tempfile.TemporaryDirectory(prefix="umpire-web-")
    roots = [str(Path(r).resolve()) for r in rulesets]
    Workspace(roots, upload.name)        # load and check each ruleset now, so errors show at start-up
    pool = WorkerPool(roots, upload.name, workers, time_limit, memory_mb)

    async def work(name: str, params, client: str = "") -> JSONResponse:
        try:
            status, data = await pool.run(name, params, client)
        except Busy as e:
            return _error(503, f"error: {e}", "busy")
        except TimeLimit as e:
            return _error(504, f"limit reached: {e}", "limit")
        except WorkerCrashed as e:
            return _error(500, f"error: {e}", "limit")
        if status == "ok":
            return JSONResponse(data)
        if status == "limit":
            return JSONResponse({"error": data}, 504)
        return JSONResponse({"error": data}, 400 if data.get("kind") == "input" else 422)

    async def body(request: Request):
        try:
            raw = await request.body()
        except ClientDisconnect:        # the client went away mid-body: nobody is left to answer
            return None, _error(400, "error: the client disconnected before sending the whole request")
        if too_deep(raw):
            return None, _error(400, f"error: the request body is nested too deeply to read "
                                     f"(more than {MAX_JSON_DEPTH} levels)")
        try:
            data = json.loads(raw)
        except (ValueError, UnicodeDecodeError) as e:
            return None, _error(400, f"error: the request body is not JSON ({e})")
        except RecursionError:
            return None, _error(400, "error: the request body is nested too deeply to read")
        if not isinstance(data, dict):
            return None, _error(400, "error: the request body must be a JSON object")
        return data, None

    def post(name: str):
        async def endpoint(request: Request):
            data, problem = await body(request)
            return problem or await work(name, data, client_of(request, name))
        return Route(f"/api/{name}", endpoint, methods=["POST"], name=name)

    async def rulesets_endpoint(request: Request):
        return await work("rulesets", {})

    def client_of(request: Request, name: str) -> str:
        """Who queues heavy work: the page's own id (one per tab), else the peer address."""
        if name not in HEAVY:
            return ""
        given = request.headers.get("x-umpire-client", "")[:64]
        return given or (request.client.host if request.client else "")

    async def index(request: Request):
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache"})

    async def sweep_page(request: Request):
        return FileResponse(STATIC / "sweep.html", headers={"Cache-Control": "no-cache"})

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
        [Route("/sweep", sweep_page), post("sweep_specs"), post("sweep")] + \
        [Mount("/static", StaticFiles(directory=STATIC), name="static")]
    app = Starlette(routes=routes, lifespan=lifespan)
    app.add_middleware(BodyLimit, limit=max_body)
    names = None if token and not is_loopback(host) else host_names(host)
    app.add_middleware(Guard, names=names, port=port, token=token)       # outermost: runs first
    app.state.pool = pool
    return app


LOOPBACK = {"127.0.0.1", "localhost", "::1"}


def is_loopback(host: str) -> bool:
    return host in LOOPBACK or host.startswith("127.")


def serve(rulesets: list, host: str = "127.0.0.1", port: int = 8000, allow_remote: bool = False,
          workers: int = 2, time_limit: float = 20.0, open_browser: bool = False, token: bool = False) -> int:
    """Run the workbench with uvicorn until interrupted."""
    import secrets
    import sys

    import uvicorn

    from ..errors import InputError
    remote = not is_loopback(host)
    if remote:
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
    secret = secrets.token_urlsafe(24) if (remote or token) else None
    app = create_app(rulesets, workers, time_limit, host=host, port=port, token=secret)
    app.state.pool.wait_ready()
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{port}/" + (f"?token={secret}" if secret else "")
    print(f"Umpire workbench: {url}  (rulesets: {', '.join(Path(r).name for r in rulesets)}; Ctrl-C stops it)",
          flush=True)
    if open_browser:
        import webbrowser
        webbrowser.open(url)
    uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[sock])
    return 0
