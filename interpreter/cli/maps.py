"""``umpire map``: a picture of a situation's board, with the lines of sight its adjudication drew."""

from __future__ import annotations

import sys
from pathlib import Path

from ..errors import BuiltinArgumentError, InputError


def add_map(sub, overlay_option) -> None:
    m = sub.add_parser("map", help="draw a situation's map: hexes, terrain, units, markers, line of sight",
                       description="Draw the board a situation gives (map:, units:, markers:) as SVG or PNG. The "
                                   "situation is adjudicated first, and every line of sight its rules worked out "
                                   "(map_line) is drawn with the hexes and hexsides it crossed. Without --svg or "
                                   "--png the SVG is printed.")
    m.add_argument("situation", help="a situation file that places its units on a map")
    overlay_option(m)
    m.add_argument("--svg", metavar="FILE", help="write the picture as SVG")
    m.add_argument("--png", metavar="FILE", help="write the picture as PNG (needs matplotlib: pip install -e '.[plot]')")
    m.add_argument("--line", nargs=2, action="append", default=[], metavar=("FROM", "TO"),
                   help="also draw the line between these two hexes (repeatable)")
    m.add_argument("--no-adjudicate", action="store_true",
                   help="draw the board only: do not run the situation (no line of sight from its rules)")
    m.set_defaults(func=cmd_map)


def cmd_map(args) -> int:
    from ..api import load_situation, run_situation
    from ..model.hexmap import index_of
    from ..runtime.board import map_line
    from ..tools.board_picture import adjudicated_lines, png, scene, svg
    s = load_situation(args.situation, tuple(args.overlays))
    if s.board is None:
        raise InputError("this situation gives no map to draw", s.doc.at(s.path),
                         "add `map: FILE` (and `units:`, `markers:`); see docs/language.md, Maps and geometry")
    lines: list = []
    status = None
    if not args.no_adjudicate:
        outcome, lines = adjudicated_lines(lambda: run_situation(s, trace=True))
        status = outcome.status
    for a, b in args.line:
        try:
            extra = map_line(s.board, a, b)
        except BuiltinArgumentError as e:
            raise InputError(f"--line {a} {b}: {e}") from None
        if extra not in lines:
            lines.append(extra)
    if args.png:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            raise InputError("--png needs matplotlib, which is not installed (from a checkout: pip install -e "
                             "'.[plot]'; or pip install matplotlib); --svg needs nothing more") from None
    sc = scene(s.board, lines, s.title)
    picture = svg(sc)
    if args.svg:
        Path(args.svg).write_text(picture, encoding="utf-8")
    if args.png:
        png(sc, args.png)
    if not args.svg and not args.png:
        print(picture)
        return 0
    idx = index_of(s.board)
    print(f"{', '.join(f for f in (args.svg, args.png) if f)}: {idx.name()}, {len(idx.hexes)} hexes, "
          f"{len(s.board['units'])} units, {len(s.board['markers'])} markers"
          + (f"; the adjudication {'ended ' + status if status != 'ok' else 'ran'}" if status else ""))
    for ln in lines:
        print(f"  line {ln['from']} -> {ln['to']} ({ln['distance']} hexes): through "
              f"{', '.join(ln['between']) or 'no hex between'}"
              + (f"; along {len(ln['along'])} hexside(s)" if ln["along"] else "")
              + (f"; through {len(ln['vertices'])} vertex(es)" if ln["vertices"] else ""), file=sys.stdout)
    return 0
