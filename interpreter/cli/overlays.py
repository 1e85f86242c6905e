"""The commands about overlays and charts: ``charts`` (unknown cells, fill-in template) and ``diff``."""

from __future__ import annotations

import json

from ..errors import InputError
from ..tools.charts import grid_template, template_tables


def add_overlay_commands(sub, overlay_option) -> None:
    c = sub.add_parser("charts", help="list every table's unknown cells; --template writes a fill-in overlay",
                       description="Show which chart cells the rulebook does not print. With --template, print an "
                                   "overlay listing exactly those cells, to fill in from your own player aids.")
    c.add_argument("ruleset", help="the ruleset folder")
    overlay_option(c)
    c.add_argument("--template", nargs="*", metavar="TABLE", default=None,
                   help="print a fill-in chart overlay: each table (these, or every one with an unknown cell or an "
                        "open axis) as a grid in card order, unknown cells blank")
    c.add_argument("--format", choices=("yaml", "csv"), default="yaml",
                   help="the template as a YAML overlay (default) or as CSV for a spreadsheet (read back with "
                        "--with FILE.csv)")
    c.add_argument("--table", action="append", default=[], help="only this table (repeatable)")
    c.add_argument("--json", action="store_true", help="print each table's unknown cells as JSON")
    c.set_defaults(func=cmd_charts)

    d = sub.add_parser("diff", help="what overlays change, and (with --situation) how the odds move",
                       description="List the changes the overlays make to the base ruleset, grouped by table, "
                                   "stack, procedure and catalogue. With --situation, compare exact outcome "
                                   "distributions before and after.")
    d.add_argument("ruleset", help="the base ruleset folder (compared with itself under the overlays)")
    overlay_option(d)
    d.add_argument("--situation", help="a situation file whose exact outcome shares are compared before and after")
    from .odds import by_option, dice_options
    by_option(d)
    dice_options(d)
    d.add_argument("--json", action="store_true", help="print the changes (each field before and after) and the "
                                                        "outcome shares as JSON")
    d.set_defaults(func=cmd_diff)


def cmd_charts(args) -> int:
    from ..api import load_ruleset
    from ..model.tables import UNKNOWN
    r = load_ruleset(args.ruleset, tuple(args.overlays))
    names = list(args.template or ()) + list(args.table)
    tables = [t for t in r.tables.values() if not names or t.name in names]
    missing = [n for n in names if n not in r.tables]
    if missing:
        from ..errors import did_you_mean
        raise InputError(f"ruleset '{r.id}' has no table '{missing[0]}'",
                         hint=did_you_mean(missing[0], r.tables) or "`umpire charts RULESET` lists its tables")
    if args.template is not None:
        print(grid_template(r, template_tables(r, names), args.format), end="")
        return 0
    report = []
    for t in tables:
        unknown = [(ri, ci) for ri, row in enumerate(t.cells) for ci, v in enumerate(row) if v is UNKNOWN]
        rows = [t.rows.label(i) for i in sorted({ri for ri, _ in unknown})]
        cols = [t.columns.label(i) for i in sorted({ci for _, ci in unknown})] if t.columns else []
        report.append({"table": t.name, "title": t.title, "player_aid": t.player_aid, "cells": t.size,
                       "known": t.known_count, "unknown": len(unknown), "rows_with_unknowns": rows,
                       "columns_with_unknowns": cols, "structure_unknown": t.structure_unknown,
                       "open_axes": t.open_axes})
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    for x in report:
        aid = f" — printed on {x['player_aid']}" if x["player_aid"] else ""
        print(f"{x['table']}: {x['title']}{aid}")
        if x["structure_unknown"]:
            print("  structure unknown: the rulebook gives neither its rows nor its columns")
            continue
        print(f"  {x['known']} of {x['cells']} cells known, {x['unknown']} unknown")
        for axis in x["open_axes"]:
            print(f"  {axis} open: the rulebook shows only some of its {axis}; cells under the others are unknown")
        if x["unknown"]:
            print(f"  rows with unknown cells: {', '.join(x['rows_with_unknowns'])}")
            if x["columns_with_unknowns"]:
                print(f"  columns with unknown cells: {', '.join(x['columns_with_unknowns'])}")
    total = sum(x["unknown"] for x in report)
    partial = sum(1 for x in report if x["open_axes"] or x["structure_unknown"])
    if partial:
        print(f"\n{partial} tables have rows or columns the rulebook does not show, or no known structure")
    print(f"\n{total} unknown cells in {sum(1 for x in report if x['unknown'])} tables; "
          f"`umpire charts {args.ruleset} --template > my-charts.yaml` writes a fill-in overlay "
          "(--format csv for a spreadsheet)")
    return 0


def cmd_diff(args) -> int:
    from ..tools.reports import overlay_diff
    data = overlay_diff(args.ruleset, tuple(args.overlays), args.situation, args.by, args.all_dice)
    if args.json:
        print(json.dumps(data, indent=2))
    else:
        print(diff_text(data, args.situation, args.by))
    return 0


def diff_text(data: dict, situation, by) -> str:
    """The plain-text form of ``overlay_diff``'s answer: changes by group, then outcome shares before and after."""
    lines = []
    for group in ("tables", "stacks", "procedures", "catalogues"):
        if group in data["changes"]:
            lines.append(f"{group}:")
            lines += [f"  {c['name']}: {c['text']}   ({c['from']})" for c in data["changes"][group]]
    if not lines:
        lines.append("the overlays change nothing")
    if "outcomes" in data:
        from fractions import Fraction
        rows = data["outcomes"]
        width = min(60, max((len(r["outcome"]) for r in rows), default=10))
        lines.append(f"\noutcomes of {situation}" + (f" (by {', '.join(by)})" if by else "") + ":")
        lines.append(f"  {'outcome':<{width}}  {'before':>8}  {'after':>8}  {'change':>8}")
        for r in rows:
            before, after = float(Fraction(r["before"])), float(Fraction(r["after"]))
            lines.append(f"  {r['outcome']:<{width}}  {before * 100:7.2f}%  {after * 100:7.2f}%  "
                         f"{(after - before) * 100:+7.2f}")
    return "\n".join(lines)
