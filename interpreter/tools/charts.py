"""Chart overlays a player fills in: templates shaped like the card, grids read back, how far charts go."""

from __future__ import annotations

import json

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


def _cell_columns(t, slots) -> list:
    """For each column slot of a template, the table's column index it shows (None: an empty heading slot of
    an open axis, before or after the book's columns)."""
    if t.columns is None:
        return [0]
    offset = 1 if t.columns.open and t.columns.match != "exact" else 0
    return [i - offset if 0 <= i - offset < len(t.columns.headings) else None for i in range(len(slots))]


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
        index = _cell_columns(t, cols)
        for ri, rh in enumerate(t.rows.headings):
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
        index = _cell_columns(t, cols)
        for ri, rh in enumerate(t.rows.headings):
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


SAMPLE_RUNS = 2000
"""Runs of the seeded sample that stands in for the exact odds of a situation too big to count exactly."""


def situation_stops(r, overlays: tuple = ()) -> list[dict]:
    """Each shipped situation of ruleset ``r`` (with these overlays, and the player's applied charts), every
    roll enumerated: its share of outcomes that stop on a chart cell nobody supplied, and those cells."""
    from ..api import load_situation
    from ..errors import LimitError, UmpireError
    from ..odds.exact import NEEDS_CHART, budgeted_odds
    from ..odds.simulation import simulate
    out = []
    for path in sorted((r.root / "situations").glob("*.y*ml")):
        entry: dict = {"situation": str(path)}
        try:
            s = load_situation(path, overlays)
            s.dice, s.dice_positions = [], []
            try:
                report = budgeted_odds(s, [])
            except LimitError:          # too many states to count exactly: a seeded sample instead
                report = simulate(s, SAMPLE_RUNS, 1, [])
                entry["estimated_from_runs"] = SAMPLE_RUNS
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


# ---- a chart overlay from grids as a player filled them (the workbench's chart editor) ------------

def grid_overlay(r, specs: list[dict], name: str = "my-charts") -> tuple[str, dict]:
    """A chart overlay in grid form from the grids a player filled in, and where each value sits in it.

    Each spec is {"table": NAME, "rows": [row heading text or None per row slot], "columns": [column heading
    text or None per column slot] (a table with columns), "values": [[cell text or None per column slot]
    per row slot]}. Rows with no value are left out; a table's columns are written in full (its card order)
    where its column axis is open. Returns (the overlay's text, {(line, column): (table, row slot, column
    slot)}) with the 1-based line and column of each value, and (line, 0) for a row's heading and
    (line, -1) for a table's ``columns:`` line (column slot None)."""
    import os

    from ..reading.schema import SCHEMA_DIR
    schema = os.path.relpath(SCHEMA_DIR / "overlay.schema.json")
    lines = [f"# yaml-language-server: $schema={schema}",
             f"# Your charts for {r.title}, as you typed them from your own card.",
             "# Then: umpire charts RULESET --use THIS-FILE (every command applies it), or --with THIS-FILE once",
             f"overlay: {json.dumps(name, ensure_ascii=False)}", f"extends: {r.id}", "kind: charts", "changes:"]
    where: dict = {}
    for spec in specs:
        t = r.tables[spec["table"]]
        rows = [(i, h, v) for i, (h, v) in enumerate(zip(spec["rows"], spec["values"]))
                if any(not _empty(x) for x in v)]
        if not rows:
            continue
        lines.append(f"  - table: {t.name}")
        cols = spec.get("columns")
        if t.columns is not None and cols is not None and t.columns.open:
            where[(len(lines) + 1, -1)] = (t.name, None, None)
            lines.append("    columns: [" + ", ".join("~" if _empty(c) else json.dumps(str(c).strip(), ensure_ascii=False)
                                               for c in cols) + "]")
        lines.append("    grid:")
        for i, heading, values in rows:
            n = len(lines) + 1
            key = "~" if _empty(heading) else json.dumps(str(heading).strip(), ensure_ascii=False)
            text = f"      {key}: "
            where[(n, 0)] = (t.name, i, None)
            if t.columns is None:
                where[(n, len(text) + 1)] = (t.name, i, 0)
                text += _typed_text(values[0])
            else:
                text += "["
                for j, v in enumerate(values):
                    if j:
                        text += ", "
                    where[(n, len(text) + 1)] = (t.name, i, j)
                    text += _typed_text(v)
                text += "]"
            lines.append(text)
    return "\n".join(lines) + "\n", where


def _empty(x) -> bool:
    return x is None or (isinstance(x, str) and x.strip() in ("", "?"))


def _typed_text(v) -> str:
    return "~" if _empty(v) else json.dumps(str(v).strip(), ensure_ascii=False)


def cell_at(where: dict, line: int, column: int):
    """The (table, row slot, column slot) an error at line:column of a ``grid_overlay`` text points at."""
    found = [(c, v) for (ln, c), v in where.items() if ln == line]
    if not found:
        return None
    before = [(c, v) for c, v in found if c <= column]
    return max(before)[1] if before else min(found)[1]
