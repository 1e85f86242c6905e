"""The compiler's hand-fused closures: the cheaper forms untraced runs use for the commonest shapes.

Each one does in a single closure what the general closures do in several (a local or a local's field read
in place, a `let` fused with its value, an `if` and its branches in one closure, a record or a call's
arguments read from locals in place, a value kept per prefix state); on any miss each calls the general
closure, so the value or the positioned error is the same. They exist for speed alone, and each has been
measured: forms that saved under 1% of the instructions on the shipped situations were removed (unrolled
records and argument dicts of one to four fields, an `if` reading its operands or a local's field in place).
"""

from __future__ import annotations

from ..analysis.caching import STATIC as _STATIC
from ..analysis.names import free_names
from ..analysis.purity import pure_expression
from ..model.values import Record, Roll
from ..reading import syntax as ast
from ..runtime.operators import RAW_ARITHMETIC as _RAW
from ..runtime.operators import truth as _truth
from .host import CompilerHost
from .support import _ROLL_SLOTS, Fn


class FastPaths(CompilerHost):
    """The compiler's fast-path mixin: reads in place, fused and kept-static lets, untraced lets."""

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

    def fused_let(self, s: ast.Let) -> Fn | None:
        """An untraced `let`/`set` whose value's closure stores it itself (one closure, not two): a call of
        a procedure that is not pure, ``xs + [x]`` of a local, ``dr.original + x``, a table lookup, ``a if c else
        b``; else None."""
        e = s.value
        if isinstance(e, ast.Call) and not self.ruleset.procedures[e.procedure].deterministic:
            return self.e_call(e, store=s.name)
        if isinstance(e, ast.Binary) and e.op in _RAW and (self.roll_read(e.left)[0] is not None or (
                e.op == "+" and self.local_name(e.left) is not None and isinstance(e.right, ast.ListExpr)
                and len(e.right.items) == 1)):
            return self.e_binary(e, store=s.name)
        if isinstance(e, ast.Lookup):
            return self.e_lookup(e, store=s.name)
        if isinstance(e, ast.Conditional) and not (self.static_names and free_names(e) <= self.static_names):
            return self.e_conditional(e, store=s.name)     # (one reading only static names is kept instead)
        return None

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
    return logic2


def _if_untraced(cond, body, other, pos) -> Fn:
    """An untraced `if` with at most an `else`: the condition, then the branch, in one closure."""
    def if_else(env, rt):
        c = cond(env, rt)
        if c is True:
            return body(env, rt)
        if c is not False:
            _truth(c, pos)
        return other(env, rt) if other is not None else None
    return if_else


def _if_logic2(f1, p1, f2, p2, op: str, body, other, pos) -> Fn:
    """``_if_untraced`` of a condition ``a and b`` / ``a or b``: the operands (as ``_logic2`` evaluates them), then
    the branch, in one closure."""
    decisive = op == "or"
    neutral, what = not decisive, f"operand of '{op}'"

    def if_logic2(env, rt):
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
    return if_logic2


def _if_logic_n(operands: list, op: str, body, other, pos) -> Fn:
    """``_if_logic2`` of three or more operands (as expressions.e_logical's ``logic_n`` evaluates them)."""
    decisive = op == "or"
    neutral, what = not decisive, f"operand of '{op}'"

    def if_logic_n(env, rt):
        c = neutral
        for f, p in operands:
            v = f(env, rt)
            if v is decisive:
                c = v
                break
            if v is not neutral:
                _truth(v, p, what)
        if c is True:
            return body(env, rt)
        return other(env, rt) if other is not None else None
    return if_logic_n


def _direct_fields(fields, local_read):
    """(key, local?, a, b) per field, read as ``env[a] if local else env[a][b] if b else a`` (a local, the
    commonest, tested first): a local (name a), a local's field (a.b) or a literal (value a); None if any
    field is something else."""
    specs = []
    for k, v in fields:
        if isinstance(v, ast.Literal):
            specs.append((k, False, v.value, None))
            continue
        var, field = local_read(v)
        if var is None:
            return None
        specs.append((k, field is None, var, field))
    return tuple(specs)


def _direct_record(specs: tuple, slow: Fn, record: bool = True) -> Fn:
    """A record of literals, locals and locals' fields (``_direct_fields``) read in one closure, with no call per
    field; with ``record`` False, a plain dict (a call's arguments, which become the callee's locals). Any miss
    calls ``slow``: the positioned error, or a roll's field."""
    n = next((i for i, (_, t, _a, _b) in enumerate(specs) if not t), len(specs))    # the leading locals
    literals = {k: a for k, t, a, b in specs[n:] if not t and b is None}    # then only literals?
    if 1 <= n <= 4 and len(literals) == len(specs) - n:
        # up to four locals (a call's arguments, mostly), then literals: a dict display, without a
        # comprehension's frame
        (k1, a1), (k2, a2), (k3, a3), (k4, a4) = [(k, a) for k, _, a, _b in specs[:n]] + [(None, None)] * (4 - n)

        def few_locals(env, rt):
            try:
                d = {k1: env[a1]} if n == 1 else {k1: env[a1], k2: env[a2]} if n == 2 else \
                    {k1: env[a1], k2: env[a2], k3: env[a3]} if n == 3 else \
                    {k1: env[a1], k2: env[a2], k3: env[a3], k4: env[a4]}
            except KeyError:
                return slow(env, rt)
            if literals:
                d.update(literals)
            return Record(d) if record else d
        return few_locals
    n = len(specs)
    if 1 <= n <= 4 and all(b is not None for _, _t, _a, b in specs):
        # up to four fields of locals (a record of a unit's or a check's fields): as above
        (k1, a1, b1), (k2, a2, b2), (k3, a3, b3), (k4, a4, b4) = \
            [(k, a, b) for k, _, a, b in specs] + [(None, None, None)] * (4 - n)

        def few_fields(env, rt):
            try:
                d = {k1: env[a1][b1]} if n == 1 else {k1: env[a1][b1], k2: env[a2][b2]} if n == 2 else \
                    {k1: env[a1][b1], k2: env[a2][b2], k3: env[a3][b3]} if n == 3 else \
                    {k1: env[a1][b1], k2: env[a2][b2], k3: env[a3][b3], k4: env[a4][b4]}
            except (KeyError, TypeError):
                return slow(env, rt)
            return Record(d) if record else d
        return few_fields

    def mapping(env, rt):
        try:
            d = {k: env[a] if t else env[a][b] if b else a for k, t, a, b in specs}
        except (KeyError, TypeError):
            return slow(env, rt)
        return Record(d) if record else d
    return mapping


def _record_maker(fields: list) -> Fn:
    """A record expression's record, its fields' closures called in order."""
    keys, fns = tuple(k for k, _ in fields), tuple(f for _, f in fields)
    return lambda env, rt: Record(zip(keys, [f(env, rt) for f in fns]))


def _arguments(args: list, constants: dict, specs: tuple | None) -> Fn:
    """A call's argument dict, built by one closure.

    ``specs`` (``_direct_fields`` of the arguments, or None): when every argument is a literal, a
    local or a local's field, they are read in place, the constant defaults written in the same dict."""
    if specs is not None:
        return _direct_record(specs + tuple((k, False, v, None) for k, v in constants.items()),
                              _arguments(args, constants, None), record=False)
    made = lambda env, rt: {k: f(env, rt) for k, f in args}  # noqa: E731
    if not constants:
        return made

    def with_constants(env, rt):
        values = made(env, rt)
        values.update(constants)
        return values
    return with_constants
