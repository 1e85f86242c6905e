"""Lookup tables: axes that match a value to a heading, cells known or unknown.

A table is built once from its YAML (every cell checked against the declared
result codes) and looked up at run time by heading index, so a lookup is a
couple of list operations.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from fractions import Fraction
from functools import cache

from ..errors import AdjudicationError, InputError, Position, UnknownCellError, did_you_mean
from ..reading.plain import data_class, factory
from .values import Record, exact, freeze, show

TYPE_CHECKING = False   # (typing is for the checker only: importing it costs a warm start 2%)
if TYPE_CHECKING:
    from typing import Any

UNKNOWN = object()
"""The value of a cell the rulebook does not print."""

OFF = object()
UNSURE = object()   # a value that may read a column whose heading the rulebook does not give
"""Marks a lookup that fell off the table (below the first column, or shifted past an edge)."""


# ---- axes -------------------------------------------------------------------------

_BAND = (r"^\s*(?:(?P<le>≤|<=)\s*(?P<le_v>-?\d+)|(?P<ge>≥|>=)\s*(?P<ge_v>-?\d+)|"
         r"(?P<plus>-?\d+)\s*\+|(?P<lo>-?\d+)\s*(?:-|–|\.\.)\s*(?P<hi>-?\d+)|(?P<one>-?\d+))\s*$")
# (a band heading, ``≤0``, ``2-3``, ``7+``, ``5``, as a text: re compiles it when first read; a warm start reads none)


def parse_band(text) -> tuple[float, float]:
    """A band heading ("≤0", "2-3", "≥15", "7+", "5") as an inclusive (low, high) range."""
    if isinstance(text, int):
        return (text, text)
    m = re.match(_BAND, str(text))
    if not m:
        raise ValueError(text)
    inf = float("inf")
    if m["le"]:
        return (-inf, int(m["le_v"]))
    if m["ge"]:
        return (int(m["ge_v"]), inf)
    if m["plus"]:
        return (int(m["plus"]), inf)
    if m["lo"]:
        return (int(m["lo"]), int(m["hi"]))
    return (int(m["one"]), int(m["one"]))


@data_class
class Axis:
    title: str
    match: str                       # exact | at_most | bands
    headings: list
    clamp: bool = False
    below: str = "off"               # for at_most: a value under the first heading
    bands: list = factory(default_factory=list)
    open: bool = False               # the rulebook shows only some headings; others exist
    positions: dict = factory(default_factory=dict)   # heading -> index (exact matching)

    def __post_init__(self):
        self.positions = {h: i for i, h in enumerate(self.headings) if h.__class__ is not bool and h is not None}
        # at_most axes may hold null headings: columns the rulebook shows exist without giving their heading
        self.known = [(h, i) for i, h in enumerate(self.headings) if h is not None]

    def beyond_last(self, value) -> bool:
        """On an open at_most axis, a value above the last known heading may belong to an unknown column."""
        return self.match == "at_most" and value > self.known[-1][0]

    def index(self, value) -> int | object:
        """The heading index a value reads, OFF when it falls below an at_most axis.

        With null (unknown) headings on an at_most axis, a value that may belong to one of
        them gives UNSURE: only the chart can say which column it reads.
        """
        if self.match == "at_most":
            if value.__class__ is bool or not isinstance(value, (int, Fraction)):
                raise TypeError(f"a number is needed to pick the {self.title or 'heading'}")
            k = bisect_right([h for h, _ in self.known], value) - 1   # increasing (checked at load)
            if k < 0:
                return UNSURE if self.known[0][1] > 0 else OFF
            h, i = self.known[k]
            following = self.known[k + 1][1] if k + 1 < len(self.known) else len(self.headings)
            if value != h and following > i + 1:
                return UNSURE
            return i
        if self.match == "bands":
            if value.__class__ is bool or not isinstance(value, (int, Fraction)):
                raise TypeError(f"a number is needed to pick the {self.title or 'heading'}")
            for i, (lo, hi) in enumerate(self.bands):
                if lo <= value <= hi:
                    return i
            if self.clamp:
                return 0 if value < self.bands[0][0] else len(self.bands) - 1
            return None
        try:
            found = self.positions.get(value)
        except TypeError:
            found = None
        if found is not None and value.__class__ is not bool:
            return found
        if self.clamp and isinstance(value, (int, Fraction)) and not isinstance(value, bool):
            numeric = [h for h in self.headings if isinstance(h, (int, Fraction))]
            if numeric:
                if value < min(numeric):
                    return self.headings.index(min(numeric))
                if value > max(numeric):
                    return self.headings.index(max(numeric))
        return None

    def label(self, i: int) -> str:
        return "?" if self.headings[i] is None else str(self.headings[i])

    def key_index(self, heading) -> int | None:
        """The index of a heading as written in a cell or grid (exact text or value).

        On a bands axis a number may also name the band that holds it ("2" for "≤3").
        """
        for i, h in enumerate(self.headings):
            if h == heading or str(h) == str(heading):
                return i
        if self.match == "bands" and isinstance(heading, int) and not isinstance(heading, bool):
            for i, (lo, hi) in enumerate(self.bands):
                if lo <= heading <= hi:
                    return i
        return None


# ---- result codes -----------------------------------------------------------------

@data_class
class ResultCode:
    code: str
    pattern: str      # as the card prints it, ``#`` standing for a number
    means: str

    @classmethod
    def build(cls, code: str, pattern, means: str) -> "ResultCode":
        return cls(code, str(pattern), means)

    @property
    def regex(self) -> re.Pattern:
        """The pattern as a regular expression, compiled when first used (a start that reads no cell by its text,
        as a warm one does not, compiles none), once per pattern."""
        return _code_regex(self.pattern)


@cache
def _code_regex(pattern: str) -> re.Pattern:
    return re.compile("^" + re.escape(pattern).replace("\\#", "#").replace("#", r"(\d+)") + "$")


@data_class
class Table:
    name: str
    title: str
    cite: str | None
    player_aid: str | None
    rows: Axis
    columns: Axis | None
    shift_off_edge: str
    off_table: Any
    results: dict[str, ResultCode]
    cells: list                       # rows x columns of values / UNKNOWN
    sources: dict                     # (r, c) -> citation for known cells
    pos: Position | None = None
    origins: dict = factory(default_factory=dict)   # (r, c) -> overlay position that set it
    structure_unknown: bool = False   # the rulebook names the table but gives no rows or columns
    reference: bool = False           # kept for players to read; no procedure is meant to look it up

    @property
    def open_axes(self) -> list[str]:
        """Which axes the rulebook shows only in part ("rows", "columns"): more cells exist than are listed."""
        return [name for name, ax in (("rows", self.rows), ("columns", self.columns)) if ax is not None and ax.open]

    @property
    def known_count(self) -> int:
        return sum(1 for row in self.cells for v in row if v is not UNKNOWN)

    @property
    def size(self) -> int:
        return sum(len(row) for row in self.cells)

    def parse_cell(self, raw) -> Any:
        """A cell as written (e.g. '1MC') to its runtime value (a result record), or raise ValueError."""
        if raw is None or (isinstance(raw, str) and raw.strip() in ("unknown", "?")):
            return UNKNOWN
        if not self.results:
            return freeze(raw)     # plain data as DSL values: a decimal such as 1.5 is the exact 3/2
        text = str(raw).strip()
        for code in self.results.values():
            m = code.regex.match(text)
            if m:
                return Record({"code": code.code, "n": int(m.group(1)) if m.groups() else None, "text": text})
        raise ValueError(text)

    def off_value(self):
        if self.off_table is None:
            return None
        return self.parse_cell(self.off_table)

    def _index(self, axis, value, pos):
        """``axis.index(value)``, with a value the axis cannot read (text where bands need a number) as a
        positioned adjudication error rather than a Python TypeError."""
        try:
            return axis.index(value)
        except TypeError as e:
            reason = str(e) if str(e).startswith("a number") else f"a {axis.title or 'heading'} is needed"
            raise AdjudicationError(f"table '{self.name}': {reason}, not {show(value)}", pos, value=value) from None

    def locate(self, row, column=None, shift: int = 0, pos: Position | None = None):
        """The (row index, column index) a lookup reads; an index is None when it fell off the table.

        On an ``open`` axis (the rulebook shows only some headings) a value that no
        known heading covers stops with "needs chart" rather than guessing.
        """
        if self.structure_unknown:
            raise UnknownCellError(self.name, self.title, None, None, self.player_aid, pos)
        r = self._index(self.rows, row, pos)
        if r is None or (r is OFF and self.rows.open) or r is UNSURE:
            self._unknown_heading(self.rows, row, pos)
        if r is None:
            raise AdjudicationError(f"table '{self.name}' has no row for {self.rows.title or 'row'} {show(row)} "
                                    f"(rows: {', '.join(map(str, self.rows.headings))})", pos, value=row)
        if r is OFF:
            return None, None
        if self.rows.open and self.rows.beyond_last(row):
            self._unknown_heading(self.rows, row, pos)
        if self.columns is None:
            return r, 0
        if column is None:
            raise AdjudicationError(f"table '{self.name}' needs a column", pos)
        c = self._index(self.columns, column, pos)
        if c is None and self.columns.open or (c is OFF and self.columns.open) or c is UNSURE:
            self._unknown_heading(self.columns, column, pos)
        if c is None:
            raise AdjudicationError(f"table '{self.name}' has no column for {self.columns.title or 'column'} "
                                    f"{show(column)} (columns: {', '.join(map(str, self.columns.headings))})", pos,
                                    value=column)
        if c is OFF:
            if self.columns.below == "error":
                raise AdjudicationError(f"{show(column)} is below the lowest column of table '{self.name}'", pos)
            return r, None
        if self.columns.open and self.columns.beyond_last(column):
            self._unknown_heading(self.columns, column, pos)
        if shift:
            c += shift
            if c < 0 or c >= len(self.columns.headings):
                if self.columns.open:
                    side = "left of the first" if c < 0 else "right of the last"
                    raise UnknownCellError(self.name, self.title, self.rows.label(r),
                                           f"{abs(shift)} shift(s) from {show(column)}, {side} known column",
                                           self.player_aid, pos)
                if self.shift_off_edge == "clamp":
                    c = max(0, min(c, len(self.columns.headings) - 1))
                else:
                    return r, None
            if self.columns.headings[c] is None:
                raise UnknownCellError(self.name, self.title, self.rows.label(r),
                                       f"{abs(shift)} shift(s) from {show(column)}, a column whose heading the "
                                       "rulebook does not give", self.player_aid, pos)
        return r, c

    def set_cell(self, r: int, c: int, raw, source, doc, where) -> None:
        """Set one cell from its written value (a result code, a number, unknown); a value that is none of the
        table's result codes is an error at ``where``."""
        try:
            value = self.parse_cell(raw)
        except ValueError:
            codes = ", ".join(f"{rc.pattern}" for rc in self.results.values())
            raise InputError(f"cell value '{raw}' matches none of table '{self.name}''s result codes ({codes})",
                             doc.at(where), hint=code_hint(self, raw)) from None
        self.cells[r][c] = value
        if value is not UNKNOWN:
            self.sources[(r, c)] = source
        else:
            self.sources.pop((r, c), None)

    def column_heading(self, column, shift: int = 0, pos: Position | None = None):
        """The column heading a value reads after a shift, without any row (None off the table)."""
        if self.structure_unknown:
            raise UnknownCellError(self.name, self.title, None, None, self.player_aid, pos)
        cols = self.columns
        if cols is None:
            raise AdjudicationError(f"table '{self.name}' has no columns", pos)
        c = self._index(cols, column, pos)
        if (c is None or c is OFF) and cols.open or c is UNSURE:
            raise UnknownCellError(self.name, self.title, None, f"for {cols.title} {show(column)} (the "
                                   f"rulebook shows only {', '.join(map(str, cols.headings))})",
                                   self.player_aid, pos)
        if c is None:
            raise AdjudicationError(f"table '{self.name}' has no column for {show(column)}", pos, value=column)
        if c is OFF:
            return None
        if cols.open and cols.beyond_last(column):
            self._unknown_heading(cols, column, pos)
        c += shift
        if 0 <= c < len(cols.headings):
            if cols.headings[c] is None:
                raise UnknownCellError(self.name, self.title, None, f"{abs(shift)} shift(s) from {show(column)}, a "
                                       "column whose heading the rulebook does not give", self.player_aid, pos)
            return cols.headings[c]
        if cols.open:
            side = "left of the first" if c < 0 else "right of the last"
            raise UnknownCellError(self.name, self.title, None, f"{abs(shift)} shift(s) from {show(column)}, "
                                   f"{side} known column", self.player_aid, pos)
        if self.shift_off_edge == "clamp":
            return cols.headings[max(0, min(c, len(cols.headings) - 1))]
        return None

    def _unknown_heading(self, axis, value, pos):
        rows = axis is self.rows
        label = (f"for {axis.title} {show(value)} (the rulebook shows only "
                 f"{', '.join(axis.label(i) for i in range(len(axis.headings)))})")
        raise UnknownCellError(self.name, self.title, label if rows else None, None if rows else label,
                               self.player_aid, pos)

    def lookup(self, row, column=None, shift: int = 0, pos: Position | None = None):
        """The cell at (row, column) after shifting the column by ``shift`` headings, and its indexes."""
        r, c = self.locate(row, column, shift, pos)
        if r is None or c is None:
            return self.off_value(), r, c
        value = self.cells[r][c]
        if value is UNKNOWN:
            raise UnknownCellError(self.name, self.title, self.rows.label(r),
                                   self.columns.label(c) if self.columns else None, self.player_aid, pos)
        return value, r, c


def build_table(name: str, spec: dict, doc, path: tuple, cite) -> Table:
    """A Table from its YAML mapping; errors point at the bad heading or cell."""

    def axis(key) -> Axis | None:
        a = spec.get(key)
        if a is None:
            return None
        headings = list(a["headings"])
        headings = [exact(h) if isinstance(h, float) else h for h in headings]
        ax = Axis(a.get("title", key[:-1]), a["match"], headings, a.get("clamp", False), a.get("below", "off"),
                  open=a.get("open", False))
        if ax.match == "bands":
            for i, h in enumerate(headings):
                try:
                    ax.bands.append(parse_band(h))
                except ValueError:
                    raise InputError(f"band heading '{h}' is not understood; write e.g. \"≤0\", \"2-3\", \"≥15\" or \"7+\"",
                                     doc.at(path + (key, "headings", i))) from None
        if None in headings and ax.match != "at_most":
            raise InputError("only an at_most axis may have null (unknown) headings", doc.at(path + (key, "headings")))
        if ax.match == "at_most":
            bad = [h for h in headings if h is not None and (isinstance(h, bool) or not isinstance(h, (int, Fraction)))]
            if bad:
                raise InputError(f"an at_most axis needs numeric headings; '{bad[0]}' is not a number",
                                 doc.at(path + (key, "headings")))
            if not ax.known:
                raise InputError("an at_most axis needs at least one known heading", doc.at(path + (key, "headings")))
            known = [h for h in headings if h is not None]
            if known != sorted(known) or len(set(known)) != len(known):
                raise InputError("at_most headings must be in increasing order", doc.at(path + (key, "headings")))
        if len(set(str(h) for h in headings if h is not None)) != len([h for h in headings if h is not None]):
            raise InputError(f"the {key} headings repeat a heading", doc.at(path + (key, "headings")))
        return ax

    if spec.get("structure") == "unknown":
        # named by the rulebook, axes not given: no cells, and every lookup stops with "needs chart"
        return Table(name, spec["title"], cite(spec.get("cite")), spec.get("player_aid"),
                     Axis("rows", "exact", [], open=True), None, "off", None, {}, [], {}, doc.at(path),
                     structure_unknown=True, reference=spec.get("reference", False))
    rows, columns = axis("rows"), axis("columns")
    if rows is None:
        raise InputError(f"table '{name}' needs rows", doc.at(path))
    results = {code: ResultCode.build(code, r["pattern"], r.get("means", ""))
               for code, r in (spec.get("results") or {}).items()}
    ncols = len(columns.headings) if columns else 1
    table = Table(name, spec["title"], cite(spec.get("cite")), spec.get("player_aid"), rows, columns,
                  spec.get("shift_off_edge", "off"), spec.get("off_table"), results,
                  [[UNKNOWN] * ncols for _ in rows.headings], {}, doc.at(path),
                  reference=spec.get("reference", False))
    if table.off_table is not None:
        try:
            table.off_value()
        except ValueError:
            raise InputError(f"off_table value '{table.off_table}' matches none of the result codes "
                             f"({', '.join(r.pattern for r in results.values())})", doc.at(path + ("off_table",))) from None
    grid = spec.get("grid") or {}
    for row_key, values in grid.items():
        r = rows.key_index(row_key)
        where = path + ("grid", row_key)
        if r is None:
            raise InputError(f"grid row '{row_key}' is not a row heading of table '{name}'", doc.key_at(where),
                             hint=_heading_hint(row_key, rows))
        values = values if isinstance(values, list) else [values]
        if len(values) != ncols:
            raise InputError(f"grid row '{row_key}' has {len(values)} cells but the table has {ncols} columns",
                             doc.at(where))
        for c, raw in enumerate(values):
            table.set_cell(r, c, raw, cite(spec.get("source")), doc, where + (c,))
    for i, cell in enumerate(spec.get("cells") or []):
        where = path + ("cells", i)
        r = rows.key_index(cell["row"])
        if r is None:
            raise InputError(f"row '{cell['row']}' is not a row heading of table '{name}'", doc.at(where + ("row",)),
                             hint=_heading_hint(cell["row"], rows))
        col: int | None
        if columns is None:
            col = 0
        else:
            if "column" not in cell:
                raise InputError(f"table '{name}' has columns, so this cell needs a column", doc.at(where))
            col = columns.key_index(cell["column"])
            if col is None:
                raise InputError(f"column '{cell['column']}' is not a column heading of table '{name}'",
                                 doc.at(where + ("column",)), hint=_heading_hint(cell["column"], columns))
        table.set_cell(r, col, cell["value"], cite(cell.get("source")), doc, where + ("value",))
    return table


def _heading_hint(value, axis: Axis) -> str:
    return "headings are: " + ", ".join(map(str, axis.headings))


def code_hint(table: Table, raw, otherwise: str = "# in a pattern stands for a number") -> str:
    """The result code a mistyped cell was probably meant to be ('PTX' -> 'PTC'), its number kept."""
    text = str(raw).strip()
    digits = re.search(r"\d+", text)
    written = {rc.pattern.replace("#", digits.group(0) if digits else "1"): rc for rc in table.results.values()}
    return did_you_mean(text.upper(), written) or did_you_mean(text, written) or otherwise


