"""How ``umpire resolve`` prints an adjudication: the header, the trace (full or brief), the result, the dice.

A list of the result's records that restates input units (the same ids, mostly the inputs' fields) is printed
as a table of what changed, before -> after, per unit; another list of flat records of the same fields as an
aligned table; ``--full`` prints every record whole instead.
"""

from __future__ import annotations

from pathlib import Path

from ..model.values import Record, show

_TABLE_WIDTH = 110
"""A list of records is printed as a table only when its rows fit in this many characters."""


def render_outcome(s, outcome, explain: bool, brief: bool = False, full: bool = False) -> str:
    from ..runtime.trace import brief as render_brief
    from ..runtime.trace import explain as render_trace
    lines = []
    title = s.title or Path(s.file).stem
    lines.append(title + (f"  [{s.source}]" if s.source else ""))
    lines.append(f"procedure: {s.procedure.name}" + (f"  [{s.procedure.cite}]" if s.procedure.cite else ""))
    from ..loading.applied import charts_line
    lines += charts_line(s.ruleset)
    if explain and outcome.trace is not None:
        lines.append("")
        lines.append(render_brief(outcome.trace.events) if brief else render_trace(outcome.trace.events))
        lines.append("")
    if outcome.status == "ok":
        lines.append("result:")
        if full:
            lines.extend(render_value(outcome.value, "  "))
        else:
            from ..model.changes import input_records
            inputs = input_records(s.args)
            tables: list = []
            lines.extend(render_value(outcome.value, "  ", inputs, tables))
            if tables:
                lines.append("  (--full prints every field of each record)")
    elif outcome.status == "refused":
        lines.append(f"refused: {outcome.reason}" + (f"  [{outcome.citation}]" if outcome.citation else ""))
    else:
        lines.append(str(outcome.reason))
    dice = " ".join(show(tuple(d)) if len(d) > 1 else str(d[0]) for d in outcome.dice)
    lines.append(f"dice: {dice or 'none rolled'}" + (f"   (seed {outcome.seed} for rolls beyond the given dice)"
                                                      if outcome.seed is not None and len(outcome.dice) > len(s.dice)
                                                      else ""))
    return "\n".join(lines)


def _is_code(v) -> bool:
    """A coded result ({code, text}): printed as its text, like any value."""
    return isinstance(v, Record) and set(v) >= {"code", "text"} and len(v) <= 3


def render_value(value, indent: str, inputs: dict | None = None, tables: list | None = None) -> list[str]:
    """The result, one field a line; with ``inputs`` (the input records by id), lists of records as tables
    (the name of each list printed so is added to ``tables``)."""
    if not (isinstance(value, Record) and not _is_code(value)):
        return [f"{indent}{show(value)}"]
    out = []
    for k, v in value.items():
        table = _record_table(k, v, indent, inputs) if inputs is not None else None
        if table is not None:
            out.extend(table)
            if tables is not None:
                tables.append(k)
        elif isinstance(v, Record) and not _is_code(v) and len(show(v)) > 60:
            out.append(f"{indent}{k}:")
            out.extend(render_value(v, indent + "  ", inputs, tables))
        else:
            out.append(f"{indent}{k}: {show(v)}")
    return out


def _record_table(name, records, indent: str, inputs: dict) -> list[str] | None:
    """A list of records as a table (of changes, or of its fields), or None to print it inline."""
    from ..model.changes import is_view_of_inputs, record_changes
    if not (isinstance(records, tuple) and records and all(isinstance(r, Record) for r in records)):
        return None
    if is_view_of_inputs(records, inputs):
        rows, unchanged = [], []
        for r in records:
            changed, added = record_changes(inputs[r["id"]], r)
            if not changed and not added:
                unchanged.append(r["id"])
            first = True
            for field, before, after in changed:
                rows.append((r["id"] if first else "", field, show(before), "->", show(after)))
                first = False
            for field, after in added:
                rows.append((r["id"] if first else "", field, "", "", show(after)))
                first = False
        lines = [f"{indent}{name}: what changed (before -> after)"]
        lines += _aligned(rows, indent + "  ")
        if unchanged:
            lines.append(f"{indent}  unchanged: {', '.join(unchanged)}")
        return lines
    keys = list(records[0])
    if any(list(r) != keys for r in records) or any(isinstance(v, (Record, tuple)) for r in records
                                                    for v in r.values()):
        return None
    rows = [tuple(keys)] + [tuple(show(r[k]) for k in keys) for r in records]
    lines = _aligned(rows, indent + "  ")
    if max(len(line) for line in lines) > _TABLE_WIDTH:
        return None
    return [f"{indent}{name}:"] + lines


def _aligned(rows: list[tuple], indent: str) -> list[str]:
    """Rows of text cells in columns as wide as their widest cell (the last column unpadded)."""
    if not rows:
        return []
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return [indent + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
