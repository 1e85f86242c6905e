"""Chart overlays a player fills in: templates of a ruleset's unknown table cells."""

from __future__ import annotations

import json  # noqa: F401


def chart_template(r, tables, values: dict | None = None) -> str:
    """A fill-in overlay of every unknown cell ("?"), with ``values`` {(table, row index, column index): text}
    written in (a value for a known cell is listed too, so applying the overlay checks it against the book)."""
    from ..model.tables import UNKNOWN
    values = values or {}
    import os

    from ..reading.schema import SCHEMA_DIR
    schema = os.path.relpath(SCHEMA_DIR / "overlay.schema.json")
    lines = [f"# yaml-language-server: $schema={schema}",
             f"# Fill-in overlay for the chart cells the {r.title} rulebook does not print.",
             "# Replace each \"?\" with the value printed on your own player aid; leave \"?\" where you do not know it.",
             "# Then: umpire resolve SITUATION --with THIS-FILE  (or add it under `with:` in a situation)",
             "overlay: my-charts", f"extends: {r.id}", "kind: charts", "changes:"]
    for t in tables:
        if t.structure_unknown:
            lines.append(f"  # {t.title}: the rulebook gives no rows or columns; to supply it write")
            lines.append(f"  # - table: {t.name}")
            lines.append("  #   replace: {title: ..., rows: {...}, columns: {...}, grid: {...}}")
            continue
        unknown = [(ri, ci) for ri, row in enumerate(t.cells) for ci, v in enumerate(row)
                   if v is UNKNOWN or (t.name, ri, ci) in values]
        if not unknown:
            continue
        lines.append(f"  # {t.title}" + (f" [{t.cite}]" if t.cite else ""))
        if t.player_aid:
            lines.append(f"  # on your player aid: {t.player_aid}")
        axis = f"rows: {t.rows.title}" + (f"; columns: {t.columns.title}" if t.columns else "")
        lines.append(f"  # {axis}")
        if t.results:
            lines.append("  # values: " + ", ".join(f"{rc.pattern} ({rc.means})" if rc.means else rc.pattern
                                                    for rc in t.results.values()) + "  (# stands for a number)")
        lines.append(f"  - table: {t.name}")
        lines.append("    set_cells:")
        for ri, ci in unknown:
            if t.columns and t.columns.headings[ci] is None:
                continue   # a column whose heading is unknown: replace the whole table instead
            value = json.dumps(str(values.get((t.name, ri, ci), "?")), ensure_ascii=False)
            row = json.dumps(t.rows.headings[ri], ensure_ascii=False) if isinstance(t.rows.headings[ri], str) else t.rows.headings[ri]
            if t.columns:
                col = t.columns.headings[ci]
                col = json.dumps(col, ensure_ascii=False) if isinstance(col, str) else col
                lines.append(f"      - {{row: {row}, column: {col}, value: {value}}}")
            else:
                lines.append(f"      - {{row: {row}, value: {value}}}")
    return "\n".join(lines) + "\n"


# ---- templates shaped like the card ---------------------------------------------------------

def template_tables(r, names=()) -> list:
    """The tables a template holds: those named, else every table with an unknown cell or an open axis."""
    from ..model.tables import UNKNOWN
    if names:
        return [r.tables[n] for n in names]
    return [t for t in r.tables.values()
            if t.structure_unknown or t.open_axes or any(v is UNKNOWN for row in t.cells for v in row)]


def _slots(axis) -> list:
    """An axis's headings in card order, with empty slots (None) where the card may have more."""
    headings = list(axis.headings)
    if not axis.open:
        return headings
    if axis.match == "exact":
        return headings + [None]
    return [None] + headings + [None]


def _text(value) -> str:
    from ..model.values import show
    return show(value)


def _about(t, comment: str) -> list[str]:
    lines = [f"{comment}{t.title}" + (f" [{t.cite}]" if t.cite else "")]
    if t.player_aid:
        lines.append(f"{comment}on your player aid: {t.player_aid}")
    lines.append(f"{comment}rows: {t.rows.title}" + (f"; columns: {t.columns.title}" if t.columns else ""))
    if t.results:
        lines.append(f"{comment}values: " + ", ".join(f"{rc.pattern} ({rc.means})" if rc.means else rc.pattern
                                                     for rc in t.results.values()) + "  (# stands for a number)")
    for key, axis in (("rows", t.rows), ("columns", t.columns)):
        if axis is not None and axis.open:
            where = ("add the card's other rows as more lines" if key == "rows" else
                     "type the card's other column headings into the empty slots (add slots as needed), in card order")
            lines.append(f"{comment}{key} open: the rulebook shows only some; {where}")
        if axis is not None and None in axis.headings:
            lines.append(f"{comment}an empty heading between printed ones is a {key[:-1]} the rulebook does not name")
    return lines


def _known(t, ri: int, ci: int) -> bool:
    from ..model.tables import UNKNOWN
    return t.cells[ri][ci] is not UNKNOWN


def grid_template(r, tables, fmt: str = "yaml") -> str:
    """A fill-in chart overlay with each table as a grid in card order: the column headings, then one row per
    line; known cells filled (the rulebook's source beside them), unknown cells blank, open axes with empty
    heading slots. ``fmt`` is "yaml" or "csv" (the CSV is read back by ``--with FILE.csv``)."""
    return (_csv_template if fmt == "csv" else _yaml_template)(r, tables)


def _yaml_scalar(h) -> str:
    if h is None:
        return "~"
    if isinstance(h, str):
        return json.dumps(h, ensure_ascii=False)
    return _text(h)


def _yaml_value(value) -> str:
    """A known cell as YAML that reads back as the same cell: a whole number bare, anything else quoted."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return json.dumps(_text(value), ensure_ascii=False)


def _yaml_template(r, tables) -> str:
    import os

    from ..reading.schema import SCHEMA_DIR
    schema = os.path.relpath(SCHEMA_DIR / "overlay.schema.json")
    lines = [f"# yaml-language-server: $schema={schema}",
             f"# Your charts for {r.title}, one grid per table, in the order of the card.",
             "# ~ is a blank cell: type the value printed on your own card over it, or leave ~ where you do not",
             "# know it. Cells the rulebook reveals are filled in (their source beside them) and may not change.",
             "# Then: umpire resolve SITUATION --with THIS-FILE  (or add it under `with:` in a situation)",
             "overlay: my-charts", f"extends: {r.id}", "kind: charts", "changes:"]
    for t in tables:
        lines.append("")
        if t.structure_unknown:
            lines.append(f"  # {t.title}: the rulebook gives no rows or columns; to supply it write")
            lines.append(f"  # - table: {t.name}")
            lines.append("  #   replace: {title: ..., rows: {...}, columns: {...}, grid: {...}}")
            continue
        lines += ["  # " + x for x in _about(t, "")]
        lines.append(f"  - table: {t.name}")
        cols = _slots(t.columns) if t.columns else None
        if cols is not None:
            lines.append(f"    columns: [{', '.join(_yaml_scalar(h) for h in cols)}]")
        lines.append("    grid:")
        for ri, rh in enumerate(t.rows.headings):
            if t.columns is None:
                index = [0]
            else:
                offset = 1 if t.columns.open and t.columns.match != "exact" else 0
                index = [i - offset if 0 <= i - offset < len(t.columns.headings) else None for i in range(len(cols))]
            values = [_yaml_value(t.cells[ri][ci]) if ci is not None and _known(t, ri, ci) else "~"
                      for ci in index]
            sources = sorted({t.sources.get((ri, ci)) or "rulebook" for ci in index
                              if ci is not None and _known(t, ri, ci)})
            row = f"      {_yaml_scalar(rh)}: [{', '.join(values)}]" if t.columns else \
                f"      {_yaml_scalar(rh)}: {values[0]}"
            lines.append(row + (f"   # from the rulebook: {'; '.join(sources)}" if sources else ""))
    return "\n".join(lines) + "\n"


def _csv_line(cells) -> str:
    import csv
    import io
    out = io.StringIO()
    csv.writer(out, lineterminator="").writerow(["" if c is None else c for c in cells])
    return out.getvalue()


def _csv_template(r, tables) -> str:
    lines = [f"# Your charts for {r.title}, one grid per table, in the order of the card (open in a spreadsheet,",
             "# or type it). A blank cell is one your card does not give; cells the rulebook reveals are filled",
             "# in and may not change. Lines starting with # are notes. Then: umpire resolve SITUATION --with THIS-FILE",
             _csv_line(["extends", r.id])]
    for t in tables:
        lines.append("")
        if t.structure_unknown:
            lines.append(f"# {t.title}: the rulebook gives no rows or columns; give it as a whole table in a "
                         "YAML chart overlay (replace:)")
            continue
        lines += _about(t, "# ")
        known = [f"{t.rows.label(ri)}" + (f"/{t.columns.label(ci)}" if t.columns else "")
                 + f" = {_text(t.cells[ri][ci])} ({t.sources.get((ri, ci)) or 'rulebook'})"
                 for ri, row in enumerate(t.cells) for ci, _ in enumerate(row) if _known(t, ri, ci)]
        if known:
            lines.append("# from the rulebook: " + "; ".join(known))
        lines.append(_csv_line(["table", t.name]))
        cols = _slots(t.columns) if t.columns else ["value"]
        corner = t.rows.title + (f" \\ {t.columns.title}" if t.columns else "")
        lines.append(_csv_line([corner] + [None if h is None else _text(h) for h in cols]))
        for ri, rh in enumerate(t.rows.headings):
            if t.columns is None:
                index = [0]
            else:
                offset = 1 if t.columns.open and t.columns.match != "exact" else 0
                index = [i - offset if 0 <= i - offset < len(t.columns.headings) else None for i in range(len(cols))]
            lines.append(_csv_line([_text(rh)] + [_text(t.cells[ri][ci]) if ci is not None and _known(t, ri, ci)
                                                  else None for ci in index]))
    return "\n".join(lines) + "\n"


# ---- how far a player's charts go --------------------------------------------------------------

def table_counts(t) -> dict:
    """One table's cells: from the rulebook, filled by an overlay (the player's charts), still unknown."""
    from ..model.tables import UNKNOWN
    unknown = [(ri, ci) for ri, row in enumerate(t.cells) for ci, v in enumerate(row) if v is UNKNOWN]
    filled = sum(1 for key in t.origins if t.cells[key[0]][key[1]] is not UNKNOWN)
    return {"table": t.name, "title": t.title, "player_aid": t.player_aid, "cells": t.size,
            "known": t.known_count, "book": t.known_count - filled, "filled": filled, "unknown": len(unknown),
            "rows_with_unknowns": [t.rows.label(i) for i in sorted({ri for ri, _ in unknown})],
            "columns_with_unknowns": [t.columns.label(i) for i in sorted({ci for _, ci in unknown})]
            if t.columns else [],
            "structure_unknown": t.structure_unknown, "open_axes": t.open_axes}


def situation_stops(r, overlays: tuple = ()) -> list[dict]:
    """Each shipped situation of ruleset ``r`` (with these overlays, and the player's applied charts), every
    roll enumerated: its share of outcomes that stop on a chart cell nobody supplied, and those cells."""
    from ..api import load_situation
    from ..errors import UmpireError
    from ..odds.exact import NEEDS_CHART, budgeted_odds
    out = []
    for path in sorted((r.root / "situations").glob("*.y*ml")):
        entry: dict = {"situation": str(path)}
        try:
            s = load_situation(path, overlays)
            s.dice, s.dice_positions = [], []
            report = budgeted_odds(s, [])
        except UmpireError as e:
            entry["error"] = str(e).splitlines()[0]
            out.append(entry)
            continue
        stops = [(label[len(NEEDS_CHART):].lstrip(": "), p) for label, p, _ in report.rows
                 if label.startswith(NEEDS_CHART)]
        entry["needs_chart"] = float(report.needs_chart())
        entry["cells"] = [{"cell": cell, "table": cell.split(" ", 1)[0], "share": float(p)}
                          for cell, p in sorted(stops, key=lambda x: -x[1])]
        out.append(entry)
    return out
