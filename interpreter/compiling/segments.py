"""Kept segments: a run of the middle's statements that rolls nothing, reused per value of what it reads.

A procedure's untraced middle (analysis/caching.py: from its first roll or decision to its last) often holds
runs of statements that roll nothing, choose nothing and call only pure procedures: typically everything from a
roll to the call that applies its result (the modified roll, a table lookup, the cell's fields). Such
a run's effect (the locals it sets, the emits it makes, a `return` it takes, the steps it uses) depends only on
the values it reads, so the compiler makes it one closure that keeps that effect, keyed by the values of what it
reads that are not fixed per prefix state (the roll, mostly) in the store of the prefix entry it runs under,
and replays it: one lookup in place of a closure call per statement and per operand.

As for every reused part: errors are never kept (they happen again), the steps the run used are charged on
every use (a use that would overrun the steps left, or from deeper calls than the first run, runs the
statements again, so that a limit stops them where it would), and runs with a call hook (the odds engine)
or a trace never use it.
"""

from __future__ import annotations

from ..analysis.caching import EMIT as _EMIT
from ..analysis.caching import MEMO_LIMIT as _MEMO_LIMIT
from ..analysis.caching import STATIC as _STATIC
from ..analysis.caching import state_key, worth_keeping
from ..analysis.names import bound_names, free_names, walk
from ..model.values import Roll, key_form
from ..reading import syntax as ast
from .host import CompilerHost
from .support import Fn

_MISSING = object()
_ROLLS = object()
ROLLED = "$rolled"
"""Set in a procedure's locals when a branch that may roll runs inside one of its kept segments (a mark in the
locals of that very run, not in the closure: runs on other threads, or of the same procedure called inside
the branch, have locals of their own)."""
_SHORTEST = 2
"""A run of fewer statements is not kept: one statement's own closure (a lookup's index, a pure call's memo)
already reuses what it can."""


class SegmentCompiler(CompilerHost):
    """The compiler's mixin for the untraced middle: its statements, runs of pure ones kept as segments."""

    def middle_parts(self, proc, statements, start: int) -> tuple:
        """(statement closures, steps charged, first position) of the middle ``statements`` (the body's from
        ``start`` on), as ``block_parts`` gives them, with each run of pure statements (and of `if`s with pure
        conditions, see ``kept_segment``) that is worth keeping one kept segment (with prefix caching on;
        off, nothing is reused)."""
        if not self.prefix_caching or not statements:
            return self.block_parts(statements)[:3]
        out: list = []
        run: list = []
        # the names bound before each statement (the parameters, then what the body binds up to it), kept up to date
        bound = {p.name for p in proc.params} | bound_names(tuple(proc.syntax.body[:start]))
        before: set = set()      # ``bound`` where the current run started

        # whether a statement before the current run emits: while none does, a run's emits before it are those of
        # the prefix entry it runs under, so a `return` it keeps has one result per entry (``kept_segment``, boxed)
        emitted = False
        emitted_before = False   # ``emitted`` where the current run started

        def flush() -> None:
            pure = [s for s in run if self.rolls_nothing(s)]
            conditions = [b.condition for s in run if s not in pure for b in s.branches if b.condition is not None]
            if len(run) >= _SHORTEST and worth_keeping(pure + conditions):
                out.append(self.kept_segment(run, before, boxed=not emitted_before))
            else:
                out.extend(f for f in (self.statement(s) for s in run) if f is not None)
            run.clear()

        for s in statements:
            if self.rolls_nothing(s) or self._guardable(s):
                if not run:
                    before = set(bound)
                    emitted_before = emitted
                run.append(s)
            else:
                flush()
                fn = self.statement(s)
                if fn is not None:
                    out.append(fn)
            bound |= bound_names((s,))
            emitted = emitted or any(isinstance(n, ast.Emit) for n in walk((s,)))
        flush()
        return tuple(out), len(statements), statements[0].pos     # charged and placed as block_parts does

    def rolls_nothing(self, s) -> bool:
        """Whether a statement (or an expression) rolls nothing, chooses nothing and calls only pure procedures
        (as a prefix's statements do); kept per syntax node (it is asked of the same ones several times)."""
        kept = self.purity.get(id(s))
        if kept is not None and kept[0] is s:
            return kept[1]
        found = True
        for node in walk((s,)):
            if isinstance(node, (ast.Roll, ast.Choose)) or (
                    isinstance(node, ast.Call) and not self.ruleset.procedures[node.procedure].deterministic):
                found = False
                break
        self.purity[id(s)] = (s, found)       # (the node kept, so that its id stays its own)
        return found

    def _guardable(self, s) -> bool:
        """An `if` whose conditions are pure (its branches may roll): it can sit in a kept segment."""
        return s.__class__ is ast.If and all(self.rolls_nothing(b.condition) for b in s.branches
                                             if b.condition is not None)

    def kept_segment(self, statements: list, bound_before: set, boxed: bool = False) -> Fn:
        """One closure running ``statements`` (pure, none charged here: the middle's charge covers them), their
        effect kept per prefix store and per value of the names they read that are not static.

        ``boxed``: no statement of the middle before these emits, so the emits made when they return are fixed by
        the entry kept (the prefix entry's, then their own). A `return` kept is then signalled ``(value, box)``:
        the untraced runner (analysis/caching.py) keeps the procedure's result, its emits joined to the value, in
        the box, building that record once per entry instead of on every run."""
        fns = []
        for s in statements:
            self.marking = not self.rolls_nothing(s)    # s_if marks the run of a branch that may roll
            try:
                fn = self.statement(s)
            finally:
                self.marking = False
            if fn is not None:
                fns.append(fn)
        inside = bound_names(tuple(statements))
        # what they read from before them (a comprehension's own variable is not read), less the names
        # fixed per prefix state (the prefix store the effect is kept in stands for those)
        reads = sorted(n for n in free_names(tuple(statements)) if n not in self.globals
                       and n not in self.static_names and (n in bound_before or n not in inside))
        key_of = _key_reader(tuple(reads), self.rolls_may_hide)
        # one name read, where rolls cannot hide inside values (the commonest: the roll just made): read in
        # place, as _key_reader's ``one`` does, without its call
        only = reads[0] if len(reads) == 1 and not self.rolls_may_hide else None
        # two names so read (typically a roll and one local): likewise in place
        n1, n2 = reads if len(reads) == 2 and not self.rolls_may_hide else (None, None)
        # (id of the prefix store, key) -> (store, None, signal, locals set, emits made, used, ran_at), or
        # (store, _ROLLS) for values whose run took a branch that rolls
        memo: dict = {}

        def run_all(env, rt):
            for fn in fns:
                signal = fn(env, rt)
                if signal is not None:
                    return signal
            return None

        def kept_segment(env, rt):
            if rt.call_hook is not None:
                return run_all(env, rt)
            store = env.get(_STATIC)
            try:
                if only is not None:
                    v = env.get(only, _MISSING)
                    mkey = (id(store), ("roll", v._d[0], v._d[2]) if v.__class__ is Roll else v)
                elif n1 is not None:
                    v, w = env.get(n1, _MISSING), env.get(n2, _MISSING)
                    mkey = (id(store), (("roll", v._d[0], v._d[2]) if v.__class__ is Roll else v,
                                        ("roll", w._d[0], w._d[2]) if w.__class__ is Roll else w))
                else:
                    mkey = (id(store), key_of(env))
                hit = memo.get(mkey)
            except TypeError:           # a value that cannot be a key: run it
                return run_all(env, rt)
            if hit is not None and hit[0] is store:
                if hit[1] is _ROLLS:   # these values take a branch that rolls: run it (as they did)
                    return run_all(env, rt)
                left = rt.steps_left - hit[5]
                if left >= 0 and rt.depth <= hit[6]:
                    rt.steps_left = left
                    signal = hit[2]
                    if signal is not None and len(signal) == 2 and signal[1] and signal[1][0] is rt.limits:
                        return signal      # a boxed return whose result is kept: the runner returns it at once,
                        # so the locals it would set and the fields it would emit are never read
                    if hit[3]:
                        env.update(hit[3])
                    if hit[4]:
                        env[_EMIT].update(hit[4])
                    return hit[2]
            env.pop(ROLLED, None)
            before, steps = env.copy(), rt.steps_left
            emitted = env.get(_EMIT)
            emits_before = emitted.copy() if emitted else {}
            signal = run_all(env, rt)      # an error is not kept: it happens again next time
            if len(memo) >= _MEMO_LIMIT:
                memo.clear()
            if env.pop(ROLLED, None) is not None:
                # not kept: from the same values, the same branch is taken again (before its dice)
                memo[mkey] = (store, _ROLLS)
                return signal
            if len(env) < len(before) or any(k not in env for k in before):
                return signal              # (nothing unsets a local; should anything, it is not replayed)
            changes = {k: v for k, v in env.items() if k not in before or before[k] is not v}
            made = {k: v for k, v in emitted.items() if k not in emits_before or emits_before[k] is not v} \
                if emitted else {}
            if boxed and signal is not None:
                signal = (signal[0], [])
            memo[mkey] = (store, None, signal, changes, made, steps - rt.steps_left, rt.depth)
            return signal
        return kept_segment


def _key_reader(names: tuple, rolls_may_hide: bool):
    """``env -> key``: the values of ``names`` as a hashable key (a roll by its dice, a missing name as missing)."""
    if not names:
        return lambda env: None
    if len(names) > 2:
        return lambda env: state_key(env, names, rolls_may_hide)
    if rolls_may_hide:
        if len(names) == 1:
            return lambda env: key_form(env.get(names[0], _MISSING))
        n1, n2 = names
        return lambda env: (key_form(env.get(n1, _MISSING)), key_form(env.get(n2, _MISSING)))
    if len(names) == 1:
        name = names[0]

        def one(env):
            v = env.get(name, _MISSING)
            return ("roll", v._d[0], v._d[2]) if v.__class__ is Roll else v    # Roll.frozen, without its call
        return one
    n1, n2 = names

    def two(env):
        a, b = env.get(n1, _MISSING), env.get(n2, _MISSING)
        if a.__class__ is Roll:
            a = ("roll", a._d[0], a._d[2])
        if b.__class__ is Roll:
            b = ("roll", b._d[0], b._d[2])
        return a, b
    return two
