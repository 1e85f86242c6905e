"""The language's builtin functions and the names of its aggregates (``sum(... for x in xs)``).

The checker reads the arities from here; the compiler calls the functions.
"""

from __future__ import annotations

import math

from ..errors import BuiltinArgumentError, MissingFact
from ..model.hexgrid import hex_distance
from ..model.values import Roll, show, type_name
from .board import MAP_BUILTINS

TYPE_CHECKING = False   # (typing is for the checker only: importing it costs a warm start 2%)
if TYPE_CHECKING:
    from typing import Callable


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


def _whole(x, what: str) -> int:
    """A whole number (a roll counts as its final value), never true or false."""
    if not isinstance(x, int) or isinstance(x, bool):
        raise BuiltinArgumentError(f"{what} must be a whole number, not {type_name(x)} {show(x)}")
    return int(x)


def _range_bounds(*args) -> tuple[int, int]:
    """``range(n)`` is 0 .. n-1 and ``range(a, b)`` is a .. b-1: the bounds, checked before anything is built."""
    if len(args) == 1:
        return 0, _whole(args[0], "its end")
    return _whole(args[0], "its start"), _whole(args[1], "its end")


def _range(*args):
    lo, hi = _range_bounds(*args)
    return tuple(range(lo, hi))


def _range_length(*args) -> int:
    lo, hi = _range_bounds(*args)
    return max(0, hi - lo)


def _index_of(xs, x):
    """The position (from 0) of the first item of ``xs`` equal to ``x``, or null."""
    if xs.__class__ is not tuple:
        raise BuiltinArgumentError(f"its first argument must be a list, not {type_name(xs)} {show(xs)}")
    for i, item in enumerate(xs):
        if item == x:
            return i
    return None


def _missing_fact(fact, name=None, board=None):
    """Stop: the situation neither states ``fact`` nor gives a map to derive it from (``derive``). With the
    situation's map as ``board``, the fact is one that map does not give, so only stating it helps."""
    what = f"'{show(fact)}'" + (f" (for {show(name)})" if name is not None and name != fact else "")
    if board is not None:
        raise MissingFact(f"the situation states no {what} and its map does not give it",
                          f"state {show(fact)} in the situation's inputs")
    raise MissingFact(f"the situation states no {what} and gives no map to derive it from",
                      f"state {show(fact)} in the situation's inputs, or give the situation a map (`map:`, with "
                      "its units placed), from which the rules derive it")


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
    "range": (_range, 1, 2), "index_of": (_index_of, 2, 2),
    "missing_fact": (_missing_fact, 1, 3),
    **MAP_BUILTINS,
}

# builtins that build a list: the length they would build from their arguments, checked against limit
# 'list' before anything is built (so `range(10 ** 12)` is refused at once, not after filling memory)
LIST_LENGTH: dict[str, Callable] = {
    "range": _range_length,
}

AGGREGATES = {"sum", "count", "any", "all", "min", "max", "list", "first", "highest", "lowest"}
