"""The exact centre-to-centre line between two hexes, and bearings from a hex (generic: no game is named here).

Hexes are cube coordinates ``(q, r, s)`` with ``q + r + s == 0`` (Red Blob Games, "Hexagonal Grids"). The hex
centred on ``c`` is the set of points ``p`` with ``max(|dq - dr|, |dr - ds|, |ds - dq|) <= 1`` for ``d = p - c``:
its six sides lie on lines where ``q - r``, ``r - s`` or ``s - q`` is a whole number. Cube coordinates are an
affine image of the drawn grid, and crossing, touching and running along are kept by affine maps, so the line is
worked out here, in whole numbers (points scaled by a common denominator), never with a square root or a float.

The line from ``a`` to ``b`` is cut at every point where one of those three quantities is whole (a supercover
walk: every hex the segment touches is found, not one per step as Bresenham's line gives). Between two cuts the
segment lies inside one hex or along one hexside; at a cut it is inside a hex, on a hexside (crossing it), or at
a vertex where three hexes meet. The walk makes at most ``4 * distance + 3`` cuts.
"""

from __future__ import annotations

from fractions import Fraction
from math import lcm

from .hexgrid import DIRECTIONS, cube_distance, step

_ALL_STEPS = DIRECTIONS["flat"]


def _nearest(x: int, d: int) -> int:
    """The whole number nearest ``x / d`` (``d > 0``), a half to the even one, as ``round`` rounds a Fraction."""
    q, r = divmod(x, d)
    return q + 1 if 2 * r > d or (2 * r == d and q % 2) else q


def _cells(x: int, y: int, z: int, d: int) -> list[tuple[int, int, int]]:
    """``cells_at`` of the point ``(x, y, z) / d`` (``d > 0``), in whole numbers: the point's coordinates scaled by
    ``d``, so every comparison is the same as with fractions and none is made."""
    rq, rr, rs = _nearest(x, d), _nearest(y, d), _nearest(z, d)      # cube rounding
    dq, dr, ds = abs(rq * d - x), abs(rr * d - y), abs(rs * d - z)
    if dq > dr and dq > ds:
        rq = -rr - rs
    elif dr > ds:
        rr = -rq - rs
    else:
        rs = -rq - rr
    c = (rq, rr, rs)
    out = []
    for h in (c,) + tuple(step(c, v) for v in _ALL_STEPS):
        dq, dr, ds = x - h[0] * d, y - h[1] * d, z - h[2] * d
        if max(abs(dq - dr), abs(dr - ds), abs(ds - dq)) <= d:
            out.append(h)
    return sorted(out)


def cells_at(p) -> list[tuple[int, int, int]]:
    """The hexes whose closed area holds point ``p`` (whole numbers or fractions): one inside a hex, two on a
    hexside, three at a vertex."""
    q, r, s = (Fraction(v) for v in p)
    d = lcm(q.denominator, r.denominator, s.denominator)
    return _cells(q.numerator * (d // q.denominator), r.numerator * (d // r.denominator),
                  s.numerator * (d // s.denominator), d)


def _cuts(a, b) -> tuple[list[int], int]:
    """Every t in [0, 1] where a + t(b - a) has q - r, r - s or s - q whole, as ``(ks, d)``: each t is ``k / d``,
    in order, and ``d`` is even and every ``k`` too, so the midpoint of two cuts is a whole ``k`` as well."""
    spans = [(a[i] - a[j], b[i] - b[j]) for i, j in ((0, 1), (1, 2), (2, 0))]
    spans = [(fa, fb) for fa, fb in spans if fa != fb]
    d = 2 * lcm(*(abs(fb - fa) for fa, fb in spans))
    ks = {0, d}
    for fa, fb in spans:
        unit = d // (fb - fa)       # exact: fb - fa divides d
        lo, hi = min(fa, fb), max(fa, fb)
        for m in range(lo, hi + 1):
            ks.add((m - fa) * unit)
    return sorted(ks), d


def line(a: tuple, b: tuple) -> list[tuple]:
    """The pieces of the segment from hex ``a``'s centre to hex ``b``'s, in order from ``a``:

    * ``("hex", h)``: the segment passes through the inside of hex ``h`` (``a`` first, ``b`` last);
    * ``("hexside", h1, h2)``: it crosses the hexside between ``h1`` (before) and ``h2`` (after);
    * ``("along", h1, h2)``: it runs along the hexside between ``h1`` and ``h2``, inside neither;
    * ``("vertex", h1, h2, h3)``: it passes through the corner the three hexes share.

    Worked out in whole numbers: the point at ``t = k / d`` is ``(a * d + k * (b - a)) / d``.
    """
    if a == b:
        return [("hex", a)]
    ks, d = _cuts(a, b)
    pieces: list[tuple] = []

    def add(piece):
        if not pieces or pieces[-1] != piece:
            pieces.append(piece)

    (aq, ar, as_), (eq, er, es) = a, (b[0] - a[0], b[1] - a[1], b[2] - a[2])
    aq, ar, as_ = aq * d, ar * d, as_ * d

    def cells(k: int) -> list[tuple[int, int, int]]:
        return _cells(aq + k * eq, ar + k * er, as_ + k * es, d)

    for i in range(len(ks) - 1):
        inside = cells((ks[i] + ks[i + 1]) // 2)
        add(("hex", inside[0]) if len(inside) == 1 else ("along",) + tuple(inside))
        if i + 1 < len(ks) - 1:
            here = cells(ks[i + 1])
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
