"""Statement compilation: blocks, and each statement but `roll` (compiling/calls.py) as ``fn(env, rt) -> None | (value,)``.

A statement's traced closure writes its trace line when ``rt.trace`` is set; its untraced form (compiled when
``Compiler.untraced`` is set) writes nothing and takes the fast paths of compiling/fast_paths.py.
"""

from __future__ import annotations

from ..analysis.caching import EMIT as _EMIT
from ..errors import AdjudicationError, LimitError, Refusal, RejectedInputError
from ..model.values import Record, Roll, brief, show, show_cut, type_name
from ..reading import syntax as ast
from ..runtime.operators import truth as _truth
from .fast_paths import _if_logic2, _if_logic_n, _if_untraced
from .host import CompilerHost
from .segments import ROLLED as _ROLLED
from .support import Fn, described


class StatementCompiler(CompilerHost):
    """The compiler's mixin for blocks and statements (``s_<statement>``)."""

    def block_parts(self, statements) -> tuple:
        """(statement closures, steps charged, first position, which statements can return) of a block."""
        compiled = [(self.statement(s), s) for s in statements]
        cost = len(compiled)
        if self.untraced:   # statements that only write the trace (notes) do nothing here, but still count
            compiled = [(fn, s) for fn, s in compiled if fn is not None]
        fns = tuple(fn for fn, _ in compiled)
        first = statements[0].pos if statements else None
        # only a statement with a `return` inside can end the block; the others need no look at their signal
        return fns, cost, first, [ast.may_return(s) for _, s in compiled]

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

    s_set = s_let

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
        return described(ret, returned=value)     # a block of this statement alone runs it in place (block)

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
        error = RejectedInputError if s.rejects else AdjudicationError

        def fail(env, rt):
            raise error(show(message(env, rt)), pos, citation=cite)
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
        # in a kept segment (compiling/segments.py), each branch that may roll marks its run: the segment's
        # effect is then not kept
        mark, self.marking = self.marking, False
        for b in s.branches:
            cond = self.expr(b.condition) if b.condition is not None else None
            if not self.untraced:       # the parts are the traced closures (the state enumerator runs them)
                self.parts.setdefault(id(b), cond)
            body = self.branch_block(b)
            if mark and not all(self.rolls_nothing(t) for t in b.body):
                body = _marking(body)
            branches.append((cond, body, ast.unparse(b.condition) if b.condition is not None else None,
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
            if self.untraced:
                c = s.branches[0].condition
                if c.__class__ is ast.Logical:    # `if a and b` / `if a or b` (and more operands)
                    operands = [(self.expr(o), o.pos) for o in c.operands]
                    if len(operands) == 2:
                        return _if_logic2(*operands[0], *operands[1], c.op, body, other, pos)
                    return _if_logic_n(operands, c.op, body, other, pos)
                return _if_untraced(cond, body, other, pos)
            untraced_if = _if_untraced(cond, body, other, pos)

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


_NO_MATCH = object()


def _loop_refused(items, rt, pos):
    """The error of a `for each` over something that is not a list, or over more items than limit 'loop'."""
    if not isinstance(items, tuple):
        raise AdjudicationError(f"'for each' needs a list, not {type_name(items)} {show_cut(items, 200)}", pos)
    limit = rt.limits["loop"]
    raise LimitError(f"this loop would run {len(items)} times, more than the limit of {limit} (limit 'loop')", pos)


def _marking(body: Fn) -> Fn:
    """A branch that may roll, in a kept segment: its run marks the locals, so that the segment is not kept."""
    def marked_branch(env, rt):
        env[_ROLLED] = True
        return body(env, rt)
    return marked_branch


def _from_overlay(fn: Fn, pos) -> Fn:
    """A statement an overlay put in: the trace says where it came from."""
    def overlay_step(env, rt):
        if rt.trace is not None:
            rt.trace.add("note", "overlay step", None, origin=pos)
        return fn(env, rt)
    return overlay_step


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


def _match_choice(wanted, options):
    for o in options:
        if o == wanted or (isinstance(o, Record) and o.get("id") == wanted):
            return o
    return _NO_MATCH


def _option_label(o) -> str:
    if isinstance(o, Record) and "id" in o:
        return str(o["id"])
    return show(o)
