"""Overlays: house rules and players' charts applied on top of a base ruleset.

An overlay file names the ruleset it extends and lists changes: table cells or
whole tables, modifiers (add, change, remove) and stack caps, catalogue
entries, and labelled procedure steps (replace, insert, remove). Overlays
apply in order, after the base is read and before it is checked and compiled,
so an overlaid ruleset is checked exactly like a hand-written one.

Every change records where it came from; traces show it beside the rule
citation. Two overlays changing the same thing is a conflict, and a chart
value that contradicts a cell the rulebook reveals is refused with the
citation of the example that revealed it. The card's headings on open axes and
charts typed as CSV are read by chart_grids.py.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Any

from ..errors import ErrorCollector, InputError, Position, did_you_mean
from ..model.ruleset import Change, Ruleset, shown
from ..model.tables import UNKNOWN
from ..model.values import freeze, show
from ..reading import syntax as ast
from ..reading.parser import parse_module, parse_steps
from ..reading.schema import validate
from ..reading.source import Document, load_yaml
from .chart_grids import _blank, _card_axis, _heading, _headings_hint, _open_heading, number_text, read_chart_csv
from .loader import add_procedures, build_stack, build_table, yaml_expression


def apply_overlays(ruleset: Ruleset, paths, texts: dict[str, str] | None = None) -> list[Change]:
    """Apply overlay files in order; raise InputErrors listing every problem found.

    ``texts`` (path -> content) are files already read (by the load cache), used instead of reading again.
    """
    touched: dict[tuple, Position] = {}
    log: list[Change] = []
    errors = ErrorCollector()
    for path in paths:
        with errors.attempt():      # a file that does not read still lets the next be checked
            _apply_file(ruleset, path, texts, touched, log, errors)
    errors.raise_any()
    ruleset.changes = log
    return log


def _apply_file(ruleset: Ruleset, path, texts, touched: dict, log: list, errors: ErrorCollector) -> None:
    if str(path).lower().endswith((".csv", ".tsv")):
        doc = read_chart_csv(path, (texts or {}).get(str(path)))
    else:
        doc = load_yaml(path, (texts or {}).get(str(path)))
        validate(doc, "overlay")
    if doc.data["extends"] != ruleset.id:
        raise InputError(f"this overlay extends '{doc.data['extends']}', but the ruleset is '{ruleset.id}'",
                         doc.at(("extends",)))
    ruleset.overlays.append(str(path))
    ruleset.files.append(str(path))
    for i, change in enumerate(doc.data["changes"]):
        with errors.attempt():
            _apply(ruleset, doc, ("changes", i), change, touched, log)


def _claim(touched: dict, key: tuple, where: Position, what: str) -> None:
    if key in touched and touched[key].file != where.file:
        raise InputError(f"conflict: {what} is also changed by {touched[key]}; two overlays may not change the "
                         "same thing (combine them, or drop one)", where)
    touched[key] = where


def _apply(r: Ruleset, doc: Document, path: tuple, c: dict, touched: dict, log: list) -> None:
    if "table" in c:
        _table_change(r, doc, path, c, touched, log)
    elif "stack" in c:
        _stack_change(r, doc, path, c, touched, log)
    elif "catalogue" in c:
        _catalogue_change(r, doc, path, c, touched, log)
    elif "add_procedures" in c:
        _add_procedures(r, doc, path, c, touched, log)
    else:
        _procedure_change(r, doc, path, c, touched, log)


def _find(kind: str, things: dict, name: str, doc: Document, path: tuple):
    if name not in things:
        raise InputError(f"the base ruleset has no {kind} '{name}'", doc.at(path),
                         did_you_mean(name, things) or f"its {kind}s: {', '.join(sorted(things)) or 'none'}")
    return things[name]


def _only(c: dict, allowed: set, doc, path, what: str) -> None:
    extra = [k for k in c if k not in allowed | {"note", "source"}]
    if extra:
        raise InputError(f"'{extra[0]}' does not go with {what}", doc.key_at(path + (extra[0],)),
                         hint="keys allowed here: " + ", ".join(sorted(allowed)))


# ---- tables ---------------------------------------------------------------------------

def _table_change(r: Ruleset, doc, path, c, touched, log) -> None:
    name = c["table"]
    table = _find("table", r.tables, name, doc, path + ("table",))
    cite = r.cite
    if "replace" in c:
        _only(c, {"table", "replace"}, doc, path, "replace (a whole table)")
        _claim(touched, ("tables", name), doc.at(path), f"table '{name}'")
        new = build_table(name, c["replace"], doc, path + ("replace",), cite)
        for key in new.sources:
            new.origins[key] = _replaced_cell_at(new, c["replace"], doc, path + ("replace",), key)
        _keep_revealed(table, new, doc, path)
        r.tables[name] = new
        log.append(Change("tables", name, f"replaced the whole table ({new.known_count} of {new.size} cells known)",
                          doc.at(path), "replaced table", None,
                          (("known cells", table.known_count, new.known_count),)))
        return
    _only(c, {"table", "set_cells", "grid", "rows", "columns"}, doc, path,
          "a table's cells (set_cells or grid, with the card's rows or columns)")
    if "set_cells" not in c and "grid" not in c:
        raise InputError(f"say what to change in table '{name}': set_cells, grid or replace", doc.at(path))
    if table.structure_unknown:
        raise InputError(f"the rulebook gives table '{name}' no rows or columns; give the whole table with "
                         "replace: (title, rows, columns, grid)", doc.at(path))
    # 1. the card's headings: an axis given in full (rows:/columns:), then new headings on open axes
    slots = None   # the card's column positions -> the table's column indexes (None: an empty heading slot)
    for key in ("rows", "columns"):
        if key in c:
            if key not in ("rows",) and table.columns is None:
                raise InputError(f"table '{name}' has no columns (one value per row)", doc.key_at(path + (key,)))
            found = _card_axis(table, key, c[key], doc, path + (key,))
            if key == "columns":
                slots = found
            _claim(touched, ("tables", name, "$" + key), doc.at(path + (key,)), f"the {key} of table '{name}'")
    for i, cell in enumerate(c.get("set_cells") or []):
        cpath = path + ("set_cells", i)
        _open_heading(table, "rows", cell["row"], doc, cpath + ("row",))
        if table.columns is not None and "column" in cell:
            _open_heading(table, "columns", cell["column"], doc, cpath + ("column",))
    for row_key in (c.get("grid") or {}):
        _open_heading(table, "rows", row_key, doc, path + ("grid", row_key), key_pos=True)
    # 2. the cells, by heading
    cells = []  # (row index, column index, raw value, position)
    for i, cell in enumerate(c.get("set_cells") or []):
        cpath = path + ("set_cells", i)
        ri = table.rows.key_index(_heading(table.rows, cell["row"]))
        if ri is None:
            raise InputError(f"table '{name}' has no row '{cell['row']}'", doc.at(cpath + ("row",)),
                             _headings_hint(table.rows, "rows", cell["row"]))
        ci: int | None
        if table.columns is None:
            ci = 0
        else:
            if "column" not in cell:
                raise InputError(f"table '{name}' has columns; say which", doc.at(cpath))
            ci = table.columns.key_index(_heading(table.columns, cell["column"]))
            if ci is None:
                raise InputError(f"table '{name}' has no column '{cell['column']}'", doc.at(cpath + ("column",)),
                                 _headings_hint(table.columns, "columns", cell["column"]))
        cells.append((ri, ci, cell["value"], doc.at(cpath + ("value",))))
    for row_key, values in (c.get("grid") or {}).items():
        gpath = path + ("grid", row_key)
        ri = table.rows.key_index(_heading(table.rows, row_key))
        if ri is None:
            raise InputError(f"table '{name}' has no row '{row_key}'", doc.key_at(gpath),
                             _headings_hint(table.rows, "rows", row_key))
        values = values if isinstance(values, list) else [values]
        width = len(slots) if slots is not None else len(table.columns.headings) if table.columns else 1
        if len(values) != width:
            raise InputError(f"row '{row_key}' has {len(values)} values; table '{name}' has {width} columns "
                             f"({', '.join(table.columns.label(i) for i in range(width)) if table.columns else 'one value'})",
                             doc.at(gpath), None if "columns" in c or not (table.columns and table.columns.open)
                             else "give the card's column headings under columns: to add columns")
        for j, v in enumerate(values):
            ci = slots[j] if slots is not None else j
            if ci is None:
                if not _blank(v):
                    raise InputError(f"row '{row_key}' has a value under an empty column heading", doc.at(gpath + (j,)),
                                     "type the card's heading for that column under columns:, or leave the cell blank")
                continue
            cells.append((ri, ci, v, doc.at(gpath + (j,))))
    changed = 0
    filled = []      # (cell label, before, after)
    for ri, ci, raw, pos in cells:
        if _blank(raw):
            continue
        try:
            value = table.parse_cell(_typed(table, raw, pos))
        except ValueError:
            raise InputError(f"'{raw}' matches none of table '{name}''s result codes ({result_codes(table)})", pos,
                             value_hint(table, raw)) from None
        if value is UNKNOWN:
            continue
        label = _cell_label(table, ri, ci)
        old = table.cells[ri][ci]
        if old is not UNKNOWN and (ri, ci) not in table.origins:
            if _same(old, value):
                continue
            raise _contradiction(label, value, old, table.sources.get((ri, ci)), pos)
        _claim(touched, ("tables", name, table.rows.label(ri), table.columns.label(ci) if table.columns else None),
               pos, label)
        filled.append((label, None if old is UNKNOWN else old, value))
        table.cells[ri][ci] = value
        table.sources[(ri, ci)] = f"overlay {Path(pos.file).name}"
        table.origins[(ri, ci)] = pos
        changed += 1
    shown_cells = "; ".join(f"{cell}: {show(b) if b is not None else 'unknown'} -> {show(a)}" for cell, b, a in filled[:3])
    log.append(Change("tables", name, f"{changed} cell(s) filled" + (f" ({shown_cells}" + (", ...)" if changed > 3
                                                                                              else ")")
                                                                     if filled else ""),
                      doc.at(path), "filled cells", None, tuple(filled)))


def _typed(table, raw, pos: Position):
    """A value typed as text (a CSV field, a quoted YAML value, the workbench) in the kind of value its table
    holds: "6" is the number 6 unless every revealed cell is text, and on a table of numbers (no result codes,
    every revealed cell a number) text that is no number is refused."""
    if table.results or not isinstance(raw, str):
        return raw
    known = [v for row in table.cells for v in row if v is not UNKNOWN]
    numeric = bool(known) and all(isinstance(v, (int, Fraction)) and not isinstance(v, bool) for v in known)
    if known and all(isinstance(v, str) for v in known):
        return raw                      # a table of text keeps "4" as text, as its revealed cells are
    value = number_text(raw)
    if value is not None:
        return value
    if numeric:
        raise InputError(f"'{raw}' is not a number; table '{table.name}' holds numbers", pos,
                         "type the number printed on your card (a blank or ? where it gives none)")
    return raw


def result_codes(table) -> str:
    return ", ".join(f"{rc.pattern} ({rc.means})" if rc.means else rc.pattern for rc in table.results.values())


def value_hint(table, raw) -> str:
    """A did-you-mean for a mistyped result code ('1KAI' -> '1KIA'), else what the codes look like."""
    from ..model.tables import code_hint
    return code_hint(table, raw, "# in a code stands for a number; leave a cell blank (or ?) when your chart does "
                                 "not say")


def _same(a, b) -> bool:
    return show(a) == show(b)


def _revealed(table) -> list[tuple[int, int]]:
    """The cells of ``table`` the rulebook reveals (known, and set by no overlay)."""
    return [(ri, ci) for ri, row in enumerate(table.cells) for ci, v in enumerate(row)
            if v is not UNKNOWN and (ri, ci) not in table.origins]


def _cell_label(table, ri: int, ci: int) -> str:
    return f"table '{table.name}' row {table.rows.label(ri)}" + (
        f", column {table.columns.label(ci)}" if table.columns else "")


def _contradiction(label: str, value, old, source, pos: Position) -> InputError:
    return InputError(f"{label}: your chart says {show(value)}, but the rulebook reveals {show(old)} "
                      f"({source or 'rulebook'})", pos,
                      "check the chart (or the row and column you typed); a chart overlay may only fill "
                      "cells the rulebook does not print")


def _replaced_cell_at(new, spec: dict, doc: Document, path: tuple, key: tuple[int, int]) -> Position:
    """Where a replacement table's cell (row index, column index) is written in the overlay."""
    ri, ci = key
    for row_key in (spec.get("grid") or {}):
        if new.rows.key_index(row_key) == ri:
            values = spec["grid"][row_key]
            return doc.at(path + ("grid", row_key) + ((ci,) if isinstance(values, list) else ()))
    for i, cell in enumerate(spec.get("cells") or []):
        if new.rows.key_index(cell["row"]) == ri and (
                new.columns is None or new.columns.key_index(cell.get("column")) == ci):
            return doc.at(path + ("cells", i, "value"))
    return doc.at(path)


def _keep_revealed(old, new, doc: Document, path: tuple) -> None:
    """A whole-table replacement keeps every cell the rulebook reveals: the same value is fine, a blank
    (unknown) cell takes the book's value, and a different value or a missing heading is refused."""
    for ri, ci in _revealed(old):
        value, source = old.cells[ri][ci], old.sources.get((ri, ci))
        label = _cell_label(old, ri, ci)
        nr = new.rows.key_index(old.rows.headings[ri]) if old.rows.headings[ri] is not None else None
        nc = 0 if new.columns is None and old.columns is None else (
            new.columns.key_index(old.columns.headings[ci])
            if new.columns is not None and old.columns is not None and old.columns.headings[ci] is not None
            else None)
        if nr is None or nc is None:
            missing = (f"row '{old.rows.label(ri)}'" if nr is None else
                       f"column '{old.columns.label(ci)}'" if old.columns is not None else "one value per row (it has columns)")
            raise InputError(f"{label}: the rulebook reveals {show(value)} ({source or 'rulebook'}), but your "
                             f"table '{new.name}' has no {missing}", doc.at(path),
                             "a replacement keeps the headings the rulebook prints, with their cells")
        have = new.cells[nr][nc]
        if have is UNKNOWN:
            new.cells[nr][nc] = value
            new.sources[(nr, nc)] = source
            new.origins.pop((nr, nc), None)
        elif not _same(have, value):
            raise _contradiction(label, have, value, source, new.origins.get((nr, nc)) or doc.at(path))
        else:
            new.sources[(nr, nc)] = source      # the book's cell, as the book cites it
            new.origins.pop((nr, nc), None)


# ---- stacks ---------------------------------------------------------------------------

_STACK_SETTINGS = {"limits", "refuse_below", "refuse_above", "groups", "title", "cite"}
_MODIFIER_FIELDS = {"value", "when", "times", "group", "cite", "description"}


def _stack_change(r: Ruleset, doc, path, c, touched, log) -> None:
    name = c["stack"]
    stack = _find("stack", r.stacks, name, doc, path + ("stack",))
    ids = [m.id for m in stack.modifiers]

    def index_of(mid, key):
        if mid not in ids:
            raise InputError(f"stack '{name}' has no modifier '{mid}'", doc.at(path + (key,)),
                             did_you_mean(mid, ids) or f"its modifiers: {', '.join(ids)}")
        return ids.index(mid)

    if "add" in c:
        _only(c, {"stack", "add", "before", "after"}, doc, path, "add (a new modifier)")
        spec = c["add"]
        if spec["id"] in ids:
            raise InputError(f"stack '{name}' already has a modifier '{spec['id']}'; use modify to change it",
                             doc.at(path + ("add", "id")))
        built = build_stack(name, {"title": stack.title, "groups": stack.groups, "modifiers": [spec]}, doc,
                            path, r.cite).modifiers[0]
        built.origin = doc.at(path)
        at = len(stack.modifiers)
        if "before" in c:
            at = index_of(c["before"], "before")
        elif "after" in c:
            at = index_of(c["after"], "after") + 1
        _claim(touched, ("stacks", name, spec["id"]), doc.at(path), f"modifier '{spec['id']}' of stack '{name}'")
        stack.modifiers.insert(at, built)
        log.append(Change("stacks", name, f"added modifier {spec['id']} = {built.text.get('value')}"
                          + (f" when {built.text['when']}" if "when" in built.text else ""), doc.at(path),
                          "added modifier", spec["id"],
                          tuple((k, None, built.text[k]) for k in ("value", "when", "times") if k in built.text)))
    elif "modify" in c:
        _only(c, {"stack", "modify", "set"}, doc, path, "modify (change a modifier)")
        i = index_of(c["modify"], "modify")
        m = stack.modifiers[i]
        fields = c.get("set") or {}
        bad = [k for k in fields if k not in _MODIFIER_FIELDS]
        if bad:
            raise InputError(f"a modifier has no field '{bad[0]}'", doc.key_at(path + ("set", bad[0])),
                             did_you_mean(bad[0], _MODIFIER_FIELDS))
        _claim(touched, ("stacks", name, m.id), doc.at(path), f"modifier '{m.id}' of stack '{name}'")
        changes: dict[str, Any] = {}
        before = {k: (m.text.get(k) if k in ("value", "when", "times") else getattr(m, k, None)) for k in fields}
        for k, v in fields.items():
            if k in ("value", "when", "times"):
                changes[k] = yaml_expression(doc, path + ("set", k), v)
                m.text[k] = str(v)
            elif k == "cite":
                changes[k] = r.cite(v)
            elif k == "group":
                changes[k] = v
        for k, v in changes.items():
            setattr(m, k, v)
        m.origin = doc.at(path)
        log.append(Change("stacks", name, f"changed modifier {m.id}: "
                          + ", ".join(f"{k} {shown(before[k]) or 'none'} -> {shown(v)}" for k, v in fields.items()),
                          doc.at(path), "changed modifier", m.id,
                          tuple((k, before[k], v) for k, v in fields.items())))
    elif "remove" in c:
        _only(c, {"stack", "remove"}, doc, path, "remove (a modifier)")
        i = index_of(c["remove"], "remove")
        _claim(touched, ("stacks", name, c["remove"]), doc.at(path), f"modifier '{c['remove']}' of stack '{name}'")
        gone = stack.modifiers[i]
        del stack.modifiers[i]
        log.append(Change("stacks", name, f"removed modifier {c['remove']}", doc.at(path), "removed modifier",
                          c["remove"], tuple((k, gone.text[k], None) for k in ("value", "when", "times")
                                             if k in gone.text)))
    elif "set" in c:
        _only(c, {"stack", "set"}, doc, path, "a stack's settings")
        fields = c["set"]
        bad = [k for k in fields if k not in _STACK_SETTINGS]
        if bad:
            raise InputError(f"a stack has no setting '{bad[0]}'", doc.key_at(path + ("set", bad[0])),
                             did_you_mean(bad[0], _STACK_SETTINGS) or "settings: " + ", ".join(sorted(_STACK_SETTINGS)))
        _claim(touched, ("stacks", name, "$settings"), doc.at(path), f"the settings of stack '{name}'")
        before = {k: ({"min": stack.limit_min, "max": stack.limit_max} if k == "limits" else getattr(stack, k, None))
                  for k in fields}
        for k, v in fields.items():
            if k == "limits":
                stack.limit_min, stack.limit_max = (v or {}).get("min"), (v or {}).get("max")
            elif k == "cite":
                stack.cite = r.cite(v)
            else:
                setattr(stack, k, v)
        log.append(Change("stacks", name, "settings: "
                          + ", ".join(f"{k} {shown(before[k]) or 'none'} -> {shown(v) or 'none'}"
                                      for k, v in fields.items()),
                          doc.at(path), "changed settings", None, tuple((k, before[k], v) for k, v in fields.items())))
    else:
        raise InputError(f"say what to change in stack '{name}': add, modify, remove or set", doc.at(path))


# ---- catalogues ---------------------------------------------------------------------------

def _catalogue_change(r: Ruleset, doc, path, c, touched, log) -> None:
    _only(c, {"catalogue", "entry", "set"}, doc, path, "a catalogue change (entry and set)")
    cat = _find("catalogue", r.catalogues, c["catalogue"], doc, path + ("catalogue",))
    if "entry" not in c or "set" not in c:
        raise InputError("a catalogue change names the entry and the fields to set", doc.at(path))
    entry = str(c["entry"])
    fields = freeze(c["set"])
    _claim(touched, ("catalogues", cat.name, entry), doc.at(path), f"entry '{entry}' of catalogue '{cat.name}'")
    old_entry = cat.entries.get(entry)
    if entry in cat.entries:
        cat.entries[entry] = cat.entries[entry].updated(dict(fields))
        what = "changed"
    else:
        cat.entries[entry] = fields
        what = "added"
    cat.entry_positions[entry] = doc.at(path)
    was = {k: (old_entry.get(k) if old_entry is not None else None) for k in fields}
    log.append(Change("catalogues", cat.name, f"{what} entry {entry}: "
                      + ", ".join(f"{k} {show(was[k]) if was[k] is not None else 'none'} -> {show(v)}"
                                  for k, v in fields.items()), doc.at(path),
                      f"{what} entry", entry, tuple((k, was[k], v) for k, v in fields.items())))


# ---- procedures ----------------------------------------------------------------------------

def _add_procedures(r: Ruleset, doc, path, c, touched, log) -> None:
    _only(c, {"add_procedures"}, doc, path, "add_procedures")
    spos = doc.at(path + ("add_procedures",))
    import textwrap
    text = textwrap.dedent(c["add_procedures"])
    first = next((line for line in c["add_procedures"].splitlines() if line.strip()), "")
    indent = len(first) - len(first.lstrip()) + doc.block_indent(path + ("add_procedures",))
    procedures = parse_module(text, spos.file, Position(spos.file, spos.line + 1, indent + 1), indent)
    for p in procedures:
        if p.name in r.procedures:
            raise InputError(f"the base ruleset already has a procedure '{p.name}'; change its steps instead "
                             "(replace_step, insert_before, insert_after, remove_step)", p.pos)
        _claim(touched, ("procedures", p.name), p.pos, f"procedure '{p.name}'")
    add_procedures(r, procedures)
    for p in procedures:
        log.append(Change("procedures", p.name, "added procedure", p.pos, "added procedure"))


def _procedure_change(r: Ruleset, doc, path, c, touched, log) -> None:
    name = c["procedure"]
    proc = _find("procedure", r.procedures, name, doc, path + ("procedure",))
    actions = [k for k in ("replace_step", "insert_before", "insert_after", "remove_step") if k in c]
    if len(actions) != 1:
        raise InputError("a procedure change has exactly one of replace_step, insert_before, insert_after or "
                         "remove_step", doc.at(path))
    action = actions[0]
    label = c[action]
    allowed = {"procedure", action} | ({"steps"} if action != "remove_step" else set())
    _only(c, allowed, doc, path, action)
    steps: tuple = ()
    if action != "remove_step":
        if "steps" not in c:
            raise InputError(f"{action} needs the new statements under steps:", doc.at(path))
        spos = doc.at(path + ("steps",))
        block = doc.block_indent(path + ("steps",))
        steps = parse_steps(c["steps"], Position(spos.file, spos.line + 1, block + 1) if block else
                            Position(spos.file, spos.line, spos.column), block)
    labels = _labels(proc.syntax.body)
    if label not in labels:
        raise InputError(f"procedure '{name}' has no step labelled @{label}", doc.at(path + (action,)),
                         did_you_mean(label, labels) or (f"its labels: {', '.join('@' + other for other in labels)}"
                                                         if labels else "label a step in the procedure with a line "
                                                                        "@name before it"))
    _claim(touched, ("procedures", name, label), doc.at(path), f"step @{label} of procedure '{name}'")
    body = _edit(proc.syntax.body, label, action, steps)
    proc.syntax = ast.replace(proc.syntax, body=body)
    words = {"replace_step": "replaced", "insert_before": "inserted before", "insert_after": "inserted after",
             "remove_step": "removed"}[action]
    log.append(Change("procedures", name, f"{words} step @{label}"
                      + (f" ({len(steps)} statement(s))" if steps else ""), doc.at(path), f"{words} step",
                      "@" + label))


def _labels(body) -> list[str]:
    out = []
    for s in body:
        if s.label:
            out.append(s.label)
        if isinstance(s, ast.If):
            for b in s.branches:
                out += _labels(b.body)
        elif isinstance(s, ast.ForEach):
            out += _labels(s.body)
    return out


def _edit(body: tuple, label: str, action: str, steps: tuple) -> tuple:
    out = []
    for s in body:
        if s.label == label:
            if action == "replace_step":
                out += list(steps)
            elif action == "insert_before":
                out += list(steps) + [s]
            elif action == "insert_after":
                out += [s] + list(steps)
            continue  # remove_step: drop it
        if isinstance(s, ast.If):
            s = ast.replace(s, branches=tuple(ast.replace(b, body=_edit(b.body, label, action, steps))
                                             for b in s.branches))
        elif isinstance(s, ast.ForEach):
            s = ast.replace(s, body=_edit(s.body, label, action, steps))
        out.append(s)
    return tuple(out)
