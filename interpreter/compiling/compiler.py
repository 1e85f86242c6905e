"""Syntax tree to Python closures, once per load.

Each expression becomes ``fn(env, rt) -> value`` and each statement
``fn(env, rt) -> None | (value,)`` (a 1-tuple: the procedure returns); a procedure is then a loop over its
statement closures. Nothing walks the syntax tree at run time, and nothing
ever passes ruleset text to ``eval``.

The compiler assumes the checker has accepted the ruleset (names exist,
arity is right); run-time errors that only data can cause (a missing field,
text added to a number, an unknown cell) still carry the source position.

This module is code generation only. The static analyses it relies on live
in their own modules: analysis/facts.py (what is worked out once at load and kept
by the cache: dice bounds, pure notes, each procedure's facts), analysis/purity.py (which procedures are pure), analysis/roll_usage.py
(whether dice order matters, whether rolls leave their variables),
analysis/caching.py (the reusable prefix and suffix of a procedure, and their runner),
analysis/names.py (walking syntax, bound and free names); what operators and builtin
functions mean is in runtime/operators.py and runtime/functions.py.
"""

from __future__ import annotations

import dataclasses
from _thread import allocate_lock
from fractions import Fraction
from typing import Any, Callable

from ..analysis.caching import EMIT as _EMIT
from ..analysis.caching import MEMO_LIMIT as _MEMO_LIMIT
from ..analysis.caching import STATIC as _STATIC
from ..analysis.caching import bounded_result, plan, untraced_runner
from ..analysis.facts import (
    NOT_WRITTEN_OUT,
    analyse,
    procedure_facts,
    roll_kind,
    written_out,
)
from ..analysis.names import free_names
from ..analysis.purity import pure_expression
from ..errors import (
    AdjudicationError,
    BuiltinArgumentError,
    LimitError,
    Refusal,
    did_you_mean,
)
from ..loading.inputs import complete_default, holds_record_type
from ..model.dice import DiceKind, literal_kind
from ..model.ruleset import Procedure, Ruleset, Stack
from ..model.stacks import evaluate_stack
from ..model.values import (
    CELLS_PER_STEP,
    CHARACTERS_PER_CELL,
    DEAD,
    LIST_DEPTHS,
    LIST_DEPTHS_KEPT,
    Record,
    Roll,
    any_roll,
    brief,
    built_depth,
    check_built,
    check_number,
    check_repeat,
    check_size,
    check_text,
    depth_of,
    key_form,
    normalise,
    show,
    show_cut,
    size_error,
    type_name,
)
from ..reading import syntax as ast
from ..runtime.functions import AGGREGATES, BUILTINS, LIST_LENGTH  # noqa: F401  (AGGREGATES: importable from here too)
from ..runtime.operators import BINARY as _BINARY
from ..runtime.operators import COMPARISONS as _FAST
from ..runtime.operators import RAW_ARITHMETIC as _RAW
from ..runtime.operators import arith_error as _arith_error
from ..runtime.operators import truth as _truth

Fn = Callable[[dict, Any], Any]


# ---- closures shared by several expressions -----------------------------------------

def _logic2(f1, p1, f2, p2, op: str):
    """``a and b`` / ``a or b`` as one closure: the first operand decides unless it is the neutral value."""
    decisive = op == "or"          # True ends an 'or', False ends an 'and'
    what = f"operand of '{op}'"

    def logic2(env, rt):
        v = f1(env, rt)
        if v is decisive:
            return v
        if v is not (not decisive):
            _truth(v, p1, what)
        v = f2(env, rt)
        if v is True or v is False:
            return v
        return _truth(v, p2, what)
    logic2.operands = (f1, p1, f2, p2, decisive, what)    # an untraced `if` runs them in place
    return logic2


# ---- the compiler ------------------------------------------------------------------

class _PartsOnDemand(dict):
    """``Compiler.parts`` of a lazily compiled ruleset: asking for a part not yet compiled compiles the rest
    (each pending procedure, then each traced body not yet compiled: the parts are the traced closures)."""

    def __init__(self, pending: dict, traced_pending: dict):
        super().__init__()
        self.pending = pending
        self.traced_pending = traced_pending

    def __missing__(self, key):
        for compile_now in list(self.pending.values()):
            compile_now()
        for compile_body in list(self.traced_pending.values()):
            compile_body()
        return dict.__getitem__(self, key)


class Compiler:
    def __init__(self, ruleset: Ruleset, prefix_caching: bool = True):
        self.ruleset = ruleset
        self.globals = {name: Record(c.entries) for name, c in ruleset.catalogues.items()}
        self.overlay_files = set(ruleset.overlays)
        self.prefix_caching = prefix_caching
        self.in_overlay = False   # compiling the inside of a step an overlay supplied
        self.roll_names: set[str] = set()   # names the current procedure rolls into
        self.rolls_may_hide = True           # set by compile(): can a roll sit inside a record or list?
        self.static_names: set[str] = set()  # names fixed by the current procedure's cached prefix
        self.static_slots = 0
        self.untraced = False     # compiling parts that only untraced runs use (analysis/caching.py): no trace code
        self.traced_pending: dict | None = None   # lazy compile: traced bodies not compiled yet, by procedure
        self._param_constants: dict = {}          # procedure name -> its written-out parameter defaults
        # lengths from which a list or text just built is checked: its limit (which a ruleset may set low)
        # or its charge in steps (model/values.py), whichever comes first; shorter ones need no look
        limits = ruleset.limits
        self.list_checked_from = min(CELLS_PER_STEP, limits["list"] + 1)
        self.text_checked_from = min(CELLS_PER_STEP * CHARACTERS_PER_CELL, limits["text"] + 1)
        # each statement's, condition's and loop source's closure, by id of its syntax node (the
        # first compile, without prefix-cache wrappers): the state enumerator (odds/states.py) runs them
        self.parts: dict = {}

    def compile(self, lazy: bool = False, analysed: bool = False) -> None:
        """Compile the stacks and every procedure.

        ``analysed``: ``analyse`` already ran on this ruleset (a cached load keeps its facts).
        ``lazy``: each procedure is compiled when it first runs (or when the state enumerator
        asks for its parts), so a command that runs a few procedures compiles only those.
        """
        if not analysed:
            analyse(self.ruleset)
        self.rolls_may_hide = self.ruleset.rolls_may_hide
        for stack in self.ruleset.stacks.values():
            self.compile_stack(stack)
        if not lazy:
            self.ruleset.parts = self.parts
            for proc in self.ruleset.procedures.values():
                self.compile_procedure(proc)
            return
        pending = {}
        self.lock = allocate_lock()
        self.traced_pending = {}
        self.parts = self.ruleset.parts = _PartsOnDemand(pending, self.traced_pending)
        for proc in self.ruleset.procedures.values():
            pending[proc.name] = self._compile_on_first_use(proc, pending)

    def _compile_on_first_use(self, proc: Procedure, pending: dict) -> Callable:
        """Stand-ins for ``proc.run``, ``proc.run_untraced`` and ``proc.fill_defaults`` that compile it first."""
        def compile_now():
            if proc.name in pending:
                with self.lock:     # one procedure at a time: compiling uses the compiler's per-procedure state
                    if proc.name in pending:
                        self.compile_procedure(proc)
                        del pending[proc.name]

        def run(env, rt):
            compile_now()
            return proc.run(env, rt)

        def run_untraced(env, rt):
            compile_now()
            return proc.run_untraced(env, rt)

        def fill_defaults(env, rt):
            compile_now()
            if proc.fill_defaults is not None:
                proc.fill_defaults(env, rt)
        proc.run, proc.run_untraced, proc.fill_defaults = run, run_untraced, fill_defaults
        return compile_now

    # -- stacks
    def compile_stack(self, stack: Stack) -> None:
        for m in stack.modifiers:
            m.value_fn = self.expr(m.value)
            m.when_fn = self.expr(m.when) if m.when is not None else None
            m.times_fn = self.expr(m.times) if m.times is not None else None

    # -- procedures
    def enter(self, proc: Procedure) -> dict:
        """Set the per-procedure state that compiling ``proc``'s statements reads; its facts (analysis/facts.py)."""
        facts = proc.analysis or procedure_facts(self.ruleset, proc, self.globals)
        self.unordered_rolls, self.roll_names = facts["unordered_rolls"], facts["roll_names"]
        self.in_overlay = proc.pos.file in self.overlay_files   # its statements need no marks of their own
        return facts

    def compile_procedure(self, proc: Procedure) -> None:
        """Set ``proc.run``, ``run_untraced`` and ``fill_defaults``.

        A lazily compiled ruleset compiles each form when it is first needed: the traced body when a traced
        run (or an untraced run's rare fallback to it, or the state enumerator's ``parts``) first needs it,
        the untraced run on the first untraced run. `umpire test` and `simulate` run untraced only and
        `resolve` traced only; compiling both forms of every procedure they touch doubled their start.
        """
        self.enter(proc)
        added_by_overlay = self.in_overlay
        statements = proc.syntax.body
        body = self.traced_body(proc, statements)
        run_untraced = self.untraced_run(proc, statements, body)

        # literal defaults are plain values; others are evaluated per call, in order
        constants = self.param_constants(proc)
        defaults = [(p.name, self.expr(p.default)) for p in proc.params
                    if p.default is not None and p.name not in constants]
        name, cite = proc.name, proc.cite
        pos = proc.pos

        fills: dict = {}    # the names given, in order -> the constant defaults they leave out, in order

        def fill_defaults(env: dict, rt) -> None:
            if constants:
                given = tuple(env)
                add = fills.get(given)
                if add is None:
                    if len(fills) >= _MEMO_LIMIT:
                        fills.clear()
                    add = fills[given] = {k: v for k, v in constants.items() if k not in env}
                if add:
                    env.update(add)
            if defaults:
                for pname, default in defaults:
                    if pname not in env:
                        env[pname] = default(env, rt)

        def run_traced(env: dict, rt) -> Any:
            trace = rt.trace
            emitted = env[_EMIT] = {}
            args = {k: v for k, v in env.items() if k != _EMIT}
            trace.add("call", f"{name}({', '.join(f'{k}: {brief(v)}' for k, v in args.items())})", cite,
                      origin=pos if added_by_overlay else None, args=args)
            trace.depth += 1
            try:
                signal = body(env, rt)
            finally:
                trace.depth -= 1
            value = bounded_result(signal[0] if signal is not None else None, emitted, rt, pos)
            trace.add("result", f"{name} gives {brief(value, 160)}", None)
            return value

        if constants or defaults:
            def run(env: dict, rt) -> Any:
                """Run the procedure; ``env`` (a fresh dict of the arguments) becomes its local variables."""
                fill_defaults(env, rt)
                if rt.trace is None:
                    return proc.run_untraced(env, rt)
                return run_traced(env, rt)
        else:
            def run(env: dict, rt) -> Any:
                """Run the procedure; ``env`` (a fresh dict of the arguments) becomes its local variables."""
                if rt.trace is None:
                    return proc.run_untraced(env, rt)
                return run_traced(env, rt)

        proc.run = run
        proc.run_untraced = run_untraced
        proc.fill_defaults = fill_defaults if constants or defaults else None

    def untraced_run(self, proc: Procedure, statements, body: Fn) -> Fn:
        """The untraced run (analysis/caching.py's runner over the reusable prefix and suffix): compiled now in an eager
        compile, else on the first untraced run, after which it replaces ``proc.run_untraced`` (every caller
        reads that attribute when it calls)."""
        def compile_untraced() -> Fn:
            facts = self.enter(proc)
            # the deterministic start and end of the body are reused across untraced runs (analysis/caching.py)
            split = facts["plan"] if self.prefix_caching else plan(self.ruleset, proc, self.globals, False)
            k, j = split.prefix_end, split.suffix_start
            self.untraced = True
            try:
                prefix = self.block(statements[:k]) if k else None
                self.static_names = split.static_names
                self.static_slots = 0
                middle = self.block_parts(statements[k:j])[:3] if k < j else None
                self.static_names = set()
                suffix = self.block(statements[j:]) if j < len(statements) else None
            finally:
                self.untraced = False
            return untraced_runner(proc, body, prefix, middle, suffix, split.suffix_reads, self.rolls_may_hide,
                                   split.emits, frozenset(self.roll_names), split.middle_emits, split.calling)

        if self.traced_pending is None:
            return compile_untraced()
        compiled = None

        def first_untraced_run(env, rt):
            nonlocal compiled
            if compiled is None:
                with self.lock:     # the compiler's per-procedure state is shared: one compile at a time
                    if compiled is None:
                        compiled = compile_untraced()
                proc.run_untraced = compiled
            return compiled(env, rt)
        return first_untraced_run

    def traced_body(self, proc: Procedure, statements) -> Fn:
        """The body's traced block: compiled now in an eager compile, else on its first run."""
        traced_pending = self.traced_pending
        if traced_pending is None:
            return self.block(statements)
        compiled = None

        def compile_body() -> Fn:
            nonlocal compiled
            if compiled is None:
                with self.lock:     # the compiler's per-procedure state is shared: one compile at a time
                    if compiled is None:
                        self.enter(proc)
                        compiled = self.block(statements)
                        traced_pending.pop(proc.name, None)
            return compiled

        def body(env, rt):
            return (compiled or compile_body())(env, rt)
        traced_pending[proc.name] = compile_body
        return body

    def param_constants(self, proc: Procedure) -> dict:
        """Each parameter default written out in full (a literal, or a list or record of literals) as its value,
        in parameter order: filled in without evaluating anything. A default of a record type is completed as
        an input of that type is (its catalogue entry's fields, the type's field defaults; the checker made
        sure it can be)."""
        found = self._param_constants.get(proc.name)
        if found is None:
            found = {}
            for p in proc.params:
                value = written_out(p.default)
                if value is NOT_WRITTEN_OUT:
                    continue
                if value is not None and holds_record_type(self.ruleset, p.type):
                    value = complete_default(self.ruleset, p.type, value, p.default.pos)
                found[p.name] = value
            self._param_constants[proc.name] = found
        return found

    def block_parts(self, statements) -> tuple:
        """(statement closures, steps charged, first position, which statements can return) of a block."""
        compiled = [(self.statement(s), s) for s in statements]
        cost = len(compiled)
        if self.untraced:   # statements that only write the trace (notes) do nothing here, but still count
            compiled = [(fn, s) for fn, s in compiled if fn is not None]
        fns = tuple(fn for fn, _ in compiled)
        first = statements[0].pos if statements else None
        # only a statement with a `return` inside can end the block; the others need no look at their signal
        return fns, cost, first, [_returns(s) for _, s in compiled]

    def block(self, statements) -> Fn:
        """Run statements in order until one returns; the step budget is charged once per block entry.

        A statement's signal is None, or the procedure's return as a 1-tuple ``(value,)`` (a tuple, as
        ``None`` is a value a procedure may return; no object to initialise)."""
        fns, cost, first, ending = self.block_parts(statements)
        if not fns:
            def run_none(env, rt):
                rt.steps_left -= cost
                if rt.steps_left < 0:
                    rt.out_of_steps(first)
            return run_none
        if len(fns) == 1 and cost == 1:
            only = fns[0]
            if getattr(only, "returned", None) is not None:
                value = only.returned

                def run_return(env, rt):
                    """A block that is one `return` of a value: charged and run in one closure."""
                    rt.steps_left -= 1
                    if rt.steps_left < 0:
                        rt.out_of_steps(first)
                    return (value(env, rt),)
                return run_return

            def run_one(env, rt):
                rt.steps_left -= 1
                if rt.steps_left < 0:
                    rt.out_of_steps(first)
                return only(env, rt)
            return run_one

        if not any(ending[:-1]):
            head, last = fns[:-1], fns[-1]

            def run_straight(env, rt):
                """A block whose statements cannot return before its last one."""
                rt.steps_left -= cost
                if rt.steps_left < 0:
                    rt.out_of_steps(first)
                for fn in head:
                    fn(env, rt)
                return last(env, rt)
            return run_straight

        def run_block(env, rt):
            rt.steps_left -= cost
            if rt.steps_left < 0:
                rt.out_of_steps(first)
            for fn in fns:
                signal = fn(env, rt)
                if signal is not None:
                    return signal
            return None
        return run_block

    # -- statements
    def statement(self, s: ast.Statement) -> Fn:
        method = getattr(self, "s_" + type(s).__name__.lower())
        from_overlay = s.pos.file in self.overlay_files and not self.in_overlay
        self.in_overlay = self.in_overlay or from_overlay
        try:
            fn = method(s, self.ruleset.cite(s.cite))
        finally:
            if from_overlay:
                self.in_overlay = False
        if self.untraced:
            return fn
        fn = _from_overlay(fn, s.pos) if from_overlay else fn
        self.parts.setdefault(id(s), fn)
        return fn

    def s_let(self, s: ast.Let, cite):
        if self.untraced:
            return self.untraced_let(s)
        value, name, text = self.static_or_expr(s.value), s.name, ast.unparse(s.value)

        def let(env, rt):
            v = env[name] = value(env, rt)
            if rt.trace is not None:
                rt.trace.add("let", _let_line(name, v, text), cite)
        return let

    def untraced_let(self, s: ast.Let) -> Fn:
        """An untraced ``let``/``set``, in the cheapest closure its value allows: fused with its value, a
        constant, a local or a local's field read in place, a kept static value, a roll's field."""
        fused = self.fused_let(s)
        if fused is not None:
            return fused
        name = s.name
        if isinstance(s.value, ast.Literal):
            const = s.value.value

            def let_const(env, rt):
                env[name] = const
            return let_const
        var, field = self.local_read(s.value)
        kept = self.kept_static(s.value, store=name) if var is None else None
        if kept is not None:
            return kept
        value = self.expr(s.value)
        if var is not None and field is None:
            def let_name(env, rt):
                try:
                    env[name] = env[var]
                except KeyError:
                    env[name] = value(env, rt)     # its positioned error
            return let_name
        if var is not None:
            def let_field(env, rt):
                try:
                    env[name] = env[var][field]
                except (KeyError, TypeError):
                    env[name] = value(env, rt)     # its positioned error, or a roll's field
            return let_field
        roll_var, slot = self.roll_read(s.value)
        if roll_var is not None:
            def let_roll_field(env, rt):
                r = env.get(roll_var)
                env[name] = r._d[slot] if r.__class__ is Roll else value(env, rt)
            return let_roll_field

        def let_untraced(env, rt):
            env[name] = value(env, rt)
        return let_untraced

    s_set = s_let

    def fused_let(self, s: ast.Let) -> Fn | None:
        """An untraced `let`/`set` whose value's closure stores it itself (one closure, not two): a call of
        a procedure that is not pure, ``xs + [x]`` of a local, ``dr.original + x``, a table lookup; else None."""
        e = s.value
        if isinstance(e, ast.Call) and not self.ruleset.procedures[e.procedure].deterministic:
            return self.e_call(e, store=s.name)
        if isinstance(e, ast.Binary) and e.op in _RAW and (self.roll_read(e.left)[0] is not None or (
                e.op == "+" and self.local_name(e.left) is not None and isinstance(e.right, ast.ListExpr)
                and len(e.right.items) == 1)):
            return self.e_binary(e, store=s.name)
        if isinstance(e, ast.Lookup):
            return self.e_lookup(e, store=s.name)
        return None

    def s_roll(self, s: ast.Roll, cite):
        if s.dice.size is not None:
            return self.s_roll_sized(s, cite)
        kind = self.dice_kind(s.dice)
        if s.name in self.unordered_rolls and kind.count > 1:
            kind = dataclasses.replace(kind, ordered=False)
        modifier = self.roll_modifier(s, cite)
        name, names, pos, label = s.name, kind.names, s.pos, kind.describe()
        made: dict = {}     # faces -> the unmodified Roll (values never change: one object per outcome)

        def unmodified_roll(env, rt):
            faces = rt.dice.roll(kind, name, pos)
            r = made.get(faces)
            if r is None:
                r = Roll(faces, names, 0)
                if len(made) < _MEMO_LIMIT:
                    made[faces] = r
            env[name] = r
        if self.untraced and modifier is None:
            return unmodified_roll

        def roll(env, rt):
            if modifier is None:
                unmodified_roll(env, rt)
                r = env[name]
                faces = r.dice
            else:
                faces = rt.dice.roll(kind, name, pos)
                r = env[name] = Roll(faces, names, modifier(env, rt))
            if rt.trace is not None:
                detail = ", ".join(f"{n} {d}" for n, d in zip(names, faces)) if len(faces) > 1 else str(faces[0])
                text = f"roll {name}: {label} -> {detail}"
                if len(faces) > 1:
                    text += f" = {r.original}" + (" (doubles)" if r.doubles else "")
                if r.modifier:
                    text += f"; modified by {show(r.modifier)} -> final {show(normalise(r.final))}"
                rt.trace.add("roll", text, cite, dice=faces, original=r.original, final=r.final)
        return roll

    def roll_modifier(self, s: ast.Roll, cite):
        """A roll's modifier, checked to be a number where it is computed (text or a list is a positioned error)."""
        if s.modifier is None:
            return None
        expr, pos, text = self.expr(s.modifier), s.modifier.pos, ast.unparse(s.modifier)

        def modifier(env, rt):
            m = expr(env, rt)
            c = m.__class__
            if c is int or c is Fraction or c is Roll or c is float or m is DEAD:
                return m
            raise AdjudicationError(f"the modifier of roll {s.name} ({text}) must be a number, not "
                                    f"{type_name(m)} {brief(m, 60)}", pos, citation=cite)
        return modifier

    def s_roll_sized(self, s: ast.Roll, cite):
        """One die whose number of sides is evaluated when the roll is made (a random pick among n)."""
        size = self.expr(s.dice.size)
        modifier = self.roll_modifier(s, cite)
        name, pos, text = s.name, s.pos, ast.unparse(s.dice.size)
        kinds: dict[int, DiceKind] = {}

        def roll(env, rt):
            n = size(env, rt)
            if n.__class__ is not int or n < 1:
                raise AdjudicationError(f"a die rolled as d({text}) needs a whole number of sides of at least 1, "
                                        f"not {show(n)}", pos, citation=cite)
            kind = kinds.get(n)
            if kind is None:
                if n > rt.limits["sides"]:
                    size_error(f"a die rolled as d({text}) would have {n:,} sides", "sides", rt.limits["sides"], pos)
                kind = kinds[n] = literal_kind(1, n)
            faces = rt.dice.roll(kind, name, pos)
            r = env[name] = Roll(faces, kind.names, modifier(env, rt) if modifier is not None else 0)
            if rt.trace is not None:
                text_ = f"roll {name}: d{n} ({text}) -> {faces[0]}"
                if r.modifier:
                    text_ += f"; modified by {show(r.modifier)} -> final {show(normalise(r.final))}"
                rt.trace.add("roll", text_, cite, dice=faces, original=r.original, final=r.final)
        return roll

    def s_emit(self, s: ast.Emit, cite):
        value, name = self.static_or_expr(s.value), s.name
        if self.untraced:
            var, field = self.local_read(s.value)
            if var is not None and field is None:
                def emit_name(env, rt):
                    try:
                        env[_EMIT][name] = env[var]
                    except KeyError:
                        env[_EMIT][name] = value(env, rt)     # its positioned error
                return emit_name
            if var is not None:
                def emit_field(env, rt):
                    try:
                        env[_EMIT][name] = env[var][field]
                    except (KeyError, TypeError):
                        env[_EMIT][name] = value(env, rt)     # its positioned error, or a roll's field
                return emit_field
            roll_var, slot = self.roll_read(s.value)
            if roll_var is not None:
                def emit_roll_field(env, rt):
                    r = env.get(roll_var)
                    env[_EMIT][name] = r._d[slot] if r.__class__ is Roll else value(env, rt)
                return emit_roll_field

            def emit_untraced(env, rt):
                env[_EMIT][name] = value(env, rt)
            return emit_untraced

        def emit(env, rt):
            v = env[_EMIT][name] = value(env, rt)
            if rt.trace is not None and cite:
                rt.trace.add("emit", f"{name}: {brief(v, 100)}", cite)
        return emit

    def s_return(self, s: ast.Return, cite):
        value = self.expr(s.value) if s.value is not None else None

        def ret(env, rt):
            return (value(env, rt) if value is not None else None,)
        ret.returned = value     # a block of this statement alone runs it in place (block)
        return ret

    def s_note(self, s: ast.Note, cite):
        if self.untraced:
            return None      # a note only writes the trace (its text is not even evaluated untraced)
        text = self.expr(s.text)

        def note(env, rt):
            """Write the note; whatever stops its text (a division by zero, a missing chart cell) is written
            instead, and its steps are given back: untraced runs skip notes, and must give the same result."""
            trace = rt.trace
            if trace is not None:
                steps = rt.steps_left
                try:
                    line = show(text(env, rt))
                except (AdjudicationError, Refusal) as e:
                    line = f"(this note could not be written: {e.reason if isinstance(e, Refusal) else e.message})"
                finally:
                    rt.steps_left = steps
                trace.add("note", line, cite)
        return note

    def s_fail(self, s: ast.Fail, cite):
        message, pos = self.expr(s.message), s.pos

        def fail(env, rt):
            raise AdjudicationError(show(message(env, rt)), pos, citation=cite)
        return fail

    def s_refuse(self, s: ast.Refuse, cite):
        reason = self.expr(s.reason)

        def refuse(env, rt):
            text = show(reason(env, rt))
            if rt.trace is not None:
                rt.trace.add("refuse", f"refused: {text}", cite)
            raise Refusal(text, cite)
        return refuse

    def s_choose(self, s: ast.Choose, cite):
        options, default, name, pos = self.expr(s.options), self.expr(s.default), s.name, s.pos

        def choose(env, rt):
            opts = options(env, rt)
            if name in rt.choices:
                wanted = rt.choices[name]
                if isinstance(wanted, (list, tuple)) and _match_choice(wanted, opts) is _NO_MATCH:
                    # a list of answers: one per time this decision comes up, in order
                    used = rt.choice_counts.get(name, 0)
                    if used >= len(wanted):
                        raise AdjudicationError(f"choice '{name}' came up {used + 1} times, but the situation "
                                                f"gives only {len(wanted)} answers", pos)
                    rt.choice_counts[name] = used + 1
                    wanted = wanted[used]
                value = _match_choice(wanted, opts)
                if value is _NO_MATCH:
                    raise AdjudicationError(f"choice '{name}' is {show(wanted)}, which is not one of the options: "
                                            f"{', '.join(_option_label(o) for o in opts)}", pos, value=wanted)
                how = "given in the situation"
            else:
                value = default(env, rt)
                how = "default policy"
            env[name] = value
            if rt.trace is not None:
                rt.trace.add("choose", f"choice {name}: {_option_label(value)} ({how})", cite)
        return choose

    def s_if(self, s: ast.If, cite):
        branches = []
        for b in s.branches:
            cond = self.expr(b.condition) if b.condition is not None else None
            if not self.untraced:       # the parts are the traced closures (the state enumerator runs them)
                self.parts.setdefault(id(b), cond)
            branches.append((cond, self.block(b.body), ast.unparse(b.condition) if b.condition is not None else None,
                             self.ruleset.cite(b.cite), b.condition.pos if b.condition is not None else b.pos))
        many = len(branches) > 1
        ruled_out = (f"otherwise ({ast.unparse(ast.Unary(s.pos, 'not', s.branches[0].condition))})"
                     if len(branches) == 2 else "otherwise (none of the conditions above)")

        def traced(env, rt):
            for cond, body, text, bcite, pos in branches:
                if cond is None:
                    if many:
                        rt.trace.add("branch", ruled_out, bcite)
                    return body(env, rt)
                c = cond(env, rt)
                if c is True:
                    rt.trace.add("branch", f"{text}: yes", bcite)
                    return body(env, rt)
                if c is not False:
                    _truth(c, pos)
                if bcite:
                    rt.trace.add("branch", f"{text}: no", bcite)
            return None

        if len(branches) == 1 or (len(branches) == 2 and branches[1][0] is None):
            cond, body, _, _, pos = branches[0]
            other = branches[1][1] if len(branches) == 2 else None
            untraced_if = _if_untraced(cond, body, other, pos, self.local_read(s.branches[0].condition))
            if self.untraced:
                return untraced_if

            def if_else(env, rt):
                """`if` with at most an `else`: the common shape, without the branch loop."""
                if rt.trace is not None:
                    return traced(env, rt)
                return untraced_if(env, rt)
            return if_else

        plain = [(cond, body, pos) for cond, body, _, _, pos in branches]

        def if_chain(env, rt):
            if rt.trace is not None:
                return traced(env, rt)
            for cond, body, pos in plain:
                if cond is None:
                    return body(env, rt)
                c = cond(env, rt)
                if c is True:
                    return body(env, rt)
                if c is not False:
                    _truth(c, pos)
            return None
        return if_chain

    def s_foreach(self, s: ast.ForEach, cite):
        if self.untraced:
            return self.s_foreach_untraced(s)
        source, body, var, pos = self.expr(s.source), self.block(s.body), s.var, s.pos
        self.parts.setdefault(("source", id(s)), source)

        def for_each(env, rt):
            items = source(env, rt)
            if not isinstance(items, tuple) or len(items) > rt.limits["loop"]:
                _loop_refused(items, rt, pos)
            for item in items:
                env[var] = item
                signal = body(env, rt)
                if signal is not None:
                    return signal
            return None
        return for_each

    def s_foreach_untraced(self, s: ast.ForEach):
        """An untraced `for each`: its body's statements run in this closure (no block closure per item)."""
        source, var, pos = self.expr(s.source), s.var, s.pos
        fns, cost, first, _ = self.block_parts(s.body)
        src = self.local_name(s.source)
        only = fns[0] if len(fns) == 1 else None

        def for_each_untraced(env, rt):
            items = env[src] if src in env else source(env, rt)
            if not isinstance(items, tuple) or len(items) > rt.limits["loop"]:
                _loop_refused(items, rt, pos)
            for item in items:
                env[var] = item
                left = rt.steps_left - cost       # the body's steps, as its block would charge them
                rt.steps_left = left
                if left < 0:
                    rt.out_of_steps(first)
                if only is not None:
                    signal = only(env, rt)
                    if signal is not None:
                        return signal
                    continue
                for fn in fns:
                    signal = fn(env, rt)
                    if signal is not None:
                        return signal
            return None
        return for_each_untraced

    def static_or_expr(self, e) -> Fn:
        """An expression, kept per prefix state when it reads only static names (analysis/caching.py)."""
        return self.kept_static(e) or self.expr(e)

    def kept_static(self, e, store: str | None = None) -> Fn | None:
        """The closure that keeps ``e``'s value per prefix state, or None when ``e`` reads anything but
        static names. With ``store`` it is an untraced ``let store = e`` (one closure, not two)."""
        if not self.static_names or isinstance(e, (ast.Literal, ast.Name)):
            return None
        if not free_names(e) <= self.static_names or not pure_expression(self.ruleset, e):
            return None
        fn = self.expr(e)
        slot = self.static_slots
        self.static_slots += 1

        def static_value(env, rt):
            """The kept value, its steps charged as if worked out (an aggregate's items, a call's statements);
            worked out again when they would overrun the steps left, or from deeper calls than the first time,
            so that a limit stops it where it would."""
            kept_values = env.get(_STATIC)
            if kept_values is None:
                value = fn(env, rt)
            else:
                kept = kept_values.get(slot)
                if kept is not None:
                    value, used, depth = kept
                    left = rt.steps_left - used
                    if left >= 0 and rt.depth <= depth:
                        rt.steps_left = left
                        if store is None:
                            return value
                        env[store] = value
                        return None
                before = rt.steps_left
                value = fn(env, rt)      # an error is not kept: it happens again next time
                kept_values[slot] = (value, before - rt.steps_left, rt.depth)
            if store is None:
                return value
            env[store] = value
        return static_value

    def dice_kind(self, spec: ast.DiceSpec) -> DiceKind:
        return roll_kind(self.ruleset, spec)

    def local_name(self, e) -> str | None:
        """The variable a plain local name reads (closures read it with ``env[v] if v in env``), else None."""
        var, field = self.local_read(e)
        return var if field is None else None

    def local_read(self, e) -> tuple:
        """(name, None) for a local variable, (name, field) for a record field of one, else (None, None).

        Closures read these straight from the locals; on any miss they call the compiled expression,
        which gives the same value or the same positioned error.
        """
        if isinstance(e, ast.Name) and e.name not in self.globals:
            return e.name, None
        if isinstance(e, ast.Attribute) and isinstance(e.target, ast.Name) and e.target.name not in self.globals \
                and e.target.name not in self.roll_names:
            return e.target.name, e.name
        return None, None

    def roll_read(self, e) -> tuple:
        """(name, slot of Roll._d) for a stored field of a rolled name (``dr.original``), else (None, None).

        Closures read it straight from the roll; when the name holds no roll they call the compiled expression.
        """
        if isinstance(e, ast.Attribute) and isinstance(e.target, ast.Name) and e.target.name in self.roll_names \
                and e.target.name not in self.globals and e.name in _ROLL_SLOTS:
            return e.target.name, _ROLL_SLOTS[e.name]
        return None, None

    # -- expressions
    def expr(self, e) -> Fn:
        return getattr(self, "e_" + type(e).__name__.lower())(e)

    def e_literal(self, e: ast.Literal):
        v = e.value
        return lambda env, rt: v

    def e_interpolated(self, e: ast.Interpolated):
        parts = [p if isinstance(p, str) else self.expr(p) for p in e.parts]

        pos, checked_from = e.pos, self.text_checked_from

        def text(env, rt):
            out = "".join(p if isinstance(p, str) else show(p(env, rt)) for p in parts)
            return out if len(out) < checked_from else check_text(out, rt, pos)
        return text

    def e_name(self, e: ast.Name):
        name, pos = e.name, e.pos
        if name in self.globals:
            value = self.globals[name]
            return lambda env, rt: value

        def local(env, rt):
            try:
                return env[name]
            except KeyError:
                raise AdjudicationError(f"'{name}' has no value here (it is only set on some paths through "
                                        "the procedure)", pos) from None
        local.reads = (1, name, None)     # what it reads, for closures that read it in place (_if_untraced)
        return local

    def e_attribute(self, e: ast.Attribute):
        name, pos = e.name, e.pos
        if isinstance(e.target, ast.Locate):
            return self.e_locate(e.target, name, pos)
        if isinstance(e.target, ast.Name) and e.target.name in self.roll_names and name in _ROLL_FIELDS:
            var, getter = e.target.name, _ROLL_FIELDS[name]
            slot = _ROLL_SLOTS.get(name)

            def roll_field(env, rt):
                try:
                    v = env[var]
                except KeyError:
                    raise AdjudicationError(f"'{var}' has no value here (it is only set on some paths through "
                                            "the procedure)", pos) from None
                if v.__class__ is Roll:
                    return v._d[slot] if slot is not None else getter(v)
                try:            # the name holds something else here: read it like any value
                    return v[name]
                except (KeyError, TypeError):
                    return _slow_attribute(v, name, pos)
            if slot is not None:
                roll_field.reads = (3, var, slot)
            return roll_field
        if isinstance(e.target, ast.Name) and e.target.name not in self.globals:
            var, vpos = e.target.name, e.target.pos

            def local_attribute(env, rt):
                try:
                    v = env[var]
                except KeyError:
                    raise AdjudicationError(f"'{var}' has no value here (it is only set on some paths through "
                                            "the procedure)", vpos) from None
                try:
                    return v[name]
                except (KeyError, TypeError):
                    return _slow_attribute(v, name, pos)
            local_attribute.reads = (2, var, name)
            return local_attribute
        target = self.expr(e.target)

        def attribute(env, rt):
            v = target(env, rt)
            try:
                return v[name]
            except (KeyError, TypeError):
                return _slow_attribute(v, name, pos)
        return attribute

    def e_index(self, e: ast.Index):
        target, index, pos = self.expr(e.target), self.expr(e.index), e.pos

        def index_(env, rt):
            v, i = target(env, rt), index(env, rt)
            try:
                return v[i]
            except (KeyError, IndexError, TypeError):
                if isinstance(v, Record):
                    raise AdjudicationError(f"there is no entry '{show(i)}'", pos, hint=did_you_mean(i, v.keys()),
                                            value=i) from None
                if isinstance(v, tuple):
                    raise AdjudicationError(f"index {show(i)} is outside the list (it has {len(v)} items)", pos) from None
                raise AdjudicationError(f"cannot index {type_name(v)} {show(v)}", pos) from None
        return index_

    def e_update(self, e: ast.Update):
        target, pos = self.expr(e.target), e.pos
        fields = [(k, self.expr(v)) for k, v in e.fields]

        def update(env, rt):
            v = target(env, rt)
            if not isinstance(v, Record):
                if v is DEAD:
                    return DEAD
                raise AdjudicationError(f"'with' updates a record, not {type_name(v)} {show(v)}", pos)
            changes = {k: f(env, rt) for k, f in fields}
            new = v.updated(changes)
            try:
                flat = v._depth == 1
            except AttributeError:    # a record not built here (an input): its depth, kept for the next time
                flat = built_depth(v) == 1
            if flat:       # a flat record given flat values stays flat: no need to look at every field again
                for x in changes.values():
                    c = x.__class__
                    if c is tuple or c is Record:
                        return check_built(new, rt, pos)
                new._depth = 1
                n = len(new)
                if n >= CELLS_PER_STEP or n > rt.limits["list"] or rt.limits["nesting"] < 1:
                    return check_size(new, 1, rt, pos)
                return new
            return check_built(new, rt, pos)
        return update

    def e_merge(self, e: ast.Merge):
        target, other, pos = self.expr(e.target), self.expr(e.other), e.pos

        def merge(env, rt):
            v, o = target(env, rt), other(env, rt)
            if v.__class__ is not Record or o.__class__ is not Record:
                if v is DEAD or o is DEAD:
                    return DEAD
                bad, what = (v, "updates a record") if v.__class__ is not Record else (o, "takes the fields of a record")
                raise AdjudicationError(f"'with' {what}, not {type_name(bad)} {show(bad)}", pos)
            return check_built(v.updated(o), rt, pos)
        return merge

    def e_listexpr(self, e: ast.ListExpr):
        if all(isinstance(i, ast.Literal) for i in e.items):
            constant = tuple(i.value for i in e.items)
            return lambda env, rt: constant
        items, pos = [self.expr(i) for i in e.items], e.pos
        if len(items) == 1:
            f1 = items[0]

            def list1(env, rt):
                """A one-item list (``out + [x]``): its depth known from its item's, when that keeps it."""
                v = f1(env, rt)
                c = v.__class__
                if c is Record:
                    try:
                        d = v._depth + 1
                    except AttributeError:
                        return check_built((v,), rt, pos)
                    limits = rt.limits
                    if d > limits["nesting"] or limits["list"] < 1:
                        return check_size((v,), d, rt, pos)      # its error
                    return (v,)
                if c is tuple:
                    return check_built((v,), rt, pos)
                return (v,)
            return list1

        def list_(env, rt):
            t = tuple([f(env, rt) for f in items])
            for v in t:
                c = v.__class__
                if c is tuple or c is Record:     # a list of lists or records: bound the nesting
                    return check_built(t, rt, pos)
            return t
        return list_

    def e_recordexpr(self, e: ast.RecordExpr):
        if all(isinstance(v, ast.Literal) for _, v in e.fields):
            constant = Record([(k, v.value) for k, v in e.fields])
            return lambda env, rt: constant
        fields, pos = [(k, self.expr(v)) for k, v in e.fields], e.pos

        made = _record_maker(fields)
        specs = _direct_fields(e.fields, self.local_read)
        if specs is not None:
            # every field a literal, a local or a local's field: read in one pass (no closure per field)
            made = _direct_record(specs, made)

        def record(env, rt):
            r = made(env, rt)
            d = 1
            for v in r.values():
                c = v.__class__
                if c is Record or c is tuple:     # lists or records inside: bound the nesting
                    vd = depth_of(v) + 1
                    if vd > d:
                        d = vd
            r._depth = d                          # known without looking again
            r._hash = None     # not hashed yet (an unset slot would make its first hash raise an AttributeError)
            if d == 1:
                return r
            limits = rt.limits
            if d > limits["nesting"] or len(r) > limits["list"] or len(r) >= CELLS_PER_STEP:
                return check_size(r, d, rt, pos)
            return r
        return record

    def e_unary(self, e: ast.Unary):
        operand, pos = self.expr(e.operand), e.pos
        if e.op == "not":
            def not_(env, rt):
                v = operand(env, rt)
                if v is True:
                    return False
                if v is False:
                    return True
                return not _truth(v, pos, "'not'")
            return not_

        var = self.local_name(e.operand)

        def neg(env, rt):
            v = env[var] if var in env else operand(env, rt)
            try:
                if isinstance(v, bool):
                    raise TypeError
                return -v
            except TypeError:
                raise AdjudicationError(f"cannot negate {type_name(v)} {show(v)}", pos) from None
        return neg

    def e_binary(self, e: ast.Binary, store: str | None = None):
        """A binary operation's closure. With ``store`` (an untraced `let`/`set` of ``xs + [x]`` or
        ``dr.original + x``, see ``fused_let``), a statement closure that puts the value in that local."""
        if e.op in _FAST:
            return self.comparison(e)
        if e.op in _RAW:
            return self.arithmetic(e, store)
        if e.op in ("in", "not in"):
            return self.membership(e)
        left, right, op, pos = self.expr(e.left), self.expr(e.right), e.op, e.pos
        fn, big = _BINARY[op], 10 ** self.ruleset.limits["digits"]

        def binary(env, rt):
            a, b = left(env, rt), right(env, rt)
            try:
                r = fn(a, b)
                c = r.__class__
                return check_number(r, rt, pos) if c is Fraction or (c is int and not -big < r < big) else r
            except TypeError:
                _arith_error(op, a, b, pos)
            except ZeroDivisionError:
                raise AdjudicationError("division by zero", pos) from None
        return binary

    def comparison(self, e: ast.Binary) -> Fn:
        """A comparison, with a side that is a constant, a local, a local's field or a roll's field read
        in place (its closure on a miss, for the positioned error)."""
        left, op, pos = self.expr(e.left), e.op, e.pos
        fn = _BINARY[op]
        var, field = self.local_read(e.left)
        if isinstance(e.right, ast.Literal):
            const = e.right.value
            if var is not None and field is not None:
                def compare_field_const(env, rt):
                    try:
                        a = env[var][field]
                    except (KeyError, TypeError):
                        a = left(env, rt)       # its positioned error, or a roll's field
                    try:
                        return fn(a, const)
                    except TypeError:
                        _compare_error(a, const, pos)
                return compare_field_const
            roll_var, slot = self.roll_read(e.left)
            if roll_var is not None:
                def compare_roll_const(env, rt):
                    r = env.get(roll_var)
                    a = r._d[slot] if r.__class__ is Roll else left(env, rt)
                    try:
                        return fn(a, const)
                    except TypeError:
                        _compare_error(a, const, pos)
                return compare_roll_const
            if var is not None:
                def compare_name_const(env, rt):
                    try:
                        a = env[var]
                    except KeyError:
                        a = left(env, rt)       # its positioned error
                    try:
                        return fn(a, const)
                    except TypeError:
                        _compare_error(a, const, pos)
                return compare_name_const

            def compare_const(env, rt):
                a = left(env, rt)
                try:
                    return fn(a, const)
                except TypeError:
                    _compare_error(a, const, pos)
            return compare_const
        right = self.expr(e.right)
        rvar, rfield = self.local_read(e.right)
        if var is not None and field is None and rvar is not None and rfield is None:
            def compare_names(env, rt):
                try:
                    a, b = env[var], env[rvar]
                except KeyError:
                    a, b = left(env, rt), right(env, rt)     # the positioned error
                try:
                    return fn(a, b)
                except TypeError:
                    _compare_error(a, b, pos)
            return compare_names

        def compare(env, rt):
            a, b = left(env, rt), right(env, rt)
            try:
                return fn(a, b)
            except TypeError:
                _compare_error(a, b, pos)
        return compare

    def arithmetic(self, e: ast.Binary, store: str | None = None) -> Fn:
        """``+``, ``-`` and ``*`` applied directly, every size and type check kept, the common whole-number
        and list cases first (other operators: ``e_binary``'s general closure)."""
        left, op, pos = self.expr(e.left), e.op, e.pos
        right = self.expr(e.right)
        raw = _RAW[op]
        big = 10 ** self.ruleset.limits["digits"]
        repeat, concat = op == "*", op == "+"
        list_from, text_from = self.list_checked_from, self.text_checked_from
        lvar, rvar = self.local_name(e.left), self.local_name(e.right)

        def combine(a, b, rt):
            """``a op b`` of values already evaluated, with every check (the uncommon cases)."""
            if a.__class__ is bool or b.__class__ is bool:
                _arith_error(op, a, b, pos)
            if repeat and (a.__class__ in _SEQUENCES or b.__class__ in _SEQUENCES):
                check_repeat(a, b, rt, pos)          # refused before it is built
            try:
                r = raw(a, b)
            except TypeError:
                _arith_error(op, a, b, pos)
            c = r.__class__
            if c is int:
                if -big < r < big:
                    return r
                return check_number(r, rt, pos)
            if c is Fraction:
                if r.denominator == 1:
                    r = r.numerator
                return check_number(r, rt, pos)
            if c is tuple:
                return check_built(r, rt, pos) if len(r) >= list_from else r
            if c is str:
                return check_text(r, rt, pos) if len(r) >= text_from else r
            return r

        if concat and lvar is not None and isinstance(e.right, ast.ListExpr) and len(e.right.items) == 1:
            return self.append_one(e, left, lvar, combine, list_from, store)
        roll_var, slot = self.roll_read(e.left)
        if roll_var is not None:
            def arithmetic_roll(env, rt):
                """``dr.original + x``: the roll's field read in place."""
                a = env.get(roll_var)
                a = a._d[slot] if a.__class__ is Roll else left(env, rt)
                b = env[rvar] if rvar in env else right(env, rt)
                if a.__class__ is int and b.__class__ is int:
                    r = raw(a, b)
                    if not -big < r < big:
                        r = check_number(r, rt, pos)
                else:
                    r = combine(a, b, rt)
                if store is None:
                    return r
                env[store] = r
            return arithmetic_roll

        def arithmetic(env, rt):
            a = env[lvar] if lvar in env else left(env, rt)
            b = env[rvar] if rvar in env else right(env, rt)
            ca = a.__class__
            if ca is b.__class__:      # the common cases first: two whole numbers, two lists
                if ca is int:
                    r = raw(a, b)
                    if -big < r < big:
                        return r
                    return check_number(r, rt, pos)
                if ca is tuple and concat:
                    r = a + b
                    return check_built(r, rt, pos) if len(r) >= list_from else r
            return combine(a, b, rt)
        return arithmetic

    def membership(self, e: ast.Binary) -> Fn:
        """``a in b`` / ``a not in b``."""
        left, right, op, pos = self.expr(e.left), self.expr(e.right), e.op, e.pos
        negate = op == "not in"
        lv, lf = self.local_read(e.left)
        rv, rf = self.local_read(e.right)

        def search(env, rt):
            """``a in b`` / ``a not in b``: a true or false, as _BINARY's would give, without its call;
            a side that is a local or a local's field read in place (its closure on a miss)."""
            if lv is None:
                a = left(env, rt)
            else:
                try:
                    a = env[lv] if lf is None else env[lv][lf]
                except (KeyError, TypeError):
                    a = left(env, rt)
            if rv is None:
                b = right(env, rt)
            else:
                try:
                    b = env[rv] if rf is None else env[rv][rf]
                except (KeyError, TypeError):
                    b = right(env, rt)
            if b.__class__ is tuple and len(b) >= CELLS_PER_STEP:   # a search is work: n // 64 steps
                rt.steps_left -= len(b) // CELLS_PER_STEP
                if rt.steps_left < 0:
                    rt.out_of_steps(pos)
            try:
                found = a in b
            except TypeError:
                _arith_error(op, a, b, pos)
            return not found if negate else found
        return search

    def append_one(self, e: ast.Binary, left: Fn, lvar: str, combine: Callable, list_from: int,
                   store: str | None = None) -> Fn:
        """``xs + [x]`` for a local ``xs``: one closure, and the new list's depth remembered (model/values.py
        LIST_DEPTHS) when the old one's is known, so a result holding it is bounded without a walk."""
        pos, ipos = e.pos, e.right.pos
        item_e = e.right.items[0]
        item = self.expr(item_e)
        ivar, ifield = self.local_read(item_e)
        depths = LIST_DEPTHS

        def append(env, rt):
            try:
                a = env[lvar]
            except KeyError:
                a = left(env, rt)               # its positioned error
            if ivar is None:
                v = item(env, rt)
            else:
                try:
                    v = env[ivar] if ifield is None else env[ivar][ifield]
                except (KeyError, TypeError):
                    v = item(env, rt)           # its positioned error, or a roll's field
            c = v.__class__
            if c is Record:                     # as a one-item list expression checks it
                try:
                    dv = v._depth + 1
                except AttributeError:
                    b, dv = check_built((v,), rt, ipos), 0
                else:
                    limits = rt.limits
                    if dv > limits["nesting"] or limits["list"] < 1:
                        check_size((v,), dv, rt, ipos)     # its error
                    b = (v,)
            elif c is tuple:
                b, dv = check_built((v,), rt, ipos), 0
            else:
                b, dv = (v,), 1
            if a.__class__ is not tuple:
                r = combine(a, b, rt)
            else:
                r = a + b
                if len(r) >= list_from:
                    r = check_built(r, rt, pos)
                elif dv:
                    if a:
                        known = depths.get(id(a))
                        if known is None or known[0] is not a:
                            dv = 0
                        elif known[1] > dv:
                            dv = known[1]
                    if dv:
                        if len(depths) >= LIST_DEPTHS_KEPT:
                            depths.clear()
                        depths[id(r)] = (r, dv)         # holds the list, so its id is not reused meanwhile
            if store is None:
                return r
            env[store] = r
        return append

    def e_logical(self, e: ast.Logical):
        operands = [(self.expr(o), o.pos) for o in e.operands]
        if len(operands) == 2:
            return _logic2(*operands[0], *operands[1], e.op)
        if e.op == "and":
            def and_(env, rt):
                for f, pos in operands:
                    v = f(env, rt)
                    if v is False:
                        return False
                    if v is not True:
                        _truth(v, pos, "operand of 'and'")
                return True
            return and_

        def or_(env, rt):
            for f, pos in operands:
                v = f(env, rt)
                if v is True:
                    return True
                if v is not False:
                    _truth(v, pos, "operand of 'or'")
            return False
        return or_

    def e_conditional(self, e: ast.Conditional):
        then, cond, otherwise, pos = self.expr(e.then), self.expr(e.condition), self.expr(e.otherwise), e.condition.pos

        cv = self.local_name(e.condition)
        tv, ov = self.local_name(e.then), self.local_name(e.otherwise)
        if cv is not None or tv is not None or ov is not None:
            def conditional_locals(env, rt):
                """``a if c else b`` where some of them are locals: those read in place (closure on a miss)."""
                c = env[cv] if cv in env else cond(env, rt)
                if c is True:
                    return env[tv] if tv in env else then(env, rt)
                if c is False:
                    return env[ov] if ov in env else otherwise(env, rt)
                return _truth(c, pos, "condition of 'if ... else'")
            return conditional_locals

        def conditional(env, rt):
            c = cond(env, rt)
            if c is True:
                return then(env, rt)
            if c is False:
                return otherwise(env, rt)
            return _truth(c, pos, "condition of 'if ... else'")
        return conditional

    def e_function(self, e: ast.Function):
        fn = BUILTINS[e.name][0]
        args = [self.expr(a.value) for a in e.args]
        name, pos = e.name, e.pos
        if name in LIST_LENGTH:
            return self.list_builtin(fn, LIST_LENGTH[name], args, name, pos)

        def call_builtin(env, rt):
            values = [a(env, rt) for a in args]
            for v in values:
                if v.__class__ is tuple and len(v) >= CELLS_PER_STEP:    # a builtin reading a long list: its work
                    rt.steps_left -= len(v) // CELLS_PER_STEP
                    if rt.steps_left < 0:
                        rt.out_of_steps(pos)
            try:
                return normalise(fn(*values))
            except BuiltinArgumentError as exc:
                if any(v is DEAD for v in values):
                    return DEAD
                raise AdjudicationError(f"{name}(): {exc}", pos) from None
            except (TypeError, ValueError, AttributeError):
                if any(v is DEAD for v in values):
                    return DEAD
                raise AdjudicationError(f"{name}() cannot take {', '.join(type_name(v) + ' ' + show(v) for v in values)}",
                                        pos) from None
        return call_builtin

    def list_builtin(self, fn, length, args, name: str, pos) -> Fn:
        """A builtin that builds a list (``range``): the length it would build is checked against limit 'list'
        before it is built, and the list is charged and bounded like any list built."""
        def build_list(env, rt):
            values = [a(env, rt) for a in args]
            try:
                n = length(*values)
                if n > rt.limits["list"]:
                    size_error(f"{name}() would build a list of {n:,} items", "list", rt.limits["list"], pos)
                return check_size(fn(*values), 1, rt, pos)
            except BuiltinArgumentError as exc:
                if any(v is DEAD for v in values):
                    return DEAD
                raise AdjudicationError(f"{name}(): {exc}", pos) from None
        return build_list

    def e_aggregate(self, e: ast.Aggregate):
        element, source, var, pos, name = self.expr(e.element), self.expr(e.source), e.var, e.pos, e.name
        cond = self.expr(e.condition) if e.condition is not None else None
        key = self.expr(e.key) if e.key is not None else None
        is_var = isinstance(e.element, ast.Name) and e.element.name == var

        def values(env, rt):
            """The elements' values (or the items themselves) that pass the condition, as a list."""
            src = source(env, rt)
            if src.__class__ is not tuple:
                if src is DEAD:
                    return DEAD
                raise AdjudicationError(f"{name}(... for {var} in ...) needs a list, not {type_name(src)} {show(src)}",
                                        pos)
            rt.steps_left -= len(src) // ITEMS_PER_STEP     # visiting items is work: bounded like statements
            if rt.steps_left < 0:
                rt.out_of_steps(pos)
            saved = env.get(var, _MISSING)
            out = []
            try:
                for item in src:
                    env[var] = item
                    if cond is not None and cond(env, rt) is not True:
                        continue
                    if key is not None:
                        out.append((item if is_var else element(env, rt), key(env, rt)))
                    else:
                        out.append(item if is_var else element(env, rt))
            finally:
                if saved is _MISSING:
                    env.pop(var, None)
                else:
                    env[var] = saved
            return out

        def combine(vs, rt):
            if name == "sum":
                total = 0
                for v in vs:
                    total = total + v
                return normalise(total)
            if name == "count":
                return len(vs)
            if name == "any":
                return any(v is True for v in vs)
            if name == "all":
                return all(v is True for v in vs)
            if name == "list":
                return check_built(tuple(vs), rt, pos) if vs else ()
            if name == "first":
                return vs[0] if vs else None
            if name in ("min", "max"):
                return (min if name == "min" else max)(vs) if vs else None
            best = None
            for v, k in vs:
                if best is None or (k > best[1] if name == "highest" else k < best[1]):
                    best = (v, k)
            return best[0] if best else None

        def aggregate(env, rt):
            vs = values(env, rt)
            if vs is DEAD:
                return DEAD
            try:
                return combine(vs, rt)
            except TypeError:
                raise AdjudicationError(f"{name}() met values it cannot combine: {show_cut(tuple(vs), 200)}", pos) from None
        return aggregate

    def e_call(self, e: ast.Call, store: str | None = None):
        """A call's closure; with ``store`` (untraced only, a procedure that is not pure), a statement
        closure that puts the result in that local (``let name = call ...``)."""
        proc = self.ruleset.procedures[e.procedure]
        rolls_may_hide = self.rolls_may_hide
        names = [p.name for p in proc.params]
        args = [(a.name or names[i], self.expr(a.value)) for i, a in enumerate(e.args)]
        given = {k for k, _ in args}
        # literal defaults of the parameters left out go in at the call (after the given ones, as
        # the procedure itself would add them); a call that then covers every parameter skips that step
        constants = {k: v for k, v in self.param_constants(proc).items() if k not in given}
        complete = all(p.name in given or p.name in constants for p in proc.params)
        build = _arguments(args, constants, _direct_fields([(k, a.value) for (k, _), a in zip(args, e.args)],
                                                          self.local_read))
        pos = e.pos

        if proc.deterministic:
            # kept results: (result, steps its run used, the depth it was called from). A hit charges those
            # steps, as the call would; one that would overrun them, or called from deeper, runs the call
            # again, so that a limit stops it where (and as) it would have without the memo
            memo = proc.memo
            by_id: dict = {}     # this call site's memo by the identity of its argument values (kept alive here)
            keys = tuple(k for k, _ in args)
            fns = tuple(f for _, f in args)

            def pure_miss(given_values: tuple, ids, rt):
                """A pure call not met at this site with these very values (or not within the steps and depth
                left): by value, else run it."""
                values = dict(zip(keys, given_values))
                if constants:
                    values.update(constants)
                try:
                    key = tuple([(k, key_form(v)) for k, v in values.items()]) \
                        if rolls_may_hide and any_roll(values.values()) else tuple(values.items())
                    found = memo.get(key)
                except TypeError:
                    key, found = None, None
                if found is None or found[1] > rt.steps_left or rt.depth > found[2]:
                    if rt.depth >= rt.max_depth:
                        return rt.call(proc, values, pos)
                    before, depth = rt.steps_left, rt.depth
                    rt.depth = depth + 1
                    try:
                        result = (proc.run_untraced if complete else proc.run)(values, rt)
                    finally:
                        rt.depth = depth
                    if key is None:
                        return result
                    found = (result, before - rt.steps_left, depth)
                    if len(memo) >= _MEMO_LIMIT:
                        memo.clear()
                    memo[key] = found
                else:
                    rt.steps_left -= found[1]
                if len(by_id) >= _MEMO_LIMIT:
                    by_id.clear()
                by_id[ids] = (given_values, found)
                return found[0]

            if len(fns) == 1:
                f1, v1 = fns[0], self.local_name(e.args[0].value)

                def call_pure1(env, rt):
                    if rt.trace is None and rt.call_hook is None:
                        # a pure function of its argument: the same argument gives the same result
                        v = env[v1] if v1 in env else f1(env, rt)
                        found = by_id.get(id(v))
                        if found is not None:
                            result, used, depth = found[1]
                            left = rt.steps_left - used
                            if left >= 0 and rt.depth <= depth:
                                rt.steps_left = left
                                return result
                        return pure_miss((v,), id(v), rt)
                    return rt.call(proc, build(env, rt), pos)
                return call_pure1

            def call_pure(env, rt):
                if rt.trace is None and rt.call_hook is None:
                    # a pure function of its arguments: the same arguments give the same result
                    given_values = tuple([f(env, rt) for f in fns])
                    ids = tuple(map(id, given_values))
                    found = by_id.get(ids)
                    if found is not None:
                        result, used, depth = found[1]
                        left = rt.steps_left - used
                        if left >= 0 and rt.depth <= depth:
                            rt.steps_left = left
                            return result
                    return pure_miss(given_values, ids, rt)
                return rt.call(proc, build(env, rt), pos)
            return call_pure

        if store is not None:
            def call_into(env, rt):
                """``let name = call ...`` untraced, in one closure."""
                values = build(env, rt)
                if rt.call_hook is not None or rt.depth >= rt.max_depth:
                    env[store] = rt.call(proc, values, pos)
                    return None
                rt.depth += 1
                env[store] = (proc.run_untraced if complete else proc.run)(values, rt)
                rt.depth -= 1
            return call_into

        def call(env, rt):
            values = build(env, rt)
            if rt.call_hook is not None or rt.depth >= rt.max_depth:
                return rt.call(proc, values, pos)
            # no try/finally: an exception ends this runtime's adjudication, so depth need not be restored
            rt.depth += 1
            result = (proc.run_untraced if complete and rt.trace is None else proc.run)(values, rt)
            rt.depth -= 1
            return result
        return call

    def table_args(self, e):
        """A lookup's or locate's table and its compiled row, column and shift (None when left out)."""
        args = {a.name: self.expr(a.value) for a in e.args}
        return self.ruleset.tables[e.table], args.get("row"), args.get("column"), args.get("shift")

    def table_names(self, e) -> tuple:
        """The local names a lookup's row, column and shift read directly (None where not a plain name)."""
        names = {a.name: self.local_name(a.value) for a in e.args}
        return names.get("row"), names.get("column"), names.get("shift")

    def negated_shift(self, e) -> str | None:
        """The local name of a shift written ``-name`` (read and negated in place when it holds a whole number)."""
        for a in e.args:
            if a.name == "shift" and isinstance(a.value, ast.Unary) and a.value.op == "-":
                return self.local_name(a.value.operand)
        return None

    def e_lookup(self, e: ast.Lookup, store: str | None = None):
        """A table lookup's closure; with ``store`` (untraced `let`, see ``fused_let``), a statement closure
        that puts the cell's value in that local."""
        table, row, column, shift = self.table_args(e)
        rn, cn, sn = self.table_names(e)
        negated = self.negated_shift(e)
        pos = e.pos
        memo: dict = {}     # (row, column, shift) -> a known cell's value: an untraced lookup's index

        def lookup(env, rt):
            r = env[rn] if rn in env else row(env, rt)
            c = (env[cn] if cn in env else column(env, rt)) if column is not None else None
            if negated is not None:
                s = env.get(negated)
                s = -s if s.__class__ is int else shift(env, rt)
            else:
                s = (env[sn] if sn in env else shift(env, rt)) if shift is not None else 0
            if rt.trace is None:
                try:      # classes in the key: True and 1, or a roll and its total, may read differently
                    key = (r.__class__, r, c.__class__, c, s)
                    found = memo.get(key, _MISSING)
                except TypeError:
                    key, found = None, _MISSING
                if found is _MISSING:
                    found, ri, ci = table.lookup(r, c, s, pos)
                    if key is not None and ri is not None and (ci is not None or table.columns is None):
                        if len(memo) >= _MEMO_LIMIT:
                            memo.clear()
                        memo[key] = found
                if store is None:
                    return found
                env[store] = found
                return None
            value, ri, ci = table.lookup(r, c, s, pos)
            where = f"{table.rows.title} {show(r)}"
            if table.columns is not None:
                col_label = table.columns.label(ci) if ci is not None else "off the table"
                where += f", {table.columns.title} {show(c)}"
                if table.columns.match == "at_most" or s:
                    where += f" -> column {col_label}" + (f" (shifted {s:+d})" if s else "")
            source = table.sources.get((ri, ci if ci is not None else 0)) if ri is not None else None
            origin = table.origins.get((ri, ci)) if ri is not None else None
            text = f"{table.title}: {where} -> {show(value)}"
            if source:
                text += f"   [cell: {source}]"
            rt.trace.add("lookup", text, table.cite, origin=origin, table=table.name, value=value)
            return value
        return lookup

    def e_locate(self, e: ast.Locate, field: str | None = None, field_pos=None):
        """A locate's closure (the row and column headings, a record); with ``field``, that field of it
        (``locate(...).column`` in one closure)."""
        table, row, column, shift = self.table_args(e)
        rn, cn, sn = self.table_names(e)
        negated = self.negated_shift(e)
        pos = e.pos
        memo: dict = {}     # (row, column, shift) -> the located headings (a record; values do not change)

        def place(r, c, s):
            if row is None:
                return Record({"row": None, "column": table.column_heading(c, s, pos)})
            ri, ci = table.locate(r, c, s, pos)
            return Record({"row": table.rows.headings[ri] if ri is not None else None,
                           "column": (table.columns.headings[ci] if ci is not None else None)
                           if table.columns is not None else None})

        def locate(env, rt):
            c = (env[cn] if cn in env else column(env, rt)) if column is not None else None
            if negated is not None:
                s = env.get(negated)
                s = -s if s.__class__ is int else shift(env, rt)
            else:
                s = (env[sn] if sn in env else shift(env, rt)) if shift is not None else 0
            r = (env[rn] if rn in env else row(env, rt)) if row is not None else None
            try:
                key = (r.__class__, r, c.__class__, c, s)
                found = memo.get(key)
            except TypeError:
                key, found = None, place(r, c, s)
            if found is None:
                found = place(r, c, s)
                if len(memo) >= _MEMO_LIMIT:
                    memo.clear()
                memo[key] = found
            if field is None:
                return found
            try:
                return found[field]
            except KeyError:
                return _slow_attribute(found, field, field_pos)
        return locate

    def e_apply(self, e: ast.Apply):
        stack = self.ruleset.stacks[e.stack]
        args = [(a.name or stack.params[i], self.expr(a.value)) for i, a in enumerate(e.args)]
        pos = e.pos

        raw = bool(e.uncapped)

        def apply(env, rt):
            return evaluate_stack(stack, {k: f(env, rt) for k, f in args}, rt, pos, uncapped=raw)
        return apply


_MISSING = object()
ITEMS_PER_STEP = 1
"""An aggregate (sum, count, list(...), any...) costs a step for each item it visits: its element and
condition run once per item, so a step must not hide a loop over a long list."""
_NO_MATCH = object()
_SEQUENCES = (str, tuple)
_ROLL_SLOTS = {"original": 3, "doubles": 4, "dice": 0, "modifier": 2}   # where Roll._d keeps them
_ROLL_FIELDS = {"original": lambda r: r._d[3], "final": lambda r: r._d[3] + r._d[2], "doubles": lambda r: r._d[4],
                "dice": lambda r: r._d[0], "modifier": lambda r: r._d[2]}


def _loop_refused(items, rt, pos):
    """The error of a `for each` over something that is not a list, or over more items than limit 'loop'."""
    if not isinstance(items, tuple):
        raise AdjudicationError(f"'for each' needs a list, not {type_name(items)} {show_cut(items, 200)}", pos)
    limit = rt.limits["loop"]
    raise LimitError(f"this loop would run {len(items)} times, more than the limit of {limit} (limit 'loop')", pos)


def _returns(s) -> bool:
    """Whether a statement has a `return` inside (only such a statement can end its block early)."""
    if s.__class__ is ast.Return:
        return True
    if s.__class__ is ast.If:
        return any(_returns(t) for b in s.branches for t in b.body)
    if s.__class__ is ast.ForEach:
        return any(_returns(t) for t in s.body)
    return False


def _if_untraced(cond, body, other, pos, read: tuple) -> Fn:
    """An untraced `if` with at most an `else`; a condition that is a field of a local is read in place."""
    var, field = read
    logic = getattr(cond, "operands", None)
    if logic is not None:
        f1, p1, f2, p2, decisive, what = logic
        neutral = not decisive
        r1, r2 = getattr(f1, "reads", None), getattr(f2, "reads", None)
        if r1 is not None or r2 is not None:
            t1, a1, b1 = r1 or (0, None, None)
            t2, a2, b2 = r2 or (0, None, None)

            def if_logic_reads(env, rt):
                """`if a and b` / `if a or b` whose operands include a local, a local's field or a roll's
                field: those read in place (the operand's closure on any miss: its error, or another value)."""
                if t1 == 1:
                    c = env[a1] if a1 in env else f1(env, rt)
                elif t1 == 2:
                    try:
                        c = env[a1][b1]
                    except (KeyError, TypeError):
                        c = f1(env, rt)
                elif t1 == 3:
                    c = env.get(a1)
                    c = c._d[b1] if c.__class__ is Roll else f1(env, rt)
                else:
                    c = f1(env, rt)
                if c is not decisive:
                    if c is not neutral:
                        _truth(c, p1, what)
                    if t2 == 1:
                        c = env[a2] if a2 in env else f2(env, rt)
                    elif t2 == 2:
                        try:
                            c = env[a2][b2]
                        except (KeyError, TypeError):
                            c = f2(env, rt)
                    elif t2 == 3:
                        c = env.get(a2)
                        c = c._d[b2] if c.__class__ is Roll else f2(env, rt)
                    else:
                        c = f2(env, rt)
                    if c is not True and c is not False:
                        c = _truth(c, p2, what)
                if c is True:
                    return body(env, rt)
                if c is not False:
                    _truth(c, pos)
                return other(env, rt) if other is not None else None
            return if_logic_reads

        def if_logic(env, rt):
            """`if a and b` / `if a or b`: the operands evaluated here, as _logic2 would."""
            c = f1(env, rt)
            if c is not decisive:
                if c is not neutral:
                    _truth(c, p1, what)
                c = f2(env, rt)
                if c is not True and c is not False:
                    c = _truth(c, p2, what)
            if c is True:
                return body(env, rt)
            if c is not False:
                _truth(c, pos)
            return other(env, rt) if other is not None else None
        return if_logic
    if var is not None and field is not None:
        def if_field(env, rt):
            try:
                c = env[var][field]
            except (KeyError, TypeError):
                c = cond(env, rt)       # its positioned error, or a roll's field
            if c is True:
                return body(env, rt)
            if c is not False:
                _truth(c, pos)
            return other(env, rt) if other is not None else None
        return if_field

    def if_else(env, rt):
        c = cond(env, rt)
        if c is True:
            return body(env, rt)
        if c is not False:
            _truth(c, pos)
        return other(env, rt) if other is not None else None
    return if_else


def _direct_fields(fields, local_read):
    """(key, kind, a, b) per field: 0 a literal (value a), 1 a local (name a), 2 a local's field (a.b);
    None if any field is something else."""
    specs = []
    for k, v in fields:
        if isinstance(v, ast.Literal):
            specs.append((k, 0, v.value, None))
            continue
        var, field = local_read(v)
        if var is None:
            return None
        specs.append((k, 1, var, None) if field is None else (k, 2, var, field))
    return tuple(specs)


def _readings(specs: tuple) -> tuple:
    """``_direct_fields`` specs as (key, local?, name or value, field or None), read as
    ``env[a] if local else env[a][b] if b else a``: a local, the commonest, tested first."""
    return tuple((k, kind == 1, a, b if kind == 2 else None) for k, kind, a, b in specs)


def _direct_record(specs: tuple, slow: Fn, record: bool = True) -> Fn:
    """A record of literals, locals and locals' fields (``_direct_fields``) read in one closure, with no
    call or comprehension per field for the small ones; with ``record`` False, a plain dict (a call's
    arguments, which become the callee's locals). Any miss calls ``slow``: the positioned error, or a
    roll's field."""
    specs = _readings(specs)
    n = len(specs)
    if n == 0 or n > 4:
        def mapping_n(env, rt):
            try:
                d = {k: env[a] if t else env[a][b] if b else a for k, t, a, b in specs}
            except (KeyError, TypeError):
                return slow(env, rt)
            return Record(d) if record else d
        return mapping_n
    (k1, t1, a1, b1) = specs[0]
    if n == 1:
        def mapping_1(env, rt):
            try:
                d = {k1: env[a1] if t1 else env[a1][b1] if b1 else a1}
            except (KeyError, TypeError):
                return slow(env, rt)
            return Record(d) if record else d
        return mapping_1
    (k2, t2, a2, b2) = specs[1]
    if n == 2:
        def mapping_2(env, rt):
            try:
                d = {k1: env[a1] if t1 else env[a1][b1] if b1 else a1,
                     k2: env[a2] if t2 else env[a2][b2] if b2 else a2}
            except (KeyError, TypeError):
                return slow(env, rt)
            return Record(d) if record else d
        return mapping_2
    (k3, t3, a3, b3) = specs[2]
    if n == 3:
        def mapping_3(env, rt):
            try:
                d = {k1: env[a1] if t1 else env[a1][b1] if b1 else a1,
                     k2: env[a2] if t2 else env[a2][b2] if b2 else a2,
                     k3: env[a3] if t3 else env[a3][b3] if b3 else a3}
            except (KeyError, TypeError):
                return slow(env, rt)
            return Record(d) if record else d
        return mapping_3
    (k4, t4, a4, b4) = specs[3]

    def mapping_4(env, rt):
        try:
            d = {k1: env[a1] if t1 else env[a1][b1] if b1 else a1,
                 k2: env[a2] if t2 else env[a2][b2] if b2 else a2,
                 k3: env[a3] if t3 else env[a3][b3] if b3 else a3,
                 k4: env[a4] if t4 else env[a4][b4] if b4 else a4}
        except (KeyError, TypeError):
            return slow(env, rt)
        return Record(d) if record else d
    return mapping_4


def _record_maker(fields: list) -> Fn:
    """A record expression's record, built without a comprehension for the common small ones."""
    if len(fields) == 1:
        (k1, f1), = fields
        return lambda env, rt: Record({k1: f1(env, rt)})
    if len(fields) == 2:
        (k1, f1), (k2, f2) = fields
        return lambda env, rt: Record({k1: f1(env, rt), k2: f2(env, rt)})
    if len(fields) == 3:
        (k1, f1), (k2, f2), (k3, f3) = fields
        return lambda env, rt: Record({k1: f1(env, rt), k2: f2(env, rt), k3: f3(env, rt)})
    if len(fields) == 4:
        (k1, f1), (k2, f2), (k3, f3), (k4, f4) = fields
        return lambda env, rt: Record({k1: f1(env, rt), k2: f2(env, rt), k3: f3(env, rt), k4: f4(env, rt)})
    keys, fns = tuple(k for k, _ in fields), tuple(f for _, f in fields)
    return lambda env, rt: Record(zip(keys, [f(env, rt) for f in fns]))


def _arguments(args: list, constants: dict, specs: tuple | None) -> Fn:
    """A call's argument dict, built by one closure (no comprehension for the common small calls).

    ``specs`` (``_direct_fields`` of the arguments, or None): when every argument is a literal, a
    local or a local's field, they are read in place, the constant defaults written in the same dict."""
    if specs is not None:
        return _direct_record(specs + tuple((k, 0, v, None) for k, v in constants.items()),
                              _arguments(args, constants, None), record=False)
    n = len(args)
    if n == 1:
        (k1, f1), = args
        made = lambda env, rt: {k1: f1(env, rt)}  # noqa: E731
    elif n == 2:
        (k1, f1), (k2, f2) = args
        made = lambda env, rt: {k1: f1(env, rt), k2: f2(env, rt)}  # noqa: E731
    elif n == 3:
        (k1, f1), (k2, f2), (k3, f3) = args
        made = lambda env, rt: {k1: f1(env, rt), k2: f2(env, rt), k3: f3(env, rt)}  # noqa: E731
    elif n == 4:
        (k1, f1), (k2, f2), (k3, f3), (k4, f4) = args
        made = lambda env, rt: {k1: f1(env, rt), k2: f2(env, rt), k3: f3(env, rt), k4: f4(env, rt)}  # noqa: E731
    else:
        made = lambda env, rt: {k: f(env, rt) for k, f in args}  # noqa: E731
    if not constants:
        return made

    def with_constants(env, rt):
        values = made(env, rt)
        values.update(constants)
        return values
    return with_constants


def _from_overlay(fn: Fn, pos) -> Fn:
    """A statement an overlay put in: the trace says where it came from."""
    def overlay_step(env, rt):
        if rt.trace is not None:
            rt.trace.add("note", "overlay step", None, origin=pos)
        return fn(env, rt)
    return overlay_step


def _compare_error(a, b, pos):
    raise AdjudicationError(f"cannot compare {type_name(a)} {show(a)} with {type_name(b)} {show(b)}", pos) from None


def _let_line(name: str, value, text: str) -> str:
    """A traced let: the value shown once, and the expression unless it reads the same as the value."""
    shown = brief(value, 100)
    c = value.__class__
    if c is Record or (c is tuple and value and value[0].__class__ is Record):
        literal = _is_literal_text(text, value)     # brief may show ids where show would not
    elif len(shown) < 100:                         # uncut: the value's whole rendering
        literal = text == shown or text == f'"{shown}"'
    else:
        literal = len(text) >= 99 and _is_literal_text(text, value)
    return f"{name} = {shown}" if literal else f"{name} = {shown}   ({text})"


def _is_literal_text(text: str, value) -> bool:
    shown = show_cut(value, len(text) + 3)     # no longer than the text can match: linear in the text, not the value
    return text == shown or text == f'"{shown}"'


def _slow_attribute(v, name, pos):
    if v.__class__ is Roll:
        getter = _ROLL_FIELDS.get(name)
        if getter is not None:
            return getter(v)
        try:
            return v.field(name)
        except KeyError:
            raise AdjudicationError(f"a roll has no '{name}'", pos, hint=did_you_mean(name, v.fields())) from None
    if isinstance(v, Record):
        raise AdjudicationError(f"this record has no field '{name}' (it has: {', '.join(map(str, v.keys())) or 'none'})", pos,
                                hint=did_you_mean(name, v.keys()))
    if v is None:
        raise AdjudicationError(f"cannot read '.{name}' of null (nothing)", pos)
    raise AdjudicationError(f"cannot read '.{name}' of {type_name(v)} {show(v)}", pos)


def _match_choice(wanted, options):
    for o in options:
        if o == wanted or (isinstance(o, Record) and o.get("id") == wanted):
            return o
    return _NO_MATCH


def _option_label(o) -> str:
    if isinstance(o, Record) and "id" in o:
        return str(o["id"])
    return show(o)
