"""The workbench's chart editor: the player's grids checked cell by cell and written as a chart overlay.

The page draws each table as its card (tools/charts.py gives the same grids to the command line); what
the player typed comes back here as grids of text. Every value is checked against its table's result
codes (with did-you-mean) and against the cells the rulebook reveals, and the overlay built from the
grids is applied to the ruleset exactly as ``--with`` would apply it, so a problem found there is shown
on the cell it concerns. Nothing here writes outside the workspace's upload folder.
"""

from __future__ import annotations

from .. import api
from ..errors import InputError, InputErrors, UmpireError

MAX_TABLES = 64
MAX_SLOTS = 400
"""Most rows (or columns) one grid may send: every shipped card is far smaller."""
MAX_TEXT = 40


def _texts(raw, what: str, limit: int) -> list:
    if not isinstance(raw, list) or len(raw) > limit:
        raise InputError(f"{what} must be a list of at most {limit} entries")
    out = []
    for x in raw:
        if x is not None and not isinstance(x, (str, int, float)) or isinstance(x, bool):
            raise InputError(f"each of {what} is text or null")
        x = None if x is None else str(x).strip()
        if x is not None and len(x) > MAX_TEXT:
            raise InputError(f"'{x[:MAX_TEXT]}…' is longer than {MAX_TEXT} characters")
        out.append(x or None)
    return out


def _index(i, n: int) -> bool:
    return isinstance(i, int) and not isinstance(i, bool) and 0 <= i < n


def read_specs(r, raw) -> list[dict]:
    """The grids a page sent, checked for shape: [{table, rows, columns?, values}]."""
    if not isinstance(raw, list) or len(raw) > MAX_TABLES:
        raise InputError(f"tables must be a list of at most {MAX_TABLES} grids")
    specs = []
    for g in raw:
        if not isinstance(g, dict) or not isinstance(g.get("table"), str) or g["table"] not in r.tables:
            name = g.get("table") if isinstance(g, dict) else g
            from ..errors import did_you_mean
            raise InputError(f"no table '{name}' in ruleset '{r.id}'", hint=did_you_mean(str(name), r.tables))
        t = r.tables[g["table"]]
        rows = _texts(g.get("rows"), "rows", MAX_SLOTS)
        columns = _texts(g.get("columns"), "columns", MAX_SLOTS) if t.columns is not None else None
        width = len(columns) if columns is not None else 1
        values = g.get("values")
        if not isinstance(values, list) or len(values) != len(rows):
            raise InputError(f"table '{t.name}': values must hold one list per row ({len(rows)})")
        values = [_texts(v, f"the values of row {i + 1}", width) for i, v in enumerate(values)]
        if any(len(v) != width for v in values):
            raise InputError(f"table '{t.name}': each row holds {width} values")
        specs.append({"table": t.name, "rows": rows, "columns": columns, "values": values})
    return specs


def cell_problems(r, specs: list[dict]) -> list[dict]:
    """Each typed value that matches none of its table's result codes, or that differs from a cell the
    rulebook reveals: shown on that cell."""
    from ..loading.chart_grids import _heading
    from ..loading.overlay import _same, result_codes, value_hint
    from ..model.tables import UNKNOWN
    from ..model.values import show
    problems = []
    for spec in specs:
        t = r.tables[spec["table"]]
        for i, (rh, values) in enumerate(zip(spec["rows"], spec["values"])):
            ri = t.rows.key_index(_heading(t.rows, rh)) if rh is not None else None
            for j, raw in enumerate(values):
                if raw is None:
                    continue
                where = {"table": t.name, "row": i, "column": j if t.columns is not None else None}
                try:
                    value = t.parse_cell(raw)
                except ValueError:
                    problems.append(dict(where, message=f"'{raw}' matches none of the table's result codes "
                                         f"({result_codes(t)})", hint=value_hint(t, raw)))
                    continue
                if rh is None:
                    problems.append(dict(where, message="this row has no heading: type the card's heading first"))
                    continue
                ch = spec["columns"][j] if spec["columns"] is not None else None
                ci = 0 if t.columns is None else (t.columns.key_index(_heading(t.columns, ch)) if ch else None)
                if ri is None or ci is None or value is UNKNOWN:
                    continue
                old = t.cells[ri][ci]
                if old is not UNKNOWN and (ri, ci) not in t.origins and not _same(old, value):
                    problems.append(dict(where, message=f"your chart says {raw}, but the rulebook reveals "
                                         f"{show(old)} "
                                         f"({t.sources.get((ri, ci)) or 'rulebook'})",
                                         hint="a chart may only fill cells the rulebook does not print"))
    return problems


def job_chart_check(ws, params: dict) -> dict:
    """The page's grids, checked; when they hold no problem, the chart overlay they make (to apply to the
    page's later jobs and to download) and each table's cells: known, filled, still unknown."""
    from ..tools.charts import cell_at, grid_overlay, table_counts
    rid = ws.ruleset_id(params)
    r = api.load_ruleset(ws.root(rid))
    specs = read_specs(r, params.get("tables"))
    name = str(params.get("name") or f"{rid}-charts.yaml")[:80]
    problems = cell_problems(r, specs)
    text, where = grid_overlay(r, specs, name.rsplit(".", 1)[0])
    counts = {}
    if not problems:
        path = ws.overlays(rid, [{"text": text, "name": name}])
        try:
            filled = api.load_ruleset(ws.root(rid), path)
        except UmpireError as e:
            errors = e.errors if isinstance(e, InputErrors) else [e]
            for err in errors:
                pos = err.position
                spot = cell_at(where, pos.line, pos.column or 0) if pos is not None and pos.line else None
                table, row, column = spot if spot else (None, None, None)
                problems.append({"table": table, "row": row, "column": column, "message": err.message,
                                 "hint": err.hint})
        else:
            counts = {s["table"]: table_counts(filled.tables[s["table"]]) for s in specs}
            name = ws.display.get(path[0], name)        # as the workspace names the file (a safe name)
    return {"ok": not problems, "problems": problems, "name": name, "text": text, "counts": counts}


def job_charts(ws, params: dict) -> dict:
    """Chart cells the user filled in ({table, row index, column index, value}), as a chart overlay in grid
    form; applying it checks each value against the book."""
    from ..tools.charts import grid_overlay
    rid = ws.ruleset_id(params)
    r = api.load_ruleset(ws.root(rid))
    cells = params.get("cells") or []
    if not isinstance(cells, list):
        raise InputError("cells must be a list of {table, row, column, value}")
    grids: dict[str, dict] = {}
    for c in cells:
        if not isinstance(c, dict) or not isinstance(c.get("table"), str) or c["table"] not in r.tables:
            raise InputError(f"no table '{c.get('table') if isinstance(c, dict) else c}' in ruleset '{rid}'")
        t = r.tables[c["table"]]
        ri, ci = c.get("row"), c.get("column", 0)
        value = str(c.get("value", "")).strip()
        if not _index(ri, len(t.rows.headings)) or not _index(ci, len(t.columns.headings) if t.columns else 1) \
                or not value or len(value) > MAX_TEXT:
            raise InputError(f"each filled cell needs a row index and a value (at most {MAX_TEXT} characters)")
        if t.columns is not None and t.columns.headings[ci] is None:
            raise InputError(f"table '{t.name}': column {ci + 1} has no heading in the rulebook; give the card's "
                             "headings in the chart editor")
        g = grids.setdefault(t.name, {"table": t.name, "rows": [t.rows.label(i) for i in range(len(t.rows.headings))],
                                      "columns": [t.columns.label(i) for i in range(len(t.columns.headings))]
                                      if t.columns else None,
                                      "values": [[None] * (len(t.columns.headings) if t.columns else 1)
                                                 for _ in t.rows.headings]})
        g["values"][ri][ci] = value
    name = str(params.get("name") or "my-charts.yaml")[:80]
    text, _ = grid_overlay(r, list(grids.values()), name.rsplit(".", 1)[0])
    path = ws.overlays(rid, [{"text": text, "name": name}])
    api.load_ruleset(ws.root(rid), path)       # refuses a value the rulebook contradicts, with its example
    return {"name": ws.display.get(path[0], name), "text": text, "filled": sum(1 for c in cells)}
