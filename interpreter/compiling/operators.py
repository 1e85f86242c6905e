"""Compiling binary operators: comparisons, arithmetic (with its in-place appends) and membership.

What each operator means is runtime/operators.py; this module builds the closures that apply them.
"""

from __future__ import annotations

from fractions import Fraction

from ..errors import AdjudicationError
from ..model.values import (
    CELLS_PER_STEP,
    Record,
    Roll,
    check_built,
    check_number,
    check_repeat,
    check_size,
    check_text,
    show,
    type_name,
)
from ..reading import syntax as ast
from ..runtime.operators import BINARY as _BINARY
from ..runtime.operators import RAW_ARITHMETIC as _RAW
from ..runtime.operators import arith_error as _arith_error
from .host import CompilerHost
from .support import Fn

TYPE_CHECKING = False   # (typing is for the checker only: importing it costs a warm start 2%)
if TYPE_CHECKING:
    from typing import Callable


class OperatorCompiler(CompilerHost):
    """The compiler's mixin for binary operators, called by ``e_binary`` (compiling/expressions.py)."""

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
        """``xs + [x]`` for a local ``xs``: one closure. A new list shorter than ``list_from`` has its depth worked
        out only when something bounds a value holding it (model/values.depth_of: one C pass over a list of
        records), so a loop growing a list pays nothing per item for it; a longer one is checked as built."""
        pos, ipos = e.pos, e.right.pos
        item_e = e.right.items[0]
        item = self.expr(item_e)
        ivar, ifield = self.local_read(item_e)
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
                    b = check_built((v,), rt, ipos)
                else:
                    limits = rt.limits
                    if dv > limits["nesting"] or limits["list"] < 1:
                        check_size((v,), dv, rt, ipos)     # its error
                    b = (v,)
            elif c is tuple:
                b = check_built((v,), rt, ipos)
            else:
                b = (v,)
            if a.__class__ is not tuple:
                r = combine(a, b, rt)
            else:
                r = a + b
                if len(r) >= list_from:
                    r = check_built(r, rt, pos)
            if store is None:
                return r
            env[store] = r
        return append


_SEQUENCES = (str, tuple)


def _compare_error(a, b, pos):
    raise AdjudicationError(f"cannot compare {type_name(a)} {show(a)} with {type_name(b)} {show(b)}", pos) from None
