"""How procedures use their rolls: whether dice order can matter, whether a roll leaves its variable.

Both answers make work cheaper without changing results: unordered rolls let
exact odds enumerate each multiset of faces once, and rolls that never leave
their variables let cache keys skip searching records and lists for rolls.
"""

from __future__ import annotations

from ..model.ruleset import Ruleset
from ..reading import syntax as ast
from .names import roll_names, walk

_ORDER_FREE_FIELDS = {"original", "final", "doubles", "modifier"}
_ORDER_FREE_OPS = {"+", "-", "*", "/", "//", "%", "==", "!=", "<", "<=", ">", ">="}


def rolls_escape(ruleset: Ruleset) -> bool:
    """Whether any procedure lets a roll out of its variable (into a record, list, call, emit or return).

    If none does, rolls only ever sit in their own local variable, and cache keys need no
    search for rolls hidden inside records and lists.
    """
    for proc in ruleset.procedures.values():
        body = proc.syntax.body
        names = roll_names(body)
        if not names:
            continue
        contained: set[int] = set()
        for n in walk(body):
            if isinstance(n, ast.Attribute) and isinstance(n.target, ast.Name):
                contained.add(id(n.target))
            elif isinstance(n, ast.Binary) and n.op in _ORDER_FREE_OPS:
                contained.update(id(side) for side in (n.left, n.right) if isinstance(side, ast.Name))
            elif isinstance(n, ast.Unary) and isinstance(n.operand, ast.Name):
                contained.add(id(n.operand))
            elif isinstance(n, ast.Interpolated):
                contained.update(id(p) for p in n.parts if isinstance(p, ast.Name))
        if any(isinstance(n, ast.Name) and n.name in names and id(n) not in contained for n in walk(body)):
            return True
    return False


def unordered_rolls(body) -> set[str]:
    """Roll names whose dice the procedure never tells apart.

    A roll read only through its total, final value, modifier or doubles (or used as a number
    in arithmetic and comparisons) gives the same result for every order of the same faces,
    so exact odds may enumerate unordered faces. Any other use (a named die, ``dice``, the
    roll passed whole to a call, a record or a text) keeps it ordered.
    """
    names = roll_names(body)
    if not names:
        return set()
    safe: set[int] = set()
    for n in walk(body):
        if isinstance(n, ast.Attribute) and isinstance(n.target, ast.Name) and n.name in _ORDER_FREE_FIELDS:
            safe.add(id(n.target))
        elif isinstance(n, ast.Binary) and n.op in _ORDER_FREE_OPS:
            for side in (n.left, n.right):
                if isinstance(side, ast.Name):
                    safe.add(id(side))
        elif isinstance(n, ast.Unary) and n.op == "-" and isinstance(n.operand, ast.Name):
            safe.add(id(n.operand))
    ordered = {n.name for n in walk(body) if isinstance(n, ast.Name) and n.name in names and id(n) not in safe}
    return names - ordered


def roll_readings(body) -> dict[str, tuple[str, ...]]:
    """For each unordered roll (see ``unordered_rolls``), the readings the procedure takes of it.

    Two rolls with the same readings are the same to everything after them: exact odds by states
    may merge them (a 2d6 read only by its total is 11 states, not 21). A roll used as a number
    is read by its final value.
    """
    names = unordered_rolls(body)
    if not names:
        return {}
    readings: dict[str, set] = {n: set() for n in names}
    for n in walk(body):
        if isinstance(n, ast.Attribute) and isinstance(n.target, ast.Name) and n.target.name in names:
            readings[n.target.name].add(n.name)
        elif isinstance(n, ast.Binary) and n.op in _ORDER_FREE_OPS:
            for side in (n.left, n.right):
                if isinstance(side, ast.Name) and side.name in names:
                    readings[side.name].add("final")
        elif isinstance(n, ast.Unary) and isinstance(n.operand, ast.Name) and n.operand.name in names:
            readings[n.operand.name].add("final")
    return {n: tuple(sorted(r)) for n, r in readings.items()}
