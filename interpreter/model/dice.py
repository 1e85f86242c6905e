"""Dice: kinds, and the sources rolls come from.

Every roll goes through a ``DiceSource``. Three kinds exist:

* ``SeededDice``: a seeded generator (``--seed``), for play and simulation;
* ``GivenDice``: dice listed in a situation, used in order, then a seeded
  generator for anything beyond them, so a run replays exactly;
* the odds engine's enumerator (``odds/exact.py``), which treats each roll as a
  branch point and visits every outcome.

A source only returns faces; the interpreter builds the ``Roll`` value.
"""

from __future__ import annotations

import itertools
import math
import random
from fractions import Fraction

from ..errors import InputError, Position

TYPE_CHECKING = False   # (typing is for the checker only: importing it costs a warm start 2%)
if TYPE_CHECKING:
    from typing import Final, Sequence

MAX_OUTCOMES = 1_000_000
"""Most outcomes exact odds list for one roll (a d1000000, or 3d100 kept in order, is the most)."""


class DiceKind:
    """``count`` dice of ``sides`` faces (1..sides), named for the trace (colored, white).

    A value: equal and hashed by every field, never changed once made (its fields are ``Final``)."""

    __slots__ = __data_fields__ = ("name", "names", "sides", "zero_reads_as", "ordered")

    def __init__(self, name: str, names: tuple[str, ...], sides: int, zero_reads_as: int | None = None,
                 ordered: bool = True):
        self.name: Final = name
        self.names: Final = names
        self.sides: Final = sides
        self.zero_reads_as: Final = zero_reads_as
        self.ordered: Final = ordered     # False: the procedure reads only the total, doubles or final value

    def _key(self) -> tuple:
        return (self.name, self.names, self.sides, self.zero_reads_as, self.ordered)

    def __eq__(self, other):
        return self._key() == other._key() if other.__class__ is DiceKind else NotImplemented

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return (f"DiceKind(name={self.name!r}, names={self.names!r}, sides={self.sides!r}, "
                f"zero_reads_as={self.zero_reads_as!r}, ordered={self.ordered!r})")

    def __reduce__(self):
        return DiceKind, self._key()

    def unordered(self) -> "DiceKind":
        """The same dice, read only by their total, doubles or final value."""
        return DiceKind(self.name, self.names, self.sides, self.zero_reads_as, False)

    @property
    def count(self) -> int:
        return len(self.names)

    def describe(self) -> str:
        return f"{self.count}d{self.sides}" if self.count > 1 else f"d{self.sides}"

    def outcomes(self) -> list[tuple[tuple[int, ...], int, int]]:
        """Every outcome as (faces, weight numerator, weight denominator).

        Ordered kinds list every ordered tuple (each 1 / sides^count). When the procedure
        cannot tell the dice apart (``ordered`` is False), permutations are one outcome
        weighted by how many orders give it: 21 outcomes for 2d6 instead of 36.
        """
        total = self.sides ** self.count
        many = total if self.ordered or self.count == 1 else math.comb(self.sides + self.count - 1, self.count)
        if many > MAX_OUTCOMES:
            from ..errors import LimitError
            raise LimitError(f"exact odds would list {many:,} outcomes of {self.describe()} for one roll, more than "
                             f"the limit of {MAX_OUTCOMES:,} (limit 'outcomes per roll')",
                             hint="use `umpire simulate` for an estimate")
        faces = range(1, self.sides + 1)
        if self.ordered or self.count == 1:
            return [(combo, 1, total) for combo in itertools.product(faces, repeat=self.count)]
        out = []
        for combo in itertools.combinations_with_replacement(faces, self.count):
            orders = math.factorial(self.count)
            for face in set(combo):
                orders //= math.factorial(combo.count(face))
            out.append((combo, orders, total))
        return out

    def read_given(self, entry, where: str) -> tuple[int, ...]:
        """A situation's dice entry for this roll: one number per die, or a total."""
        if isinstance(entry, bool) or not isinstance(entry, (int, list, tuple)):
            raise InputError(f"{where}: a dice entry is a number or a list of numbers")
        if isinstance(entry, int):
            if self.count == 1:
                return (self._face(entry, where),)
            return self.split_total(entry, where)
        if len(entry) != self.count:
            raise InputError(f"{where}: this roll is {self.describe()} ({', '.join(self.names)}), "
                             f"so it needs {self.count} dice, but {len(entry)} were given")
        return tuple(self._face(v, where) for v in entry)

    def _face(self, value: int, where: str) -> int:
        if value == 0 and self.zero_reads_as is not None:
            return self.zero_reads_as
        if not 1 <= value <= self.sides:
            zero = f" (0 reads as {self.zero_reads_as})" if self.zero_reads_as is not None else ""
            raise InputError(f"{where}: a d{self.sides} shows 1 to {self.sides}{zero}, not {value}")
        return value

    def split_total(self, total: int, where: str) -> tuple[int, ...]:
        """A total as individual dice, avoiding doubles where the total allows it."""
        lo, hi = self.count, self.count * self.sides
        if not lo <= total <= hi:
            raise InputError(f"{where}: {self.describe()} totals {lo} to {hi}, not {total}")
        best: tuple[int, ...] | None = None
        for combo in itertools.product(range(1, self.sides + 1), repeat=self.count):
            if sum(combo) == total:
                if len(set(combo)) > 1:
                    return combo
                best = best or combo
        assert best is not None     # every total from lo to hi has a combination
        return best


def literal_kind(count: int, sides: int) -> DiceKind:
    names = ("die",) if count == 1 else tuple(f"die{i + 1}" for i in range(count))
    return DiceKind(f"{count}d{sides}" if count > 1 else f"d{sides}", names, sides)


class DiceSource:
    """Where rolls come from. ``roll`` returns the faces; ``branch`` picks among weighted options."""

    def roll(self, kind: DiceKind, label: str, pos: Position | None) -> tuple[int, ...]:
        raise NotImplementedError

    def branch(self, options: Sequence[tuple[object, int, int]]):
        """Pick one of several outcomes, each (value, weight numerator, weight denominator)."""
        raise NotImplementedError

    @property
    def pending_given(self) -> bool:
        return False


class SeededDice(DiceSource):
    """A seeded generator: the same seed gives the same rolls (without a seed, one is drawn and reported)."""

    def __init__(self, seed: int | None = None):
        self.seed = seed if seed is not None else random.SystemRandom().randrange(1, 2**31)
        self.rng = random.Random(self.seed)

    def roll(self, kind, label, pos):
        rand, sides, count = self.rng.random, kind.sides, len(kind.names)
        if count == 2:
            return (int(rand() * sides) + 1, int(rand() * sides) + 1)
        if count == 1:
            return (int(rand() * sides) + 1,)
        return tuple(int(rand() * sides) + 1 for _ in range(count))

    def branch(self, options):
        x = self.rng.random()
        acc = Fraction(0)
        for value, num, den in options:
            acc += Fraction(num, den)
            if x < acc:
                return value
        return options[-1][0]


class GivenDice(DiceSource):
    """Dice from the situation, in order; a seeded generator after they run out.

    ``positions`` (one per entry) let a bad entry be reported at its place in the file.
    """

    def __init__(self, entries: Sequence, seed: int | None = None, positions: Sequence | None = None):
        self.entries = list(entries)
        self.used = 0
        self.positions = positions if positions is not None else ()   # a sequence, looked at only to report
        self.fallback = SeededDice(seed)
        self.history: list[tuple[int, ...]] = []

    @property
    def seed(self) -> int:
        return self.fallback.seed

    @property
    def pending_given(self) -> bool:
        return self.used < len(self.entries)

    def roll(self, kind, label, pos):
        if self.used < len(self.entries):
            i = self.used
            self.used += 1
            try:
                faces = kind.read_given(self.entries[i], f"given dice entry {i + 1} (for roll '{label}')")
            except InputError as e:
                where = self.positions[i] if i < len(self.positions) else None
                raise InputError(e.message, where) from None
        else:
            faces = self.fallback.roll(kind, label, pos)
        self.history.append(faces)
        return faces

    def branch(self, options):
        return self.fallback.branch(options)
