"""What the language's operators mean on its values, and the truth test of conditions.

The compiler (compiling/compiler.py) builds closures around these; they hold no state.
Exact arithmetic: ``/`` gives a Fraction (a whole number when it divides),
booleans are not numbers, and text or lists only ``+`` with their own kind.
"""

from __future__ import annotations

import operator
from fractions import Fraction

from ..errors import AdjudicationError
from ..model.values import DEAD, normalise, show_cut, type_name


def _numbers(a, b) -> None:
    """Division and remainder take numbers only (Fraction() would also read text such as '2/3')."""
    if a.__class__ not in (int, Fraction) or b.__class__ not in (int, Fraction):
        raise TypeError


def _div(a, b):
    _numbers(a, b)
    if b == 0:
        raise ZeroDivisionError
    return normalise(Fraction(a) / Fraction(b))


def _floordiv(a, b):
    _numbers(a, b)
    return int(Fraction(a) // Fraction(b))


def _mod(a, b):
    _numbers(a, b)
    return normalise(a % b) if type(a) is Fraction or type(b) is Fraction else a % b


def _num(op):
    def f(a, b):
        if isinstance(a, bool) or isinstance(b, bool) or isinstance(a, (str, tuple)) != isinstance(b, (str, tuple)):
            if op is not operator.add:
                raise TypeError
        return normalise(op(a, b)) if type(a) is Fraction or type(b) is Fraction else op(a, b)
    return f


BINARY = {
    "+": _num(operator.add), "-": _num(operator.sub), "*": _num(operator.mul), "/": _div, "//": _floordiv,
    "%": _mod, "==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
    ">": operator.gt, ">=": operator.ge,
    "in": lambda a, b: a in b, "not in": lambda a, b: a not in b,
}
"""Each binary operator's meaning (raising TypeError or ZeroDivisionError on values it cannot take)."""

COMPARISONS = {"==", "!=", "<", "<=", ">", ">="}
RAW_ARITHMETIC = {"+": operator.add, "-": operator.sub, "*": operator.mul}
"""Operators the compiler may apply directly (checking booleans and whole fractions itself)."""

_VERBS = {"+": "add to", "-": "subtract from", "*": "multiply", "/": "divide", "//": "divide", "%": "take the remainder of",
          "<": "compare", "<=": "compare", ">": "compare", ">=": "compare", "in": "look for", "not in": "look for"}


def arith_error(op, a, b, pos):
    """Raise the positioned error for an operator applied to values it cannot take."""
    raise AdjudicationError(f"cannot {_VERBS.get(op, op)} {type_name(a)} {show_cut(a, 200)} and "
                            f"{type_name(b)} {show_cut(b, 200)} "
                            f"(with {op})", pos) from None


def truth(value, pos, what="condition"):
    """A value used as a condition: true or false, else a positioned error."""
    if value is True or value is False:
        return value
    if value is DEAD and what != "condition":
        return DEAD   # a logic expression in unused code (see odds/demand.py); an if never sees DEAD
    raise AdjudicationError(f"this {what} gave {type_name(value)} {show_cut(value, 200)}, but true or false is needed", pos)
