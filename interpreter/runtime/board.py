"""The builtins that read a map: geometry between its hexes, and what stands on them (docs/language.md, "Maps").

Each takes the map value first (a procedure's parameter of type ``map``), then hexes as labels (or a hex record,
or a placed unit). They are pure functions of their arguments, bounded by the map's size, and exact: distances
and lines are worked out in whole numbers and fractions (model/hexline.py).
"""

from __future__ import annotations

from contextlib import contextmanager

from ..errors import BuiltinArgumentError
from ..model.hexgrid import cube_distance
from ..model.hexline import bearing, line, within
from ..model.hexmap import index_of
from ..model.values import Record, show, type_name

TYPE_CHECKING = False   # (typing is for the checker only: importing it costs a warm start 2%)
if TYPE_CHECKING:
    from typing import Callable


def _whole(x, what: str) -> int:
    if not isinstance(x, int) or isinstance(x, bool):
        raise BuiltinArgumentError(f"{what} must be a whole number, not {type_name(x)} {show(x)}")
    return int(x)


def _direction(x) -> int:
    d = _whole(x, "a direction")
    if not 1 <= d <= 6:
        raise BuiltinArgumentError(f"a direction is 1 to 6 (clockwise from the top hexside), not {d}")
    return d


def map_hex(m, h) -> Record:
    idx = index_of(m)
    return idx.hexes[idx.label(h)]


def map_has(m, h) -> bool:
    idx = index_of(m)
    try:
        idx.label(h)
    except BuiltinArgumentError:
        return False
    return True


def map_distance(m, a, b) -> int:
    idx = index_of(m)
    return cube_distance(idx.cube(a), idx.cube(b))


def map_adjacent(m, a, b) -> bool:
    idx = index_of(m)
    return cube_distance(idx.cube(a), idx.cube(b)) == 1


def map_neighbours(m, h) -> tuple:
    """The hexes next to ``h`` that are on the map, in direction order (1 to 6)."""
    idx = index_of(m)
    c = idx.cube(h)
    out = []
    for d in range(1, 7):
        n = idx.label_of.get(idx.neighbour(c, d))
        if n is not None:
            out.append(n)
    return tuple(out)


def map_toward(m, h, d) -> str | None:
    """The hex next to ``h`` in direction ``d``, or null when that hex is off the map."""
    idx = index_of(m)
    return idx.label_of.get(idx.neighbour(idx.cube(h), _direction(d)))


def map_direction(m, a, b) -> int:
    idx = index_of(m)
    la, lb = idx.label(a), idx.label(b)
    d = idx.direction(idx.cube_of[la], idx.cube_of[lb])
    if d is None:
        raise BuiltinArgumentError(f"hexes {la} and {lb} are not next to each other (use map_bearing for the "
                                   "direction of a hex farther away)")
    return d


def map_hexside(m, a, b) -> Record:
    idx = index_of(m)
    return idx.hexside(idx.label(a), idx.label(b))


def map_bearing(m, a, b) -> tuple:
    idx = index_of(m)
    return tuple(bearing(idx.cube(a), idx.cube(b), idx.orientation))


def map_arc(m, a, b, sectors) -> str:
    """Whether ``b`` lies in the arc from ``a`` made of the 60-degree ``sectors`` (directions): "inside",
    "edge" (on the line between a sector of the arc and one outside it), "outside", or "same hex"."""
    idx = index_of(m)
    if sectors.__class__ is not tuple:
        sectors = (sectors,)
    arc = {_direction(s) for s in sectors}
    found = bearing(idx.cube(a), idx.cube(b), idx.orientation)
    if not found:
        return "same hex"
    inside = [d in arc for d in found]
    return "inside" if all(inside) else ("edge" if any(inside) else "outside")


def map_within(m, h, n) -> tuple:
    """The hexes of the map at most ``n`` from ``h``, nearest first."""
    idx = index_of(m)
    n = _whole(n, "the range")
    c = idx.cube(h)
    if n < 0:
        return ()
    if 3 * n * (n + 1) + 1 > len(idx.cube_of):       # fewer hexes on the map than in the range: read the map
        found = [(cube_distance(c, x), label) for label, x in idx.cube_of.items() if cube_distance(c, x) <= n]
        return tuple(label for _, label in sorted(found, key=lambda p: p[0]))
    return tuple(idx.label_of[x] for x in within(c, n) if x in idx.label_of)


def _nearest(idx, c, to) -> int:
    targets = to if to.__class__ is tuple else (to,)
    if not targets:
        raise BuiltinArgumentError("the hexes to measure to are an empty list")
    return min(cube_distance(c, idx.cube(t)) for t in targets)


def map_nearer(m, a, b, to) -> bool:
    """Whether ``a`` is nearer than ``b`` to ``to`` (a hex, or the nearest of a list of hexes)."""
    idx = index_of(m)
    return _nearest(idx, idx.cube(a), to) < _nearest(idx, idx.cube(b), to)


_DRAWN: list | None = None
"""While ``recording_lines`` runs, every line ``map_line`` works out (for ``umpire map``'s picture; it changes no
result: a line worked out once and reused is found in the result instead, or not at all)."""


@contextmanager
def recording_lines():
    global _DRAWN
    saved, _DRAWN = _DRAWN, []
    try:
        yield _DRAWN
    finally:
        _DRAWN = saved


def map_line(m, a, b) -> Record:
    """The centre-to-centre line from ``a`` to ``b``: every hex, hexside and vertex it meets, in order."""
    idx = index_of(m)
    la, lb = idx.label(a), idx.label(b)
    path: list[Record] = []
    hexes: list[str] = []
    crossed: list[Record] = []
    along: list[Record] = []
    vertices: list[Record] = []
    for piece in line(idx.cube_of[la], idx.cube_of[lb]):
        kind = piece[0]
        if kind == "hex":
            label = idx.label_at(piece[1])
            hexes.append(label)
            path.append(Record({"kind": "hex", "hex": label}))
            continue
        if kind == "vertex":
            rec = Record({"kind": "vertex", "hexes": tuple(idx.label_at(c) for c in piece[1:])})
            vertices.append(rec)
            path.append(rec)
            continue
        side = idx.side_between(piece[1], piece[2])
        rec = Record({"kind": kind, "hexes": side["hexes"], "direction": side["direction"],
                      "features": side["features"]})
        (crossed if kind == "hexside" else along).append(rec)
        path.append(rec)
    found = Record({"from": la, "to": lb, "distance": cube_distance(idx.cube_of[la], idx.cube_of[lb]),
                    "hexes": tuple(hexes), "between": tuple(hexes[1:-1]), "hexsides": tuple(crossed),
                    "along": tuple(along), "vertices": tuple(vertices), "path": tuple(path)})
    if _DRAWN is not None:
        _DRAWN.append(found)
    return found


_EDGES = {"top": (0, 1, min), "bottom": (0, 1, max), "left": (1, 0, min), "right": (1, 0, max)}


def map_edge(m, side) -> tuple:
    """The hexes along one edge of the whole map ("top", "bottom", "left" or "right"): in each column the
    first (top) or last (bottom) hex, in each row the first (left) or last (right), in map order."""
    idx = index_of(m)
    if side not in _EDGES:
        raise BuiltinArgumentError(f"an edge is \"top\", \"bottom\", \"left\" or \"right\", not {show(side)}")
    line, place, pick = _EDGES[side]
    names = ("col", "row")
    best: dict[int, int] = {}
    for h in idx.hexes.values():
        k, v = h[names[line]], h[names[place]]
        best[k] = pick(best.get(k, v), v)
    return tuple(label for label, h in idx.hexes.items() if best.get(h[names[line]]) == h[names[place]])


def map_units(m, h) -> tuple:
    idx = index_of(m)
    return tuple(idx.units_in.get(idx.label(h), ()))


def map_markers(m, h) -> tuple:
    idx = index_of(m)
    return tuple(idx.markers_in.get(idx.label(h), ()))


def map_unit(m, unit_id) -> Record:
    """The placement of the unit with this id (a record with its ``hex``, ``facing`` and what else was given)."""
    idx = index_of(m)
    if unit_id.__class__ is Record:
        unit_id = unit_id.get("id")
    found = idx.unit_by_id.get(str(unit_id))
    if found is None:      # the situation gives a map but not where this unit stands: a fact it must state
        from ..errors import MissingFact, did_you_mean
        hint = did_you_mean(str(unit_id), idx.unit_by_id)
        raise MissingFact(f"no unit '{show(unit_id)}' is placed on {idx.name()}" + (f" ({hint})" if hint else ""),
                          f"place it under the situation's units: ({{id: {show(unit_id)}, hex: ...}})")
    return found


MAP_BUILTINS: dict[str, tuple[Callable, int, int]] = {
    "map_hex": (map_hex, 2, 2), "map_has": (map_has, 2, 2), "map_distance": (map_distance, 3, 3),
    "map_adjacent": (map_adjacent, 3, 3), "map_neighbours": (map_neighbours, 2, 2),
    "map_toward": (map_toward, 3, 3), "map_direction": (map_direction, 3, 3), "map_hexside": (map_hexside, 3, 3),
    "map_bearing": (map_bearing, 3, 3), "map_arc": (map_arc, 4, 4), "map_within": (map_within, 3, 3),
    "map_nearer": (map_nearer, 4, 4), "map_line": (map_line, 3, 3), "map_units": (map_units, 2, 2),
    "map_markers": (map_markers, 2, 2), "map_unit": (map_unit, 2, 2), "map_edge": (map_edge, 2, 2),
}
