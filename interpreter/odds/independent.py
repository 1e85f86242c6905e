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
(``list(f(u) for u in xs)``) and joining lists (``xs + ys``) keep it factored; each item remembers the
random item (its *cell*) it was drawn from, or is the image of, so a list, its copies and the lists
joined or mapped from it are expanded with one draw per random item. Grouping the final outcomes reads
each factor separately (a ``--by`` field of one item) or convolves them (a count or
sum over the items), so "16 units, grouped by how many break" never lists 4^16 cases.
"""

from __future__ import annotations

import math
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

    __slots__ = ("prev", "factor", "cell", "images", "length", "_key", "_hash")
    prev: "Independent | None"
    factor: tuple
    cell: tuple
    images: tuple | None
    length: int
    _key: tuple
    _hash: int

    def __init__(self, prev: "Independent | None", factor: tuple, cell: tuple | None = None,
                 images: tuple | None = None):
        # ``cell``: the random item this one is drawn from (its factor object is its identity), and ``images``
        # the item given by each of its outcomes when this item is a function of it (a mapped list's item,
        # None: the cell's own items). Lists joined or mapped from one another share cells, so expanding
        # them together gives each the same draw.
        self.prev, self.factor = prev, factor
        self.cell, self.images = (factor if cell is None else cell), images
        self.length = (prev.length if prev is not None else 0) + 1

    @staticmethod
    def of(items: tuple) -> "Independent | None":
        out = None
        for item in items:
            out = Independent(out, ((item, _ONE),))
        return out

    def factors(self) -> list:
        return [node.factor for node in self.nodes()]

    def nodes(self) -> list:
        """The list's items' nodes, first to last (a longer list built on another shares its nodes)."""
        out: list = []
        node: Independent | None = self
        while node is not None:
            out.append(node)
            node = node.prev
        out.reverse()
        return out

    def again(self, prev: "Independent | None") -> "Independent":
        """This item after another list's (the same random item: its cell and images kept)."""
        return Independent(prev, self.factor, self.cell, self.images)

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
            for node in other.nodes():
                out = node.again(out)
            return out
        return NotImplemented

    def __radd__(self, other):
        """``[...] + xs``: a plain list's items, then this list's (an empty list adds nothing)."""
        if other.__class__ is not tuple:
            return NotImplemented
        if not other:
            return self
        out = Independent.of(other)
        for node in self.nodes():
            out = node.again(out)
        return out

    def key(self) -> tuple:
        try:
            return self._key
        except AttributeError:
            self._key = k = tuple(self.factors())
            return k

    def __eq__(self, other):
        # item by item from the last, up to a node both share (lists built on one list share its nodes: the
        # rest is the same), without making either's whole key
        if other.__class__ is not Independent or other.length != self.length:
            return False
        a: Independent | None = self
        b: Independent | None = other
        while a is not b:
            if a is None or b is None:      # (not with equal lengths: both end together)
                return False
            if a.factor is not b.factor and a.factor != b.factor:
                return False
            a, b = a.prev, b.prev
        return True

    def __hash__(self):
        try:
            return self._hash
        except AttributeError:
            pass
        # the items only (equal lists have equal items): hashing an exact Fraction is slow. Each node's hash
        # is made from its list's before it (kept there too), so a list appended to hashes one factor more
        pending = []
        node: Independent | None = self
        while node is not None and getattr(node, "_hash", None) is None:
            pending.append(node)
            node = node.prev
        h = 0 if node is None else node._hash
        for node in reversed(pending):
            node._hash = h = hash((h, tuple([item for item, _ in node.factor])))
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
    if not (value.__class__ is Independent or ((value.__class__ is Record or value.__class__ is tuple)
                                               and has_lazy(value))):
        return 1
    n = 1
    for f in _draws(lists_in(value)):
        n *= len(f)
    return n


def expand(value, limit: int | None = None) -> list:
    """Every concrete value a value holding Independents can be, with its probability (Fractions).

    More than ``limit`` cases (default MAX_CASES) is refused before any is listed: a list of a hundred
    independent two-way items is 2**100 cases, which no enumeration can walk.
    """
    cls = value.__class__
    if cls is not Independent and not ((cls is Record or cls is tuple) and has_lazy(value)):
        return [(value, Fraction(1))]
    check_cases(cases(value), MAX_CASES if limit is None else limit)
    lists = lists_in(value)
    return _merged([(put_items(value, concrete), p) for concrete, p in joint(lists)])


def lists_in(value, found: dict | None = None) -> dict:
    """Every independent list inside ``value`` (at any depth), by identity."""
    found = {} if found is None else found
    cls = value.__class__
    if cls is Independent:
        found[id(value)] = value
    elif (cls is Record or cls is tuple) and has_lazy(value):
        for v in (value.values() if cls is Record else value):
            lists_in(v, found)
    return found


def _draws(lists: dict) -> list:
    """What expanding ``lists`` together draws: per random item, its cell when several nodes (or one list
    twice) hold it, else the node's own distribution (equal items merged)."""
    return [nodes[0].factor if len(nodes) == 1 else nodes[0].cell for nodes in _uses(lists).values()]


def _uses(lists: dict) -> dict:
    """id(cell) -> the nodes of ``lists`` drawn from it (a node in two lists counted twice)."""
    uses: dict = {}
    for lst in lists.values():
        for node in lst.nodes():
            uses.setdefault(id(node.cell), []).append(node)
    return uses


def joint(lists: dict):
    """(each list's concrete items by id, probability) for every joint draw of ``lists``' random items:
    a random item held in several places (a list, its copy, a list joined or mapped from it) is drawn once."""
    uses = _uses(lists)
    draws = []          # (the key a node finds its draw by, the outcomes drawn from, by cell?)
    for nodes in uses.values():
        if len(nodes) == 1:
            draws.append((id(nodes[0]), nodes[0].factor, False))
        else:
            draws.append((id(nodes[0].cell), nodes[0].cell, True))
    shared = {id(nodes[0].cell) for nodes in uses.values() if len(nodes) > 1}
    chains = {k: lst.nodes() for k, lst in lists.items()}
    for combo in product(*[range(len(f)) for _, f, _ in draws]):
        p = _ONE
        pick = {}
        for (key, f, _), i in zip(draws, combo):
            p = p * f[i][1]
            pick[key] = i
        concrete = {}
        for k, nodes in chains.items():
            items = []
            for node in nodes:
                c = id(node.cell)
                if c in shared:
                    i = pick[c]
                    items.append(node.cell[i][0] if node.images is None else node.images[i])
                else:
                    items.append(node.factor[pick[id(node)]][0])
            concrete[k] = tuple(items)
        yield concrete, p


def put_items(value, concrete: dict):
    """``value`` with each independent list named in ``concrete`` (by identity) replaced by its items."""
    cls = value.__class__
    if cls is Independent:
        return concrete.get(id(value), value)
    if cls is Record and has_lazy(value):
        return Record([(k, put_items(v, concrete)) for k, v in value.items()])
    if cls is tuple and has_lazy(value):
        return tuple([put_items(v, concrete) for v in value])
    return value


def check_cases(n: int, limit: int) -> None:
    """Refuse an expansion into more than ``limit`` concrete cases, before listing any."""
    if n > limit:
        from ..errors import LimitError
        count = f"{n:,}" if n < 10 ** 15 else f"about 10^{len(str(n)) - 1}"
        raise LimitError(f"exact odds would have to list {count} cases of a list of independent random items, "
                         f"more than the limit of {limit:,} (the live-state budget)",
                         hint="group by a count or sum over the items, or by one item (--by), so the list stays "
                              "factored; use `umpire simulate` for an estimate, or raise --budget")


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
    """The list with ``fn`` applied to each item (equal images merge within a factor). Each image stays tied
    to the random item it came from (its cell), so the list and its image expand together consistently."""
    out: Independent | None = None
    for node in lst.nodes():
        f = node.factor
        acc: dict = {}      # image -> the weights of the items giving it (each image hashed once)
        seen: dict = {}     # item -> its image
        for item, p in f:
            image = seen[item] = fn(item)
            acc.setdefault(image, []).append(p)
        # the image of each outcome of the random item (every one is among the factor's items)
        source = node.images if node.images is not None else [x for x, _ in node.cell]
        images = tuple([seen[x] if x in seen else fn(x) for x in source])
        # (no Fraction sum for an image only one item gives)
        out = Independent(out, tuple([(image, ps[0] if len(ps) == 1 else sum(ps[1:], ps[0]))
                                      for image, ps in acc.items()]), node.cell, images)
    assert out is not None      # a list has at least one factor
    return out


def repeats(lst: Independent) -> bool:
    """Whether one random item sits twice in the list (``xs + xs``): its items are then not independent."""
    cells = [id(node.cell) for node in lst.nodes() if len(node.cell) > 1]
    return len(cells) != len(set(cells))


def convolve(lst: Independent, fn, combine: str) -> list:
    """The distribution of count/sum/any/all over the items, ``fn(item)`` giving each item's part.

    For count, ``fn`` gives true or false (the condition); for sum, a number; for any/all, a truth.
    """
    # weights as whole numbers over one denominator (each factor's over the lcm of its own), divided once per
    # outcome at the end: the same exact shares as multiplying Fractions, without normalising every product
    dist: dict = {0 if combine in ("count", "sum") else combine == "all": 1}
    den = 1
    adds = combine in ("count", "sum")
    for f in lst.factors():
        parts: dict = {}
        for item, p in f:
            v = fn(item)
            if combine == "count":
                v = 1 if v is True else 0
            found = parts.get(v)
            parts[v] = p if found is None else found + p
        d = math.lcm(*[q.denominator for q in parts.values()])
        whole = [(v, q.numerator * (d // q.denominator)) for v, q in parts.items()]
        den *= d
        nxt: dict = {}
        for total, p in dist.items():
            for v, q in whole:
                if adds:
                    t = total + v
                elif combine == "any":
                    t = total or v is True
                else:
                    t = total and v is True
                nxt[t] = nxt.get(t, 0) + p * q
        dist = nxt
    return [(t, Fraction(n, den)) for t, n in dist.items()]
