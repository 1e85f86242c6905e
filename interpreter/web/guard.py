"""What a browser expects of a local tool: only this server's own pages may drive it.

A workbench on 127.0.0.1 is reachable from every web page the user visits. Three
checks keep those pages out, each answered with a JSON error a person can read:

* **Host** must name the address the server was started on (or ``localhost`` for a
  loopback server). A DNS-rebinding page reaches 127.0.0.1 under its own name, so
  its requests carry that name and are refused (421). A remote server (which
  needs its token) answers to any name: other machines know it by theirs.
* **Origin** (or ``Sec-Fetch-Site`` where a browser sends no Origin) must be this
  server's own on every request that changes or computes something: a cross-site
  ``fetch`` or form post is refused (403). Tools such as curl send neither header
  and pass; they can reach the port anyway.
* **Content type**: API posts must be ``application/json``. A cross-site page can
  send ``text/plain`` or a form without asking first; JSON needs a CORS preflight,
  which this server never grants (it sends no CORS headers at all) (415).

With ``--allow-remote`` a per-launch token is required as well: the printed URL
carries it once (``/?token=…``), the page then holds it in a same-site cookie.

Every response carries a strict Content-Security-Policy (scripts, styles and
connections from this server only; no frames, no inline scripts or style
attributes: the page sets styles through the DOM) and the usual hardening headers.
"""

from __future__ import annotations

import hmac
import json
from urllib.parse import parse_qs, urlsplit

CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
HEADERS = [(b"content-security-policy", CSP.encode()), (b"x-content-type-options", b"nosniff"),
           (b"referrer-policy", b"no-referrer"), (b"x-frame-options", b"DENY"),
           (b"cross-origin-opener-policy", b"same-origin"), (b"cross-origin-resource-policy", b"same-origin")]
SAFE_METHODS = {"GET", "HEAD"}
COOKIE = "umpire_token"


def host_names(host: str) -> set[str]:
    """The names a browser may use for a server bound to ``host`` (loopback answers to localhost too)."""
    names = {host.strip("[]").lower()}
    if host in {"127.0.0.1", "localhost", "::1"} or host.startswith("127."):
        names |= {"127.0.0.1", "localhost", "::1"}
    return names


def _split_host(value: str) -> tuple[str, int | None]:
    """``name[:port]`` or ``[v6]:port`` as (name, port); a malformed value gives ('', None)."""
    try:
        parts = urlsplit("//" + value)
        return (parts.hostname or "").lower(), parts.port
    except ValueError:
        return "", None


class Guard:
    """ASGI middleware applying the checks above before any route runs."""

    def __init__(self, app, names: set[str] | None, port: int | None, token: str | None = None):
        self.app, self.names, self.port, self.token = app, names, port, token

    def allowed(self, value: str) -> bool:
        name, port = _split_host(value)
        return bool(name) and (self.names is None or name in self.names) and (self.port is None or port == self.port)

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers") or []}
        problem = self.refusal(scope, headers)
        if problem is not None:
            return await _respond(send, *problem)
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        if self.token and scope["path"] == "/" and query.get("token") == [self.token]:
            return await _redirect_with_cookie(send, self.token)

        async def hardened(message):
            if message["type"] == "http.response.start":
                message = dict(message)
                message["headers"] = list(message.get("headers") or []) + HEADERS
            await send(message)
        return await self.app(scope, receive, hardened)

    def refusal(self, scope, headers: dict) -> tuple[int, str] | None:
        host = headers.get("host", "")
        if not self.allowed(host):
            return 421, (f"this workbench answers only to {self.shown()}, not to '{host or '(no Host)'}' "
                         "(a page under another name may be trying to reach it)")
        method = scope["method"]
        if method not in SAFE_METHODS:
            origin = headers.get("origin")
            if origin is not None and origin.lower() != f"http://{host}".lower():
                return 403, f"requests from another site ({origin}) may not use this workbench"
            if origin is None and headers.get("sec-fetch-site") in {"cross-site", "same-site"}:
                return 403, "requests from another site may not use this workbench"
            kind = headers.get("content-type", "").split(";")[0].strip().lower()
            if scope["path"].startswith("/api/") and kind != "application/json":
                return 415, f"the API takes JSON bodies (Content-Type: application/json), not '{kind or 'none'}'"
        if self.token and not self.has_token(scope, headers):
            return 401, "this workbench needs its token: open the URL `umpire serve` printed (it ends in ?token=...)"
        return None

    def has_token(self, scope, headers: dict) -> bool:
        given = headers.get("x-umpire-token") or ""
        for part in headers.get("cookie", "").split(";"):
            name, _, value = part.strip().partition("=")
            if name == COOKIE:
                given = given or value
        if not given and scope["path"] == "/":
            given = (parse_qs(scope.get("query_string", b"").decode("latin-1")).get("token") or [""])[0]
        return hmac.compare_digest(given.encode(), self.token.encode()) if self.token else True

    def shown(self) -> str:
        names = sorted(self.names or ())
        return " or ".join(names) + (f" port {self.port}" if self.port else "")


async def _respond(send, status: int, text: str) -> None:
    body = json.dumps({"error": {"kind": "input", "text": f"error: {text}", "diagnostics": []}}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
                + HEADERS})
    await send({"type": "http.response.body", "body": body})


async def _redirect_with_cookie(send, token: str) -> None:
    cookie = f"{COOKIE}={token}; Path=/; HttpOnly; SameSite=Strict".encode()
    await send({"type": "http.response.start", "status": 303,
                "headers": [(b"location", b"/"), (b"set-cookie", cookie), (b"content-length", b"0")] + HEADERS})
    await send({"type": "http.response.body", "body": b""})
