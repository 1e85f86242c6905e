"""A map as a value: boards of labelled hexes, their terrain and features, hexside features, units and markers.

A map reaches procedures as one record (a parameter of type ``map``), so it is immutable, hashable and passed
on like any value; the builtins that read it (runtime/functions.py) find their index for it here, built once.
The record is made by ``build_map`` from a map file's plain data; loading/maps.py reads the file and the
situation's placements, with positions for every error.

Labels: each board numbers its hexes in one of two ways, with an optional prefix (ASL-style board letters,
``mN5``): ``letters`` (a column letter A-Z, then AA, BB, ... as ASL boards do, and the row number: ``N5``,
``GG10``) or ``numbers`` (column and row, each written with ``digits`` digits: ``0405``). A board's hexes sit
at ``at`` (column and row added to its own numbers) on the whole map, whose ``layout`` (model/hexgrid.py)
places them; so boards are joined side by side by their offsets.
"""

from __future__ import annotations

import re

from ..errors import BuiltinArgumentError, InputError, Position, did_you_mean
from .hexgrid import DIRECTIONS, from_cube, orientation_of, step, to_cube
from .values import Record, show, type_name

TYPE_CHECKING = False   # (typing is for the checker only: importing it costs a warm start 2%)
if TYPE_CHECKING:
    from typing import Callable

MAX_HEXES = 20000
"""Hexes one map may hold (all its boards together): far above any real board, small enough to index at once."""

_LETTERS = r"^([A-Z])\1*$"    # (a text: re compiles it when a map first needs it)


def column_letters(n: int) -> str:
    """ASL-style column letters: 1 is A, 26 is Z, 27 is AA, 28 is BB, 53 is AAA."""
    return chr(ord("A") + (n - 1) % 26) * ((n - 1) // 26 + 1)


def letters_column(text: str) -> int | None:
    if not re.match(_LETTERS, text):
        return None
    return (len(text) - 1) * 26 + ord(text[0]) - ord("A") + 1


class Board:
    """One board's numbering: its prefix, label style, extent and offset on the map."""

    def __init__(self, rec: Record):
        self.id = rec["id"]
        self.prefix = rec["prefix"]
        self.labels = rec["labels"]
        self.digits = rec["digits"]
        self.columns = rec["columns"]
        self.rows = rec["rows"]
        self.at = rec["at"]
        self.shared_edge = rec["shared_edge"]
        pattern = (r"([A-Z]+)(\d+)" if self.labels == "letters" else rf"(\d{{{self.digits}}})(\d{{{self.digits}}})")
        self._re = re.compile("^" + re.escape(self.prefix) + pattern + "$")

    def label(self, col: int, row: int) -> str:
        if self.labels == "letters":
            return f"{self.prefix}{column_letters(col)}{row}"
        return f"{self.prefix}{col:0{self.digits}d}{row:0{self.digits}d}"

    def parse(self, label: str) -> tuple[int, int] | None:
        """The board's own column and row of a label, or None when it is not one of this board's."""
        m = self._re.match(label)
        if not m:
            return None
        col = letters_column(m[1]) if self.labels == "letters" else int(m[1])
        row = int(m[2])
        if col is None or not (self.columns[0] <= col <= self.columns[1] and self.rows[0] <= row <= self.rows[1]):
            return None
        return col, row

    def cells(self):
        for col in range(self.columns[0], self.columns[1] + 1):
            for row in range(self.rows[0], self.rows[1] + 1):
                yield col, row

    def edges_of(self, col: int, row: int) -> set[str]:
        """The board's edges its own ``col``, ``row`` lies on (a corner lies on two)."""
        return {e for e, hit in (("first column", col == self.columns[0]), ("last column", col == self.columns[1]),
                                 ("first row", row == self.rows[0]), ("last row", row == self.rows[1])) if hit}


def label_text(label, widths) -> str:
    """A label as text. YAML reads an unquoted ``0405`` as the number 405, so a number (or digits) shorter than
    a numbered board's labels gets its leading zeros back; ``widths`` are those boards' label lengths."""
    text = str(label)
    if text.isdigit():
        for w in widths:
            if len(text) < w:
                return text.zfill(w)
    return text


def _widths(boards) -> list[int]:
    return sorted({2 * b["digits"] for b in boards if b["labels"] == "numbers" and not b["prefix"]})


# ---- building the map value from a map file's data --------------------------------------------------

def _extent(v) -> tuple[int, int]:
    return (1, v) if isinstance(v, int) else (v[0], v[1])


def build_map(data: dict, at: Callable[[tuple], Position], check: Callable | None = None) -> Record:
    """The map value from a map file's (schema-valid) data. ``at(path)`` positions an error; ``check(kind,
    value, path)`` checks a terrain or feature name against the ruleset's catalogue (loading/maps.py)."""
    layout = data.get("layout", "odd-q")
    orientation = data.get("orientation") or orientation_of(layout)
    boards = []
    for i, b in enumerate(data["boards"]):
        rec = Record({"id": str(b.get("id", i + 1)), "prefix": b.get("prefix", ""),
                      "labels": b.get("labels", "numbers"), "digits": b.get("digits", 2),
                      "columns": _extent(b["columns"]), "rows": _extent(b["rows"]),
                      "at": tuple(b.get("at", (0, 0))), "shared_edge": bool(b.get("shared_edge", False))})
        for name in ("columns", "rows"):
            lo, hi = rec[name]
            if lo > hi:
                raise InputError(f"this board's {name} run from {lo} to {hi}: the first is above the last",
                                 at(("boards", i, name)), "write [first, last], or the count")
            if rec["labels"] == "numbers" and hi >= 10 ** rec["digits"]:
                raise InputError(f"this board's {name} go up to {hi}, which does not fit in {rec['digits']} digits",
                                 at(("boards", i, name)), "raise `digits:`, or make the board smaller")
            if rec["labels"] == "letters" and name == "columns" and lo < 1:
                raise InputError("lettered columns start at A (1)", at(("boards", i, name)))
        boards.append((rec, Board(rec), b))
    total = sum((bd.columns[1] - bd.columns[0] + 1) * (bd.rows[1] - bd.rows[0] + 1) for _, bd, _ in boards)
    if total > MAX_HEXES:
        raise InputError(f"this map would hold {total:,} hexes (at most {MAX_HEXES:,})", at(("boards",)))
    hexes: dict[str, Record] = {}
    where: dict[tuple, tuple[str, Board]] = {}     # the whole map's (col, row) -> its label, its board
    aliases: dict[str, str] = {}                   # a shared edge hex's other boards' labels -> its label
    for i, (_, bd, b) in enumerate(boards):
        defaults = {"terrain": b.get("terrain"), "elevation": b.get("elevation")}
        if check is not None and defaults["terrain"] is not None:
            check("terrain", defaults["terrain"], ("boards", i, "terrain"))
        met: dict[str, list] = {}      # board id -> the hexes this board puts on that board's hexes
        for col, row in bd.cells():
            label = bd.label(col, row)
            gcol, grow = col + bd.at[0], row + bd.at[1]
            if label in hexes or label in aliases:
                raise InputError(f"board '{bd.id}' has a hex labelled {label}, as another board has: each label "
                                 "must be one hex", at(("boards", i)), "give the board its own `prefix:`")
            if (gcol, grow) in where:
                other, other_board = where[(gcol, grow)]
                if bd.shared_edge or other_board.shared_edge:
                    met.setdefault(other_board.id, []).append((label, other, col, row, other_board))
                    continue
                raise _overlap(bd, label, other, i, at, said=False)
            where[(gcol, grow)] = label, bd
            hexes[label] = Record({"label": label, "board": bd.id, "col": gcol, "row": grow,
                                   "terrain": defaults["terrain"], "elevation": defaults["elevation"],
                                   "features": (), "also": ()})
        for pairs in met.values():     # butted boards: each overlap one whole edge strip of both
            mine = set.intersection(*(bd.edges_of(c, r) for _, _, c, r, _ in pairs))
            theirs = set.intersection(*(ob.edges_of(c + bd.at[0] - ob.at[0], r + bd.at[1] - ob.at[1])
                                        for _, _, c, r, ob in pairs))
            if not mine or not theirs:
                raise _overlap(bd, pairs[0][0], pairs[0][1], i, at, said=True)
            for label, other, _, _, _ in pairs:
                aliases[label] = other      # two boards' edge half hexes, butted: one hex
                hexes[other] = hexes[other].updated({"also": hexes[other]["also"] + (label,)})
    labels = list(hexes)
    widths = _widths([r for r, _, _ in boards])
    listed: dict[str, str] = {}       # each hex listed under `hexes:` -> the key it was listed under
    for key, h in (data.get("hexes") or {}).items():
        label = label_text(key, widths)
        label = aliases.get(label, label)
        if label in listed:
            raise InputError(f"hex {label} is listed twice (also as {listed[label]})", at(("hexes", key)),
                             "list each hex once (a shared edge hex under either of its labels)")
        listed[label] = str(key)
        if label not in hexes:
            raise InputError(f"hex '{label}' is not on this map", at(("hexes", key)),
                             did_you_mean(label, labels) or _label_hint(boards))
        changes: dict = {}
        for field, v in (h or {}).items():
            if field == "features":
                v = tuple(str(f) for f in v)
                if check is not None:
                    for j, f in enumerate(v):
                                check("features", f, ("hexes", key, "features", j))
            elif field == "terrain" and check is not None:
                check("terrain", v, ("hexes", key, "terrain"))
            changes[field] = v
        hexes[label] = hexes[label].updated(changes)
    cube_of = {label: to_cube((h["col"], h["row"]), layout) for label, h in hexes.items()}
    sides: list[Record] = []
    seen: dict[frozenset, int] = {}
    for i, s in enumerate(data.get("hexsides") or ()):
        pair = tuple(aliases.get(y, y) for y in (label_text(x, widths) for x in s["hexes"]))
        for j, label in enumerate(pair):
            if label not in hexes:
                raise InputError(f"hex '{label}' is not on this map", at(("hexsides", i, "hexes", j)),
                                 did_you_mean(label, labels) or _label_hint(boards))
        a, b = (cube_of[x] for x in pair)
        if max(abs(a[k] - b[k]) for k in range(3)) != 1:
            raise InputError(f"hexes {pair[0]} and {pair[1]} are not next to each other, so they share no hexside",
                             at(("hexsides", i, "hexes")), "a hexside is named by the two hexes either side of it")
        key = frozenset(pair)
        if key in seen:
            raise InputError(f"the hexside between {pair[0]} and {pair[1]} is listed twice (also item {seen[key] + 1})",
                             at(("hexsides", i)), "list each hexside once, with all its features")
        seen[key] = i
        features = tuple(str(f) for f in s.get("features") or ())
        if check is not None:
            for j, f in enumerate(features):
                check("hexsides", f, ("hexsides", i, "features", j))
        sides.append(Record({"hexes": pair, "features": features}))
    return Record({"id": data.get("map") or "map", "map": data.get("map"), "title": data.get("title"), "layout": layout,
                   "orientation": orientation, "boards": tuple(r for r, _, _ in boards),
                   "hexes": Record(hexes), "aliases": Record(aliases), "hexsides": tuple(sides),
                   "units": (), "markers": ()})


def _overlap(bd: Board, label: str, other: str, i: int, at: Callable, said: bool) -> InputError:
    return InputError(f"board '{bd.id}' puts its hex {label} where the map already has {other}: boards overlap only "
                      "along one edge of each, where their edge half hexes meet, and only on a board that says "
                      "`shared_edge: true`", at(("boards", i)),
                      "move the board with `at:`" + ("" if said else ", or say `shared_edge: true` if the two edges meet"))


def _label_hint(boards) -> str:
    parts = []
    for _, bd, _ in boards:
        first = bd.label(bd.columns[0], bd.rows[0])
        last = bd.label(bd.columns[1], bd.rows[1])
        parts.append(f"board '{bd.id}' runs {first} to {last}")
    return "; ".join(parts)


def place(board: Record, units: tuple, markers: tuple) -> Record:
    """The map with units and markers placed (each a record with at least ``hex``)."""
    return board.updated({"units": units, "markers": markers})


# ---- the index the builtins read ------------------------------------------------------------------

class MapIndex:
    """Lookups over one map value: hexes by label and by cube coordinate, hexsides, units and markers by hex."""

    def __init__(self, m: Record):
        self.map = m
        self.layout = m["layout"]
        self.orientation = m["orientation"]
        self.hexes = m["hexes"]
        self.aliases = m.get("aliases") or {}
        self.cube_of = {label: to_cube((h["col"], h["row"]), self.layout) for label, h in self.hexes.items()}
        self.label_of = {c: label for label, c in self.cube_of.items()}
        self.sides = {frozenset(s["hexes"]): s for s in m["hexsides"]}
        self.units_in: dict[str, list] = {}
        self.unit_by_id = {}
        for u in m["units"]:
            self.units_in.setdefault(u["hex"], []).append(u)
            self.unit_by_id[str(u["id"])] = u
        self.markers_in: dict[str, list] = {}
        for k in m["markers"]:
            self.markers_in.setdefault(k["hex"], []).append(k)
        self.directions = DIRECTIONS[self.orientation]
        self.widths = _widths(m["boards"])

    def name(self) -> str:
        return f"map '{self.map['map']}'" if self.map.get("map") else "the map"

    def label(self, h) -> str:
        """A hex argument as a label on the map: a label, a hex record (``label``) or a placed unit (``hex``)."""
        if h.__class__ is Record:
            h = h.get("label", h.get("hex"))
        if isinstance(h, int) and not isinstance(h, bool) or isinstance(h, str) and h not in self.cube_of:
            h = label_text(h, self.widths)
            h = self.aliases.get(h, h)     # a shared edge hex named by its other board
        if not isinstance(h, str):
            raise BuiltinArgumentError(f"a hex is a label such as \"N5\" (or a record with field label or hex), "
                                       f"not {type_name(h)} {show(h)}")
        if h not in self.cube_of:
            hint = did_you_mean(h, self.cube_of)
            error = BuiltinArgumentError(f"hex '{h}' is not on {self.name()}" + (f" ({hint})" if hint else ""))
            error.value = h
            raise error
        return h

    def cube(self, h) -> tuple[int, int, int]:
        return self.cube_of[self.label(h)]

    def label_at(self, c: tuple) -> str:
        """The label of the hex at cube ``c``; one off the map is written ``(col,row)`` in the map's numbers."""
        found = self.label_of.get(c)
        if found is not None:
            return found
        col, row = from_cube(c, self.layout)[:2]
        return f"({col},{row})"

    def direction(self, a: tuple, b: tuple) -> int | None:
        d = (b[0] - a[0], b[1] - a[1], b[2] - a[2])
        try:
            return self.directions.index(d) + 1
        except ValueError:
            return None

    def neighbour(self, c: tuple, direction: int) -> tuple:
        return step(c, self.directions[direction - 1])

    def hexside(self, a: str, b: str) -> Record:
        d = self.direction(self.cube_of[a], self.cube_of[b]) if b in self.cube_of else None
        if d is None:
            raise BuiltinArgumentError(f"hexes {a} and {b} are not next to each other, so they share no hexside")
        s = self.sides.get(frozenset((a, b)))
        return Record({"hexes": (a, b), "direction": d, "features": s["features"] if s is not None else ()})

    def side_between(self, a: tuple, b: tuple) -> Record:
        """The hexside record between two adjacent cube hexes, either of which may be off the map."""
        la, lb = self.label_at(a), self.label_at(b)
        s = self.sides.get(frozenset((la, lb)))
        return Record({"hexes": (la, lb), "direction": self.direction(a, b),
                       "features": s["features"] if s is not None else ()})


_INDEXES: dict[int, tuple[Record, MapIndex]] = {}
_INDEXES_KEPT = 32


def index_of(m) -> MapIndex:
    """The index of map value ``m`` (kept with the map, so a map met again is not indexed again)."""
    found = _INDEXES.get(id(m))
    if found is not None and found[0] is m:
        return found[1]
    if m.__class__ is not Record or not {"layout", "hexes", "hexsides", "units", "markers"} <= m.keys():
        raise BuiltinArgumentError(f"its first argument must be a map (a parameter of type map), not "
                                   f"{type_name(m)} {show(m)[:60]}")
    try:
        idx = MapIndex(m)
    except (KeyError, TypeError, AttributeError, ValueError, IndexError):
        raise BuiltinArgumentError("its first argument is a record but not a map (a parameter of type map)") from None
    if len(_INDEXES) >= _INDEXES_KEPT:
        _INDEXES.clear()
    _INDEXES[id(m)] = (m, idx)
    return idx
