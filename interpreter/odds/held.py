"""Held variables: a live value that the next statement does not read is carried as a distribution, not as states.

After a roll the states differ in it, and a procedure may read the roll again only much later (an attack's
dice, read by the breakdown and Rate of Fire checks at its end), while everything in between runs once per
state it keeps apart. So at a merge, the live variables the next statement does not read (the plan's
``Key.held``) are left out of the key: states that agree on everything else become one state, which *holds*
the values they differed in as one joint factor, each combination of values with its probability given the
rest of the state. That is exact: the merged state's weight is the sum of theirs, and each combination's
share of it is what its states weighed. A statement that reads a held variable first opens the state again
into one state per combination (``opened``), with the same weights.

A held value sits directly in a variable (a ``Held`` view of its factor: several variables held together
share one factor, so their values stay together), never in a record, a list or an emit, and never past the
statement that reads it: nothing but the enumerator ever sees one.
"""

from __future__ import annotations

import math
from fractions import Fraction
from itertools import product
from typing import Any

from ..errors import LimitError
from ..model.values import key_form
from .state_nodes import State


class Factor:
    """The joint distribution of some held variables: ``items`` are (values, probability), values in the
    order of ``names``, probabilities exact and summing to 1."""

    __slots__ = ("names", "items")

    def __init__(self, names: tuple, items: tuple):
        self.names, self.items = names, items


class Held:
    """A variable's place in a factor (its values are ``factor.items[k][0][index]``)."""

    __slots__ = ("factor", "index")

    def __init__(self, factor: Factor, index: int):
        self.factor, self.index = factor, index

    def __repr__(self):
        return f"held[{', '.join(f'{v[self.index]!r}: {p}' for v, p in self.factor.items)}]"


def _factors(env: dict, names) -> dict:
    """The factors held in these variables of ``env`` (by identity), with the variables still holding them."""
    found: dict = {}
    for n in names:
        v = env.get(n)
        if v.__class__ is Held:
            entry = found.get(id(v.factor))
            if entry is None:
                found[id(v.factor)] = (v.factor, [n])
            else:
                entry[1].append(n)
    return found


def opened(states: list, names, limit: int) -> list | None:
    """The states with every factor held in ``names`` opened into one state per combination (None: no state
    holds one there). A factor's other variables are opened with it, so they keep its values together. One
    state opening into more than ``limit`` states is refused before any is made."""
    return _opening(states, lambda env: [f for f, _ in _factors(env, names).values()], limit)


def _opening(states: list, which, limit: int) -> list | None:
    """The states with the factors ``which(env)`` names opened (None: no state had one to open)."""
    out = None
    for i, st in enumerate(states):
        factors = which(st.env)
        if not factors:
            if out is not None:
                out.append(st)
            continue
        if out is None:
            out = states[:i]
        count = math.prod(len(f.items) for f in factors)
        if count > limit:
            raise LimitError(f"exact odds would open one state into {count:,} states of held values, more than "
                             f"the limit of {limit:,} live states", hint="use `umpire simulate` for an estimate, "
                             "or raise --budget")
        out.extend(_open(st, factors))
    return out


def _open(st: State, factors: list) -> list:
    env = st.env
    # the variables still holding each factor (one overwritten since holds its own value: left as it is)
    places = [[(n, v.index) for n, v in env.items() if v.__class__ is Held and v.factor is f] for f in factors]
    out = []
    for combo in product(*(f.items for f in factors)):
        e = env.copy()
        p = Fraction(st.num, st.den)
        for (values, q), where in zip(combo, places):
            p *= q
            for n, k in where:
                e[n] = values[k]
        out.append(State(e, p.numerator, p.denominator, st.given, st.steps, st.loops, st.lazy, st.origin))
    return out


def outside(states: list, held: tuple, limit: int) -> list:
    """The states with every factor held in ``held`` that also holds a variable not in ``held`` opened: a
    merge holding ``held`` combines the factors of its states, which must not part a factor's variables."""
    wanted = set(held)

    def partial(env):
        return [f for f, _ in _factors(env, held).values()
                if any(n not in wanted and env.get(n).__class__ is Held and env[n].factor is f for n in f.names)]
    found = _opening(states, partial, limit)
    return found if found is not None else states


def combined(members: list, held: tuple, number=key_form) -> State:
    """One state for states that agree on everything but the variables ``held`` (set in every one of them,
    their factors holding no other variable: ``outside``): their summed weight, and those variables' values
    and held factors joined into one factor, each combination of values with its share. ``number``: a value's
    key form, or anything standing for it one to one (odds/state_control._Canon)."""
    common = math.lcm(*{m.den for m in members})
    acc: dict = {}          # the values' key forms -> [values, weight numerator, weight denominator]
    for m in members:
        env = m.env
        scale = m.num * (common // m.den)
        fixed = [env[n] for n in held]
        found = _factors(env, held)
        combos: Any
        if not found:       # (most states hold nothing yet: one combination, their own values)
            combos = (((), scale, 1),)
        else:
            parts: list = []
            for f, names in found.values():
                at = [held.index(n) for n in names]
                parts.append([(tuple(zip(at, (values[env[n].index] for n in names))), q.numerator, q.denominator)
                              for values, q in f.items])
            combos = []
            for combo in product(*parts):
                pairs: list = []
                num, den = scale, 1
                for p, n, d in combo:
                    pairs.extend(p)
                    num *= n
                    den *= d
                combos.append((pairs, num, den))
        for pairs, num, den in combos:
            values = list(fixed)
            for k, v in pairs:
                values[k] = v
            form = tuple([number(v) for v in values])
            entry = acc.get(form)
            if entry is None:
                acc[form] = [tuple(values), num, den]
            elif entry[2] == den:
                entry[1] += num
            else:
                entry[1], entry[2] = entry[1] * den + num * entry[2], entry[2] * den
    first = members[0]
    e = first.env.copy()
    total = sum(m.num * (common // m.den) for m in members)
    items = list(acc.values())
    if len(items) == 1:
        values = items[0][0]
        for n, v in zip(held, values):
            e[n] = v
    else:
        # a variable with one value in every combination is that value; the others are held together
        varying = [k for k in range(len(held)) if len({key_form(values[k]) for values, _, _ in items}) > 1]
        for k in range(len(held)):
            if k not in varying:
                e[held[k]] = items[0][0][k]
        factor = Factor(tuple(held[k] for k in varying),
                        tuple((tuple(values[k] for k in varying), Fraction(n, d * total)) for values, n, d in items))
        for j, k in enumerate(varying):
            e[held[k]] = Held(factor, j)
    g = math.gcd(total, common)
    out = State(e, total // g, common // g, first.given, min(m.steps for m in members), first.loops,
                first.lazy.union(*(m.lazy for m in members[1:])), first.origin)
    if any(m.origin != first.origin for m in members[1:]) and first.origin:
        out.origin = first.origin[:-1] + (-1,)     # from several states: no longer one state's round
    return out
