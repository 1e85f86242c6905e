"""Compiling calls: procedure calls, builtin functions and aggregates, table lookups and locates, stacks applied."""

from __future__ import annotations

from ..analysis.caching import MEMO_LIMIT as _MEMO_LIMIT
from ..errors import AdjudicationError, BuiltinArgumentError
from ..model.stacks import evaluate_stack
from ..model.values import (
    CELLS_PER_STEP,
    DEAD,
    Record,
    any_roll,
    check_built,
    check_size,
    key_form,
    normalise,
    show,
    show_cut,
    size_error,
    type_name,
)
from ..reading import syntax as ast
from ..runtime.functions import BUILTINS, LIST_LENGTH
from .fast_paths import _arguments, _direct_fields
from .host import CompilerHost
from .support import Fn, _slow_attribute

_MISSING = object()


ITEMS_PER_STEP = 1
"""An aggregate (sum, count, list(...), any...) costs a step for each item it visits: its element and
condition run once per item, so a step must not hide a loop over a long list."""


class CallCompiler(CompilerHost):
    """The compiler's mixin for what calls out of an expression: procedures, builtins, aggregates, tables, stacks."""

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
                raise exc.positioned(name, pos) from None
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
                raise exc.positioned(name, pos) from None
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

            def call_pure(env, rt):
                if rt.trace is None:
                    # a pure function of its arguments: the same arguments give the same result (under the odds'
                    # call hook too: every hook runs a deterministic procedure as it is, nothing to enumerate)
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

        plain = [(k, self.local_name(a.value)) for (k, _), a in zip(args, e.args)]
        # every argument a local (the commonest call, up to four): its argument dict built in the call's closure
        n = len(plain) if 1 <= len(plain) <= 4 and all(v is not None for _, v in plain) else 0
        (k1, a1), (k2, a2), (k3, a3), (k4, a4) = (plain if n else []) + [(None, None)] * (4 - n)

        if store is not None:
            def call_into(env, rt):
                """``let name = call ...`` untraced, in one closure."""
                if n:
                    try:
                        values = {k1: env[a1]} if n == 1 else {k1: env[a1], k2: env[a2]} if n == 2 else \
                            {k1: env[a1], k2: env[a2], k3: env[a3]} if n == 3 else \
                            {k1: env[a1], k2: env[a2], k3: env[a3], k4: env[a4]}
                    except KeyError:
                        values = build(env, rt)        # its positioned error
                    else:
                        if constants:
                            values.update(constants)
                else:
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

    def table_reader(self, e) -> Fn:
        """The closure giving a lookup's or locate's (row, column, shift) values: a row, column or shift that is a
        plain local (or a shift written ``-name`` of one holding a whole number) is read in place; a left-out
        row or column is None, a left-out shift 0."""
        compiled = {a.name: self.expr(a.value) for a in e.args}
        row, column, shift = compiled.get("row"), compiled.get("column"), compiled.get("shift")
        names = {a.name: self.local_name(a.value) for a in e.args}
        rn, cn, sn = names.get("row"), names.get("column"), names.get("shift")
        negated = next((self.local_name(a.value.operand) for a in e.args if a.name == "shift"
                        and isinstance(a.value, ast.Unary) and a.value.op == "-"), None)

        def read(env, rt) -> tuple:
            r = (env[rn] if rn in env else row(env, rt)) if row is not None else None
            c = (env[cn] if cn in env else column(env, rt)) if column is not None else None
            if negated is not None and shift is not None:     # (a negated shift is a shift given)
                s = env.get(negated)
                s = -s if s.__class__ is int else shift(env, rt)
            else:
                s = (env[sn] if sn in env else shift(env, rt)) if shift is not None else 0
            return r, c, s
        return read

    def e_lookup(self, e: ast.Lookup, store: str | None = None):
        """A table lookup's closure; with ``store`` (untraced `let`, see ``fused_let``), a statement closure
        that puts the cell's value in that local."""
        table = self.ruleset.tables[e.table]
        read = self.table_reader(e)
        pos = e.pos
        memo: dict = {}     # (row, column, shift) -> a known cell's value: an untraced lookup's index

        def lookup(env, rt):
            r, c, s = read(env, rt)
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
        table = self.ruleset.tables[e.table]
        has_row = any(a.name == "row" for a in e.args)
        read = self.table_reader(e)
        pos = e.pos
        memo: dict = {}     # (row, column, shift) -> the located headings (a record; values do not change)

        def place(r, c, s):
            if not has_row:
                return Record({"row": None, "column": table.column_heading(c, s, pos)})
            ri, ci = table.locate(r, c, s, pos)
            return Record({"row": table.rows.headings[ri] if ri is not None else None,
                           "column": (table.columns.headings[ci] if ci is not None else None)
                           if table.columns is not None else None})

        def locate(env, rt):
            r, c, s = read(env, rt)
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
