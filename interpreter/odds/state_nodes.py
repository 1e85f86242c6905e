"""The state enumerator's data: a weighted live state, and the kinds of node a ``Plan`` (odds/state_plan.py)
turns a procedure's body into (runs of simple statements, ``if``, ``for each``, maps over lists, blocks) with
the key on which states merge after each.
"""

from __future__ import annotations

from operator import attrgetter, itemgetter
from typing import Any

from ..analysis.caching import EMIT
from ..model.values import DEAD
from ..runtime.operators import truth


class State:
    """One live state: locals (with emits under EMIT), weight num/den, given dice used, steps left, loops.

    ``lazy`` names the variables that hold independent lists kept factored (odds/independent.py);
    ``origin`` says which state of the current loop round each state came from (for factoring).
    """

    __slots__ = ("env", "num", "den", "given", "steps", "loops", "lazy", "origin")

    def __init__(self, env, num, den, given, steps, loops, lazy=frozenset(), origin=()):
        self.env, self.num, self.den, self.given, self.steps, self.loops = env, num, den, given, steps, loops
        self.lazy, self.origin = lazy, origin


class _Leaf:
    """A run of simple statements (at most one of them a branch point, at its end), as one closure."""
    __slots__ = ("fn", "steps", "writes", "emits", "key", "pos", "branches", "strict", "attr", "lazy_ok",
                 "branching", "targets", "fresh", "reads", "compound", "parts", "split_on")
    fn: Any
    # an ``if`` without branch points run as one leaf keeps its ``_If`` (``compound``), and a leaf joined from
    # such ones its parts, in order: when a state holds an independent list in ``split_on`` (read only inside
    # a branch), the parts run one by one, so only a branch that reads the list expands it (states.py)
    compound: Any
    parts: Any
    split_on: Any
    steps: tuple
    writes: Any
    emits: Any
    key: Any
    pos: Any
    branches: Any
    strict: Any
    attr: Any
    lazy_ok: Any
    branching: Any
    targets: Any
    fresh: Any
    reads: Any


class _If:
    __slots__ = ("branches", "key", "pos", "strict", "attr", "random", "branching", "same", "reads", "which")
    branches: Any
    which: Any      # (env, rt) -> the index of the branch taken, -1 for none (``_which``)
    key: Any
    pos: Any
    strict: Any
    attr: Any
    random: Any
    branching: Any
    same: Any
    reads: Any


class _For:
    __slots__ = ("source", "var", "body", "head_key", "key", "pos", "strict", "attr", "acc", "acc_key", "branching",
                 "reads", "draws")
    source: Any
    draws: Any
    var: Any
    body: Any
    head_key: Any
    key: Any
    pos: Any
    strict: Any
    attr: Any
    acc: Any
    acc_key: Any
    branching: Any
    reads: Any


class _Map:
    """``let/emit NAME = list(ELEMENT for VAR in SOURCE)``: keeps an independent source factored."""
    __slots__ = ("fn", "source", "element", "var", "name", "is_emit", "dead", "key", "pos", "strict", "attr",
                 "source_name", "branching", "pure", "reads")
    fn: Any
    source: Any
    element: Any
    var: Any
    name: Any
    is_emit: Any
    dead: Any
    key: Any
    pos: Any
    strict: Any
    attr: Any
    source_name: Any
    branching: Any
    pure: Any
    reads: Any


class Key:
    """What tells live states apart after a node: the live variables' names, and for those that hold
    rolls, how a roll is compared (by what the procedure reads of it, else by its dice)."""
    __slots__ = ("names", "rolls", "get", "set", "held", "full", "hold_emits")

    def __init__(self, names: tuple, rolls: set, readings: dict, held: tuple = (), hold_emits: bool = False):
        self.names = names
        self.held = held        # live variables left out of the key, held by the merged state (odds/held.py)
        self.full = self        # the key with them (set by Plan._holding)
        self.hold_emits = hold_emits    # whether the merged states may hold the fields they emitted differently
        self.set = frozenset(names)
        # a roll is compared by what is read of it (its readings, fetched at once), else by its dice
        self.rolls = tuple((i, _reader(readings.get(n))) for i, n in enumerate(names) if n in rolls)
        # the live values at once (one name gives the value itself: a key only meets keys of its own Key)
        self.get = itemgetter(*names) if names else None


def _which(branches: tuple):
    """An ``if``'s branch chooser: the index of the first branch whose condition holds (-1: none does)."""
    def which(env, rt):
        for i, (cond, pos, _) in enumerate(branches):
            if cond is None:
                return i
            c = cond(env, rt)
            if c is True:
                return i
            if c is not False:
                truth(c, pos)
        return -1
    return which


def _reader(fields):
    """What a key keeps of a roll read only through ``fields`` (None: read otherwise, keep its dice)."""
    if fields is None:
        return None
    if not fields:
        return lambda roll: ()
    return attrgetter(*fields)


class _Block:
    __slots__ = ("nodes", "cost", "first", "steps")
    nodes: tuple
    cost: Any
    first: Any
    steps: Any


def _join(a: _Leaf, b: _Leaf) -> _Leaf:
    """Two runs of simple statements as one (``a`` has no branch point)."""
    node = _Leaf()
    node.steps = a.steps + b.steps
    node.targets = a.targets | b.targets
    node.fn, node.writes, node.emits = _sequence(node.steps), a.writes or b.writes, a.emits or b.emits
    node.key, node.pos, node.branches, node.branching = b.key, a.pos, b.branches, b.branches
    node.strict, node.attr, node.lazy_ok = a.strict | b.strict, a.attr | b.attr, b.lazy_ok
    node.fresh = None
    node.reads = a.reads | b.reads
    node.compound = None
    node.parts, node.split_on = None, a.split_on | b.split_on
    if node.split_on:
        node.parts = (a.parts or (a,)) + (b.parts or (b,))
    return node


def _sequence(steps: tuple):
    """Statement closures run in order as one closure (one call per statement, no nesting). Each step is
    (closure, dead, returns): ``dead`` names a variable (or, as ``(EMIT, name)``, a result field) whose value
    nothing will ever tell apart, set to DEAD once the statement has run (a closure of None: the statement
    cannot fail, so only that is left of it); ``returns``: whether the statement can end the procedure."""
    if len(steps) == 1 and steps[0][1] is None:
        return steps[0][0]
    if all(dead is None for _, dead, _ in steps) and not any(returns for _, _, returns in steps[:-1]):
        head, last = tuple(f for f, _, _ in steps[:-1]), steps[-1][0]

        def run_straight(env, rt):
            for f in head:
                f(env, rt)
            return last(env, rt)
        return run_straight

    def run(env, rt):
        for f, dead, _ in steps:
            signal = f(env, rt) if f is not None else None
            if dead is not None:
                if dead.__class__ is tuple:
                    env[EMIT][dead[1]] = DEAD
                else:
                    env[dead] = DEAD
            if signal is not None:
                return signal
        return None
    return run
