"""The exact centre-to-centre line between two hexes, and bearings from a hex (generic: no game is named here).

Hexes are cube coordinates ``(q, r, s)`` with ``q + r + s == 0`` (Red Blob Games, "Hexagonal Grids"). The hex
centred on ``c`` is the set of points ``p`` with ``max(|dq - dr|, |dr - ds|, |ds - dq|) <= 1`` for ``d = p - c``:
its six sides lie on lines where ``q - r``, ``r - s`` or ``s - q`` is a whole number. Cube coordinates are an
affine image of the drawn grid, and crossing, touching and running along are kept by affine maps, so the line is
worked out here, in whole numbers and fractions, and never with a square root or a float.

The line from ``a`` to ``b`` is cut at every point where one of those three quantities is whole (a supercover
walk: every hex the segment touches is found, not one per step as Bresenham's line gives). Between two cuts the
segment lies inside one hex or along one hexside; at a cut it is inside a hex, on a hexside (crossing it), or at
a vertex where three hexes meet. The walk makes at most ``4 * distance + 3`` cuts.
"""

from __future__ import annotations

from fractions import Fraction

from .hexgrid import DIRECTIONS, cube_distance, step

_ALL_STEPS = DIRECTIONS["flat"]


def _round(p) -> tuple[int, int, int]:
    """The hex whose centre is nearest ``p`` (cube rounding); on a boundary, one of the hexes there."""
    rq, rr, rs = (round(v) for v in p)
    dq, dr, ds = abs(rq - p[0]), abs(rr - p[1]), abs(rs - p[2])
    if dq > dr and dq > ds:
        rq = -rr - rs
    elif dr > ds:
        rr = -rq - rs
    else:
        rs = -rq - rr
    return rq, rr, rs


def cells_at(p) -> list[tuple[int, int, int]]:
    """The hexes whose closed area holds point ``p``: one inside a hex, two on a hexside, three at a vertex."""
    c = _round(p)
    out = []
    for h in (c,) + tuple(step(c, d) for d in _ALL_STEPS):
        dq, dr, ds = p[0] - h[0], p[1] - h[1], p[2] - h[2]
        if max(abs(dq - dr), abs(dr - ds), abs(ds - dq)) <= 1:
            out.append(h)
    return sorted(out)


def _cuts(a, b) -> list[Fraction]:
    """Every t in [0, 1] where a + t(b - a) has q - r, r - s or s - q whole."""
    ts = {Fraction(0), Fraction(1)}
    for i, j in ((0, 1), (1, 2), (2, 0)):
        fa, fb = a[i] - a[j], b[i] - b[j]
        if fa == fb:
            continue
        lo, hi = min(fa, fb), max(fa, fb)
        for m in range(lo, hi + 1):
            ts.add(Fraction(m - fa, fb - fa))
    return sorted(ts)


def _at(a, b, t) -> tuple:
    return tuple(a[i] + t * (b[i] - a[i]) for i in range(3))


def line(a: tuple, b: tuple) -> list[tuple]:
    """The pieces of the segment from hex ``a``'s centre to hex ``b``'s, in order from ``a``:

    * ``("hex", h)``: the segment passes through the inside of hex ``h`` (``a`` first, ``b`` last);
    * ``("hexside", h1, h2)``: it crosses the hexside between ``h1`` (before) and ``h2`` (after);
    * ``("along", h1, h2)``: it runs along the hexside between ``h1`` and ``h2``, inside neither;
    * ``("vertex", h1, h2, h3)``: it passes through the corner the three hexes share.
    """
    if a == b:
        return [("hex", a)]
    ts = _cuts(a, b)
    pieces: list[tuple] = []

    def add(piece):
        if not pieces or pieces[-1] != piece:
            pieces.append(piece)

    for i in range(len(ts) - 1):
        mid = _at(a, b, (ts[i] + ts[i + 1]) / 2)
        cells = cells_at(mid)
        add(("hex", cells[0]) if len(cells) == 1 else ("along",) + tuple(cells))
        if i + 1 < len(ts) - 1:
            here = cells_at(_at(a, b, ts[i + 1]))
            if len(here) == 3:
                add(("vertex",) + tuple(here))
            elif len(here) == 2:
                before = pieces[-1]
                first = before[1] if before[0] == "hex" and before[1] in here else here[0]
                add(("hexside", first, here[1] if here[0] == first else here[0]))
    return pieces


def bearing(a: tuple, b: tuple, orientation: str) -> list[int]:
    """The directions (1-6, see ``hexgrid.DIRECTIONS``) of the 60-degree sector from ``a`` that holds ``b``.

    The sector of a direction runs between the two lines from ``a``'s centre through the corners of that
    hexside. One direction when ``b``'s centre is inside a sector, two when it lies on the line between two
    (a hex spine through a corner); none when ``b`` is ``a``.
    """
    d = (b[0] - a[0], b[1] - a[1], b[2] - a[2])
    if d == (0, 0, 0):
        return []
    scores = [v[0] * d[0] + v[1] * d[1] + v[2] * d[2] for v in DIRECTIONS[orientation]]
    best = max(scores)
    return [i + 1 for i, s in enumerate(scores) if s == best]


def within(c: tuple, n: int) -> list[tuple[int, int, int]]:
    """Every hex at most ``n`` from ``c``, nearest first (Red Blob Games, "Range")."""
    out = []
    for dq in range(-n, n + 1):
        for dr in range(max(-n, -dq - n), min(n, -dq + n) + 1):
            out.append((c[0] + dq, c[1] + dr, c[2] - dq - dr))
    out.sort(key=lambda h: cube_distance(c, h))
    return out
