"""The commands about overlays and charts: ``charts`` (unknown cells, fill-in template) and ``diff``."""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import InputError
from ..tools.charts import grid_template, situation_stops, table_counts, template_tables


def add_charts(sub, overlay_option) -> None:
    c = sub.add_parser("charts", help="your charts: unknown cells, templates to fill in, charts applied once",
                       description="Show which chart cells the rulebook does not print, how many your charts fill "
                                   "and which shipped situations still stop on one. With --template, print the "
                                   "tables as grids in card order to fill in from your own player aids; with "
                                   "--use FILE, apply a filled chart overlay to every command from now on.")
    c.add_argument("ruleset", help="the ruleset folder")
    overlay_option(c)
    c.add_argument("--template", nargs="*", metavar="TABLE", default=None,
                   help="print a fill-in chart overlay: each table (these, or every one with an unknown cell or an "
                        "open axis) as a grid in card order, unknown cells blank")
    c.add_argument("--format", choices=("yaml", "csv"), default="yaml",
                   help="the template as a YAML overlay (default) or as CSV for a spreadsheet (read back with "
                        "--with FILE.csv)")
    c.add_argument("--table", action="append", default=[], help="only this table (repeatable)")
    c.add_argument("--situations", action="store_true",
                   help="also run every shipped situation (every roll enumerated) and list the chart cells they "
                        "still stop on (done by default when charts are given or applied)")
    c.add_argument("--use", metavar="FILE",
                   help="check this chart overlay (YAML or CSV) over the ruleset, then apply it to every command "
                        "on the ruleset without --with (recorded in your user config)")
    c.add_argument("--forget", action="store_true", help="stop applying your recorded charts to the ruleset")
    c.add_argument("--json", action="store_true", help="print each table's cells filled and unknown as JSON")
    c.set_defaults(func=cmd_charts)


def add_diff(sub, overlay_option) -> None:
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
    from ..loading import applied
    if args.use is not None or args.forget:
        return _register(args)
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
    mine = applied.applied_to(r)
    report = [table_counts(t) for t in tables]
    stops = situation_stops(r, tuple(args.overlays)) if (args.situations or r.overlays) else None
    if args.json:
        print(json.dumps({"ruleset": r.id, "charts": mine, "overlays": list(r.overlays), "tables": report,
                          **({"situations": stops} if stops is not None else {})}, indent=2))
        return 0
    print(charts_text(args.ruleset, r, report, stops))
    return 0


def charts_text(where, r, report: list, stops: list | None) -> str:
    from ..loading.applied import applied_to, charts_line
    lines = charts_line(r)
    others = [o for o in r.overlays if o not in applied_to(r)]
    if others:
        lines.append("with: " + ", ".join(others))
    if lines:
        lines.append("")
    for x in report:
        aid = f" — printed on {x['player_aid']}" if x["player_aid"] else ""
        lines.append(f"{x['table']}: {x['title']}{aid}")
        if x["structure_unknown"]:
            lines.append("  structure unknown: the rulebook gives neither its rows nor its columns")
            continue
        filled = f" ({x['filled']} filled by your charts)" if x["filled"] else ""
        lines.append(f"  {x['known']} of {x['cells']} cells known{filled}, {x['unknown']} unknown")
        for axis in x["open_axes"]:
            lines.append(f"  {axis} open: the rulebook shows only some of its {axis}; cells under the others are "
                         "unknown")
        if x["unknown"]:
            lines.append(f"  rows with unknown cells: {', '.join(x['rows_with_unknowns'])}")
            if x["columns_with_unknowns"]:
                lines.append(f"  columns with unknown cells: {', '.join(x['columns_with_unknowns'])}")
    total = sum(x["unknown"] for x in report)
    partial = sum(1 for x in report if x["open_axes"] or x["structure_unknown"])
    if partial:
        lines.append(f"\n{partial} tables have rows or columns the rulebook does not show, or no known structure")
    filled = sum(x["filled"] for x in report)
    lines.append(f"\n{total} unknown cells in {sum(1 for x in report if x['unknown'])} tables"
                 + (f"; {filled} filled by your charts" if filled else "")
                 + f"; `umpire charts {where} --template > my-charts.yaml` writes them as grids to fill in "
                   "(--format csv for a spreadsheet)")
    if stops is not None:
        stopping = [s for s in stops if s.get("cells")]
        lines.append(f"\nshipped situations, every roll enumerated: {len(stopping)} of {len(stops)} still stop "
                     "on a chart cell nobody supplied")
        for s in stops:
            name = Path(s["situation"]).name
            if "error" in s:
                lines.append(f"  {name}: not worked out ({s['error']})")
            elif s["cells"]:
                by_table: dict[str, list] = {}
                for c in s["cells"]:
                    by_table.setdefault(c["table"], []).append(c["cell"])
                shown = "; ".join(f"{t} ({len(cs)} cell{'s' if len(cs) > 1 else ''}, e.g. {cs[0]})"
                                  for t, cs in by_table.items())
                lines.append(f"  {name}: {s['needs_chart'] * 100:.1f}% of outcomes stop on {shown}"
                             + (f" (a sample of {s['estimated_from_runs']} runs: too many to count exactly)"
                                if "estimated_from_runs" in s else ""))
    return "\n".join(lines)


def _register(args) -> int:
    """``--use FILE``: check the charts over the ruleset, then record them; ``--forget``: drop the record."""
    from ..api import load_ruleset
    from ..loading import applied
    if args.use is not None and args.forget:
        raise InputError("--use and --forget go one at a time")
    if args.template is not None or args.table or args.overlays:
        raise InputError("--use and --forget take no other options (they record the charts to apply)",
                         hint="umpire charts RULESET --use MY-CHARTS.yaml")
    old = applied.set_disabled(True)        # the new charts are checked alone, not over the old ones
    try:
        if args.use is not None:
            chart = Path(args.use)
            if not chart.is_file():
                raise InputError(f"no such chart overlay: {args.use}",
                                 hint="`umpire charts RULESET --template > my-charts.yaml` writes one to fill in")
            r = load_ruleset(args.ruleset, (str(chart),))
        else:
            r = load_ruleset(args.ruleset)
    finally:
        applied.restore(old)
    if args.use is None:
        where, before = applied.record(r.id, None)
        print(f"{r.id}: forgot your charts ({before})" if before else f"{r.id}: no charts were recorded",
              f"(record: {where})")
        return 0
    filled = sum(table_counts(t)["filled"] for t in r.tables.values())
    where, before = applied.record(r.id, chart.resolve())
    print(f"{r.id}: your charts are {chart.resolve()} ({filled} cells filled"
          + (f"; they replace {before}" if before and before != chart.resolve() else "") + ")")
    print(f"recorded in {where}; every command on {r.id} now applies them (--no-charts leaves them out; "
          f"umpire charts {args.ruleset} --forget drops them)")
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
