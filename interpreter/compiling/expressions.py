"""Expression compilation: each expression but calls and lookups (compiling/calls.py) as ``fn(env, rt) -> value``.

Literals, names and fields, indexing, updates and merges, list and record expressions, unary and binary
operators (each binary one by compiling/operators.py), `and`/`or` and conditionals.
"""

from __future__ import annotations

from fractions import Fraction

from ..analysis.caching import NESTING as _NESTING
from ..errors import AdjudicationError, did_you_mean
from ..model.values import (
    CELLS_PER_STEP,
    DEAD,
    Record,
    Roll,
    built_depth,
    check_built,
    check_number,
    check_size,
    check_text,
    depth_of,
    show,
    type_name,
)
from ..reading import syntax as ast
from ..runtime.operators import (
    BINARY as _BINARY,
)
from ..runtime.operators import (
    COMPARISONS as _FAST,
)
from ..runtime.operators import (
    RAW_ARITHMETIC as _RAW,
)
from ..runtime.operators import (
    arith_error as _arith_error,
)
from ..runtime.operators import (
    truth as _truth,
)
from .fast_paths import _direct_fields, _direct_record, _logic2, _record_maker
from .host import CompilerHost
from .support import _ROLL_FIELDS, _ROLL_SLOTS, Fn, _slow_attribute

_NO_VALUE = object()   # (a branch of ``a if c else b`` that is not a literal)


def _fused_record(specs: tuple, made: Fn, pos) -> Fn | None:
    """A record expression of one to four fields, all locals or all locals' fields (a check's fields, a result of
    lists): built and its depth kept in one closure (``record`` below, with the fields read in place as
    fast_paths._direct_record reads them); None for other shapes. Any miss calls ``made``, then bounds it."""
    n = len(specs)
    if all(t for _k, t, _a, _b in specs):
        fields = False
    elif all(not t and b is not None for _k, t, _a, b in specs):
        fields = True
    else:
        return None
    (k1, _, a1, b1), (k2, _, a2, b2), (k3, _, a3, b3), (k4, _, a4, b4) = \
        list(specs) + [(None, True, None, None)] * (4 - n)

    def fused_record(env, rt):
        try:
            if fields:
                d = {k1: env[a1][b1]} if n == 1 else {k1: env[a1][b1], k2: env[a2][b2]} if n == 2 else \
                    {k1: env[a1][b1], k2: env[a2][b2], k3: env[a3][b3]} if n == 3 else \
                    {k1: env[a1][b1], k2: env[a2][b2], k3: env[a3][b3], k4: env[a4][b4]}
            else:
                d = {k1: env[a1]} if n == 1 else {k1: env[a1], k2: env[a2]} if n == 2 else \
                    {k1: env[a1], k2: env[a2], k3: env[a3]} if n == 3 else \
                    {k1: env[a1], k2: env[a2], k3: env[a3], k4: env[a4]}
            r = Record(d)
        except (KeyError, TypeError):
            r = made(env, rt)                     # its positioned error, or a roll's field
        if _NESTING.isdisjoint(map(type, r.values())):
            r._depth = 1
            r._hash = None
            return r
        return _nested_record(r, rt, pos)
    return fused_record


def _nested_record(r, rt, pos):
    """A record just built that holds lists or records: its depth kept, and its bounds checked."""
    d = 1
    for v in r.values():
        c = v.__class__
        if c is Record or c is tuple:
            vd = depth_of(v) + 1
            if vd > d:
                d = vd
    r._depth = d          # known without looking again
    r._hash = None        # not hashed yet (an unset slot would make its first hash raise an AttributeError)
    limits = rt.limits
    if d > limits["nesting"] or len(r) > limits["list"] or len(r) >= CELLS_PER_STEP:
        return check_size(r, d, rt, pos)
    return r


class ExpressionCompiler(CompilerHost):
    """The compiler's mixin for expressions (``e_<expression>``): operators, names, fields, lists, records."""

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
            fused = _fused_record(specs, made, pos) if 1 <= len(specs) <= 4 else None
            if fused is not None:
                return fused

        def record(env, rt):
            r = made(env, rt)
            if _NESTING.isdisjoint(map(type, r.values())):      # no lists or records inside: one deep
                r._depth = 1
                r._hash = None
                return r
            return _nested_record(r, rt, pos)
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

    def e_logical(self, e: ast.Logical):
        operands = [(self.expr(o), o.pos) for o in e.operands]
        if len(operands) == 2:
            return _logic2(*operands[0], *operands[1], e.op)
        decisive = e.op == "or"          # True ends an 'or', False ends an 'and'
        neutral, what = not decisive, f"operand of '{e.op}'"

        def logic_n(env, rt):
            for f, pos in operands:
                v = f(env, rt)
                if v is decisive:
                    return v
                if v is not neutral:
                    _truth(v, pos, what)
            return neutral
        return logic_n

    def e_conditional(self, e: ast.Conditional, store: str | None = None):
        """``a if c else b``; with ``store`` (an untraced `let`, see ``fused_let``), a statement closure that puts
        the value in that local."""
        then, cond, otherwise, pos = self.expr(e.then), self.expr(e.condition), self.expr(e.otherwise), e.condition.pos

        cv = self.local_name(e.condition)
        tv, ov = self.local_name(e.then), self.local_name(e.otherwise)
        if store is not None:
            # the condition a local, or not; each branch a literal (its value, in place), a local, or else
            tc = e.then.value if isinstance(e.then, ast.Literal) else _NO_VALUE
            oc = e.otherwise.value if isinstance(e.otherwise, ast.Literal) else _NO_VALUE

            def let_conditional(env, rt):
                """``let name = a if c else b`` untraced, in one closure."""
                c = env[cv] if cv in env else cond(env, rt)
                if c is True:
                    env[store] = tc if tc is not _NO_VALUE else env[tv] if tv in env else then(env, rt)
                elif c is False:
                    env[store] = oc if oc is not _NO_VALUE else env[ov] if ov in env else otherwise(env, rt)
                else:
                    env[store] = _truth(c, pos, "condition of 'if ... else'")
            return let_conditional
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
