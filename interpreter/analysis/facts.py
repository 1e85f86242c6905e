"""What compiling needs to know of a ruleset, worked out once at load.

``analyse`` runs after the checker, for every procedure (also those compiled
only when they first run): it enforces the dice bounds and the rule that a
note changes nothing, marks which procedures are pure, and keeps each
procedure's facts (``proc.analysis``). The facts are plain data, so the
on-disk cache (loading/cache.py) keeps them and a cached load skips the walks.
"""

from __future__ import annotations

from ..errors import InputError
from ..model.dice import DiceKind, literal_kind
from ..model.ruleset import Procedure, Ruleset
from ..model.values import Record
from ..reading import syntax as ast
from .caching import plan
from .names import roll_names, walk
from .purity import decisions_by_procedure, mark_deterministic
from .roll_usage import rolls_escape, unordered_rolls


def analyse(ruleset: Ruleset) -> None:
    """What compiling needs to know of the whole ruleset, worked out once at load: every roll within the
    dice bounds and every note free of rolls and decisions (input errors otherwise), which procedures
    are pure (``proc.deterministic``) and whether rolls can hide inside values (``ruleset.rolls_may_hide``).
    The facts are plain data, so a cached load keeps them instead of walking every procedure again."""
    limit, sides = ruleset.limits["dice"], ruleset.limits["sides"]
    notes = []
    for proc in ruleset.procedures.values():   # at load, also for procedures compiled only when they first run
        for node in walk(proc.syntax.body):
            if isinstance(node, ast.Note):
                notes.append(node)
            elif isinstance(node, ast.Roll) and node.dice.size is None:
                kind = roll_kind(ruleset, node.dice)
                if kind.count > limit:
                    raise InputError(f"this roll uses {kind.count} dice, more than the limit of {limit} "
                                     "(limit 'dice')", node.pos,
                                     hint="raise limits.dice in ruleset.yaml if the rules really need more")
                if kind.sides > sides:
                    raise InputError(f"this roll uses dice of {kind.sides:,} sides, more than the limit of {sides:,} "
                                     "(limit 'sides')", node.pos,
                                     hint="raise limits.sides in ruleset.yaml if the rules really need more")
    mark_deterministic(ruleset)
    for note in notes:
        _check_note_is_pure(ruleset, note)
    ruleset.rolls_may_hide = rolls_escape(ruleset)
    global_names = set(ruleset.catalogues)
    decisions = decisions_by_procedure(ruleset)
    for proc in ruleset.procedures.values():
        proc.analysis = dict(procedure_facts(ruleset, proc, global_names), decisions=decisions[proc.name])


def _check_note_is_pure(ruleset: Ruleset, note: ast.Note) -> None:
    """A note only writes the trace, and untraced runs and exact odds skip it: so its text may not
    call a procedure that rolls or takes a decision, or a seed would replay differently with a trace."""
    for node in walk((note.text,)):
        if isinstance(node, ast.Call) and not ruleset.procedures[node.procedure].deterministic:
            raise InputError(f"a note cannot call '{node.procedure}', which rolls dice or takes a decision: a note "
                             "only writes the trace, so it must not change the adjudication", node.pos,
                             hint="call it in a let before the note, and show the let's value in the note")


def procedure_facts(ruleset: Ruleset, proc: Procedure, global_names) -> dict:
    """What compiling one procedure needs to know of it (each a walk over its body): kept at load."""
    body = proc.syntax.body
    return {"unordered_rolls": unordered_rolls(body), "roll_names": roll_names(body),
            "plan": plan(ruleset, proc, global_names)}


def roll_kind(ruleset: Ruleset, spec: ast.DiceSpec) -> DiceKind:
    """A named kind from the manifest (also when written like 'd10'), else plain dice."""
    if spec.text in ruleset.dice:
        return ruleset.dice[spec.text]
    return literal_kind(spec.count, spec.sides)


NOT_WRITTEN_OUT = object()


def written_out(e):
    """The value of an expression that is written out in full (a literal, or lists and records of such),
    else NOT_WRITTEN_OUT: such a parameter default is one value, filled in without evaluating anything."""
    if isinstance(e, ast.Literal):
        return e.value
    if isinstance(e, ast.ListExpr):
        items = tuple(written_out(i) for i in e.items)
        return NOT_WRITTEN_OUT if any(i is NOT_WRITTEN_OUT for i in items) else items
    if isinstance(e, ast.RecordExpr):
        fields = [(k, written_out(v)) for k, v in e.fields]
        return NOT_WRITTEN_OUT if any(v is NOT_WRITTEN_OUT for _, v in fields) else Record(fields)
    return NOT_WRITTEN_OUT
