"""Runtime values of the DSL: immutable, hashable, exact.

* numbers are ``int`` or ``Fraction`` (never float): rules keep fractions exactly;
* lists are tuples and records are ``Record`` (an immutable dict), so whole
  states can be compared and used as memo keys by the odds engine;
* a ``Roll`` is an ``int`` (its final value) that also remembers its dice.
"""

from __future__ import annotations

from fractions import Fraction
from operator import attrgetter

TYPE_CHECKING = False   # (typing is for the checker only: importing it costs a warm start 2%)
if TYPE_CHECKING:
    from typing import Any


class Record(dict):
    """An immutable mapping with attribute-style access from the DSL."""

    __slots__ = ("_hash", "_rolls", "_depth", "_lazy")
    _hash: int
    _rolls: bool
    _depth: int
    _lazy: bool
    # _lazy: whether an exact-odds independent list is inside (odds/independent.has_lazy keeps it, as
    # holds_roll keeps _rolls: a record does not change, so the walk is done once per record)

    def holds_roll(self) -> bool:
        """Whether a roll is inside (at any depth); kept, since records do not change."""
        try:
            return self._rolls
        except AttributeError:
            self._rolls = found = holds(dict.values(self), Roll, "_rolls")
            return found

    def __hash__(self):  # records are values: equal records hash alike
        h = getattr(self, "_hash", None)    # (not try/except: raising AttributeError costs more than hashing)
        if h is None:
            # order-free, as equality is: the sum of the items' hashes, which ``updated`` adjusts for
            # the fields it changes instead of hashing every field of the new record again
            self._hash = h = sum(map(hash, dict.items(self))) & _HASH_MASK
        return h

    def _immutable(self, *args, **kwargs):
        raise TypeError("records are immutable; use `record with {...}`")

    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = __ior__ = _immutable

    def updated(self, changes: dict) -> "Record":
        new = Record(self)
        dict.update(new, changes)
        for slot, leaf in FLAG_SLOTS:
            # a record known to hold no roll (no independent list) gains one only from the changed fields: the new
            # record's answer is known from those alone, not from a walk of every field the first time it is keyed
            if getattr(self, slot, None) is False:
                setattr(new, slot, holds(changes.values(), leaf, slot))
        h = getattr(self, "_hash", None)
        if h is None:
            return new          # never hashed: nor need the new one be yet
        try:
            for k, v in changes.items():
                if k in self:
                    h -= hash((k, self[k]))
                h += hash((k, v))
        except TypeError:
            return new          # an unhashable value: hashing the record raises, as it would have
        new._hash = h & _HASH_MASK
        return new

    def __repr__(self) -> str:
        return "{" + ", ".join(f"{k}: {show(v)}" for k, v in self.items()) + "}"


_HASH_MASK = (1 << 61) - 1
"""Record hashes are kept to these bits (sums modulo 2**61, which ``updated`` can adjust), so they stay small ints."""


class Roll(int):
    """A dice roll. As a number it is the final value; it also keeps each die.

    ``original`` is the sum of the dice, ``final`` adds the roll's modifier,
    ``dice`` is the tuple of dice and ``names`` the die names of its kind.
    Equality and hashing are those of the final value (as for any number);
    code that must tell two rolls apart by their dice uses ``frozen``.
    """

    _d: tuple   # (dice, names, modifier, original, doubles)

    def __new__(cls, dice: tuple, names: tuple, modifier=0):
        original = sum(dice)
        final = original + modifier
        self = int.__new__(cls, final if final.__class__ is int else int(final))
        self._d = (dice, names, modifier, original, len(dice) > 1 and dice.count(dice[0]) == len(dice))
        return self

    @property
    def original(self):
        return self._d[3]

    @property
    def dice(self):
        return self._d[0]

    @property
    def names(self):
        return self._d[1]

    @property
    def modifier(self):
        return self._d[2]

    @property
    def final(self):
        return self._d[3] + self._d[2]

    @property
    def doubles(self) -> bool:
        return self._d[4]

    @property
    def frozen(self) -> tuple:
        return ("roll", self._d[0], self._d[2])

    def field(self, name: str):
        if name in ("original", "final", "dice", "doubles", "modifier"):
            return getattr(self, name)
        names = self._d[1]
        if name in names:
            return self._d[0][names.index(name)]
        raise KeyError(name)

    def fields(self) -> list[str]:
        return ["original", "final", "dice", "doubles", "modifier", *self._d[1]]

    def __repr__(self) -> str:
        return show(self)


class _Dead:
    """A result field no caller needs (exact odds merge outcomes that differ only there).

    Only computations whose own results go unused ever meet it, so it absorbs what they do:
    reading a field, arithmetic and ordering give DEAD again.
    """

    __slots__ = ()

    def __repr__(self):
        return "…"

    def __getitem__(self, key):
        return self

    def __iter__(self):
        # no items: a loop or an `in` over it ends at once (with only __getitem__, which answers
        # every index, Python would iterate it forever and `x in DEAD` would never return)
        return iter(())

    def _absorb(self, *other):
        return self

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = _absorb
    __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = __neg__ = __lt__ = __le__ = __gt__ = __ge__ = _absorb


DEAD = _Dead()


def holds_roll(value: Any) -> bool:
    return holds((value,), Roll, "_rolls")


def holds(values, leaf: type, slot: str) -> bool:
    """Whether any of these values is, or holds at any depth, a value of class ``leaf``; each record walked keeps
    its answer in ``slot`` (a record does not change). Scalars are told by their class alone, without a call:
    most fields of most records are numbers and text. (odds/independent.has_lazy asks it about its lists.)"""
    for v in values:
        c = v.__class__
        if c is leaf:
            return True
        if c is Record:
            found = getattr(v, slot, None)
            if found is None:
                found = holds(dict.values(v), leaf, slot)
                setattr(v, slot, found)
            if found:
                return True
        elif c is tuple and holds(v, leaf, slot):
            return True
    return False


FLAG_SLOTS: list = []
"""(slot, class) of each flag a record keeps of what it holds (``holds``): ``("_rolls", Roll)`` here, and
odds/independent.py adds ``("_lazy", Independent)``; ``Record.updated`` carries a known "none" over."""


def any_roll(values) -> bool:
    """Whether any of these values holds a roll (the common answer, no, is quick)."""
    return holds(values, Roll, "_rolls")


def key_form(value: Any) -> Any:
    """A value as a cache key: equal to another's exactly when they are the same, dice included.

    Rolls compare as their final value, so wherever a roll sits it is replaced by its dice.
    """
    if value.__class__ is Roll:
        return value.frozen
    c = value.__class__
    if c is tuple and holds_roll(value):
        return ("list",) + tuple(key_form(v) for v in value)
    if c is Record and holds_roll(value):
        return ("record", frozenset((k, key_form(v)) for k, v in value.items()))
    return value


def normalise(value: Any) -> Any:
    """A Fraction with denominator 1 becomes an int (so 6/2 prints as 3)."""
    if type(value) is Fraction and value.denominator == 1:
        return int(value)
    return value


def freeze(value: Any) -> Any:
    """Plain data (from YAML or JSON) to DSL values: dicts to Records, lists to tuples."""
    if isinstance(value, Record) or isinstance(value, Roll):
        return value
    if isinstance(value, dict):
        return Record({k: freeze(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(freeze(v) for v in value)
    if isinstance(value, float):
        return exact(value)
    return value


def exact(x: float):
    """A number YAML read as a float, as the exact decimal it was written as: 1.5 is 3/2 and 0.1 is 1/10 (the
    shortest text that reads back as the same float, so the decimal as written), 2.0 the whole number 2."""
    return normalise(Fraction(repr(x)))


def thaw(value: Any) -> Any:
    """DSL values to JSON-ready data: fractions become "7/2" text, rolls their dice."""
    if isinstance(value, Roll):
        data = {"original": value.original, "final": normalise(value.final), "dice": list(value.dice)}
        return {k: thaw(v) for k, v in data.items()}
    if isinstance(value, dict):
        return {k: thaw(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [thaw(v) for v in value]
    if isinstance(value, Fraction):
        return str(value) if value.denominator != 1 else int(value)
    if value is DEAD:
        return None
    return value


def show(value: Any, memo: dict | None = None) -> str:
    """A value as a player would read it in a trace.

    ``memo`` (id -> (record or list, text)), when given, keeps each record's and list's text: labelling
    thousands of outcomes that share their units' records shows each record once."""
    cls = value.__class__
    if cls is int:          # the commonest first, by exact class (a bool or a Roll is not one)
        return str(value)
    if cls is str:
        return value
    if value is DEAD:
        return "…"
    if isinstance(value, Roll):
        dice = ", ".join(str(d) for d in value.dice)
        if value.modifier:
            return f"[{dice}] = {value.original}, final {show(normalise(value.final))}"
        return f"[{dice}] = {value.original}" if len(value.dice) > 1 else str(value.original)
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, Fraction):
        if value.denominator == 1:
            return str(value.numerator)
        whole, rest = divmod(value.numerator, value.denominator)
        if whole and value > 0:
            return f"{whole} {rest}/{value.denominator}"
        return f"{value.numerator}/{value.denominator}"
    if isinstance(value, str):
        return value
    if isinstance(value, Record):
        if set(value) >= {"code", "text"} and len(value) <= 3:
            return str(value["text"])
        if memo is None:
            return "{" + ", ".join(f"{k}: {show(v)}" for k, v in value.items()) + "}"
        found = memo.get(id(value))
        if found is None or found[0] is not value:
            found = memo[id(value)] = (value, "{" + ", ".join(f"{k}: {show(v, memo)}" for k, v in value.items()) + "}")
        return found[1]
    if isinstance(value, tuple):
        if memo is None:
            return "[" + ", ".join(show(v) for v in value) + "]"
        found = memo.get(id(value))
        if found is None or found[0] is not value:
            found = memo[id(value)] = (value, "[" + ", ".join(show(v, memo) for v in value) + "]")
        return found[1]
    return str(value)


def type_name(value: Any) -> str:
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, Roll):
        return "roll"
    if isinstance(value, (int, Fraction)):
        return "number"
    if isinstance(value, str):
        return "text"
    if value is None:
        return "null"
    if isinstance(value, Record):
        return "record"
    if isinstance(value, tuple):
        return "list"
    return type(value).__name__


def brief(value: Any, limit: int = 60) -> str:
    """A short form for trace headings: records with an id show as the id; cut to ``limit`` characters.

    Only as much of the value is rendered as can be shown, so a trace line costs the same for a
    list of a million items as for ten (a loop growing a list must not make its trace quadratic).
    """
    if value.__class__ is Record and "id" in value:
        return _cut(str(value["id"]), limit)
    if value.__class__ is tuple and value and value[0].__class__ is Record and "id" in value[0]:
        ids = []
        room = limit + 1
        for v in value:
            if not (v.__class__ is Record and "id" in v):
                break
            ids.append(str(v["id"]))
            room -= len(ids[-1]) + 2
            if room < 0:
                return _cut("[" + ", ".join(ids), limit)
        else:
            return _cut("[" + ", ".join(ids) + "]", limit)
    return show_cut(value, limit)


def show_cut(value: Any, limit: int) -> str:
    """``show(value)`` cut to ``limit`` characters, rendering no more of the value than that."""
    c = value.__class__
    if c is not Record and c is not tuple:
        return _cut(_scalar(value, limit + 1), limit)
    parts: list[str] = []
    try:
        _render(value, parts, [limit + 1])
    except _Full:
        pass
    return _cut("".join(parts), limit)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 3] + "..."


class _Full(Exception):
    """The rendering has more characters than will be shown."""


def _scalar(value: Any, room: int) -> str:
    """``show`` of a value that is not a list or record, no longer than ``room`` where that saves work."""
    c = value.__class__
    if c is str:
        return value[:room]
    if c is int:
        if value.bit_length() > 3400:     # over 1,000 digits: their count, not a slow conversion
            return f"<a number of about {int(value.bit_length() * 0.30103) + 1:,} digits>"
        return str(value)
    if c is Fraction and max(abs(value.numerator), value.denominator).bit_length() > 3400:
        return "<a fraction of over 1,000 digits>"
    return show(value)


def _render(value: Any, parts: list, room: list) -> None:
    """``show(value)`` piece by piece into ``parts`` until ``room[0]`` characters are out (then _Full)."""
    c = value.__class__
    if c is Record and not (len(value) <= 3 and "code" in value and "text" in value):
        items, keyed, close = value.items(), True, "}"
        parts.append("{")
    elif c is tuple:
        items, keyed, close = value, False, "]"
        parts.append("[")
    else:
        text = _scalar(value, room[0])
        parts.append(text)
        room[0] -= len(text)
        if room[0] <= 0:
            raise _Full
        return
    r = room[0] - 1
    first = True
    append = parts.append
    for item in items:
        if keyed:
            k, v = item
            sep = f"{k}: " if first else f", {k}: "
        else:
            v = item
            sep = "" if first else ", "
        first = False
        if sep:
            append(sep)
            r -= len(sep)
        if r <= 0:
            room[0] = r
            raise _Full
        vc = v.__class__
        if vc is Record or vc is tuple:
            room[0] = r
            _render(v, parts, room)
            r = room[0]
        else:
            text = _scalar(v, r)
            append(text)
            r -= len(text)
            if r <= 0:
                room[0] = r
                raise _Full
    append(close)
    room[0] = r - 1
    if r - 1 <= 0:
        raise _Full


# ---- size bounds ----------------------------------------------------------------------

CELLS_PER_STEP = 64
"""Lists and records of at least this many items are charged for what they build (smaller ones cost their
statement's step only, so the hot path stays cheap)."""

CHARACTERS_PER_CELL = 16
"""A text's characters count this many to one list item toward limit 'cells' (a character is a byte,
an item a reference to a value)."""


def depth_of(value) -> int:
    """How deep lists and records nest in ``value`` (0 for a number or text); a record remembers its own,
    and a list met before is found in LIST_DEPTHS."""
    c = value.__class__
    if c is Record:
        try:
            return value._depth
        except AttributeError:
            return built_depth(value)
    if c is tuple:
        if not value:
            return 1
        if len(value) < _SHORT_LIST:
            # a short list of records that know their depth (a loop's `xs + [x]`, mostly): one C pass, no memo
            try:
                return max(map(_DEPTH, value)) + 1
            except AttributeError:    # an item that is not such a record: walked (and remembered) below
                pass
        known = LIST_DEPTHS.get(id(value))
        if known is not None and known[0] is value:
            return known[1]
        d = built_depth(value)
        if len(value) <= 64:          # small lists only: the memo must not keep much alive
            if len(LIST_DEPTHS) >= LIST_DEPTHS_KEPT:
                LIST_DEPTHS.clear()
            LIST_DEPTHS[id(value)] = (value, d)     # holds the list, so its id is not reused meanwhile
        return d
    return 0


_DEPTH = attrgetter("_depth")
_SHORT_LIST = 16
"""Lists shorter than this whose items are all records knowing their depth get it from one C pass (``depth_of``)."""


def built_depth(value) -> int:
    """``depth_of`` a list or record just built (so a record cannot know its depth yet): one pass over its items."""
    d = 0
    for v in (value.values() if value.__class__ is Record else value):
        vc = v.__class__
        if vc is Record:
            try:
                vd = v._depth
            except AttributeError:
                vd = built_depth(v)
        elif vc is not tuple:
            continue
        elif not v:        # the empty list
            vd = 1
        else:              # a list met again (a reused result, an argument): its depth is remembered
            known = LIST_DEPTHS.get(id(v))
            vd = known[1] if known is not None and known[0] is v else depth_of(v)
        if vd > d:
            d = vd
    d += 1
    if value.__class__ is Record:
        value._depth = d
    return d


LIST_DEPTHS: dict = {}
"""id of a list -> (the list, its depth): lists cannot keep their depth themselves as records do. Only
lists of at most 64 items are kept, so the memo keeps little alive."""
LIST_DEPTHS_KEPT = 4096     # entries before the memo is cleared


def size_error(what: str, limit_name: str, limit: int, pos, detail: str = ""):
    from ..errors import LimitError
    raise LimitError(f"{what} (limit '{limit_name}' is {limit:,}){detail}", pos,
                     hint=f"raise limits.{limit_name} in ruleset.yaml if the rules really need more; "
                          "is a value doubling in a loop?")


def check_built(value, rt, pos):
    """Bounds on a list or record just built: its length, its nesting, and the work it costs (steps)."""
    d = built_depth(value)
    limits = rt.limits
    n = len(value)
    if n >= CELLS_PER_STEP or n > limits["list"] or d > limits["nesting"]:
        return check_size(value, d, rt, pos)     # over a bound, or charged for its size
    return value


def check_size(value, d: int, rt, pos):
    """``check_built`` of a value whose depth ``d`` is already known."""
    limits = rt.limits
    n = len(value)
    if n > limits["list"]:
        size_error(f"this builds a {'record' if value.__class__ is Record else 'list'} of {n:,} items",
                   "list", limits["list"], pos)
    if n >= CELLS_PER_STEP:
        rt.steps_left -= n * limits["steps"] // limits["cells"]
        if rt.steps_left < 0:
            _out_of_cells(rt, f"a {'record' if value.__class__ is Record else 'list'} of {n:,} items", pos)
    if d > limits["nesting"]:
        size_error(f"this builds lists or records nested {d} deep", "nesting", limits["nesting"], pos)
    return value


def check_text(text: str, rt, pos) -> str:
    """Bounds on a text just built: its length, and the work it costs."""
    n = len(text)
    if n > rt.limits["text"]:
        size_error(f"this builds a text of {n:,} characters", "text", rt.limits["text"], pos)
    if n >= 1024:
        limits = rt.limits
        rt.steps_left -= n * limits["steps"] // (limits["cells"] * CHARACTERS_PER_CELL)
        if rt.steps_left < 0:
            _out_of_cells(rt, f"a text of {n:,} characters", pos)
    return text


def _out_of_cells(rt, what: str, pos):
    """Limit 'cells': what an adjudication builds is charged to its steps, ``limits.cells`` items using them all."""
    cells = rt.limits["cells"]
    size_error(f"the adjudication ran out of steps building {what}: lists, records and texts it builds cost "
               f"steps, {cells:,} items in all (or {cells * CHARACTERS_PER_CELL:,} characters) using up "
               f"limits.steps", "cells", cells, pos)


def check_number(value, rt, pos):
    """Bounds on a number just computed: the digits of an integer, or of a fraction's numerator and denominator."""
    from fractions import Fraction
    digits = rt.limits["digits"]
    big = _big(digits)
    if value.__class__ is Fraction:
        if value.denominator >= big or not -big < value.numerator < big:
            size_error(f"this computes a fraction of more than {digits:,} digits", "digits", digits, pos)
    elif not -big < value < big:
        size_error(f"this computes a number of more than {digits:,} digits", "digits", digits, pos)
    return value


_BIG: dict[int, int] = {}


def _big(digits: int) -> int:
    try:
        return _BIG[digits]
    except KeyError:
        _BIG[digits] = big = 10 ** digits
        return big


def check_repeat(a, b, rt, pos) -> None:
    """Before ``text * n`` or ``list * n``: refuse a result over the limit without building it."""
    seq, n = (a, b) if a.__class__ in (str, tuple) else (b, a)
    if n.__class__ is not int and not isinstance(n, int):
        return
    length = len(seq) * max(n, 0)
    if seq.__class__ is str:
        if length > rt.limits["text"]:
            size_error(f"this would build a text of {length:,} characters", "text", rt.limits["text"], pos)
    elif length > rt.limits["list"]:
        size_error(f"this would build a list of {length:,} items", "list", rt.limits["list"], pos)


FLAG_SLOTS.append(("_rolls", Roll))
