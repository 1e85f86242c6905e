"""Exact odds by live states: enumeration whose work grows with distinct states, not with paths.

A procedure runs here on a *distribution* of states instead of one state:
each state is the procedure's local variables (and what it has emitted so far)
with an exact weight. Statements run one at a time over every state, using
the closures the compiler made for them:

* a statement without branch points (most of them) maps each state to one
  state; a roll, or a call of a procedure that rolls, maps it to one state per
  outcome (the called procedure's outcomes come from its own distribution,
  computed once per distinct arguments and shared);
* ``if`` splits the states by the branch they take, and ``for each`` moves every
  state one item further per round;
* after each statement, states that agree on everything that can still matter
  merge and add their weights. What can still matter is the *live* part of a
  state: the variables a later statement reads (a backward liveness analysis),
  the loop positions, the dice given in the situation still unused, and the
  emitted fields the question asks about (odds/demand.py). A variable whose value
  reaches no demanded result, condition, lookup or message (the demand
  analysis's unused variables, read only where ``DEAD`` is absorbed) is kept as
  ``DEAD`` from the moment it is set, so it never tells states apart.

Everything exact stays exact: rolls keep their dice wherever the rules can
tell them apart (a roll that is read by its dice is live as its dice), fixed
dice are consumed in order (a state remembers how many it has used), stops
(unknown chart cells, refusals, ``fail``) are outcomes with their own weight,
and situation-given decisions are answered as in a single run.

The number of live states at any point is bounded by the budget; when it is
exceeded the error says how many there were and which result fields a
narrower ``--by`` would leave out.
"""

from __future__ import annotations

import math
from fractions import Fraction
from itertools import product
from operator import attrgetter, is_, itemgetter

from ..analysis.caching import EMIT, result_value
from ..analysis.names import bound_names, free_names, roll_names, walk
from ..analysis.roll_usage import roll_readings
from ..errors import AdjudicationError, LimitError
from ..model.values import DEAD, Record, Roll, holds_roll, key_form, show, type_name
from ..reading import syntax as ast
from ..runtime.operators import truth
from ..runtime.state import Runtime
from .demand import ALL
from .independent import Independent, check_cases, expand, has_lazy, map_items
from .passed_on import (
    Observed,
    abstracted,
    forget,
    may_share,
    passed_on,
    put_back,
    record_lists,
)

_MISSING = object()
_STOPPED = object()


class State:
    """One live state: locals (with emits under EMIT), weight num/den, given dice used, steps left, loops.

    ``lazy`` names the variables that hold independent lists kept factored (odds/independent.py);
    ``origin`` says which state of the current loop round each state came from (for factoring).
    """

    __slots__ = ("env", "num", "den", "given", "steps", "loops", "lazy", "origin")

    def __init__(self, env, num, den, given, steps, loops, lazy=frozenset(), origin=()):
        self.env, self.num, self.den, self.given, self.steps, self.loops = env, num, den, given, steps, loops
        self.lazy, self.origin = lazy, origin


# ---- the plan of a procedure: its statements' closures, with what is live after each -----------------

class _Leaf:
    """A run of simple statements (at most one of them a branch point, at its end), as one closure."""
    __slots__ = ("fn", "steps", "writes", "emits", "key", "pos", "branches", "strict", "attr", "lazy_ok",
                 "branching", "targets", "fresh")


class _If:
    __slots__ = ("branches", "key", "pos", "strict", "attr", "random", "branching", "same")


class _For:
    __slots__ = ("source", "var", "body", "head_key", "key", "pos", "strict", "attr", "acc", "acc_key", "branching")


class _Map:
    """``let/emit NAME = list(ELEMENT for VAR in SOURCE)``: keeps an independent source factored."""
    __slots__ = ("fn", "source", "element", "var", "name", "is_emit", "dead", "key", "pos", "strict", "attr",
                 "source_name", "branching", "pure")


class Key:
    """What tells live states apart after a node: the live variables' names, and for those that hold
    rolls, how a roll is compared (by what the procedure reads of it, else by its dice)."""
    __slots__ = ("names", "rolls", "get", "set")

    def __init__(self, names: tuple, rolls: set, readings: dict):
        self.names = names
        self.set = frozenset(names)
        # a roll is compared by what is read of it (its readings, fetched at once), else by its dice
        self.rolls = tuple((i, _reader(readings.get(n))) for i, n in enumerate(names) if n in rolls)
        # the live values at once (one name gives the value itself: a key only meets keys of its own Key)
        self.get = itemgetter(*names) if names else None


_steps_left = attrgetter("steps")
_CHARGE_EVERY = 100_000
"""Work is charged toward 'odds work' once per node, or every this many steps on a long one."""


def _reader(fields):
    """What a key keeps of a roll read only through ``fields`` (None: read otherwise, keep its dice)."""
    if fields is None:
        return None
    if not fields:
        return lambda roll: ()
    return attrgetter(*fields)


class _Block:
    __slots__ = ("nodes", "cost", "first", "steps")


_ABSORBING = (ast.Literal, ast.Name, ast.Attribute, ast.RecordExpr, ast.ListExpr, ast.Update, ast.Conditional,
              ast.Interpolated)


def _absorbing(e) -> bool:
    """Whether an expression gives DEAD (never an error) when any name it reads is DEAD."""
    for n in walk((e,)):
        if isinstance(n, (ast.Arg,)):
            return False
        if isinstance(n, ast.Binary):
            if n.op not in ("+", "-", "*"):
                return False
        elif isinstance(n, ast.Unary):
            if n.op != "-":
                return False
        elif isinstance(n, ast.Node) and not isinstance(n, _ABSORBING):
            return False
    return True


def _join(a: _Leaf, b: _Leaf) -> _Leaf:
    """Two runs of simple statements as one (``a`` has no branch point)."""
    node = _Leaf()
    node.steps = a.steps + b.steps
    node.targets = a.targets | b.targets
    node.fn, node.writes, node.emits = _sequence(node.steps), a.writes or b.writes, a.emits or b.emits
    node.key, node.pos, node.branches, node.branching = b.key, a.pos, b.branches, b.branches
    node.strict, node.attr, node.lazy_ok = a.strict | b.strict, a.attr | b.attr, b.lazy_ok
    node.fresh = None
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


def _name_of(e) -> tuple[str | None, bool]:
    """``x`` -> ('x', False); ``x.f`` -> ('x', True); anything else -> (None, False)."""
    if isinstance(e, ast.Name):
        return e.name, False
    if isinstance(e, ast.Attribute) and isinstance(e.target, ast.Name):
        return e.target.name, True
    return None, False


def _strictness(s) -> tuple[set, set]:
    """Names a simple statement needs as plain values (``strict``), and those it only passes on,
    reading at most one field (``attr``: plain only if the variable itself is an independent list).
    Passing on: ``let/set/emit y = x`` or ``= x.f``, ``set x = x + [item]``, and a returned record
    of such fields; whatever a call's arguments read is strict."""
    value = getattr(s, "value", None) if not isinstance(s, ast.Roll) else None
    if isinstance(s, (ast.Let, ast.Set, ast.Emit, ast.Return)) and value is not None:
        name, attr = _name_of(value)
        if name is not None:
            return set(), {name} if attr else set()
        if isinstance(s, ast.Set) and isinstance(value, ast.Binary) and value.op == "+" \
                and isinstance(value.left, ast.Name) and value.left.name == s.name and isinstance(value.right, ast.ListExpr):
            return free_names(value.right), set()
        if isinstance(s, ast.Return) and isinstance(value, ast.RecordExpr):
            strict, attrs = set(), set()
            for _, v in value.fields:
                name, attr = _name_of(v)
                if name is None:
                    strict |= free_names(v)
                elif attr:
                    attrs.add(name)
            return strict, attrs
    if isinstance(s, ast.Note):
        return set(), set()
    return _reads(s), set()


def _lazy_call(s, ruleset) -> bool:
    """``let x = call P(...)``, ``emit f = call P(...)`` or ``return call P(...)``, P's arguments calling
    nothing random: P's result may stay factored."""
    value = getattr(s, "value", None)
    if not isinstance(s, (ast.Let, ast.Set, ast.Emit, ast.Return)) or not isinstance(value, ast.Call):
        return False
    return not any(isinstance(n, (ast.Call,)) and not ruleset.procedures[n.procedure].deterministic
                   for a in value.args for n in walk((a.value,)))


def _reads(s) -> set:
    """Names a simple statement reads when run untraced (a note's text is only built for a trace)."""
    if isinstance(s, (ast.Let, ast.Set, ast.Emit)):
        return free_names(s.value)
    if isinstance(s, ast.Roll):
        names = free_names(s.modifier) if s.modifier is not None else set()
        if s.dice.size is not None:
            names |= free_names(s.dice.size)
        return names
    if isinstance(s, ast.Return):
        return free_names(s.value) if s.value is not None else set()
    if isinstance(s, ast.Fail):
        return free_names(s.message)
    if isinstance(s, ast.Refuse):
        return free_names(s.reason)
    if isinstance(s, ast.Choose):
        return free_names(s.options) | free_names(s.default)
    return set()


def _defines(s) -> str | None:
    return s.name if isinstance(s, (ast.Let, ast.Set, ast.Roll, ast.Choose)) else None


class Plan:
    """A procedure prepared for state enumeration under one demand on its result."""

    def __init__(self, ruleset, proc, demand, var_demands: dict | None):
        self.proc = proc
        self.demand = demand
        self.unwanted: dict = {}     # a result's field names -> {field nobody needs: DEAD} (_result)
        self.parts = ruleset.parts
        self.ruleset = ruleset
        self._compiler = None
        self.globals = set(ruleset.catalogues)
        body = proc.syntax.body
        self.readings = roll_readings(body)     # rolls told apart only by what is read of them
        self.rolls = roll_names(body)
        # arguments the body never assigns are the same object in every state: they never tell states apart
        assigned = bound_names(body) | {n.name for n in walk(body) if isinstance(n, ast.Set)}
        self.fixed = {p.name for p in proc.params if p.name not in assigned}
        self.random_defaults = any(self._random(p.default) for p in proc.params if p.default is not None)
        self.assigned: dict = {}        # id of a statement -> the variables set before it on every way there
        _definitely_set(body, set(), self.assigned)
        self.only_rolled = self.rolls - {n.name for n in walk(body) if isinstance(n, (ast.Let, ast.Set, ast.Choose))} \
            - {n.var for n in walk(body) if isinstance(n, ast.ForEach)} - {p.name for p in proc.params}
        self.dead = self._deadable(body, proc, demand, var_demands) if var_demands is not None else frozenset()
        self.body, _ = self._block(body, set())
        self.dead_params = tuple(p.name for p in proc.params if p.name in self.dead)

    # -- which variables never matter (kept as DEAD)
    def _deadable(self, body, proc, demand, var_demands) -> frozenset:
        candidates = {n for n in ({p.name for p in proc.params} | {_defines(s) for s in walk(body)
                                                                    if isinstance(s, ast.Statement)})
                      if n and n not in var_demands}
        candidates |= {s.var for s in walk(body) if isinstance(s, ast.ForEach) and s.var not in var_demands}
        # every read of a deadable name must sit in an absorbing value of a deadable target (or of an
        # emitted field nobody asks for); anything else (a condition, a lookup, a call...) needs its value
        reads = []   # (names read, target-or-None, absorbing)
        for s in walk(body):
            if isinstance(s, (ast.Let, ast.Set)):
                reads.append((free_names(s.value), s.name, _absorbing(s.value)))
            elif isinstance(s, ast.Emit):
                unused = demand is not ALL and s.name not in demand
                reads.append((free_names(s.value), "" if unused else None, _absorbing(s.value)))
            elif isinstance(s, ast.Return) and isinstance(s.value, ast.RecordExpr):
                for k, v in s.value.fields:
                    unused = demand is not ALL and k not in demand
                    reads.append((free_names(v), "" if unused else None, _absorbing(v)))
            elif isinstance(s, ast.Statement) and not isinstance(s, ast.Note):
                own = _reads(s)
                if isinstance(s, ast.If):
                    own = set().union(*(free_names(b.condition) for b in s.branches if b.condition is not None))
                elif isinstance(s, ast.ForEach):
                    own = free_names(s.source)
                reads.append((own, None, False))
        dead = set(candidates)
        changed = True
        while changed:
            changed = False
            for names, target, absorbing in reads:
                hit = names & dead
                if hit and not (absorbing and target is not None and (target == "" or target in dead)):
                    dead -= hit
                    changed = True
        return frozenset(dead)

    # -- liveness, building the plan's blocks backwards
    def _key_names(self, live) -> "Key":
        return Key(tuple(sorted(n for n in live if n not in self.globals and n not in self.dead
                                and n not in self.fixed)), self.rolls, self.readings)

    def _block(self, statements, live_out: set) -> tuple[_Block, set]:
        live = set(live_out)
        nodes = []
        for s in reversed(statements):
            node, live = self._statement(s, live)
            nodes.append(node)
        nodes.reverse()
        # consecutive simple statements run as one closure; a branch point ends its run
        grouped: list = []
        for node in nodes:
            last = grouped[-1] if grouped else None
            if node.__class__ is _Leaf and last is not None and last.__class__ is _Leaf and not last.branches \
                    and not node.branches:
                grouped[-1] = _join(last, node)
            else:
                grouped.append(node)
        block = _Block()
        block.nodes = tuple(grouped)
        # States merge around the nodes that can branch them (a roll, a call that rolls, a loop, an ``if``
        # holding one): before (a plain node may have left fewer variables live, so the branch point runs
        # once per merged state) and after. A node that cannot branch maps each state to at most one, so
        # merging after it would mostly cost a key per state and find nothing to merge.
        # A branch point's leaf followed by a plain one: when the states it makes are known apart (no merge
        # between them), the plain leaf runs on each state as it is made (``then``), not in a pass of its own.
        block.steps = tuple((node, node.branching and i > 0 and not grouped[i - 1].branching and grouped[i - 1].key,
                             node.branching,
                             grouped[i + 1] if node.__class__ is _Leaf and node.branches and i + 1 < len(grouped)
                             and grouped[i + 1].__class__ is _Leaf and not grouped[i + 1].branches else None)
                            for i, node in enumerate(grouped))
        block.cost = len(statements)
        block.first = statements[0].pos if statements else None
        return block, live

    def _statement(self, s, live_after: set):
        node, live_in = self._compound(s, live_after)
        if node.__class__ is not _Leaf and not node.branching and self._whole(s):
            return self._whole_leaf(s, live_after), live_in
        return node, live_in

    def _whole(self, s) -> bool:
        """Whether an ``if`` or ``for each`` without branch points may run as one closure (as in a single run):
        it sets no variable or result field that is held as DEAD, so the values it leaves are the ones the
        statement-by-statement run would leave."""
        if s.pos is None or id(s) not in self.parts:
            return False
        for n in walk((s,)):
            if isinstance(n, (ast.Let, ast.Set, ast.Roll, ast.Choose)) and n.name in self.dead:
                return False
            if isinstance(n, ast.Emit) and self.demand is not ALL and n.name not in self.demand:
                return False
        return True

    def _whole_leaf(self, s, live_after: set) -> "_Leaf":
        """An ``if`` or ``for each`` that cannot branch, as a leaf: it maps each state to one state (or ends it),
        so it joins the simple statements around it into one closure and one pass over the states."""
        inner = list(walk((s,)))
        node = _Leaf()
        fn, node.pos = self._compiled(s), s.pos
        node.steps = ((fn, None, any(isinstance(n, ast.Return) for n in inner)),)
        node.fn = fn
        node.targets = frozenset(n.name for n in inner if isinstance(n, (ast.Let, ast.Set, ast.Roll, ast.Choose))) \
            | frozenset(n.var for n in inner if isinstance(n, ast.ForEach))
        node.emits = any(isinstance(n, ast.Emit) for n in inner)
        node.writes = bool(node.targets) or node.emits
        node.branches = node.branching = node.lazy_ok = False
        node.fresh = None
        node.key = self._key_names(live_after)
        # whatever it reads anywhere is read as a plain value (independent lists are expanded first)
        node.strict, node.attr = free_names(tuple(n for n in inner if isinstance(n, ast.Node)
                                                  and not isinstance(n, ast.Statement))), set()
        return node

    def _compound(self, s, live_after: set):
        if isinstance(s, ast.If):
            node = _If()
            node.key, node.pos = self._key_names(live_after), s.pos
            branches = []
            live_in = set() if any(b.condition is None for b in s.branches) else set(live_after)
            conds: set = set()
            for b in s.branches:
                if b.condition is not None:
                    conds |= free_names(b.condition)
                block, inner = self._block(b.body, live_after)
                live_in |= inner
                branches.append((self.parts[id(b)], b.condition.pos if b.condition is not None else b.pos, block))
            node.branches = tuple(branches)
            node.strict, node.attr = conds, set()
            node.random = any(self._random(b.condition) for b in s.branches if b.condition is not None)
            node.branching = node.random or any(n.branching for _, _, block in branches for n in block.nodes)
            # conditions reading only arguments never assigned (and catalogues): one answer for every state
            node.same = not node.random and conds <= (self.fixed | self.globals)
            return node, live_in | conds
        if isinstance(s, ast.ForEach):
            node = _For()
            node.source, node.var, node.pos = self.parts[("source", id(s))], s.var, s.pos
            node.key = self._key_names(live_after)
            head = set(live_after)
            while True:
                body, inner = self._block(s.body, head)
                new = set(live_after) | (inner - {s.var})
                if new == head:
                    break
                head = new
            node.body, node.head_key = body, self._key_names(head)
            node.strict, node.attr = free_names(s.source), set()
            node.branching = self._random(s)
            accs = [a for a in _accumulators(s) if a in node.head_key.names]
            node.acc = accs[0] if len(accs) == 1 else None
            node.acc_key = Key(tuple(n for n in node.head_key.names if n != node.acc), self.rolls, self.readings)
            return node, head | free_names(s.source)
        target = _defines(s)
        mapped = self._map(s, live_after)
        if mapped is not None:
            return mapped, (live_after - ({target} if target else set())) | _reads(s)
        node = _Leaf()
        fn, node.pos = self._compiled(s), s.pos
        node.writes = target is not None or isinstance(s, ast.Emit)
        node.emits = isinstance(s, ast.Emit)
        target_dead = target if target in self.dead else None
        emit_dead = s.name if isinstance(s, ast.Emit) and self.demand is not ALL and s.name not in self.demand \
            else None
        # a value nothing will ever tell apart, or a result field nobody asks for, is set to DEAD (without
        # working it out when that cannot fail)
        dead = target_dead if target_dead is not None else (EMIT, emit_dead) if emit_dead is not None else None
        fn = self._reused(s, fn) if dead is None or not self._safe(s) else None
        node.steps = ((fn, dead, isinstance(s, ast.Return)),)
        node.fn = _sequence(node.steps)
        node.targets = frozenset((target,)) if target else frozenset()
        node.branches = node.branching = self._random(s)
        node.key = self._key_names(live_after)
        node.strict, node.attr = _strictness(s)
        node.lazy_ok = _lazy_call(s, self.ruleset)
        # a roll, or a call's result, into a live variable: the states one state branches into all differ there
        node.fresh = target if node.branches and target in node.key.set and (
            isinstance(s, ast.Roll) or (isinstance(s, (ast.Let, ast.Set)) and isinstance(s.value, ast.Call))) \
            else None
        if isinstance(s, (ast.Return, ast.Fail, ast.Refuse)):
            return node, _reads(s)
        return node, (live_after - ({target} if target else set())) | _reads(s)


    def _reused(self, s, fn):
        """A ``let``, ``set`` or ``return`` whose value reads only arguments never assigned (and catalogues):
        every state holds the very same values there, so it is worked out once per those values and
        reused, its steps charged on every reuse (when they would run out, it runs, for its own error)."""
        value = getattr(s, "value", None)
        if not isinstance(s, (ast.Let, ast.Set, ast.Return)) or value is None or \
                isinstance(value, (ast.Literal, ast.Name)) or _name_of(value)[0] is not None or self._random(s):
            return fn
        names = free_names(value)
        if not names <= self.fixed | self.globals:
            return fn
        return _reuse(fn, tuple(sorted(names & self.fixed)), None if isinstance(s, ast.Return) else s.name)

    def _untraced(self):
        """This plan's compiler of untraced closures (the ones ``simulate`` runs: same results, errors and
        steps as the traced ones, less work), set for this procedure; it compiles one statement at a time."""
        if self._compiler is None:
            from ..compiling.compiler import Compiler
            c = self._compiler = Compiler(self.ruleset)
            c.enter(self.proc)
            c.rolls_may_hide = getattr(self.ruleset, "rolls_may_hide", True)
            c.untraced = True
        return self._compiler

    def _compiled(self, s):
        """A statement's untraced closure (a note, which does nothing untraced, keeps its traced one)."""
        fn = self._untraced().statement(s)
        return fn if fn is not None else self.parts[id(s)]

    def _safe(self, s) -> bool:
        """Whether a statement's value cannot fail: a literal, a variable set earlier on every way here, or a
        roll's original, final, doubles, dice or modifier (of a name only ever rolled into)."""
        value = s.value
        if isinstance(value, ast.Literal):
            return True
        name, attr = _name_of(value)
        if name is None or name not in self.assigned.get(id(s), ()):
            return False
        if not attr:
            return True
        return name in self.only_rolled and value.name in ("original", "final", "doubles", "dice", "modifier")

    def _random(self, s) -> bool:
        """Whether a statement or expression has a branch point (a roll, a choice, a call that rolls)."""
        return any(isinstance(n, (ast.Roll, ast.Choose)) or
                   (isinstance(n, ast.Call) and not self.ruleset.procedures[n.procedure].deterministic)
                   for n in walk((s,)))

    def _map(self, s, live_after: set):
        """A statement that maps each item of a list (kept factored if the list is independent), or None."""
        value = getattr(s, "value", None)
        if not isinstance(s, (ast.Let, ast.Emit)) or not isinstance(value, ast.Aggregate) or value.name != "list" \
                or value.condition is not None or value.key is not None:
            return None
        source_name, _ = _name_of(value.source)
        if source_name is None or any(isinstance(n, (ast.Roll, ast.Choose)) or (isinstance(n, ast.Call) and not
                                      self.ruleset.procedures[n.procedure].deterministic)
                                      for n in walk((value.element,))):
            return None
        c = self._untraced()
        node = _Map()
        node.fn, node.pos = self._compiled(s), s.pos
        node.source, node.element = c.expr(value.source), c.expr(value.element)
        node.var, node.name, node.is_emit, node.source_name = value.var, s.name, isinstance(s, ast.Emit), source_name
        node.dead = (s.name in self.dead) if not node.is_emit else \
            (self.demand is not ALL and s.name not in self.demand)
        node.key = self._key_names(live_after)
        node.strict, node.attr = free_names(value.element) - {value.var}, set()
        node.pure = node.strict <= self.globals
        node.branching = True       # its source may be expanded into many states
        return node


def _reuse(fn, reads: tuple, name: str | None):
    """``fn`` (a ``let``/``set`` into ``name``, or a ``return`` when ``name`` is None) reused per identity of
    the values it reads (each entry keeps them alive), within one enumeration (the memo is the dice's)."""
    one = reads[0] if len(reads) == 1 else None

    def reuse(env, rt):
        try:
            values = (env[one],) if one is not None else tuple([env[n] for n in reads])
        except KeyError:
            return fn(env, rt)
        key = (reuse, rt.depth, id(values[0])) if one is not None else (reuse, rt.depth, *map(id, values))
        memo = rt.dice.once
        found = memo.get(key)
        if found is not None:
            left = rt.steps_left - found[2]
            if left >= 0:
                rt.steps_left = left
                if name is None:
                    return found[1]
                env[name] = found[1]
                return None
        steps = rt.steps_left
        signal = fn(env, rt)
        memo[key] = (values, signal if name is None else env[name], steps - rt.steps_left)
        return signal
    return reuse


def _definitely_set(statements, before: set, out: dict) -> None:
    """For each statement (by id), the variables every way to it has set (a branch's or a loop's own
    assignments count only inside it)."""
    now = set(before)
    for s in statements:
        out[id(s)] = frozenset(now)
        if isinstance(s, ast.If):
            for b in s.branches:
                _definitely_set(b.body, now, out)
        elif isinstance(s, ast.ForEach):
            _definitely_set(s.body, now | {s.var}, out)
        name = _defines(s)
        if name is not None:
            now.add(name)


def _accumulators(loop) -> list:
    """Variables a loop body only ever extends by one item (``set x = x + [item]``) and reads nowhere else."""
    sets: dict = {}
    reads: dict = {}
    for n in walk(loop.body):
        if isinstance(n, (ast.Let, ast.Roll, ast.Choose)):
            sets[n.name] = None          # redefined: not an accumulator
        elif isinstance(n, ast.Set):
            v = n.value
            ok = isinstance(v, ast.Binary) and v.op == "+" and isinstance(v.left, ast.Name) \
                and v.left.name == n.name and isinstance(v.right, ast.ListExpr) and len(v.right.items) == 1
            if sets.get(n.name, 0) is not None:
                sets[n.name] = (sets.get(n.name) or 0) + 1 if ok else None
        elif isinstance(n, ast.Name):
            reads[n.name] = reads.get(n.name, 0) + 1
    return sorted(x for x, count in sets.items() if count is not None and reads.get(x, 0) == count
                  and x != loop.var)


# ---- the enumerator ------------------------------------------------------------------------------------

class StateEnumerator:
    """Exact distributions of procedure results, by live states (see the module docstring)."""

    def __init__(self, ruleset, choices: dict, budget: int, demands: dict, var_demands: dict,
                 factor: bool = True, work: int | None = None, share: bool = True):
        from .paths import (
            DEFAULT_WORK,
            RUN_COST,
            PathDice,
            Replay,
            Stop,
            has_list_choices,
            outcome_key,
        )
        self._PathDice, self._key, self._Replay, self._Stop = PathDice, outcome_key, Replay, Stop
        self.list_choices = has_list_choices(choices)
        if not getattr(ruleset, "rolls_may_hide", True):
            self._key = _args_key       # rolls sit only in variables: an argument is one, or holds none
        self.work, self.work_limit, self.run_cost = 0, work or DEFAULT_WORK, RUN_COST
        self.ruleset = ruleset
        self.choices = choices
        self.budget = budget
        self.demands = demands
        self.var_demands = var_demands
        self.factor = factor
        self.share = share      # calls differing only in fields passed on share a distribution
        self.memo: dict = {}
        self.once: dict = {}     # statements reading only never-assigned arguments, per those values (_reuse)
        self.layouts: dict = {}  # where the holes of shared distributions' records are (passed_on.put_back)
        self.sharing: dict = {}  # whether a call's records may be shared (passed_on.may_share)
        self.record_lists: list = []     # the question's lists of records (set by the first distribution)
        self.memo_hits = 0
        self.lazy_made = 0      # independent lists made so far (results made without any hold none)
        self.runs = 0
        self.peak = 0
        self.plans: dict = {}
        self.rolls_may_hide = getattr(ruleset, "rolls_may_hide", True)

    def plan(self, proc) -> Plan:
        plan = self.plans.get(proc.name)
        if plan is None:
            demand = self.demands.get(proc.name, ALL)
            var_demands = self.var_demands.get(proc.name)
            # a compiled ruleset does not change: plans are kept on it, per demand
            kept = self.ruleset.__dict__.setdefault("_state_plans", {})
            key = (proc.name, demand, id(var_demands))
            found = kept.get(key)
            if found is None or found[0] is not var_demands:
                found = kept[key] = (var_demands, Plan(self.ruleset, proc, demand, var_demands))
            plan = self.plans[proc.name] = found[1]
        return plan

    def distribution(self, proc, args: dict, given: list | None = None, depth: int = 0) -> dict:
        """Every outcome of ``proc`` on ``args``: value -> [numerator, denominator], values projected to demand.

        Values may hold independent lists (odds/independent.py) when factoring is on.
        """
        if depth == 0 and not self.record_lists:
            self.record_lists = record_lists(args)
        plan = self.plan(proc)
        dice = self._PathDice(list(given or []), plan.readings)
        dice.once = self.once
        rt = Runtime(self.ruleset, dice, None, self.choices)
        rt.call_hook = self._hook(rt)
        rt.depth = depth + 1
        outcomes: dict = {}
        env = dict(args)
        env[EMIT] = {}
        states = [State(env, 1, 1, 0, rt.limits["steps"], ())]
        try:
            if proc.fill_defaults is not None:
                if plan.random_defaults:
                    states = self._run(proc.fill_defaults, states, outcomes, rt, plan, True, False)
                else:       # one state on its own fresh locals: filled in place
                    states = self._run_plain(proc.fill_defaults, states, outcomes, rt, plan, False, False)
            for name in plan.dead_params:
                for st in states:
                    st.env[name] = DEAD
            states = self._block(plan.body, states, outcomes, rt, plan)
        finally:
            # the hook and the runtime refer to each other: without this, each distribution's runtime (and
            # through its hook this enumerator, with every memoised distribution) would wait for the
            # garbage collector instead of going as soon as it is done
            rt.call_hook = None
        for st in states:
            self._outcome(outcomes, plan, _result(None, st.env[EMIT], plan), st.num, st.den)
        return outcomes

    def _outcome(self, outcomes: dict, plan: Plan, value, num: int, den: int) -> None:
        """Add an outcome's weight: a result already projected to the plan's demand (``_result``), or a stop.
        Weights are kept as [numerator, denominator] cells, added to in place (the value is hashed once)."""
        cell = [num, den]
        found = outcomes.setdefault(value, cell)
        if found is not cell:
            if found[1] == den:
                found[0] += num
            else:
                n, d = found[0] * den + num * found[1], found[1] * den
                g = math.gcd(n, d)
                found[0], found[1] = n // g, d // g

    def _hook(self, rt: Runtime):
        memo = self.memo
        Replay, Stop, list_choices = self._Replay, self._Stop, self.list_choices

        def call(procedure, args, pos):
            dice = rt.dice
            if procedure.deterministic or dice.given_used < len(dice.given) or list_choices:
                return rt.invoke(procedure, args)
            key = (procedure.name, self._key(args))
            entry = memo.get(key)
            if entry is None:
                entry = memo[key] = self._entry(procedure, args, rt.depth + 1)
            else:
                self.memo_hits += 1
            dist, lazy, plain = entry
            if lazy:
                if dice.lazy_ok:
                    dice.got_lazy = True
                    self.lazy_made += 1
                else:      # this call's result is read at once: every concrete result, with its weight
                    plain = memo[key][2]
                    if plain is None:
                        plain = _plain(dist, self.budget)
                        memo[key] = dist, lazy, plain
                    dist = plain
            value = dice.branch(dist)
            if value.__class__ is Stop:
                raise Replay(value)
            return value
        return call

    def _entry(self, procedure, args: dict, depth: int, share: bool = True) -> tuple:
        """A call's memo entry: (distribution sorted most likely first, holds independent lists, expanded).

        Calls that differ only in record fields the procedure passes on share one distribution
        (odds/passed_on.py), computed with holes in those fields, which each call fills with its own values.
        """
        spec = passed_on(self.ruleset, procedure) if self.share and share else None
        if spec and not self._may_share(procedure, args, spec):
            spec = None
        if spec:
            found = abstracted(procedure.name, args, spec)
            if found is not None:
                shared_args, values = found
                key = (procedure.name, self._key(shared_args))
                shared = self.memo.get(key)
                if shared is None:
                    try:
                        # (its arguments are abstracted already: nothing more to share)
                        shared = self.memo[key] = self._entry(procedure, shared_args, depth, share=False)
                    except Observed as e:
                        if e.args[0][0] != procedure.name:
                            raise       # a hole of a caller's: the caller gives up, not this call
                        forget(self.ruleset, procedure)
                        shared = None
                else:
                    self.memo_hits += 1
                if shared is not None:
                    dist, lazy, _ = shared
                    acc: dict = {}
                    for v, n, d in dist:
                        v = put_back(v, values, self.layouts)
                        found = acc.get(v)
                        acc[v] = (n, d) if found is None else _add(found, n, d)
                    dist = [(v, n, d) for v, (n, d) in acc.items()]
                    if len(dist) < len(shared[0]):     # values met: sorted again (else still in order)
                        dist.sort(key=_likeliest)
                    return dist, lazy, None
        made = self.lazy_made
        found = self.distribution(procedure, args, depth=depth)
        dist = sorted(((v, n, d) for v, (n, d) in found.items()), key=_likeliest)
        # results hold independent lists only if some were made (here or in a call) while it ran
        return dist, made != self.lazy_made and any(has_lazy(v) for v, _, _ in dist), None

    def _may_share(self, procedure, args: dict, spec: dict) -> bool:
        """passed_on.may_share, once per procedure and record arguments (by identity: the entry keeps them)."""
        records = tuple([args.get(name) for name in spec])
        key = (procedure.name, *map(id, records))
        found = self.sharing.get(key)
        if found is None or not all(map(is_, found[0], records)):
            found = self.sharing[key] = (records, may_share(procedure.name, args, spec, self.record_lists))
        return found[1]

    # -- running statements over states
    def _block(self, block: _Block, states: list, outcomes: dict, rt, plan: Plan) -> list:
        cost = block.cost
        for st in states:
            st.steps -= cost
            if st.steps < 0:
                rt.out_of_steps(block.first)
        # ``apart``: variables the states are known to differ in pairwise, so a merge would find nothing to
        # merge (None: not known). One state differs from no other; the states one state branches into by a
        # roll or a call into a live variable differ there. After a merge the states differ in their whole
        # key, which also holds their emits, dice given so far and loop positions (``loose``): then any emit,
        # roll or call may make two of them alike again.
        apart, loose = (frozenset() if len(states) == 1 else None), False
        fused = None
        for node, before, after, then in block.steps:
            if node is fused:       # already run with the branch point before it
                continue
            if before and len(states) > 1:
                if apart is not None and apart <= before.set:
                    self._count(len(states), node)
                else:
                    states = self._merge(states, before, node)
                    apart, loose = before.set, True
            if self.lazy_made and (node.strict or node.attr):      # independent lists exist: read ones expand
                expanded = self._concrete(states, node.strict, node.attr)
                if expanded is not states:
                    states, apart = expanded, None
            cls = node.__class__
            if cls is _Leaf:
                if node.branches:
                    fresh = node.fresh
                    if apart is not None:
                        apart = apart | {fresh} if fresh is not None and fresh not in apart and not loose else None
                    lazy_ok = rt.dice.lazy_ok = node.lazy_ok and self.factor
                    if then is not None and apart is not None and apart <= node.key.set and not lazy_ok \
                            and not any(st.lazy for st in states):
                        # the states it makes stay apart, and hold no independent list: the next leaf runs on
                        # each as it is made (what it does to ``apart``, as below)
                        states = self._run(node.fn, states, outcomes, rt, plan, node.writes, node.emits,
                                           targets=node.targets, then=then)
                        self._count(self.made, node)
                        if not apart.isdisjoint(then.targets) or (loose and then.emits):
                            apart = None
                        fused = then
                        if not states:
                            return states
                        continue
                    states = self._run(node.fn, states, outcomes, rt, plan, node.writes, node.emits,
                                       targets=node.targets)
                    rt.dice.lazy_ok = False
                else:
                    states = self._run_plain(node.fn, states, outcomes, rt, plan, node.writes, node.emits,
                                             node.targets)
                    if apart is not None and (not apart.isdisjoint(node.targets) or (loose and node.emits)):
                        apart = None        # a value they differed in may have been overwritten
            elif cls is _If:
                states = self._if(node, states, outcomes, rt, plan)
                if not self.if_idle:
                    apart = None
            elif cls is _For:
                states, apart = self._for(node, states, outcomes, rt, plan), None
            else:
                states, apart = self._map(node, states, outcomes, rt, plan), None
            if not states:
                return states
            if after and len(states) > 1:
                if apart is not None and apart <= node.key.set:
                    self._count(len(states), node)
                else:
                    states = self._merge(states, node.key, node)
                    apart, loose = node.key.set, True
        return states

    def _concrete(self, states: list, strict, attr) -> list:
        """States whose independent lists a node is about to read, expanded into plain values."""
        out = None
        for i, st in enumerate(states):
            if not st.lazy:
                if out is not None:
                    out.append(st)
                continue
            env = st.env
            need = [n for n in st.lazy if n in strict or (n in attr and env.get(n).__class__ is Independent)]
            if not need:
                if out is not None:
                    out.append(st)
                continue
            if out is None:
                out = states[:i]
            out.extend(self._expanded(st, need))
        return states if out is None else out

    def _expanded(self, st: State, need: list) -> list:
        """One state per concrete value of the independent lists in ``need``, with its weight.

        The same random list may sit in several places (a variable, its copy, an emitted field, a longer
        list built on it): every place that shares a random item with the lists read gets the same
        concrete items, so expanding one never draws another's items again.
        """
        env = st.env
        held: dict = {}                     # every independent list in the state, by identity
        for name, v in env.items():
            for x in (v.values() if name == EMIT else (v,)):
                _collect(x, held)
        chains = {k: _chain(ind) for k, ind in held.items()}
        wanted: dict = {}
        for n in need:
            _collect(env[n], wanted)
        nodes = {id(node): node for k in wanted for node in chains[k]}
        grown = True
        while grown:                        # lists sharing a random item with those expanded go with them
            grown = False
            for k, chain in chains.items():
                if k not in wanted and any(id(node) in nodes for node in chain):
                    wanted[k] = held[k]
                    for node in chain:
                        nodes[id(node)] = node
                    grown = True
        order = list(nodes.values())
        count = 1
        for node in order:
            count *= len(node.factor)
        check_cases(count, self.budget)
        self._charge(count * self.run_cost)
        out = []
        for combo in product(*(node.factor for node in order)):
            item = {id(node): x for node, (x, _) in zip(order, combo)}
            p = Fraction(st.num, st.den)
            for _, q in combo:
                p *= q
            concrete = {k: tuple(item[id(node)] for node in chains[k]) for k in wanted}
            e = {}
            for name, v in env.items():
                if name == EMIT:
                    e[name] = {f: _put(x, concrete) for f, x in v.items()}
                else:
                    e[name] = _put(v, concrete)
            lazy = frozenset(n for n in st.lazy if has_lazy(e[n]))
            out.append(State(e, p.numerator, p.denominator, st.given, st.steps, st.loops, lazy, st.origin))
        return out

    def _charge(self, work: int) -> None:
        """Count work toward the limit on the whole question ('odds work')."""
        self.work += work
        if self.work > self.work_limit:
            from .paths import work_error
            raise work_error(self.work_limit)

    def _run_plain(self, fn, states, outcomes, rt, plan, writes, emits, targets=None) -> list:
        """Run a closure without branch points on every state: each state goes on as one state
        (updated in place: a state belongs to one list at a time), ends with a result, or stops."""
        out = []
        append = out.append
        runs = work = 0
        run_cost = self.run_cost
        for st in states:
            steps = rt.steps_left = st.steps
            env = st.env
            if writes:
                env = env.copy()
                if emits:
                    env[EMIT] = env[EMIT].copy()
            try:
                signal = fn(env, rt)
            except Exception as e:      # a stop (refusal, unknown cell, fail) is an outcome
                self._outcome(outcomes, plan, _stop(e), st.num, st.den)
                continue
            runs += 1
            left = rt.steps_left
            work += steps - left + run_cost
            if work > _CHARGE_EVERY:       # a long node is charged as it goes (the limit stops it early)
                self._charge(work)
                work = 0
            if signal is None:
                if st.lazy and writes:
                    st.lazy = _still_lazy(env, st.lazy, targets)
                st.env = env
                st.steps = left
                append(st)
            else:
                self._outcome(outcomes, plan, _result(signal[0], env[EMIT], plan), st.num,
                              st.den)
        self.runs += runs
        self._charge(work)      # once per node: the limit is still met within one node's work
        return out

    def _run(self, fn, states, outcomes, rt, plan, writes, emits, collect=None, targets=None, then=None) -> list:
        """Run one closure on every state, every way its branch points can go (an odometer over them).

        ``then``: a leaf without branch points run on each state made, as ``_run_plain`` would run it (the
        states made are counted in ``self.made``)."""
        dice = rt.dice
        out = []
        stop = _stop
        runs = work = made = 0
        run_cost = self.run_cost
        if then is not None:
            then_fn, copy_env, copy_emits = then.fn, then.writes and not writes, then.emits and not emits
        for st in states:
            path: list = []
            steps, num, den, senv = st.steps, st.num, st.den, st.env
            while True:
                dice.given_used, dice.path, dice.at, dice.num, dice.den = st.given, path, 0, 1, 1
                dice.got_lazy = False
                rt.steps_left = steps
                env = senv
                if writes:
                    env = env.copy()
                    if emits:
                        env[EMIT] = env[EMIT].copy()
                try:
                    signal = fn(env, rt)
                except Exception as e:      # a stop (refusal, unknown cell, fail) is an outcome
                    self._outcome(outcomes, plan, stop(e), num * dice.num, den * dice.den)
                    signal = _STOPPED
                runs += 1
                work += steps - rt.steps_left + run_cost
                if collect is not None:
                    if signal is not _STOPPED:
                        collect.append((signal, State(env, num * dice.num, den * dice.den, dice.given_used,
                                                      rt.steps_left, st.loops, st.lazy, st.origin)))
                elif signal is None and then is not None:      # (no independent lists here)
                    made += 1
                    if copy_env:
                        env = env.copy()
                    if copy_emits:
                        env[EMIT] = env[EMIT].copy()
                    left = rt.steps_left
                    try:
                        signal = then_fn(env, rt)
                    except Exception as e:      # a stop (refusal, unknown cell, fail) is an outcome
                        self._outcome(outcomes, plan, stop(e), num * dice.num, den * dice.den)
                    else:
                        runs += 1
                        work += left - rt.steps_left + run_cost
                        if signal is None:
                            out.append(State(env, num * dice.num, den * dice.den, dice.given_used, rt.steps_left,
                                             st.loops, st.lazy, st.origin))
                        else:
                            self._outcome(outcomes, plan, _result(signal[0], env[EMIT], plan),
                                          num * dice.num, den * dice.den)
                elif signal is None:
                    lazy = st.lazy
                    if dice.got_lazy or targets is None:
                        if (lazy and writes) or dice.got_lazy:
                            lazy = _still_lazy(env, lazy, targets)
                    elif lazy and writes:   # a roll or a plain result into its targets: none holds a list
                        lazy = lazy - targets
                    out.append(State(env, num * dice.num, den * dice.den, dice.given_used, rt.steps_left,
                                     st.loops, lazy, st.origin))
                elif signal is not _STOPPED:
                    self._outcome(outcomes, plan, _result(signal[0], env[EMIT], plan),
                                  num * dice.num, den * dice.den)
                if work > _CHARGE_EVERY:    # charged as it goes (one state's odometer can be long), else at the end
                    self._charge(work)
                    work = 0
                at = dice.at
                if at == 1 and len(path) == 1:    # one branch point (a roll, a call): its next option
                    path[0] += 1
                    if path[0] >= dice.widths[0]:
                        break
                elif at == 0 or not dice.advance():
                    break
        self.runs += runs
        self.made = made
        self._charge(work)
        return out

    def _if(self, node: _If, states, outcomes, rt, plan) -> list:
        branches = node.branches

        def which(env, rt_):
            for i, (cond, pos, _) in enumerate(branches):
                if cond is None:
                    return i
                c = cond(env, rt_)
                if c is True:
                    return i
                if c is not False:
                    truth(c, pos)
            return -1
        groups: dict = {}
        if node.random:
            picked: list = []
            self._run(which, states, outcomes, rt, plan, False, False, collect=picked)
            for i, st in picked:
                groups.setdefault(i, []).append(st)
        elif node.same and len(states) > 1:      # one answer for all: the same conditions on the same values
            first = min(states, key=_steps_left)     # the one a step limit would stop first
            steps = rt.steps_left = first.steps
            try:
                i = which(first.env, rt)
            except Exception as e:      # a stop (refusal, unknown cell, fail) is an outcome
                stopped = _stop(e)
                for st in states:
                    self._outcome(outcomes, plan, stopped, st.num, st.den)
                states = []
            else:
                self.runs += len(states)
                self._charge((steps - rt.steps_left + self.run_cost) * len(states))
                groups[i] = list(states)
        else:       # conditions without branch points: one answer per state
            stop = _stop
            work = runs = 0
            run_cost = self.run_cost
            for st in states:
                steps = rt.steps_left = st.steps
                try:
                    i = which(st.env, rt)
                except Exception as e:      # a stop (refusal, unknown cell, fail) is an outcome
                    self._outcome(outcomes, plan, stop(e), st.num, st.den)
                    continue
                runs += 1
                work += steps - rt.steps_left + run_cost
                if work > _CHARGE_EVERY:
                    self._charge(work)
                    work = 0
                found = groups.get(i)
                if found is None:
                    groups[i] = [st]
                else:
                    found.append(st)
            self.runs += runs
            self._charge(work)
        out = groups.pop(-1, [])
        self.if_idle = not groups and not node.random     # no state took a branch: each is as it was
        for i, group in groups.items():
            out.extend(self._block(branches[i][2], group, outcomes, rt, plan))
        return out

    def _for(self, node: _For, states, outcomes, rt, plan) -> list:
        source, var, pos = node.source, node.var, node.pos
        limit = rt.limits["loop"]

        def items_of(env, rt_):
            items = source(env, rt_)
            if not isinstance(items, tuple):
                raise AdjudicationError(f"'for each' needs a list, not {type_name(items)} {show(items)}", pos)
            if len(items) > limit:
                raise LimitError(f"this loop would run {len(items)} times, more than the limit of {limit} "
                                 "(limit 'loop')", pos)
            return items
        started: list = []
        self._run(items_of, states, outcomes, rt, plan, False, False, collect=started)
        active = []
        for items, st in started:
            st.loops = st.loops + ((items, 0),)
            st.origin = st.origin + (-1,)
            active.append(st)
        acc = node.acc if self.factor else None
        finished = []
        while active:
            round_ = []
            parents = []
            for st in active:
                items, i = st.loops[-1]
                if i >= len(items):
                    st.loops, st.origin = st.loops[:-1], st.origin[:-1]
                    finished.append(st)
                    continue
                env = st.env.copy()
                env[var] = items[i]
                lazy = st.lazy
                if acc is not None:
                    held = env.get(acc)
                    if held.__class__ is tuple and held:
                        held = env[acc] = Independent.of(held)
                        self.lazy_made += 1
                        lazy = lazy | {acc}
                    parents.append(held)
                round_.append(State(env, st.num, st.den, st.given, st.steps, st.loops[:-1] + ((items, i + 1),),
                                    lazy, st.origin[:-1] + (len(round_),)))
            if not round_:
                break
            active = self._block(node.body, round_, outcomes, rt, plan)
            if acc is not None and active:
                active = self._factor(active, acc, node.acc_key, parents)
            if len(active) > 1:
                active = self._merge(active, node.head_key, node)
        if acc is not None:
            for st in finished:     # nothing random went in: a plain list again
                held = st.env.get(acc)
                if held.__class__ is Independent:
                    plain = held.fixed()
                    if plain is not None:
                        st.env[acc] = plain
                        st.lazy = st.lazy - {acc}
        return finished

    def _factor(self, states: list, acc: str, names: Key, parents: list) -> list:
        """The states of one round that came from the same state and differ only in the item the round
        appended to ``acc``: one state, whose list gains a factor (that item's distribution)."""
        groups: dict = {}
        out = []
        for st in states:
            origin = st.origin[-1]
            if origin < 0:
                out.append(st)
                continue
            groups.setdefault((origin, self._state_key(st, names)), []).append(st)
        for (origin, _), members in groups.items():
            if len(members) == 1:
                out.extend(members)
                continue
            before = parents[origin]
            items = []
            for m in members:
                held = m.env.get(acc)
                if before.__class__ is tuple:     # was empty
                    item = held[0] if held.__class__ is tuple and len(held) == 1 else _MISSING
                elif held.__class__ is Independent and held.prev is before and len(held.factor) == 1:
                    item = held.factor[0][0]
                else:
                    item = _MISSING
                # an item read from variables holding no independent list (but the list itself) holds none
                if item is _MISSING or (self.rolls_may_hide and holds_roll(item)) or \
                        (not m.lazy <= {acc} and has_lazy(item)):
                    break
                items.append((item, m.num, m.den))
            else:
                # weights over one common denominator: integer sums, one Fraction per distinct item
                common = math.lcm(*{d for _, _, d in items})
                scaled: dict = {}       # item -> its weights (each item hashed once)
                for item, n, d in items:
                    scaled.setdefault(item, []).append(n * (common // d))
                sums = [(item, ns[0] if len(ns) == 1 else sum(ns)) for item, ns in scaled.items()]
                total = sum([n for _, n in sums])
                first = members[0]
                self.lazy_made += 1
                first.env[acc] = Independent(before if before.__class__ is Independent else None,
                                             tuple([(item, Fraction(n, total)) for item, n in sums]))
                g = math.gcd(total, common)
                first.num, first.den = total // g, common // g
                first.lazy = first.lazy | {acc}
                out.append(first)
                continue
            out.extend(members)
        return out

    def _map(self, node: _Map, states, outcomes, rt, plan) -> list:
        """``list(f(x) for x in xs)``: an independent ``xs`` is mapped factor by factor; else run as written."""
        out, plain = [], []
        source, element, var, name = node.source, node.element, node.var, node.name
        # an element reading nothing but its item gives the same image of the same item in every state
        # (kept with the steps it took, taken again on each reuse; by identity: the entry keeps the item)
        images: dict | None = {} if node.pure else None
        for st in states:
            env = st.env
            held = None
            if node.source_name in st.lazy:
                try:
                    held = source(env, rt)
                except Exception:
                    held = None
            if held.__class__ is not Independent:
                plain.append(st)
                continue
            saved = env.get(var, _MISSING)

            def image(item):
                if images is not None:
                    found = images.get(id(item))
                    if found is not None and found[0] is item and rt.steps_left >= found[2]:
                        rt.steps_left -= found[2]
                        return found[1]
                env[var] = item
                steps = rt.steps_left
                value = element(env, rt)
                if images is not None:
                    images[id(item)] = (item, value, steps - rt.steps_left)
                return value
            try:
                rt.steps_left = st.steps
                mapped = map_items(held, image)
            except Exception:
                plain.append(st)    # an item the element cannot take: expanded, it is an outcome of its own
                continue
            finally:
                if saved is _MISSING:
                    env.pop(var, None)
                else:
                    env[var] = saved
            e = env.copy()
            lazy = st.lazy
            if node.is_emit:
                e[EMIT] = e[EMIT].copy()
                e[EMIT][name] = DEAD if node.dead else mapped
            else:
                e[name] = DEAD if node.dead else mapped
                lazy = lazy | {name} if not node.dead else lazy - {name}
            out.append(State(e, st.num, st.den, st.given, st.steps, st.loops, lazy, st.origin))
        if plain:
            plain = self._concrete(plain, {node.source_name}, set())
            out.extend(self._run(node.fn, plain, outcomes, rt, plan, True, node.is_emit))
        return out

    def _state_key(self, st: State, key: Key):
        env = st.env
        if self.rolls_may_hide:
            values = [env.get(n, _MISSING) for n in key.names]
            return (tuple([key_form(v) for v in values]), tuple([(k, key_form(v)) for k, v in env[EMIT].items()]),
                    st.given, st.loops)
        try:
            values = key.get(env) if key.get is not None else ()
        except KeyError:        # a variable not set on this path: told apart by its absence
            values = tuple([env.get(n, _MISSING) for n in key.names])
        else:
            if key.rolls and len(key.names) == 1:
                values = (values,)
        if key.rolls:   # rolls sit only in the variables they were rolled into (never in records, lists, emits)
            values = list(values)
            for i, read in key.rolls:
                v = values[i]
                if v.__class__ is Roll:
                    values[i] = ("roll", read(v)) if read is not None else v.frozen
            values = tuple(values)
        return values, tuple(env[EMIT].items()), st.given, st.loops

    def _merge(self, states: list, names: Key, node) -> list:
        """States that agree on every live value (and loop position, given dice, wanted emits) become one."""
        merged: dict = {}
        state_key = self._state_key
        for st in states:
            key = state_key(st, names)
            other = merged.setdefault(key, st)
            if other is not st:
                if other.den == st.den:
                    other.num += st.num
                else:
                    n, d = other.num * st.den + st.num * other.den, other.den * st.den
                    g = math.gcd(n, d)
                    other.num, other.den = n // g, d // g
                if st.steps < other.steps:
                    other.steps = st.steps
                if other.origin != st.origin and other.origin:
                    other.origin = other.origin[:-1] + (-1,)   # from two states: no longer one state's round
                if st.lazy != other.lazy:
                    other.lazy = other.lazy | st.lazy
        self._count(len(merged), node)
        return list(merged.values())

    def _count(self, count: int, node) -> None:
        """The live states after a node, against the budget (a merge that would find nothing is skipped)."""
        if count > self.peak:
            self.peak = count
            if count > self.budget:
                raise LimitError(f"exact odds would track more than {self.budget:,} live states ({count:,} at "
                                 f"line {node.pos.line} of {node.pos.file})", node.pos,
                                 hint=self.hint())

    def hint(self) -> str:
        return "group by fewer result fields (--by) so fewer states stay apart, use `umpire simulate` for an " \
               "estimate, or raise --budget"


def _likeliest(outcome: tuple) -> float:
    """Sort key of a distribution's (value, num, den): most likely first."""
    return -outcome[1] / outcome[2]


def _result(value, emitted: dict, plan):
    """``result_value`` projected to the plan's demand (demand.project), the record built once: the fields
    nobody needs are set to DEAD in one update (per field names, kept with the plan)."""
    demand = plan.demand
    if demand is ALL:
        return result_value(value, emitted)
    if not emitted:
        if value.__class__ is not Record or value.keys() <= demand:
            return value
        out = Record(value)
    else:
        out = Record(emitted)
        if value is not None:
            if value.__class__ is Record:
                dict.update(out, value)
            else:
                dict.__setitem__(out, "value", value)
    names = tuple(out)
    unwanted = plan.unwanted.get(names)
    if unwanted is None:
        if len(plan.unwanted) >= 256:
            plan.unwanted.clear()
        unwanted = plan.unwanted[names] = {k: DEAD for k in names if k not in demand}
    if unwanted:
        dict.update(out, unwanted)
    return out


def _args_key(args: dict) -> tuple:
    """A call's memo key when no roll can sit inside a record or list (``outcome_key``, quicker)."""
    return tuple(sorted([(k, v.frozen) if v.__class__ is Roll else (k, v) for k, v in args.items()]))


def _still_lazy(env: dict, lazy: frozenset, targets: frozenset | None) -> frozenset:
    """The variables holding independent lists after a node ran: only those it assigned (``targets``; None
    when not known) can have become one, and those that held one may have been overwritten."""
    if targets is None:
        return frozenset(n for n, v in env.items() if n != EMIT and has_lazy(v))
    return frozenset(n for n in lazy | targets if has_lazy(env.get(n)))


def _own_env(env: dict, writes: bool, emits: bool) -> dict:
    """The locals a closure runs on: a copy if it writes (and of the emits if it emits), else the state's own."""
    if not writes:
        return env
    env = env.copy()
    if emits:
        env[EMIT] = env[EMIT].copy()
    return env


def _collect(value, found: dict) -> None:
    """Every independent list inside ``value`` (by identity) into ``found``."""
    cls = value.__class__
    if cls is Independent:
        found[id(value)] = value
    elif (cls is Record or cls is tuple) and has_lazy(value):
        for v in (value.values() if cls is Record else value):
            _collect(v, found)


def _chain(ind: Independent) -> list:
    """The list's items' nodes, first to last (a longer list built on another shares its nodes)."""
    out = []
    while ind is not None:
        out.append(ind)
        ind = ind.prev
    out.reverse()
    return out


def _put(value, concrete: dict):
    """``value`` with each independent list named in ``concrete`` (by identity) replaced by its items."""
    cls = value.__class__
    if cls is Independent:
        return concrete.get(id(value), value)
    if cls is Record and has_lazy(value):
        return Record([(k, _put(v, concrete)) for k, v in value.items()])
    if cls is tuple and has_lazy(value):
        return tuple([_put(v, concrete) for v in value])
    return value


def _add(found: tuple, num: int, den: int) -> tuple:
    if found[1] == den:
        return found[0] + num, den
    n, d = found[0] * den + num * found[1], found[1] * den
    g = math.gcd(n, d)
    return n // g, d // g


def _plain(dist: list, limit: int) -> list:
    """A distribution with its independent lists expanded (for a caller that reads the result at once)."""
    acc: dict = {}
    for v, n, d in dist:
        if has_lazy(v):
            for w, q in expand(v, limit):
                acc[w] = acc.get(w, 0) + Fraction(n, d) * q
        else:
            acc[v] = acc.get(v, 0) + Fraction(n, d)
    return sorted(((v, p.numerator, p.denominator) for v, p in acc.items()), key=_likeliest)


def _stop(e):
    from .paths import stop_outcome
    return stop_outcome(e)
