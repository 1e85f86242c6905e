"""The web workbench (``umpire serve``): the same API as the command line, in the browser.

Importing this package is cheap; Starlette and uvicorn load only when serving.
"""

from __future__ import annotations

from pathlib import Path


def add_serve(sub, overlay_option=None) -> None:
    """``umpire serve`` (its own options: it opens many rulesets; ``overlay_option`` is not used)."""
    s = sub.add_parser("serve", help="a local web workbench: browse rulesets, resolve, odds, house rules",
                       description="Start the web workbench on this machine (127.0.0.1 by default) and print its "
                                   "URL. With no RULESET, opens every ruleset folder under ./rulesets.")
    s.add_argument("rulesets", nargs="*", metavar="RULESET", help="ruleset folders to open")
    s.add_argument("--port", type=int, default=8000, help="port to listen on (default 8000)")
    s.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1; another address needs --allow-remote)")
    s.add_argument("--allow-remote", action="store_true",
                   help="allow --host to be an address other machines can reach (prints a warning; every "
                        "request then needs the per-launch token that the printed URL carries)")
    s.add_argument("--token", action="store_true",
                   help="require the per-launch token on this machine too (the printed URL carries it)")
    s.add_argument("--workers", type=int, default=2, help="worker processes for adjudications (default 2)")
    s.add_argument("--time-limit", type=float, default=20.0,
                   help="seconds one request may compute before it is stopped (default 20)")
    s.add_argument("--open", action="store_true", help="open the page in the default browser")
    s.add_argument("--no-charts", action="store_true",
                   help="leave out your applied charts (umpire charts RULESET --use FILE)")
    s.set_defaults(func=cmd_serve)


def cmd_serve(args) -> int:
    from ..errors import InputError
    rulesets = args.rulesets or sorted(str(p.parent) for p in Path("rulesets").glob("*/ruleset.yaml"))
    if not rulesets:
        raise InputError("no ruleset to open: name one or more ruleset folders (umpire serve RULESET ...)")
    if not 0 < args.port < 65536:
        raise InputError(f"--port must be between 1 and 65535, not {args.port}")
    if args.workers < 1 or args.time_limit <= 0:
        raise InputError("--workers must be at least 1 and --time-limit above 0")
    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError:
        raise InputError("umpire serve needs starlette and uvicorn: pip install -e . in the checkout "
                         "(or pip install starlette uvicorn)") from None
    from .app import serve
    return serve(rulesets, args.host, args.port, args.allow_remote, args.workers, args.time_limit, args.open,
                 args.token)
