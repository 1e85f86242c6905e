"""Exact odds and Monte Carlo simulation, by the same compiled procedures that adjudicate.

Exact odds: every roll is a branch point. The engine runs the procedure with
a dice source that follows a path of choices (one per branch point), records
how many options each point had, then moves to the next path like an
odometer, until every path has been run; each path's probability is the
product of its choices' weights. Dice given in the situation stay fixed.

Sharing work: procedures are pure (their result depends only on their
arguments and their own rolls), so when no given dice are pending, a
``call`` is replaced by a single branch point over the called procedure's
exact result distribution, computed once per distinct arguments and
memoised. A fire attack followed by two morale checks is then 36 paths of the
attack, each branching over a handful of morale results, not 36^3 full runs.

Outcomes are told apart by value, as everywhere in the language: a roll kept in a
result counts as its final value (emit ``dr.dice`` to tell dice apart).

Outcomes that stop on an unknown chart cell, a refusal or a ``fail`` are
grouped on their own lines ("needs chart: ..."), never guessed.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from fractions import Fraction

from ..errors import (
    LimitError,
)
from ..runtime.memory import gc_paused
from .demand import ALL, analyse
from .grouping import (
    by_changes,
    by_keys,
    concrete_weights,
    demanded_fields,
    exact_sum,
    group_weights,
    weights_sum,
)
from .paths import (
    DEFAULT_BUDGET,
    DEFAULT_WORK,
    QUICK_PATHS,
    WORK_PER_BUDGET,
    Enumerator,
    has_list_choices,
)

NEEDS_CHART = "needs chart"


@dataclass
class Report:
    """Grouped shares of outcomes: exact fractions (odds) or counts (simulation)."""

    rows: list[tuple[str, Fraction, float | None]]   # label, share, standard error (simulation)
    total: Fraction
    paths: int
    exact: bool
    runs: int = 0
    seconds: float = 0.0
    memo_hits: int = 0
    states: int = 0       # exact odds by states: the most live states at any point
    grouping: str = ""        # how outcomes are grouped when no --by says: "what changed", "whole result"
    seed: int | None = None   # a simulation's seed (replays it)
    jobs: int = 1             # a simulation's worker processes

    def needs_chart(self) -> Fraction:
        """The share of outcomes that stop on a chart cell nobody has supplied (kept apart from results)."""
        return exact_sum(p for label, p, _ in self.rows if label.startswith(NEEDS_CHART))

    def as_json(self) -> dict:
        needs = self.needs_chart()
        return {"exact": self.exact, "paths": self.paths, "states": self.states, "runs": self.runs,
                "seconds": round(self.seconds, 4), "total": str(self.total), "grouping": self.grouping,
                "needs_chart": {"share": float(needs), **({"fraction": str(needs)} if self.exact else {})},
                "real_outcomes": {"share": float(1 - needs) if not self.exact else float(self.total - needs),
                                  **({"fraction": str(self.total - needs)} if self.exact else {})},
                "outcomes": [dict({"outcome": label, "share": float(p)},
                                  **({"fraction": str(p)} if self.exact else {"count": int(p * self.runs),
                                                                                "standard_error": se}))
                             for label, p, se in self.rows]}


def exact_odds(situation, by: list[str], budget: int = DEFAULT_BUDGET, merge_unneeded: bool = True,
               merge_states: bool = True, factor: bool = True, quick_paths: int = QUICK_PATHS,
               work: int = DEFAULT_WORK, share: bool = True, hold: bool = True, by_change: bool = False) -> Report:
    """Exact odds of a situation's outcomes grouped by ``by``; with no ``by``, by each distinct result, or with
    ``by_change`` (what a player is shown: the commands and the workbench) by what it changes in the units given
    (grouping.by_changes).

    ``merge_states`` enumerates by live states (odds/states.py): branches that reach the same live
    state merge. ``merge_unneeded`` merges sub-results that differ only in fields no grouping can
    see (odds/demand.py). ``factor`` keeps independent lists factored (odds/independent.py), ``share`` lets calls
    that differ only in fields passed on share a distribution (odds/passed_on.py), ``hold`` lets a merge hold
    the live values the next statement does not read as one distribution (odds/held.py).
    Turning any off gives the same answer, more slowly (the tests compare them);
    with both off, every path through the dice is run (the budget then counts paths). Asked for the
    whole result (no ``by``), up to ``quick_paths`` paths are first tried one by one: with every
    field kept, states rarely merge and few paths are cheaper run as they are. With ``by``, states
    merge, and the state enumeration goes first.
    ``work`` bounds the steps of work in all (each attempt), so no question runs for long unrefused.
    """
    # The cyclic collector is paused while the question is answered (as runtime.memory.gc_paused pauses it for a load)
    # and restored as it was, however this returns. This is safe because exact odds leave no cyclic
    # garbage (every distribution takes its runtime's call hook off when done: tests/test_odds.py checks
    # that nothing is left for the collector): everything is freed by reference counting as before, the
    # same memory at the same moments, and the collector would only traverse the live states again and
    # again (a third of an 8-squad question's time). The question is answered in a function of its own, so
    # all it made is gone before the collector is back on (only the report is left for it to see).
    with gc_paused():
        return _exact_odds(situation, by, budget, merge_unneeded, merge_states, factor, quick_paths, work, share,
                           hold, by_change)


def _exact_odds(situation, by, budget, merge_unneeded, merge_states, factor, quick_paths, work, share,
                hold, by_change) -> Report:
    """``exact_odds``, run with the cyclic collector paused."""
    start = time.perf_counter()
    ruleset = situation.ruleset
    keys = by_keys(by, ruleset)
    if merge_unneeded:
        wanted = demanded_fields(keys)
        demands, var_demands = analyse(ruleset, situation.procedure.name, ALL if wanted is None else wanted)
    else:
        demands, var_demands = {}, {}
    dist, states = None, merge_states and not has_list_choices(situation.choices)
    if states and quick_paths and not by:
        # few paths: running each is cheaper than tracking states (the answers are the same)
        enum = Enumerator(ruleset, situation.choices, min(budget, quick_paths), demands, work_limit=work)
        try:
            dist = enum.distribution(situation.procedure, situation.args, situation.dice)
            work, peak = enum.paths, 0
        except LimitError as e:
            if "paths through the dice" not in e.message and "steps of work" not in e.message:
                raise
            # its traceback holds the frames it went through, one of which (paths.stop_outcome re-raising it)
            # holds the error: a cycle the paused collector would leave behind. Let go of the frames.
            e.__traceback__ = None
    if dist is None and states:
        from .states import StateEnumerator
        by_states = StateEnumerator(ruleset, situation.choices, budget, demands, var_demands, factor=factor,
                                    work=work, share=share, hold=hold)
        try:
            found = by_states.distribution(situation.procedure, situation.args, situation.dice)
        except LimitError as e:
            if "live states" in e.message:
                e.hint = _narrower(situation, by, e.hint or "")
            raise
        work, peak, memo_hits = by_states.runs, by_states.peak, by_states.memo_hits
    else:
        if dist is None:
            enum = Enumerator(ruleset, situation.choices, budget, demands, work_limit=work)
            dist = enum.distribution(situation.procedure, situation.args, situation.dice)
            work, peak = enum.paths, 0
        found = {v: (p.numerator, p.denominator) for v, p in dist.items()}
        memo_hits = enum.memo_hits
    if by_change and not keys:      # labelled by what each whole outcome changes: factored lists expanded
        found = concrete_weights(found, budget)
    changes = by_changes(found, situation.args) if by_change and not keys else None
    rows: list[tuple[str, Fraction, float | None]] = [
        (label, p, None) for label, p in group_weights(found, keys, changes)]
    return Report(rows, weights_sum(list(found.values())), work, True, seconds=time.perf_counter() - start,
                  memo_hits=memo_hits, states=peak,
                  grouping="" if keys else "what changed in the units given" if changes else "whole result")


def budgeted_odds(situation, by: list[str], budget: int | None = None, by_change: bool = False) -> Report:
    """Exact odds as ``umpire odds --budget N`` asks: N live states at most, and 50 x N steps of work."""
    budget = budget or DEFAULT_BUDGET
    try:
        return exact_odds(situation, by, budget, work=budget * WORK_PER_BUDGET, by_change=by_change)
    except LimitError as e:
        doc = getattr(situation, "doc", None)
        if e.position is None and doc is not None:     # a bound on the whole question: the situation asked it
            e.position = doc.key_at(tuple(situation.path) + ("procedure",))
        raise


def _narrower(situation, by: list[str], hint: str) -> str:
    """Which --by fields would leave fewer states apart: the result's fields not asked for."""
    fields = result_fields(situation)
    if not fields:
        return hint
    asked = {f.split(".", 1)[0] for f in by}
    if by:
        return (f"asked for {', '.join(by)}: drop a --by field, or a path into fewer values "
                f"(e.g. units.ID.state instead of units); " + hint)
    return f"group by one or a few of the result's fields (--by {' | --by '.join(sorted(fields - asked))}); " + hint


def result_fields(situation) -> set:
    """The top-level fields of the situation procedure's result, from its emits and returned records."""
    body = situation.procedure.syntax.body
    from ..analysis.names import walk
    from ..reading import syntax as ast
    fields = {n.name for n in walk(body) if isinstance(n, ast.Emit)}
    for n in walk(body):
        if isinstance(n, ast.Return) and isinstance(n.value, ast.RecordExpr):
            fields |= {k for k, _ in n.value.fields}
    return fields
