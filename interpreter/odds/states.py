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

The enumerator is split by concern: odds/state_plan.py works out, once per procedure, what each statement is
(a leaf, an `if`, a `for each`, a map over a list) and which variables stay live; odds/state_runs.py runs one
statement's closure over every state; odds/state_control.py splits, loops, factors and merges states for the
compound statements; odds/held.py holds the live values the next statement does not read as one distribution
at a merge, and opens them where they are read. This module keeps the enumerator's entry points and its
per-call memo.
"""

from __future__ import annotations

import math
from fractions import Fraction
from operator import is_

from ..analysis.caching import EMIT
from ..model.dice import DiceSource
from ..model.values import DEAD, Record, Roll, key_form
from ..reading import syntax as ast
from ..runtime.state import Runtime
from .demand import ALL, project
from .held import opened
from .independent import expand, has_lazy
from .passed_on import (
    Observed,
    abstracted,
    forget,
    may_share,
    passed_on,
    put_back,
    record_lists,
)
from .state_control import StateControl
from .state_nodes import State, _Block, _For, _If, _Leaf
from .state_plan import Plan
from .state_runs import StateRuns, _stop


class StateEnumerator(StateControl, StateRuns):
    """Exact distributions of procedure results, by live states (see the module docstring)."""

    def __init__(self, ruleset, choices: dict, budget: int, demands: dict, var_demands: dict,
                 factor: bool = True, work: int | None = None, share: bool = True, hold: bool = True):
        from .paths import (
            DEFAULT_WORK,
            RUN_COST,
            PathDice,
            Replay,
            Stop,
            has_list_choices,
        )
        self._PathDice, self._Replay, self._Stop = PathDice, Replay, Stop
        self.list_choices = has_list_choices(choices)
        self.list_forms: dict = {}  # a list argument's key form, by identity (_hiding_key)
        self.work, self.work_limit, self.run_cost = 0, work or DEFAULT_WORK, RUN_COST
        self.ruleset = ruleset
        self.choices = choices
        self.budget = budget
        self.demands = demands
        self.var_demands = var_demands
        # call sites whose caller needs less of the result than the callee's demand (the join over every site)
        # gives: there the outcomes are narrowed to that, so those differing only in what that caller never
        # reads are one branch (a check's dice, needed only by another caller of the same check)
        self.narrow = {pos: need for pos, (name, need) in getattr(var_demands, "sites", {}).items()
                       if _narrower(need, demands.get(name, ALL))}
        self.factor = factor
        self.share = share      # calls differing only in fields passed on share a distribution
        self.memo: dict = {}
        self.memo_by_id: dict = {}     # (procedure, argument names, argument ids) -> (values, memo key, entry)
        self.probes: dict = {}       # procedure -> [probes that found its one outcome, probes that branched]
        self.fractions: dict = {}    # (numerator, denominator) -> one Fraction of that value (_fraction)
        self.once: dict = {}     # statements reading only never-assigned arguments, per those values (_reuse)
        self.layouts: dict = {}  # where the holes of shared distributions' records are (passed_on.put_back)
        self.sharing: dict = {}  # whether a call's records may be shared (passed_on.may_share)
        self.record_lists: list = []     # the question's lists of records (set by the first distribution)
        self.memo_hits = 0
        self.lazy_made = 0      # independent lists made so far (results made without any hold none)
        self.held_made = 0      # merges that held variables (odds/held.py) so far
        self.hold = hold        # whether merges may hold variables (off: every merge keys every live one)
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
            self._returned(outcomes, plan, None, st.env[EMIT], st.num, st.den)
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
        memo, by_id, narrow = self.memo, self.memo_by_id, self.narrow
        Replay, Stop, list_choices = self._Replay, self._Stop, self.list_choices

        def call(procedure, args, pos):
            dice = rt.dice
            if procedure.deterministic:
                return rt.invoke(procedure, args)
            if dice.given_used < len(dice.given) or list_choices:
                # run as in a single run: what it calls is read at once, never handed back factored
                # (the node that made this call may take factored lists; this run cannot)
                lazy_ok, dice.lazy_ok = dice.lazy_ok, False
                try:
                    return rt.invoke(procedure, args)
                finally:
                    dice.lazy_ok = lazy_ok
            # by identity first: the calls of one enumeration pass the very same values again and again (the
            # states share their locals), so the memo key (each value in key form, sorted, hashed) is made once
            # per distinct objects. The entry keeps the values, so their ids stay their own meanwhile.
            values = tuple(args.values())
            need = narrow.get(pos, ALL) if narrow else ALL
            ident = (procedure.name, tuple(args), need, *map(id, values))
            found = by_id.get(ident)
            if found is not None:
                key, entry = found[1], found[2]
                self.memo_hits += 1
            else:
                key = (procedure.name, self._call_key(args))
                entry = memo.get(key)
                if entry is None:
                    entry = memo[key] = self._entry(procedure, args, rt.depth + 1)
                else:
                    self.memo_hits += 1
                if need is not ALL:     # the outcomes as this site needs them, kept beside the callee's
                    key = (key, need)
                    narrowed = memo.get(key)
                    if narrowed is None:
                        narrowed = memo[key] = _narrowed(entry, need)
                    entry = narrowed
                if len(by_id) >= _LIST_FORMS:
                    by_id.clear()
                by_id[ident] = (values, key, entry)     # (its expanded form, if made later, is read from memo)
            dist, lazy, plain = entry
            if lazy:
                if dice.lazy_ok:
                    dice.got_lazy = True
                    self.lazy_made += 1
                else:      # this call's result is read at once: every concrete result, with its weight
                    if dice.__class__ is _Probe:
                        raise _Branched     # (independent lists: more than one outcome, not expanded for it)
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
                # (records alike but for their fields' order share no distribution: a result keeps the order)
                key = (procedure.name, self._call_key(shared_args),
                       tuple([tuple(v) for v in shared_args.values() if v.__class__ is Record]))
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
        tally = self.probes.get(procedure.name)
        if tally is None:       # (a procedure that rolls before it can return is never probed: it would miss)
            tally = self.probes[procedure.name] = [0, 1] if rolls_first(self.ruleset, procedure) else [0, 0]
        if tally[1] <= tally[0]:      # (probing stops once it has missed more than it found)
            found = self._probe(procedure, args, depth)
            if found is not None:
                tally[0] += 1
                return found
            tally[1] += 1
        made = self.lazy_made
        outcomes = self.distribution(procedure, args, depth=depth)
        dist = sorted(((v, n, d) for v, (n, d) in outcomes.items()), key=_likeliest)
        # results hold independent lists only if some were made (here or in a call) while it ran
        return dist, made != self.lazy_made and any(has_lazy(v) for v, _, _ in dist), None

    def _probe(self, procedure, args: dict, depth: int) -> tuple | None:
        """A call's memo entry when it has one outcome, found by running it once as a single run does, on dice
        that give up at the first branch point (a roll, a call of more than one outcome or holding independent
        lists): a procedure that chooses, walks lists and calls but rolls nothing on these arguments (points
        spent by a fixed policy) needs no states set up, statement by statement. A stop met first (a refusal,
        an unknown cell) is that one outcome, as in its distribution; a limit is the question's error. None
        where it met a branch point (what the probe's calls worked out stays memoised)."""
        rt = Runtime(self.ruleset, _Probe(), None, self.choices)
        rt.call_hook = self._hook(rt)
        rt.depth = depth        # (invoke adds one: the body runs as deep as distribution runs it)
        try:
            value = project(rt.invoke(procedure, args), self.plan(procedure).demand)
        except _Branched:
            return None
        except Exception as e:
            value = _stop(e)    # (re-raises what is not a stop: a limit)
        finally:
            rt.call_hook = None     # (no reference cycle: see distribution)
            self.runs += 1
            self._charge(rt.limits["steps"] - rt.steps_left + self.run_cost)
        return [(value, 1, 1)], False, None

    def _call_key(self, args: dict) -> tuple:
        """A call's memo key: ``outcome_key`` (rolls, wherever they sit, by their dice). When rolls sit only in
        variables (an argument is one, or holds none), a quicker one. (Not a bound method kept on the enumerator:
        that would be a reference cycle, leaving every memoised distribution to the garbage collector.)"""
        return self._hiding_key(args) if self.rolls_may_hide else _args_key(args)

    def _hiding_key(self, args: dict) -> tuple:
        """``outcome_key`` (rolls, wherever they sit, by their dice) with each list's key form kept by identity:
        the calls of one enumeration pass the same lists again and again (the question's targets, a state's
        unchanged results), and a list is walked for rolls on every keying, as a record (its flag) is not."""
        forms = self.list_forms
        items = []
        for k, v in args.items():
            cls = v.__class__
            if cls is tuple:
                found = forms.get(id(v))
                if found is None:
                    if len(forms) >= _LIST_FORMS:
                        forms.clear()
                    found = forms[id(v)] = (v, key_form(v))      # (the list kept, so its id stays its own)
                v = found[1]
            elif cls is Record:
                if getattr(v, "_rolls", None) is not False:
                    v = key_form(v)
            elif cls is Roll:
                v = v.frozen
            items.append((k, v))
        items.sort()     # (names are distinct: only they are compared)
        return tuple(items)

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
        apart: frozenset | None = frozenset() if len(states) == 1 else None
        loose = False
        fused = None
        holdable = plan.holdable
        for node, before, after, then in block.steps:
            if node is fused:       # already run with the branch point before it
                continue
            if holdable and self.held_made:     # held variables this node (or the leaf run with it) reads: opened
                reads = (node.reads if then is None else node.reads | then.reads) & holdable
                found = opened(states, reads, self.budget) if reads else None
                if found is not None:
                    states, apart = found, None
                    self._count(len(states), node)
                    self._charge(len(states) * self.run_cost)
            if before and len(states) > 1:
                if apart is not None and apart <= before.set:
                    self._count(len(states), node)
                else:
                    states = self._merge(states, before, node)
                    apart, loose = before.set, True
            cls = node.__class__
            if self.lazy_made and cls is _Leaf and node.split_on and \
                    any(st.lazy and not st.lazy.isdisjoint(node.split_on) for st in states):
                # an ``if`` run as one leaf would read a list only its branches read: its parts, one by one
                states, apart = self._parts(node, states, outcomes, rt, plan), None
                cls = None
            elif self.lazy_made and (node.strict or node.attr):      # independent lists exist: read ones expand
                expanded = self._concrete(states, node.strict, node.attr)
                if expanded is not states:
                    states, apart = expanded, None
            if cls is None:
                pass
            elif cls is _Leaf:
                if node.branches:
                    fresh = node.fresh
                    if apart is not None:
                        apart = apart | {fresh} if fresh is not None and fresh not in apart and not loose else None
                    lazy_ok = rt.dice.lazy_ok = node.lazy_ok and self.factor
                    if then is not None and apart is not None and apart <= after.set and not lazy_ok \
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
                if apart is not None and apart <= after.set:
                    self._count(len(states), node)
                else:
                    states = self._merge(states, after, node)
                    apart, loose = after.set, True
        return states

    def _parts(self, node: _Leaf, states: list, outcomes: dict, rt, plan: Plan) -> list:
        """A leaf joined from simple statements and ``if`` statements without branch points, run part by part
        (no merge between them: none can branch a state), each ``if`` as an ``if``: only the states taking a
        branch that reads an independent list expand it."""
        for part in node.parts or (node,):
            if part.compound is not None:
                states = self._if(part.compound, states, outcomes, rt, plan)
            else:
                if part.strict or part.attr:
                    states = self._concrete(states, part.strict, part.attr)
                states = self._run_plain(part.fn, states, outcomes, rt, plan, part.writes, part.emits, part.targets)
            if not states:
                break
        return states

    def hint(self) -> str:
        return "group by fewer result fields (--by) so fewer states stay apart, use `umpire simulate` for an " \
               "estimate, or raise --budget"


def rolls_first(ruleset, procedure) -> bool:
    """Whether every run of ``procedure`` rolls: its body rolls at its top level, and nothing before that
    roll holds a ``return`` (kept on the ruleset, which does not change, per procedure)."""
    kept = ruleset.__dict__.setdefault("_rolls_first", {})
    found = kept.get(procedure.name)
    if found is None:
        found = False
        for statement in procedure.syntax.body:
            if statement.__class__ is ast.Roll:
                found = True
                break
            if ast.may_return(statement):
                break
        kept[procedure.name] = found
    return found


class _Branched(Exception):
    """A probe (``StateEnumerator._probe``) met a branch point."""


class _Probe(DiceSource):
    """Dice for a probe: no die is rolled, and a call's outcome is taken only when it has one."""

    __slots__ = ("given", "given_used", "lazy_ok", "got_lazy")

    def __init__(self):
        self.given: tuple = ()
        self.given_used = 0
        self.lazy_ok = False        # (what the call hook reads: calls read at once, never factored)
        self.got_lazy = False

    def roll(self, kind, label, pos):
        raise _Branched

    def branch(self, options):
        if len(options) == 1:
            return options[0][0]
        raise _Branched


_LIST_FORMS = 100_000
"""Most list key forms an enumeration keeps at once (_hiding_key): past it they are forgotten and made again."""


def _likeliest(outcome: tuple) -> float:
    """Sort key of a distribution's (value, num, den): most likely first."""
    return -outcome[1] / outcome[2]


def _args_key(args: dict) -> tuple:
    """A call's memo key when no roll can sit inside a record or list (``outcome_key``, quicker)."""
    return tuple(sorted([(k, v.frozen) if v.__class__ is Roll else (k, v) for k, v in args.items()]))


def _add(found: tuple, num: int, den: int) -> tuple:
    if found[1] == den:
        return found[0] + num, den
    n, d = found[0] * den + num * found[1], found[1] * den
    g = math.gcd(n, d)
    return n // g, d // g


def _narrower(need, demand) -> bool:
    """Whether a call site's demand ``need`` leaves out some of the callee's ``demand``."""
    return need is not ALL and (demand is ALL or need < demand)


def _narrowed(entry: tuple, need) -> tuple:
    """A memo entry's outcomes projected to ``need``, those made alike added up (an entry as ``_entry`` makes)."""
    dist, lazy, _ = entry
    acc: dict = {}
    for v, n, d in dist:
        v = project(v, need)
        found = acc.get(v)
        acc[v] = (n, d) if found is None else _add(found, n, d)
    if len(acc) == len(dist):
        out = [(v, n, d) for v, (n, d) in acc.items()]
    else:
        out = sorted(((v, n, d) for v, (n, d) in acc.items()), key=_likeliest)
    return out, lazy and any(has_lazy(v) for v, _, _ in out), None


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
