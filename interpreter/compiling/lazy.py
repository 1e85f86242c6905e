"""Lazy compilation: a procedure's traced body and untraced run are compiled when first needed.

A lazily compiled ruleset (``Compiler.compile(lazy=True)``) compiles each procedure on its first run, and
each of its two forms only when a run of that form (or the state enumerator's ``parts``) first asks for it.
Inside a traced body, each ``if`` branch's block is compiled on its first run too: one adjudication
usually takes few of the branches of the procedures it calls, and compiling the others was a large part of a
warm ``umpire resolve`` (docs/language.md gives the figures).
"""

from __future__ import annotations

from ..analysis.caching import dice_path_runner, plan, untraced_runner
from ..model.ruleset import Procedure
from .host import CompilerHost
from .support import Fn

TYPE_CHECKING = False   # (typing is for the checker only: importing it costs a warm start 2%)
if TYPE_CHECKING:
    from typing import Callable


class _PartsOnDemand(dict):
    """``Compiler.parts`` of a lazily compiled ruleset: asking for a part not yet compiled compiles the rest
    (each pending procedure, then each traced body not yet compiled: the parts are the traced closures)."""

    def __init__(self, pending: dict, traced_pending: dict, branches: dict):
        super().__init__()
        self.pending = pending
        self.traced_pending = traced_pending
        self.branches = branches

    def __missing__(self, key):
        for compile_now in list(self.pending.values()):
            compile_now()
        for compile_body in list(self.traced_pending.values()):
            compile_body()
        while self.branches:    # (a branch compiled may leave branches of its own for later: until none is left)
            for compile_branch in list(self.branches.values()):
                compile_branch()
        return dict.__getitem__(self, key)


class LazyCompilation(CompilerHost):
    """The compiler's mixin that compiles each form of a procedure now (eager) or on first use (lazy)."""

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
                middle = self.middle_parts(proc, statements[k:j], k) if k < j else None
                self.static_names = set()
                suffix = self.block(statements[j:]) if j < len(statements) else None
            finally:
                self.untraced = False
            runner = untraced_runner(proc, body, prefix, middle, suffix, split.suffix_reads, self.rolls_may_hide,
                                     split.emits, frozenset(self.roll_names), split.middle_emits, split.calling)
            # whole runs kept by their arguments and the dice they drew (analysis/caching.py)
            return dice_path_runner(runner) if self.prefix_caching else runner

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

    def branch_block(self, branch) -> Fn:
        """An ``if`` branch's block: in a lazy traced compile, compiled on its first run (in the per-procedure
        state it would have been compiled in now; its body, if the load cache left it as text, decoded then
        too), else now."""
        pending = self.branches_pending
        if pending is None or self.untraced or self.marking:
            return self.block(branch.body)
        state = (self.unordered_rolls, self.roll_names, self.in_overlay)
        compiled = None

        def compile_branch() -> Fn:
            nonlocal compiled
            with self.lock:     # the compiler's per-procedure state is shared: one compile at a time
                if compiled is None:
                    saved = self.unordered_rolls, self.roll_names, self.in_overlay
                    self.unordered_rolls, self.roll_names, self.in_overlay = state
                    try:
                        compiled = self.block(branch.body)
                    finally:
                        self.unordered_rolls, self.roll_names, self.in_overlay = saved
                    pending.pop(compile_branch, None)
            return compiled

        def run_branch(env, rt):
            return (compiled or compile_branch())(env, rt)
        pending[compile_branch] = compile_branch     # (forced by _PartsOnDemand, keyed by itself)
        return run_branch

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
