"""Running one statement's compiled closure over every state (odds/states.py): rolls and calls expanded into
their outcomes, lazy lists made concrete where a statement needs them, stops kept as weighted outcomes."""

from __future__ import annotations

from fractions import Fraction
from operator import attrgetter

from ..analysis.caching import EMIT, result_value
from ..model.values import DEAD, Record
from .demand import ALL
from .held import Held, emitted
from .independent import Independent, cases, check_cases, has_lazy, joint, lists_in, put_items
from .state_host import EnumeratorHost
from .state_nodes import State

_STOPPED = object()


_steps_left = attrgetter("steps")


_CHARGE_EVERY = 100_000
"""Work is charged toward 'odds work' once per node, or every this many steps on a long one."""


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


def _still_lazy(env: dict, lazy: frozenset, targets: frozenset | None) -> frozenset:
    """The variables holding independent lists after a node ran: only those it assigned (``targets``; None
    when not known) can have become one, and those that held one may have been overwritten."""
    if targets is None:
        return frozenset(n for n, v in env.items() if n != EMIT and has_lazy(v))
    # (the others it held are not assigned: they hold theirs still, not walked again)
    became = []
    for n in targets:
        v = env.get(n)
        c = v.__class__
        # (a scalar holds none: told by its class, without asking has_lazy)
        if c is Independent or ((c is Record or c is tuple) and has_lazy(v)):
            became.append(n)
    if lazy.isdisjoint(targets):
        return lazy.union(became) if became else lazy
    return (lazy - targets).union(became)


def _stop(e):
    from .paths import stop_outcome
    return stop_outcome(e)


class StateRuns(EnumeratorHost):
    """The state enumerator's mixin that runs a leaf statement over a list of states."""

    def _returned(self, outcomes: dict, plan, value, emits: dict, num: int, den: int) -> None:
        """A result's outcome (``_result``): one per combination of the emitted values the state holds, if any
        (odds/held.py), each with its share of the weight."""
        if self.held_made and any([v.__class__ is Held for v in emits.values()]):
            for e, p in emitted(emits):
                self._outcome(outcomes, plan, _result(value, e, plan), num * p.numerator, den * p.denominator)
            return
        self._outcome(outcomes, plan, _result(value, emits, plan), num, den)

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
                lists_in(x, held)
        # a random item is drawn once wherever it sits: lists sharing one with those read (a copy, a list
        # joined or mapped from it) are expanded with them, each getting the items of the same draw
        cells = {k: {id(node.cell) for node in ind.nodes()} for k, ind in held.items()}
        wanted: dict = {}
        for n in need:
            lists_in(env[n], wanted)
        drawn = set().union(*[cells[k] for k in wanted])
        grown = True
        while grown:                        # lists sharing a random item with those expanded go with them
            grown = False
            for k, ind in held.items():
                if k not in wanted and not cells[k].isdisjoint(drawn):
                    wanted[k] = ind
                    drawn |= cells[k]
                    grown = True
        count = cases(tuple(wanted.values()))
        check_cases(count, self.budget)
        self._charge(count * self.run_cost)
        out = []
        for concrete, q in joint(wanted):
            p = Fraction(st.num, st.den) * q
            e = {}
            for name, v in env.items():
                if name == EMIT:
                    e[name] = {f: put_items(x, concrete) for f, x in v.items()}
                else:
                    e[name] = put_items(v, concrete)
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
        out: list = []
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
                self._returned(outcomes, plan, signal[0], env[EMIT], st.num,
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
                            self._returned(outcomes, plan, signal[0], env[EMIT],
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
                    self._returned(outcomes, plan, signal[0], env[EMIT],
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
