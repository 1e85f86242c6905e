"""Held variables: a live value that the next statement does not read is carried as a distribution, not as states.

After a roll the states differ in it, and a procedure may read the roll again only much later (an attack's
dice, read by the breakdown and Rate of Fire checks at its end), while everything in between runs once per
state it keeps apart. So at a merge, the live variables the next statement does not read (the plan's
``Key.held``) are left out of the key: states that agree on everything else become one state, which *holds*
the values they differed in as one joint factor, each combination of values with its probability given the
rest of the state. That is exact: the merged state's weight is the sum of theirs, and each combination's
share of it is what its states weighed. A statement that reads a held variable first opens the state again
into one state per combination (``opened``), with the same weights.

A held value sits directly in a variable or an emitted field (a ``Held`` view of its factor: several places
held together share one factor, so their values stay together), never inside a record or a list, and never
past the statement that reads it: nothing but the enumerator ever sees one. A *place* is a variable's name,
or ``(EMIT, field)`` for an emitted field: no statement reads an emit again, so a merge may hold the fields
its states emitted differently (the hit units' states, while the firers' checks run on the attack's dice),
and only the procedure's result opens them (``emitted``).

Opening reads only what it must: a statement that reads some of a factor's places opens those, and the
factor's other places stay held, as the distribution of their values given the opened ones (``_open``).
"""

from __future__ import annotations

import math
from fractions import Fraction
from itertools import product
from typing import Any

from ..analysis.caching import EMIT
from ..errors import LimitError
from ..model.values import key_form
from .state_nodes import State

MISSING = object()


def get(env: dict, place):
    """The value at a place (a variable's name, or ``(EMIT, field)``); ``MISSING`` where none is set."""
    if place.__class__ is str:
        return env.get(place, MISSING)
    return env[EMIT].get(place[1], MISSING)


def _put(env: dict, place, value, copied: list) -> None:
    """Set a place of a fresh copy ``env`` (its emits copied once, on the first emitted place set)."""
    if place.__class__ is str:
        env[place] = value
    else:
        if not copied:
            env[EMIT] = env[EMIT].copy()
            copied.append(True)
        env[EMIT][place[1]] = value


def _places(env: dict, factor) -> list:
    """(place, index) of every place of ``env`` still holding ``factor`` (one overwritten since holds its own
    value: left as it is)."""
    out = [(n, v.index) for n, v in env.items() if v.__class__ is Held and v.factor is factor]
    out.extend(((EMIT, n), v.index) for n, v in env[EMIT].items() if v.__class__ is Held and v.factor is factor)
    return out


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
    """The factors held at these places of ``env`` (by identity), with the places still holding them."""
    found: dict = {}
    for n in names:
        v = get(env, n)
        if v.__class__ is Held:
            entry = found.get(id(v.factor))
            if entry is None:
                found[id(v.factor)] = (v.factor, [n])
            else:
                entry[1].append(n)
    return found


def opened(states: list, names, limit: int) -> list | None:
    """The states with the values held in ``names`` opened: one state per combination of them (None: no state
    holds one there). A factor's other places stay held, given the opened values (``_open``). One state
    opening into more than ``limit`` states is refused before any is made."""
    # (most nodes meet no held value where they read: looked for at once, before any state is opened)
    i = _first_holding(states, [n for n in names if n.__class__ is str],
                       [n[1] for n in names if n.__class__ is not str])
    if i < 0:
        return None
    read = names if isinstance(names, (set, frozenset)) else frozenset(names)
    rest = _opening(states[i:] if i else states, lambda env: [f for f, _ in _factors(env, names).values()], limit,
                    read)
    return rest if rest is None or not i else states[:i] + rest


def _first_holding(states: list, plain: list, fields: list) -> int:
    """The index of the first state holding a held value in one of these variables or emitted fields (-1: none)."""
    for i, st in enumerate(states):
        env = st.env
        for n in plain:
            if env.get(n).__class__ is Held:
                return i
        if fields:
            emits = env[EMIT]
            for f in fields:
                if emits.get(f).__class__ is Held:
                    return i
    return -1


def _opening(states: list, which, limit: int, read) -> list | None:
    """The states with the places ``read`` of the factors ``which(env)`` names opened (None: no state had one
    to open)."""
    out = None
    for i, st in enumerate(states):
        factors = which(st.env)
        if not factors:
            if out is not None:
                out.append(st)
            continue
        if out is None:
            out = states[:i]
        parts = [_split(st.env, f, read) for f in factors]
        count = math.prod(len(p) for p in parts)
        if count > limit:
            raise LimitError(f"exact odds would open one state into {count:,} states of held values, more than "
                             f"the limit of {limit:,} live states", hint="use `umpire simulate` for an estimate, "
                             "or raise --budget")
        out.extend(_open(st, parts))
    return out


def _split(env: dict, factor: Factor, read) -> list:
    """A factor opened at the places ``read``: [(assignments, probability)], one per distinct combination of
    the values read, each assigning those places their values and the factor's other places (still holding
    it) their values given those: the value itself where only one is left, else a smaller factor of them."""
    places = _places(env, factor)
    opening = [(p, k) for p, k in places if p in read]
    kept = [(p, k) for p, k in places if p not in read]
    if not kept:
        return [([(p, values[k]) for p, k in places], q) for values, q in factor.items]
    groups: dict = {}       # the opened values' key forms -> [their values, [(item values, probability)]]
    for values, q in factor.items:
        shown = tuple([values[k] for _, k in opening])
        form = tuple([key_form(v) for v in shown])
        entry = groups.get(form)
        if entry is None:
            groups[form] = [shown, [(values, q)]]
        else:
            entry[1].append((values, q))
    out = []
    for shown, items in groups.values():
        total = items[0][1] if len(items) == 1 else sum(q for _, q in items)
        assign = [(p, v) for (p, _), v in zip(opening, shown)]
        if len(items) == 1:
            assign.extend((p, items[0][0][k]) for p, k in kept)
        else:
            given = Factor(tuple(p for p, _ in kept),
                           tuple((tuple(values[k] for _, k in kept), q / total) for values, q in items))
            assign.extend((p, Held(given, j)) for j, (p, _) in enumerate(kept))
        out.append((assign, total))
    return out


def _open(st: State, parts: list) -> list:
    out = []
    for combo in product(*parts):
        e = st.env.copy()
        copied: list = []
        p = Fraction(st.num, st.den)
        for assign, q in combo:
            p *= q
            for place, v in assign:
                _put(e, place, v, copied)
        out.append(State(e, p.numerator, p.denominator, st.given, st.steps, st.loops, st.lazy, st.origin))
    return out


def emitted(emits: dict) -> list:
    """Every combination of the emitted values a state holds, with its probability: [(emits, Fraction)] (the
    state's emits as they are when it holds none)."""
    found = _factors({EMIT: emits}, [(EMIT, n) for n, v in emits.items() if v.__class__ is Held])
    if not found:
        return [(emits, Fraction(1))]
    parts = []
    for f, places in found.values():     # each factor's emitted values alone (its variables are not returned)
        at = [(place[1], emits[place[1]].index) for place in places]
        acc: dict = {}
        for values, q in f.items:
            shown = tuple([values[k] for _, k in at])
            form = tuple([key_form(v) for v in shown])
            entry = acc.get(form)
            acc[form] = [shown, q] if entry is None else [shown, entry[1] + q]
        parts.append([([(name, v) for (name, _), v in zip(at, shown)], q) for shown, q in acc.values()])
    out = []
    for combo in product(*parts):
        e = emits.copy()
        p = Fraction(1)
        for assign, q in combo:
            p *= q
            for name, v in assign:
                e[name] = v
        out.append((e, p))
    return out


class _Outside:
    """The places not in ``wanted``, as a set ``in`` asks (what ``outside`` opens)."""

    __slots__ = ("wanted",)

    def __init__(self, wanted: set):
        self.wanted = wanted

    def __contains__(self, place) -> bool:
        return place not in self.wanted


def outside(states: list, held: tuple, limit: int) -> list:
    """The states with every factor held in ``held`` that also holds a place not in ``held`` opened at those
    other places: a merge holding ``held`` combines the factors of its states, which must hold nothing else."""
    wanted = set(held)

    def partial(env):
        return [f for f, _ in _factors(env, held).values()
                if any(n not in wanted and get(env, n).__class__ is Held and get(env, n).factor is f
                       for n in f.names)]
    found = _opening(states, partial, limit, _Outside(wanted))
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
        fixed = [get(env, n) for n in held]
        found = _factors(env, held)
        combos: Any
        if not found:       # (most states hold nothing yet: one combination, their own values)
            combos = (((), scale, 1),)
        else:
            parts: list = []
            for f, names in found.values():
                at = [held.index(n) for n in names]
                index = [get(env, n).index for n in names]
                parts.append([(tuple(zip(at, [values[i] for i in index])), q.numerator, q.denominator)
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
    copied: list = []
    total = sum(m.num * (common // m.den) for m in members)
    items = list(acc.values())
    if len(items) == 1:
        values = items[0][0]
        for n, v in zip(held, values):
            _put(e, n, v, copied)
    else:
        # a place with one value in every combination is that value; the others are held together
        forms = list(acc)       # (numbered as the key forms are: one number per form)
        varying = [k for k in range(len(held)) if len({form[k] for form in forms}) > 1]
        for k in range(len(held)):
            if k not in varying:
                _put(e, held[k], items[0][0][k], copied)
        factor = Factor(tuple(held[k] for k in varying),
                        tuple((tuple(values[k] for k in varying), Fraction(n, d * total)) for values, n, d in items))
        for j, k in enumerate(varying):
            _put(e, held[k], Held(factor, j), copied)
    g = math.gcd(total, common)
    out = State(e, total // g, common // g, first.given, min(m.steps for m in members), first.loops,
                first.lazy.union(*(m.lazy for m in members[1:])), first.origin)
    if any(m.origin != first.origin for m in members[1:]) and first.origin:
        out.origin = first.origin[:-1] + (-1,)     # from several states: no longer one state's round
    return out
