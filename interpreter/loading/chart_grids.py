"""Charts shaped like the card: the headings of open axes (a chart adds the card's rows and columns where the
rulebook shows only some) and chart grids typed in a spreadsheet (CSV or TSV), read with the line and column
of every value. overlay.py applies what these give to a table.
"""

from __future__ import annotations

import re
from fractions import Fraction
from pathlib import Path

from ..errors import InputError, Position, did_you_mean
from ..model.tables import UNKNOWN, Axis, parse_band
from ..model.values import exact, normalise
from ..reading.source import Document

# ---- headings of open axes -------------------------------------------------------------

def _axis(table, key: str):
    return table.rows if key == "rows" else table.columns


def number_text(text: str, fractions: bool = True):
    """A number as a player types one ("6", "-2", "1.5", "1/2", "1 1/2"), exact; None for other text."""
    text = text.strip()
    if re.fullmatch(r"[-+]?\d+", text):
        return int(text)
    if re.fullmatch(r"[-+]?\d*\.\d+", text):
        return exact(float(text))
    m = re.fullmatch(r"(-?)(?:(\d+) )?(\d+)/(\d+)", text) if fractions else None
    if m and int(m.group(4)):       # a fraction as the templates show one
        value = int(m.group(2) or 0) + Fraction(int(m.group(3)), int(m.group(4)))
        return normalise(-value if m.group(1) else value)
    return None


def _heading(axis: Axis, raw):
    """A heading as typed (in YAML, or as text in a CSV) in the axis's own kind: a number on a numeric axis
    (a band's heading keeps its text, a number names the band that holds it)."""
    if isinstance(raw, float):
        return exact(raw)
    if isinstance(raw, str):
        numeric = axis.match in ("at_most", "bands") or any(isinstance(h, int) and not isinstance(h, bool)
                                                 for h in axis.headings)
        if axis.match == "bands":
            value = number_text(raw, fractions=False)
            return value if isinstance(value, int) else raw.strip()
        value = number_text(raw) if numeric else None
        return raw.strip() if value is None else value
    return raw


def _headings_hint(axis: Axis, key: str, raw) -> str:
    known = [axis.label(i) for i in range(len(axis.headings))]
    return (did_you_mean(str(raw), known) or f"{key}: {', '.join(known)}") + (
        "" if axis.open else f" (the rulebook prints all of its {key}; a chart adds {key} only where it leaves "
                             "them open)")


def _rebuilt(axis: Axis, headings: list, open_: bool) -> Axis:
    new = Axis(axis.title, axis.match, list(headings), axis.clamp, axis.below, open=open_)
    if new.match == "bands":
        new.bands = [parse_band(h) for h in headings]
    return new


def _reshape(table, key: str, headings: list, mapping: dict[int, int], open_: bool) -> None:
    """Give ``table``'s rows or columns new headings; ``mapping`` takes each old index to its new one."""
    axis = _rebuilt(_axis(table, key), headings, open_)
    move = (lambda rc: (mapping[rc[0]], rc[1])) if key == "rows" else (lambda rc: (rc[0], mapping[rc[1]]))
    if key == "rows":
        cells = [[UNKNOWN] * (len(table.columns.headings) if table.columns else 1) for _ in headings]
        for old, new in mapping.items():
            cells[new] = table.cells[old]
        table.rows = axis
    else:
        cells = []
        for row in table.cells:
            out = [UNKNOWN] * len(headings)
            for old, new in mapping.items():
                out[new] = row[old]
            cells.append(out)
        table.columns = axis
    table.cells = cells
    table.sources = {move(k): v for k, v in table.sources.items()}
    table.origins = {move(k): v for k, v in table.origins.items()}


def _check_axis(axis: Axis, headings: list, key: str, doc, path: tuple, at) -> None:
    """The card's headings must make a valid axis of the table's kind (numbers in order, bands that parse)."""
    seen = set()
    for i, h in enumerate(headings):
        where = doc.at(at(i))
        if str(h) in seen:
            raise InputError(f"the {key} repeat the heading '{h}'", where)
        seen.add(str(h))
        if axis.match == "at_most" and (isinstance(h, bool) or not isinstance(h, (int, Fraction))):
            raise InputError(f"'{h}' is not a number; this table's {key} are numbers (each heading is the most "
                             f"its {key[:-1]} covers)", where)
        if axis.match == "bands":
            try:
                parse_band(h)
            except ValueError:
                raise InputError(f"band heading '{h}' is not understood", where,
                                 "write e.g. \"≤0\", \"2-3\", \"≥15\" or \"7+\"") from None
    if axis.match == "at_most" and headings != sorted(headings):
        raise InputError(f"the {key} headings must increase, as on the card", doc.at(path))
    if axis.match == "bands":
        bands = sorted(parse_band(h) for h in headings)
        for (_, hi1), (lo2, _) in zip(bands, bands[1:]):
            if lo2 <= hi1:
                raise InputError(f"the {key} bands overlap", doc.at(path))


def _card_axis(table, key: str, raw: list, doc, path: tuple) -> list[int | None] | None:
    """The card's whole list of row or column headings (``rows:``/``columns:`` beside a grid).

    The headings the rulebook prints must all be there (on a numeric axis, in the same run: nothing
    between two headings it shows side by side); a heading it leaves unnamed (null) takes the card's.
    """
    axis = _axis(table, key)
    if not isinstance(raw, list) or not raw:
        raise InputError(f"{key}: lists the card's {key[:-1]} headings, in card order", doc.at(path))
    card = [None if _blank(h) else _heading(axis, h) for h in raw]
    named = [j for j, h in enumerate(card) if h is not None]
    headings = [card[j] for j in named]
    _check_axis(axis, headings, key, doc, path, lambda i: path + (named[i],))
    book = axis.headings
    mapping: dict[int, int] = {}    # book index -> card position
    if axis.match == "exact":
        for i, h in enumerate(book):
            j = next((j for j, x in enumerate(card) if x is not None and str(x) == str(h)), None)
            if j is None:
                raise InputError(f"your card's {key} lack '{h}', which the rulebook prints for table "
                                 f"'{table.name}'", doc.at(path), "list every heading of the card, in its order")
            mapping[i] = j
    else:
        first = next(i for i, h in enumerate(book) if h is not None)
        j0 = next((j for j, x in enumerate(card) if x is not None and str(x) == str(book[first])), None)
        if j0 is None:
            raise InputError(f"your card's {key} lack '{book[first]}', which the rulebook prints for table "
                             f"'{table.name}'", doc.at(path), "list every heading of the card, in its order")
        start = j0 - first
        for i, h in enumerate(book):
            j = start + i
            if j < 0 or j >= len(card) or (h is not None and str(card[j]) != str(h)):
                shown = ", ".join(axis.label(k) for k in range(len(book)))
                raise InputError(f"your card's {key} do not run as the rulebook's do: it shows {shown} side by "
                                 f"side ('?' for a heading it does not name)", doc.at(path),
                                 "check the headings you typed against the card")
            mapping[i] = j
    kept = sorted(set(named) | set(mapping.values()))          # card positions that make the new axis
    extra = [card[j] for j in kept if j not in mapping.values()]
    if not axis.open and extra:
        raise InputError(f"table '{table.name}' has no {key[:-1]} '{extra[0]}', and the rulebook prints all of "
                         f"its {key}", doc.at(path))
    position = {j: k for k, j in enumerate(kept)}
    # the card gives the whole axis, unless it leaves empty heading slots (then more may come)
    _reshape(table, key, [card[j] for j in kept], {i: position[j] for i, j in mapping.items()},
             axis.open and len(kept) < len(card))
    return [position.get(j) for j in range(len(card))]


def _blank(raw) -> bool:
    """A cell or heading left empty (in YAML ~ or "", in a CSV an empty field; "?" too)."""
    return raw is None or (isinstance(raw, str) and raw.strip() in ("", "?"))


# ---- charts typed in a spreadsheet (CSV or TSV) ---------------------------------------------

def _split(line: str, sep: str) -> list[tuple[str, int]]:
    """One CSV line's fields with the 1-based column each starts at ("" quotes a quote inside quotes)."""
    fields, i, n = [], 0, len(line)
    while True:
        start, text = i + 1, []
        if i < n and line[i] == '"':
            i += 1
            while i < n:
                if line[i] == '"':
                    if i + 1 < n and line[i + 1] == '"':
                        text.append('"')
                        i += 2
                        continue
                    i += 1
                    break
                text.append(line[i])
                i += 1
            while i < n and line[i] != sep:
                text.append(line[i])
                i += 1
        else:
            while i < n and line[i] != sep:
                text.append(line[i])
                i += 1
        fields.append(("".join(text).strip(), start))
        if i >= n:
            return fields
        i += 1


def read_chart_csv(path, text: str | None = None) -> Document:
    """A chart overlay typed as CSV (or TSV) grids, as ``umpire charts RULESET --template --format csv`` writes:
    a line ``extends,RULESET``, then for each table a line ``table,NAME``, its heading line (a corner cell,
    then the column headings; ``value`` for a table of one value per row) and one line per row (its heading,
    then its values). Blank lines and lines starting with # are notes. Every value keeps its line:column."""
    file = str(path)
    if text is None:
        from ..reading.source import read_text
        text = read_text(path)        # a regular file only; a byte-order mark dropped
    sep = "\t" if file.lower().endswith(".tsv") else ","
    doc = Document(file, None, text=text)
    pos = doc.positions
    data: dict = {"overlay": Path(file).stem, "kind": "charts", "changes": []}
    change: dict | None = None          # the table being read
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = _split(line, sep)
        while len(fields) > 1 and not fields[-1][0]:
            fields.pop()                 # spreadsheets pad lines with empty cells
        first, col = fields[0]
        at = Position(file, n, col)
        if first.lower() == "extends":
            if len(fields) < 2 or not fields[1][0]:
                raise InputError("say which ruleset these charts are for: extends,RULESET", at)
            data["extends"] = fields[1][0]
            pos[("extends",)] = Position(file, n, fields[1][1])
            continue
        if "extends" not in data:
            raise InputError("a chart CSV names its ruleset first, on a line: extends,RULESET", at)
        if first.lower() == "table":
            if len(fields) < 2 or not fields[1][0]:
                raise InputError("say which table follows: table,NAME", at)
            i = len(data["changes"])
            change = {"table": fields[1][0], "grid": {}}
            data["changes"].append(change)
            pos[("changes", i)] = at
            pos[("changes", i, "table")] = Position(file, n, fields[1][1])
            headings_due = True
            continue
        if change is None:
            raise InputError(f"'{first}' comes before any table: start each grid with a line table,NAME", at,
                             did_you_mean(first.lower(), ["table", "extends"]))
        i = len(data["changes"]) - 1
        if headings_due:
            headings_due = False
            heads = fields[1:]
            if [h.lower() for h, _ in heads] != ["value"]:
                change["columns"] = [h for h, _ in heads]
                pos[("changes", i, "columns")] = Position(file, n, heads[0][1] if heads else col)
                for j, (_, c) in enumerate(heads):
                    pos[("changes", i, "columns", j)] = Position(file, n, c)
            change["width"] = len(heads)
            continue
        if first in change["grid"]:
            raise InputError(f"row '{first}' appears twice in table '{change['table']}'", at)
        values = [v for v, _ in fields[1:]]
        values += [""] * (change["width"] - len(values))
        change["grid"][first] = values if "columns" in change else (values[0] if values else "")
        doc.key_positions[("changes", i, "grid", first)] = at
        pos[("changes", i, "grid", first)] = at
        for j, (_, c) in enumerate(fields[1:]):
            pos[("changes", i, "grid", first, j)] = Position(file, n, c)
    if "extends" not in data:
        raise InputError("a chart CSV names its ruleset first, on a line: extends,RULESET", Position(file, 1, 1))
    for change in data["changes"]:
        change.pop("width", None)
    doc.data = data
    return doc


def _open_heading(table, key: str, raw, doc, path: tuple, key_pos: bool = False) -> None:
    """A heading not yet on an open axis is added where it belongs; on a closed axis nothing happens
    (the lookup of the cell then says the heading does not exist)."""
    axis = _axis(table, key)
    h = _heading(axis, raw)
    if not axis.open or axis.key_index(h) is not None:
        return
    where = doc.key_at(path) if key_pos else doc.at(path)
    _check_axis(axis, [h], key, doc, path, lambda i: path)
    headings = list(axis.headings)
    if axis.match == "exact":
        at, fill = len(headings), False
    else:
        value = h if axis.match == "at_most" else parse_band(h)[0]
        keys = [(x if axis.match == "at_most" else parse_band(x)[0]) if x is not None else None for x in headings]
        if axis.match == "bands":
            lo, hi = parse_band(h)
            if any(not (hi < a or lo > b) for a, b in axis.bands):
                raise InputError(f"band '{h}' overlaps a band of table '{table.name}' "
                                 f"({', '.join(map(str, headings))})", where)
        below = max((i for i, x in enumerate(keys) if x is not None and x < value), default=-1)
        above = min((i for i, x in enumerate(keys) if x is not None and x > value), default=len(headings))
        unnamed = above - below - 1
        if unnamed == 0 and 0 <= below and above < len(headings):
            raise InputError(f"the rulebook shows {key} {axis.label(below)} and {axis.label(above)} side by side on "
                             f"table '{table.name}'; there is no {key[:-1]} '{h}' between them", where)
        if unnamed > 1 or (unnamed == 1 and (below < 0 or above >= len(headings))):
            raise InputError(f"'{h}' may be any of the {key} the rulebook leaves unnamed on table '{table.name}' "
                             f"({', '.join(axis.label(i) for i in range(len(headings)))})", where,
                             f"give the card's whole list of {key} headings under {key}:")
        at, fill = below + 1, unnamed == 1
    if fill:
        headings[at] = h
        _reshape(table, key, headings, {i: i for i in range(len(headings))}, True)
    else:
        headings.insert(at, h)
        _reshape(table, key, headings, {i: i + (i >= at) for i in range(len(axis.headings))}, True)
