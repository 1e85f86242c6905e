"""Syntax tree to Python closures, once per load.

Each expression becomes ``fn(env, rt) -> value`` and each statement
``fn(env, rt) -> None | (value,)`` (a 1-tuple: the procedure returns); a procedure is then a loop over its
statement closures. Nothing walks the syntax tree at run time, and nothing
ever passes ruleset text to ``eval``.

The compiler assumes the checker has accepted the ruleset (names exist,
arity is right); run-time errors that only data can cause (a missing field,
text added to a number, an unknown cell) still carry the source position.

The compiler is code generation only. The static analyses it relies on live
in their own modules: analysis/facts.py (what is worked out once at load and kept
by the cache: dice bounds, pure notes, each procedure's facts), analysis/purity.py (which procedures are pure), analysis/roll_usage.py
(whether dice order matters, whether rolls leave their variables),
analysis/caching.py (the reusable prefix and suffix of a procedure, and their runner),
analysis/names.py (walking syntax, bound and free names); what operators and builtin
functions mean is in runtime/operators.py and runtime/functions.py.

The ``Compiler`` class is assembled from one mixin per kind of thing it compiles, each in its own module:
compiling/statements.py (blocks and statements), compiling/rolls.py (the `roll` statement),
compiling/expressions.py (names, fields, lists, records, unary and logical operators), compiling/operators.py
(binary operators), compiling/calls.py (procedure calls, builtins and aggregates, table lookups, stacks),
compiling/fast_paths.py (the hand-fused closures untraced runs use: reads in place, fused lets, kept static values),
compiling/segments.py (the untraced middle, its runs of pure statements kept per value of what they read)
and compiling/lazy.py (compiling each procedure's traced and untraced forms when first needed). This module keeps
what ties them together: the per-ruleset and per-procedure state, and a procedure's ``run``, ``run_untraced`` and
``fill_defaults``.
"""

from __future__ import annotations

from _thread import allocate_lock

from ..analysis.caching import EMIT as _EMIT
from ..analysis.caching import MEMO_LIMIT as _MEMO_LIMIT
from ..analysis.caching import bounded_result
from ..analysis.facts import NOT_WRITTEN_OUT, analyse, procedure_facts, written_out
from ..loading.inputs import complete_default, holds_record_type
from ..model.ruleset import Procedure, Ruleset, Stack
from ..model.values import CELLS_PER_STEP, CHARACTERS_PER_CELL, Record, brief
from ..runtime.functions import AGGREGATES  # noqa: F401  (importable from here too)
from .calls import CallCompiler
from .expressions import ExpressionCompiler
from .fast_paths import FastPaths
from .lazy import LazyCompilation, _PartsOnDemand
from .operators import OperatorCompiler
from .rolls import RollCompiler
from .segments import SegmentCompiler
from .statements import StatementCompiler

TYPE_CHECKING = False   # (typing is for the checker only: importing it costs a warm start 2%)
if TYPE_CHECKING:
    from typing import Any, Callable


class Compiler(LazyCompilation, SegmentCompiler, StatementCompiler, RollCompiler, ExpressionCompiler,
               OperatorCompiler, CallCompiler, FastPaths):
    """Syntax tree to closures for one ruleset: the mixins compile, this class holds the state they share."""

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
        self.marking = False      # compiling an `if` in a kept segment: its rolling branches mark the run
        self.purity: dict = {}    # id of a syntax node -> (node, whether it rolls nothing): segments.rolls_nothing
        self.traced_pending: dict | None = None   # lazy compile: traced bodies not compiled yet, by procedure
        self.branches_pending: dict | None = None  # lazy compile: `if` branches not compiled yet (lazy.branch_block)
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
        pending: dict[str, Callable] = {}
        self.lock = allocate_lock()
        self.traced_pending = {}
        self.branches_pending = {}
        self.parts = self.ruleset.parts = _PartsOnDemand(pending, self.traced_pending, self.branches_pending)
        for proc in self.ruleset.procedures.values():
            pending[proc.name] = self._compile_on_first_use(proc, pending)

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
