"""The language's builtin functions and the names of its aggregates (``sum(... for x in xs)``).

The checker reads the arities from here; the compiler calls the functions.
"""

from __future__ import annotations

import math
from typing import Callable

from .hexgrid import hex_distance
from .values import Roll, show


def _floor(x):
    return math.floor(x)


def _ceil(x):
    return math.ceil(x)


def _minmax(f):
    def g(*xs):
        if len(xs) == 1 and isinstance(xs[0], tuple):
            xs = xs[0]
        if not xs:
            return None
        return f(xs)
    return g


def _clamp(x, lo, hi):
    return max(lo, min(x, hi))


def _get(record, name, default=None):
    if isinstance(record, Roll):
        try:
            return record.field(name)
        except KeyError:
            return default
    if record is None:
        return default
    return record.get(name, default)


BUILTINS: dict[str, tuple[Callable, int, int]] = {
    # name: (function, min args, max args)
    "floor": (_floor, 1, 1), "ceil": (_ceil, 1, 1), "abs": (abs, 1, 1),
    "min": (_minmax(min), 1, 99), "max": (_minmax(max), 1, 99), "clamp": (_clamp, 3, 3),
    "len": (len, 1, 1), "get": (_get, 2, 3), "str": (show, 1, 1),
    # list forms of the aggregates: first(list), sum(list), count(list), any(list), all(list)
    "first": (lambda xs: xs[0] if xs else None, 1, 1), "sum": (lambda xs: sum(xs), 1, 1),
    "count": (len, 1, 1), "any": (lambda xs: any(x is True for x in xs), 1, 1),
    "all": (lambda xs: all(x is True for x in xs), 1, 1),
    "hex_distance": (hex_distance, 2, 3),
}

AGGREGATES = {"sum", "count", "any", "all", "min", "max", "list", "first", "highest", "lowest"}
