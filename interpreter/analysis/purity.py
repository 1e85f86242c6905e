"""Which procedures are pure functions of their arguments (no roll, no decision, directly or through calls).

Untraced runs memoise pure calls (compiling/compiler.py) and reuse pure stretches of a
procedure (analysis/caching.py); the odds engine relies on the same purity to treat
every procedure's result distribution as a function of its arguments.
"""

from __future__ import annotations

from ..model.ruleset import Ruleset
from ..reading import syntax as ast
from .names import walk


def mark_deterministic(ruleset: Ruleset) -> None:
    """Set ``proc.deterministic`` on every procedure (and give each an empty call memo)."""
    direct: dict[str, tuple[bool, set]] = {}
    for name, proc in ruleset.procedures.items():
        random, calls = False, set()
        for node in walk(proc.syntax.body):
            if isinstance(node, (ast.Roll, ast.Choose)):
                random = True
            elif isinstance(node, ast.Call):
                calls.add(node.procedure)
        direct[name] = (random, calls)
    pure = {n for n, (random, _) in direct.items() if not random}
    changed = True
    while changed:
        changed = False
        for n in list(pure):
            if any(c not in pure for c in direct[n][1]):
                pure.discard(n)
                changed = True
    for name, proc in ruleset.procedures.items():
        proc.deterministic = name in pure
        proc.memo = {}


def pure_expression(ruleset: Ruleset, e) -> bool:
    """Whether an expression calls only pure procedures (it has no rolls or choices of its own)."""
    for node in walk((e,)):
        if isinstance(node, ast.Call) and not ruleset.procedures[node.procedure].deterministic:
            return False
    return True


def decisions_by_procedure(ruleset: Ruleset) -> dict[str, set]:
    """For each procedure, the names of every decision (``choose NAME``) it or anything it calls can take."""
    direct: dict[str, tuple[set, set]] = {}
    for name, proc in ruleset.procedures.items():
        chooses, calls = set(), set()
        for node in walk(proc.syntax.body):
            if isinstance(node, ast.Choose):
                chooses.add(node.name)
            elif isinstance(node, ast.Call):
                calls.add(node.procedure)
        direct[name] = (chooses, calls)
    out = {}
    for name in direct:
        names, seen, todo = set(), set(), [name]
        while todo:
            n = todo.pop()
            if n in seen or n not in direct:
                continue
            seen.add(n)
            names |= direct[n][0]
            todo.extend(direct[n][1])
        out[name] = names
    return out
