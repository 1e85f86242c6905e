"""Lists of independent random items, kept factored: the product of their distributions is never walked.

When every round of a ``for each`` loop appends one item to a list, and what a round
appends depends on nothing the other rounds decide (each target's morale check, say),
the list's distribution is the product of one small distribution per round. The state
enumerator (odds/states.py) then keeps the list as an ``Independent``: one factor per
round, each a few weighted items, instead of one state per combination.

An ``Independent`` only ever sits where nothing looks inside it: in a variable, in a
record field, in a procedure's result, in an emitted field. Anything that reads it
(a condition, arithmetic, a call, a lookup...) first *expands* it into every concrete
list with its exact weight, so the language never sees one. Mapping each item
(``list(f(u) for u in xs)``) keeps it factored, and grouping the final outcomes reads
each factor separately (a ``--by`` field of one item) or convolves them (a count or
sum over the items), so "16 units, grouped by how many break" never lists 4^16 cases.
"""

from __future__ import annotations

from fractions import Fraction
from itertools import product

from ..model.values import FLAG_SLOTS, Record, holds

_ONE = Fraction(1)
"""The weight of an item that is certain (Fractions do not change: one object serves every such item)."""


class Independent:
    """A random list: item i is drawn from ``factors()[i]``, independently of every other item.

    A factor is a tuple of (item, probability) with exact Fraction probabilities summing to 1.
    Built by appending, sharing its prefix (``prev``) with the list it was made from.
    """

    __slots__ = ("prev", "factor", "length", "_key", "_hash")
    prev: "Independent | None"
    factor: tuple
    length: int
    _key: tuple
    _hash: int

    def __init__(self, prev: "Independent | None", factor: tuple):
        self.prev, self.factor = prev, factor
        self.length = (prev.length if prev is not None else 0) + 1

    @staticmethod
    def of(items: tuple) -> "Independent | None":
        out = None
        for item in items:
            out = Independent(out, ((item, _ONE),))
        return out

    def factors(self) -> list:
        out: list = []
        node: Independent | None = self
        while node is not None:
            out.append(node.factor)
            node = node.prev
        out.reverse()
        return out

    def __add__(self, other):
        """``xs + ys``: this list's items, then the other's (a plain list, or an independent one whose
        factors are kept as they are: a random item stays the same item wherever it sits)."""
        if other.__class__ is tuple:
            out = self
            for item in other:
                out = Independent(out, ((item, _ONE),))
            return out
        if other.__class__ is Independent:
            out = self
            for f in other.factors():
                out = Independent(out, f)
            return out
        return NotImplemented

    def __radd__(self, other):
        """``[...] + xs``: a plain list's items, then this list's (an empty list adds nothing)."""
        if other.__class__ is not tuple:
            return NotImplemented
        if not other:
            return self
        out = Independent.of(other)
        for f in self.factors():
            out = Independent(out, f)
        return out

    def key(self) -> tuple:
        try:
            return self._key
        except AttributeError:
            self._key = k = tuple(self.factors())
            return k

    def __eq__(self, other):
        return other.__class__ is Independent and other.key() == self.key()

    def __hash__(self):
        try:
            return self._hash
        except AttributeError:
            # the items only (equal lists have equal items): hashing an exact Fraction is slow
            self._hash = h = hash(tuple([tuple([item for item, _ in f]) for f in self.factors()]))
            return h

    def __repr__(self):
        return "independent[" + ", ".join("{" + ", ".join(f"{i!r}: {p}" for i, p in f) + "}"
                                          for f in self.factors()) + "]"

    def fixed(self) -> tuple | None:
        """The plain list, when every factor is a single item (nothing random left)."""
        items = []
        for f in self.factors():
            if len(f) != 1:
                return None
            items.append(f[0][0])
        return tuple(items)


FLAG_SLOTS.append(("_lazy", Independent))


def empty_or(items: tuple):
    """A list as an Independent to append to (an empty list stays a plain empty tuple)."""
    return Independent.of(items) if items else items


def has_lazy(value) -> bool:
    """Whether an independent list sits in ``value`` (at any depth). A record keeps the answer (``_lazy``):
    records do not change, and the same records are asked about again and again (every state's locals)."""
    return holds((value,), Independent, "_lazy")


MAX_CASES = 200_000
"""Most concrete cases one expansion may list when the caller gives no budget of its own."""


def cases(value) -> int:
    """How many concrete values ``expand(value)`` would list (before equal ones merge), without listing them."""
    cls = value.__class__
    if cls is Independent:
        n, node = 1, value
        while node is not None:
            n *= len(node.factor)
            node = node.prev
        return n
    if (cls is Record or cls is tuple) and has_lazy(value):
        n = 1
        for v in (value.values() if cls is Record else value):
            n *= cases(v)
        return n
    return 1


def expand(value, limit: int | None = None) -> list:
    """Every concrete value a value holding Independents can be, with its probability (Fractions).

    More than ``limit`` cases (default MAX_CASES) is refused before any is listed: a list of a hundred
    independent two-way items is 2**100 cases, which no enumeration can walk.
    """
    cls = value.__class__
    if cls is not Independent and not ((cls is Record or cls is tuple) and has_lazy(value)):
        return [(value, Fraction(1))]
    check_cases(cases(value), MAX_CASES if limit is None else limit)
    return _expand(value)


def check_cases(n: int, limit: int) -> None:
    """Refuse an expansion into more than ``limit`` concrete cases, before listing any."""
    if n > limit:
        from ..errors import LimitError
        count = f"{n:,}" if n < 10 ** 15 else f"about 10^{len(str(n)) - 1}"
        raise LimitError(f"exact odds would have to list {count} cases of a list of independent random items, "
                         f"more than the limit of {limit:,} (the live-state budget)",
                         hint="group by a count or sum over the items, or by one item (--by), so the list stays "
                              "factored; use `umpire simulate` for an estimate, or raise --budget")


def _expand(value) -> list:
    cls = value.__class__
    if cls is Independent:
        out: list = []
        for combo in product(*value.factors()):
            p = Fraction(1)
            for _, q in combo:
                p *= q
            out.append((tuple(item for item, _ in combo), p))
        return out
    if cls is Record and has_lazy(value):
        keys = list(value.keys())
        parts = [_expand(value[k]) for k in keys]
        out = []
        for combo in product(*parts):
            p = Fraction(1)
            for _, q in combo:
                p *= q
            out.append((Record(zip(keys, (v for v, _ in combo))), p))
        return _merged(out)
    if cls is tuple and has_lazy(value):
        parts = [_expand(v) for v in value]
        out = []
        for combo in product(*parts):
            p = Fraction(1)
            for _, q in combo:
                p *= q
            out.append((tuple(v for v, _ in combo), p))
        return _merged(out)
    return [(value, Fraction(1))]


def _merged(pairs: list) -> list:
    acc: dict = {}
    for v, p in pairs:
        acc[v] = acc.get(v, 0) + p
    return list(acc.items())


def sample(value):
    """One concrete value of the same shape (each factor's first item): for checking field names."""
    cls = value.__class__
    if cls is Independent:
        return tuple(f[0][0] for f in value.factors())
    if cls is Record and has_lazy(value):
        return Record((k, sample(v)) for k, v in value.items())
    if cls is tuple and has_lazy(value):
        return tuple(sample(v) for v in value)
    return value


def map_items(lst: Independent, fn) -> Independent:
    """The list with ``fn`` applied to each item (equal images merge within a factor)."""
    out: Independent | None = None
    for f in lst.factors():
        acc: dict = {}      # image -> the weights of the items giving it (each image hashed once)
        for item, p in f:
            acc.setdefault(fn(item), []).append(p)
        # (no Fraction sum for an image only one item gives)
        out = Independent(out, tuple([(image, ps[0] if len(ps) == 1 else sum(ps[1:], ps[0]))
                                      for image, ps in acc.items()]))
    assert out is not None      # a list has at least one factor
    return out


def convolve(lst: Independent, fn, combine: str) -> list:
    """The distribution of count/sum/any/all over the items, ``fn(item)`` giving each item's part.

    For count, ``fn`` gives true or false (the condition); for sum, a number; for any/all, a truth.
    """
    dist: dict = {0 if combine in ("count", "sum") else combine == "all": Fraction(1)}
    for f in lst.factors():
        parts: dict = {}
        for item, p in f:
            v = fn(item)
            if combine == "count":
                v = 1 if v is True else 0
            found = parts.get(v)
            parts[v] = p if found is None else found + p
        nxt: dict = {}
        for total, p in dist.items():
            for v, q in parts.items():
                if combine in ("count", "sum"):
                    t = total + v
                elif combine == "any":
                    t = total or v is True
                else:
                    t = total and v is True
                nxt[t] = nxt.get(t, 0) + p * q
        dist = nxt
    return list(dist.items())
