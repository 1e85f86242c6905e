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
