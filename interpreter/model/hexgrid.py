"""Hex-grid geometry for the ``hex_distance`` builtin (generic: no map or game is named here).

A hex is given as a list ``[a, b]`` (or ``[x, y, z]`` for cube coordinates) or as a
record with fields ``col``/``row``, ``q``/``r`` or ``x``/``y``/``z``. The layout says
how the two numbers of a map's hex label place the hex:

* ``axial``  -- ``[q, r]`` axial coordinates (the default for two numbers);
* ``cube``   -- ``[x, y, z]`` with ``x + y + z == 0`` (the default for three numbers);
* ``odd-q``  -- ``[col, row]``, columns of flat-topped hexes, odd-numbered columns
  sit half a hex lower than even ones;
* ``even-q`` -- the same with even-numbered columns lower;
* ``odd-r``  -- ``[col, row]``, rows of pointy-topped hexes, odd-numbered rows sit
  half a hex further right than even ones;
* ``even-r`` -- the same with even-numbered rows further right.

Parity is that of the numbers as given (a map numbered from 1 whose first column
sits high is ``even-q``; numbered from 0, the same map is ``odd-q``).
"""

from __future__ import annotations

from ..errors import BuiltinArgumentError
from .values import Record

LAYOUTS = ("axial", "cube", "odd-q", "even-q", "odd-r", "even-r")

_FIELDS = (("col", "row"), ("q", "r"), ("x", "y", "z"))


class HexError(BuiltinArgumentError):
    """A bad coordinate or layout; the message is shown to the user."""


def _numbers(h) -> tuple:
    if isinstance(h, Record):
        for names in _FIELDS:
            if all(n in h for n in names):
                h = tuple(h[n] for n in names)
                break
        else:
            raise HexError("a hex record needs fields col and row, q and r, or x, y and z")
    if not isinstance(h, tuple) or len(h) not in (2, 3):
        raise HexError("a hex is a list of two (or three, cube) whole numbers, or a record")
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in h):
        raise HexError("hex coordinates must be whole numbers")
    return h


def to_cube(h, layout: str) -> tuple[int, int, int]:
    """The cube coordinates ``(x, y, z)`` of hex ``h`` in ``layout``."""
    n = _numbers(h)
    if layout not in LAYOUTS:
        raise HexError(f"unknown hex layout {layout!r}; layouts are: {', '.join(LAYOUTS)}")
    if len(n) == 3:
        if layout != "cube":
            raise HexError(f"three coordinates are cube coordinates, not {layout!r}")
        if sum(n) != 0:
            raise HexError("cube coordinates must add up to 0")
        return n
    if layout == "cube":
        raise HexError("cube coordinates need three numbers")
    a, b = n
    if layout == "axial":
        q, r = a, b
    elif layout == "odd-q":
        q, r = a, b - (a - (a & 1)) // 2
    elif layout == "even-q":
        q, r = a, b - (a + (a & 1)) // 2
    elif layout == "odd-r":
        q, r = a - (b - (b & 1)) // 2, b
    else:  # even-r
        q, r = a - (b + (b & 1)) // 2, b
    return q, r, -q - r


def hex_distance(a, b, layout=None) -> int:
    """Hexes from ``a`` to ``b`` (adjacent hexes are 1 apart; a hex is 0 from itself)."""
    if layout is None:
        layout = "cube" if len(_numbers(a)) == 3 else "axial"
    if not isinstance(layout, str):
        raise HexError("the hex layout is a text such as \"odd-q\"")
    ax, ay, az = to_cube(a, layout)
    bx, by, bz = to_cube(b, layout)
    return max(abs(ax - bx), abs(ay - by), abs(az - bz))


def from_cube(c: tuple[int, int, int], layout: str) -> tuple[int, ...]:
    """The coordinates of cube hex ``c`` as ``layout`` writes them (the inverse of ``to_cube``)."""
    q, r, s = c
    if layout == "cube":
        return q, r, s
    if layout == "axial":
        return q, r
    if layout == "odd-q":
        return q, r + (q - (q & 1)) // 2
    if layout == "even-q":
        return q, r + (q + (q & 1)) // 2
    if layout == "odd-r":
        return q + (r - (r & 1)) // 2, r
    if layout == "even-r":
        return q + (r + (r & 1)) // 2, r
    raise HexError(f"unknown hex layout {layout!r}; layouts are: {', '.join(LAYOUTS)}")


ORIENTATIONS = ("flat", "pointy")

DIRECTIONS = {
    # direction 1..6, clockwise from the top, as cube steps (rows grow downward)
    "flat": ((0, -1, 1), (1, -1, 0), (1, 0, -1), (0, 1, -1), (-1, 1, 0), (-1, 0, 1)),     # N NE SE S SW NW
    "pointy": ((1, -1, 0), (1, 0, -1), (0, 1, -1), (-1, 1, 0), (-1, 0, 1), (0, -1, 1)),   # NE E SE SW W NW
}
"""The six neighbours of a hex, numbered 1 to 6 clockwise from the top hexside (flat-topped hexes: the hex above;
pointy-topped hexes: the one up and to the right)."""

DIRECTION_NAMES = {"flat": ("N", "NE", "SE", "S", "SW", "NW"), "pointy": ("NE", "E", "SE", "SW", "W", "NW")}


def orientation_of(layout: str) -> str:
    """Columns of hexes (``*-q``) are flat-topped, rows (``*-r``) pointy-topped; axial and cube default to flat."""
    return "pointy" if layout.endswith("-r") else "flat"


def cube_distance(a: tuple, b: tuple) -> int:
    return max(abs(a[0] - b[0]), abs(a[1] - b[1]), abs(a[2] - b[2]))


def step(c: tuple, d: tuple) -> tuple[int, int, int]:
    return c[0] + d[0], c[1] + d[1], c[2] + d[2]
