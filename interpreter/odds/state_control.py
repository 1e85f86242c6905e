"""Compound statements over states (odds/states.py): ``if`` splits the states by branch, ``for each`` moves
them one item per round (factoring independent accumulators), a map runs over a list's items, and states that
agree on everything live merge."""

from __future__ import annotations

import math
from fractions import Fraction
from itertools import repeat
from operator import is_, itemgetter

from ..analysis.caching import EMIT
from ..errors import AdjudicationError, LimitError
from ..model.values import DEAD, Roll, holds_roll, key_form, show, type_name
from .held import MISSING, Held, combined, get, outside
from .independent import Independent, has_lazy, lists_in, map_items
from .state_host import EnumeratorHost
from .state_nodes import Key, State, _For, _If, _Map
from .state_runs import _CHARGE_EVERY, _steps_left, _stop

_MISSING = object()

_FRACTIONS = 10_000
"""Most probabilities an enumeration keeps one object of (StateControl._fraction) before forgetting them."""


class _Canon:
    """Small numbers standing for values by their key form, within one merge: each distinct object is put in
    key form (``form``; None: the value itself) and hashed once, however many states hold it. Equal forms get
    the same number, so keys of numbers tell states apart exactly as keys of the forms would."""

    __slots__ = ("form", "by_id", "by_form")

    def __init__(self, form):
        self.form, self.by_id, self.by_form = form, {}, {}

    def __call__(self, value) -> int:
        found = self.by_id.get(id(value))
        if found is None:
            form = value if self.form is None else self.form(value)
            number = self.by_form.setdefault(form, len(self.by_form))
            found = self.by_id[id(value)] = (value, number)     # (the value kept, so its id stays its own)
        return found[1]


def _emits_form(value_form, held=frozenset()):
    """Emits as (name, number) pairs, each emitted value numbered by its key form (``value_form``) once: the
    states of a merge share most emitted values, though seldom the dict holding them. A field the merge holds
    (``held``) is keyed by its name alone."""
    number = _Canon(value_form)

    if held:
        def form_holding(emitted: dict) -> tuple:
            return tuple([(k, None if k in held else number(v)) for k, v in emitted.items()])
        return form_holding

    def form(emitted: dict) -> tuple:
        return tuple([(k, number(v)) for k, v in emitted.items()])
    return form


def _loops_form():
    """Loop positions as (list number, position) pairs: the states of a loop share its list."""
    number = _Canon(None)

    def form(loops: tuple) -> tuple:
        return tuple([(number(items), i) for items, i in loops])
    return form


def _roll_form(read):
    """A roll compared by what is read of it (``read``), else (None) by its dice."""
    def form(v):
        if v.__class__ is Roll:
            return ("roll", read(v)) if read is not None else v.frozen
        return v
    return form


def _columns(states: list, names: tuple, get=None) -> list:
    """The values of these variables in each state, variable by variable (``_MISSING`` where one is not set);
    ``get``: an itemgetter of ``names``, if the caller has one."""
    if not names:
        return []
    if get is None:
        get = itemgetter(*names)
    try:
        rows = [get(st.env) for st in states]
    except KeyError:        # a variable not set on some path: told apart by its absence
        rows = [tuple(map(st.env.get, names, repeat(_MISSING))) for st in states]
    else:
        if len(names) == 1:
            return [rows]
    return list(zip(*rows))     # (each column a tuple: only read)


def _numbers(col: list, form, apart: bool = False):
    """The values of a column as numbers, equal exactly where their key forms (``form``; None: the values
    themselves) are: each distinct object put in key form and hashed once, however many states hold it, and
    standing in the key as the id of the first object of its form (the column holds the objects: their ids
    stay their own meanwhile). None when every state holds the very same object (the column tells no state
    apart). ``apart``: the objects are seldom shared (a state's own emits): not looked for by identity first,
    numbered by their forms' order."""
    if apart:
        by_form: dict = {}
        return [by_form.setdefault(form(v), len(by_form)) for v in col]
    if col and all(map(is_, col, repeat(col[0]))):     # (the usual case, told without making an id per state)
        return None
    ids = list(map(id, col))
    first = dict(zip(ids, col))
    by_form = {}
    other = {}      # the id of an object whose form an earlier object has -> that object's id
    if form is None:
        for i, v in first.items():
            r = by_form.setdefault(v, i)
            if r != i:
                other[i] = r
    else:
        for i, v in first.items():
            r = by_form.setdefault(form(v), i)
            if r != i:
                other[i] = r
    if not other:       # (distinct objects, distinct forms: the ids themselves)
        return ids
    return list(map(other.get, ids, ids))


class _Draws(tuple):
    """A loop's items to draw, one per round: the nodes of an independent list (odds/independent.py)."""

    __slots__ = ()


class StateControl(EnumeratorHost):
    """The state enumerator's mixin for branches, loops, maps, and merging states."""

    def _if(self, node: _If, states, outcomes, rt, plan) -> list:
        branches = node.branches
        which = node.which
        if not node.random and len(states) == 1:       # (one state, as in most rounds of a factored loop)
            st = states[0]
            steps = rt.steps_left = st.steps
            try:
                i = which(st.env, rt)
            except Exception as e:      # a stop (refusal, unknown cell, fail) is an outcome
                self._outcome(outcomes, plan, _stop(e), st.num, st.den)
                self.if_idle = True
                return []
            self.runs += 1
            self._charge(steps - rt.steps_left + self.run_cost)
            self.if_idle = i < 0
            return states if i < 0 else self._block(branches[i][2], states, outcomes, rt, plan)
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
        draws = node.draws
        if draws is not None:
            states = self._drawn(node, states, started, outcomes, plan, rt, limit)
        self._run(items_of, states, outcomes, rt, plan, False, False, collect=started)
        active = []
        for items, st in started:
            st.loops = st.loops + ((items, 0),)
            st.origin = st.origin + (-1,)
            active.append(st)
        acc = node.acc if self.factor else None
        finished = []
        while active:
            round_: list = []
            parents: list = []      # the accumulator at the start of the round, per state it started from
            for st in active:
                items, i = st.loops[-1]
                if i >= len(items):
                    st.loops, st.origin = st.loops[:-1], st.origin[:-1]
                    finished.append(st)
                    continue
                env = st.env.copy()
                lazy = st.lazy
                held = None
                if acc is not None:
                    held = env.get(acc)
                    if held.__class__ is tuple and held:
                        held = env[acc] = Independent.of(held)
                        self.lazy_made += 1
                        lazy = lazy | {acc}
                origin = st.origin[:-1] + (len(parents),)
                parents.append(held)
                loops = st.loops[:-1] + ((items, i + 1),)
                if items.__class__ is _Draws:
                    # this round's item drawn from its own distribution: one state per outcome (the rounds that
                    # came from one state and differ only in the item they append are factored again below)
                    factor = items[i].factor
                    if len(factor) > 1:
                        for item, p in factor:
                            e = env.copy()
                            e[var] = item
                            num, den = st.num * p.numerator, st.den * p.denominator
                            g = math.gcd(num, den)
                            round_.append(State(e, num // g, den // g, st.given, st.steps, loops, lazy, origin))
                        continue
                    env[var] = factor[0][0]
                else:
                    env[var] = items[i]
                round_.append(State(env, st.num, st.den, st.given, st.steps, loops, lazy, origin))
            if not round_:
                break
            active = self._block(node.body, round_, outcomes, rt, plan)
            keys = None
            if acc is not None and active:
                # the round's keys but for the list it builds, made once: for factoring, then (with that
                # list's column) for the merge, unless the merge holds values (it makes its own keys then)
                active, keys = self._factor(active, acc, node.acc_key, parents)
                head = node.head_key
                if head.held or head.hold_emits:
                    keys = None
                elif len(active) > 1:
                    column = self._column(active, head, acc)
                    if column is not None:
                        keys = list(zip(keys, column))
            if len(active) > 1:
                active = self._merge(active, node.head_key, node, keys)
        if acc is not None:
            for st in finished:     # nothing random went in: a plain list again
                held = st.env.get(acc)
                if held.__class__ is Independent:
                    plain = held.fixed()
                    if plain is not None:
                        st.env[acc] = plain
                        st.lazy = st.lazy - {acc}
        return finished

    def _drawn(self, node: _For, states: list, started: list, outcomes: dict, plan, rt, limit: int) -> list:
        """The states whose loop source (``node.draws``: a variable the loop reads nowhere else, nor is it read
        after the loop) holds an independent list no other live value shares a random item with: started with
        the list's items to draw one per round (``_Draws``), into ``started``. The others are returned, the
        list expanded (a list whose items are also somewhere else must be drawn once for every place)."""
        name, source = node.draws, node.source
        rest = []
        for st in states:
            held = st.env.get(name)
            if held.__class__ is not Independent or name not in st.lazy or st.loops or \
                    not self._alone(st, held, node.head_key.names):
                rest.append(st)
                continue
            rt.steps_left = st.steps
            held = source(st.env, rt)
            if held.length > limit:
                e = LimitError(f"this loop would run {held.length} times, more than the limit of {limit} "
                               "(limit 'loop')", node.pos)
                self._outcome(outcomes, plan, _stop(e), st.num, st.den)
                continue
            self.runs += 1
            self._charge(st.steps - rt.steps_left + self.run_cost)
            started.append((_Draws(held.nodes()), State(st.env, st.num, st.den, st.given, rt.steps_left, st.loops,
                                                         st.lazy, st.origin)))
        if rest and self.lazy_made:
            rest = self._concrete(rest, {name}, set())
        return rest

    @staticmethod
    def _alone(st, held: Independent, live) -> bool:
        """Whether no live variable (``live``) nor emitted field holds a random item of ``held``, which holds
        each of its random items once, none of them a list of independent items itself."""
        cells = set()
        for n in held.nodes():
            if len(n.factor) > 1:
                if id(n.cell) in cells or any(has_lazy(item) for item, _ in n.factor):
                    return False
                cells.add(id(n.cell))
        if not cells:
            return True
        env = st.env
        values = [env[n] for n in live if n in env]
        values.extend(v for v in env[EMIT].values() if v is not DEAD)
        found: dict = {}
        for v in values:
            lists_in(v, found)
        return all(id(n.cell) not in cells for lst in found.values() for n in lst.nodes())

    def _factor(self, states: list, acc: str, names: Key, parents: list) -> tuple:
        """The states of one round that came from the same state and differ only in the item the round
        appended to ``acc``: one state, whose list gains a factor (that item's distribution). With the states,
        their keys at ``names`` (``_state_keys``; comparable among these states only)."""
        groups: dict = {}
        out = []
        out_keys = []
        for st, key in zip(states, self._state_keys(states, names)):
            origin = st.origin[-1]
            if origin < 0:
                out.append(st)
                out_keys.append(key)
                continue
            found = groups.get((origin, key))
            if found is None:
                groups[(origin, key)] = [st]
            else:
                found.append(st)
        for (origin, key), members in groups.items():
            if len(members) == 1:
                out.extend(members)
                out_keys.append(key)
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
                                             tuple([(item, self._fraction(n, total)) for item, n in sums]))
                g = math.gcd(total, common)
                first.num, first.den = total // g, common // g
                first.lazy = first.lazy | {acc}
                out.append(first)
                out_keys.append(key)
                continue
            out.extend(members)
            out_keys.extend([key] * len(members))
        return out, out_keys

    def _fraction(self, n: int, d: int) -> Fraction:
        """n/d, one object per value within an enumeration: factors made in different states then hold the very
        same probabilities, so comparing two lists (a merge) finds them alike by identity, not by a Fraction's
        slow ``==`` (a Fraction does not change: sharing one is safe)."""
        g = math.gcd(n, d)
        key = (n // g, d // g)
        found = self.fractions.get(key)
        if found is None:
            if len(self.fractions) >= _FRACTIONS:
                self.fractions.clear()
            found = self.fractions[key] = Fraction(*key)
        return found

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
                env[var] = item     # noqa: B023  (image runs only inside this round's map_items call below)
                steps = rt.steps_left
                value = element(env, rt)  # noqa: B023
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
            # every item's image the same whatever it is drawn as: a plain list (a constant image of a random
            # item is independent of it, so nothing needs drawing; reading it expands nothing)
            plain_items = mapped.fixed()
            value = mapped if plain_items is None else plain_items
            if node.is_emit:
                e[EMIT] = e[EMIT].copy()
                e[EMIT][name] = DEAD if node.dead else value
            else:
                e[name] = DEAD if node.dead else value
                lazy = lazy | {name} if not node.dead and plain_items is None else lazy - {name}
            out.append(State(e, st.num, st.den, st.given, st.steps, st.loops, lazy, st.origin))
        if plain:
            plain = self._concrete(plain, {node.source_name}, set())
            out.extend(self._run(node.fn, plain, outcomes, rt, plan, True, node.is_emit))
        return out

    def _state_keys(self, states: list, key: Key, held_emits=frozenset()) -> list:
        """What tells each state apart from the others at ``key``: its live values (rolls by what is read of
        them), emits, dice given so far and loop positions. The keys are only comparable among themselves.

        A merge keys every live value of every state, and the states mostly share their values by identity
        (each branch copies its parent's locals). So the values are taken column by column: a column whose
        states all hold the very same object tells none apart and is left out, and in the others each distinct
        object is put in key form and hashed once, standing in the key as a small number (``_numbers``). The
        emits are columns too, one per field, when every state emitted the same fields in the same order (the
        usual case: else each state's emits are one value, numbered field by field)."""
        names = key.names
        columns = _columns(states, names, key.get)
        hiding = self.rolls_may_hide
        readers = dict(key.rolls) if not hiding else {}
        kept = []
        for i, col in enumerate(columns):
            if i in readers:
                form = _roll_form(readers[i])
            else:
                form = key_form if hiding else None
            numbers = _numbers(col, form)
            if numbers is not None:
                kept.append(numbers)
        emitted = [st.env[EMIT] for st in states]
        if len(set(map(id, emitted))) > 1:
            value_form = key_form if hiding else None
            fields = set(map(tuple, emitted))
            if len(fields) == 1:
                for k in fields.pop():
                    if k not in held_emits:
                        numbers = _numbers([e[k] for e in emitted], value_form)
                        if numbers is not None:
                            kept.append(numbers)
            else:
                form = _emits_form(value_form, held_emits)
                kept.append(_numbers(emitted, form, True))
        for col, form in (([st.given for st in states], None), ([st.loops for st in states], _loops_form())):
            numbers = _numbers(col, form)
            if numbers is not None:
                kept.append(numbers)
        if not kept:
            return [()] * len(states)
        if len(kept) == 1:
            return kept[0]
        return list(zip(*kept))

    def _column(self, states: list, key: Key, name: str) -> list | None:
        """One live variable's column of ``_state_keys`` at ``key``: its values as numbers (None: every state holds
        the very same object)."""
        col = [st.env.get(name, _MISSING) for st in states]
        i = key.names.index(name)
        readers = dict(key.rolls) if not self.rolls_may_hide else {}
        if i in readers:
            return _numbers(col, _roll_form(readers[i]))
        return _numbers(col, key_form if self.rolls_may_hide else None)

    def _merge(self, states: list, names: Key, node, keys: list | None = None) -> list:
        """States that agree on every live value (and loop position, given dice, wanted emits) become one.
        ``keys``: their keys at ``names`` (``_state_keys``), when the caller has them (``names`` holds nothing)."""
        if keys is None:
            if names.held and (not self.hold or any(st.lazy and not st.lazy.isdisjoint(names.held) for st in states)):
                # (an independent list is never held: expanding a list it shares items with must reach it)
                names = names.full
            elif names.held or (names.hold_emits and self.hold):
                # only variables whose states do not all hold the very same object are worth holding (the others
                # tell no state apart: a plain merge on the rest is the same merge)
                held = tuple([n for n, col in zip(names.held, _columns(states, names.held))
                              if len(set(map(id, col))) > 1])
                if names.hold_emits and self.hold:
                    held = held + self._emits_apart(states)
                if held:
                    return self._hold(states, names, held, node)
            keys = self._state_keys(states, names)
        merged: dict = {}
        for st, key in zip(states, keys):
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

    def _hold(self, states: list, names: Key, held: tuple, node) -> list:
        """``_merge`` leaving out the variables ``held`` (and the rest of ``names.held``, which every state holds
        alike): states that agree on the rest become one state holding the values they differed in
        (odds/held.py). A state lacking one of them stays on its own."""
        states = outside(states, held, self.budget)
        number = _Canon(key_form)       # the held values' key forms, each distinct object's once
        groups: dict = {}
        emits = frozenset(p[1] for p in held if p.__class__ is tuple)
        for st, key in zip(states, self._state_keys(states, names, emits)):
            if not all(get(st.env, n) is not MISSING for n in held):
                key = (key, id(st))
            groups.setdefault(key, []).append(st)
        out = []
        for members in groups.values():
            if len(members) == 1:
                out.append(members[0])
            else:
                out.append(combined(members, held, number))
                self.held_made += 1
        self._count(len(out), node)
        return out

    def _emits_apart(self, states: list) -> tuple:
        """The emitted fields, as held places ``(EMIT, field)``, that the states do not all hold as the very same
        object, and where no state holds an independent list (which must stay where expanding finds it)."""
        emitted = [st.env[EMIT] for st in states]
        if all(map(is_, emitted, repeat(emitted[0]))):
            return ()
        fields: dict = {}
        names = set(map(tuple, emitted))
        if len(names) == 1:     # (the usual case: every state emitted the same fields, field by field)
            for k in names.pop():
                col = [e[k] for e in emitted]
                if not all(map(is_, col, repeat(col[0]))):
                    fields[k] = {id(v): v for v in col}
        else:
            for e in emitted:
                for k, v in e.items():
                    fields.setdefault(k, {})[id(v)] = v
        out = []
        for k, values in fields.items():
            if len(values) > 1 and not (self.lazy_made and any(v.__class__ is not Held and has_lazy(v)
                                                                for v in values.values())):
                out.append((EMIT, k))
        return tuple(out)

    def _count(self, count: int, node) -> None:
        """The live states after a node, against the budget (a merge that would find nothing is skipped)."""
        if count > self.peak:
            self.peak = count
            if count > self.budget:
                raise LimitError(f"exact odds would track more than {self.budget:,} live states ({count:,} at "
                                 f"line {node.pos.line} of {node.pos.file})", node.pos,
                                 hint=self.hint())
