"""Exact odds path by path: every run of a procedure through the dice, each die a branch point.

The work budget, the dice source that replays one path and branches at each new die, and
the helpers that name a stop and key an outcome; the state enumerator (odds/states.py) shares them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable

from ..errors import (
    AdjudicationError,
    LimitError,
    Refusal,
    UnknownCellError,
)
from ..model.dice import DiceKind, DiceSource
from ..model.values import key_form
from ..runtime.state import Runtime
from .demand import ALL, project
from .grouping import (
    Stop,
)

QUICK_PATHS = 1_000
"""Exact odds first try path by path up to this many paths (cheaper when there are few), then by states."""

DEFAULT_BUDGET = 200_000
"""Most live states one exact enumeration keeps apart at any point (paths, without state merging)."""

DEFAULT_WORK = 10_000_000
"""Most steps of work one exact enumeration may do in all (limit 'odds work'): the budget bounds what is
kept at once, this bounds the time, whatever the number of states (many small merges, heavy calls)."""

WORK_PER_BUDGET = DEFAULT_WORK // DEFAULT_BUDGET
"""``umpire odds --budget N`` allows ``50 * N`` steps of work: one option scales both bounds."""

RUN_COST = 10
"""Steps of work one run of a statement on one state, or one path, counts beside the steps it takes
(setting a run up costs about as much as ten simple statements)."""


def work_error(work: int) -> LimitError:
    """The 'odds work' limit, reached."""
    return LimitError(f"exact odds would take more than {work:,} steps of work in all (limit 'odds work', "
                      f"{WORK_PER_BUDGET} x --budget; each run of a statement on a state, or each path, counts "
                      f"{RUN_COST} steps beside its own)",
                      hint="use `umpire simulate` for an estimate, or raise --budget")


class PathDice(DiceSource):
    """Follows a path of choices; records each branch point's width for the odometer.

    The path's probability is kept as an integer numerator and denominator, so no
    fraction arithmetic happens inside the enumeration loop.
    """

    __slots__ = ("given", "given_used", "path", "at", "widths", "num", "den", "lazy_ok", "got_lazy", "readings",
                 "once")
    once: dict      # (odds/states.py) statements reading only never-assigned arguments, per those values

    def __init__(self, given: list, readings: dict | None = None):
        self.given = given
        self.readings = readings     # roll name -> what is read of it (roll_usage.roll_readings), or None
        self.widths: list[int] = []
        self.lazy_ok = False     # (odds/states.py) may a call's result keep independent lists factored here?
        self.got_lazy = False    # (odds/states.py) did one?

    def reset(self, path: list[int]) -> None:
        self.given_used = 0
        self.path = path
        self.at = 0
        self.num = 1
        self.den = 1

    @property
    def pending_given(self) -> bool:
        return self.given_used < len(self.given)

    def advance(self) -> bool:
        """Odometer: move ``path`` to the next way through the branch points met; False when all are done."""
        path = self.path
        del path[self.at:]
        widths = self.widths
        i = len(path) - 1
        while i >= 0 and path[i] + 1 >= widths[i]:
            i -= 1
        if i < 0:
            return False
        path[i] += 1
        del path[i + 1:]
        return True

    def _choose(self, n: int) -> int:
        i = self.at
        self.at += 1
        if i < len(self.path):
            choice = self.path[i]
        else:
            choice = 0
            self.path.append(0)
        widths = self.widths
        if i < len(widths):
            widths[i] = n
        else:
            widths.append(n)
        return choice

    def roll(self, kind: DiceKind, label, pos):
        if self.given_used < len(self.given):
            faces = kind.read_given(self.given[self.given_used], f"given dice entry {self.given_used + 1}")
            self.given_used += 1
            return faces
        readings = self.readings
        outcomes = _outcomes(kind) if not readings or label not in readings else _read_outcomes(kind, readings[label])
        faces, num, den = outcomes[self._choose(len(outcomes))]
        self.num *= num
        self.den *= den
        return faces

    def branch(self, options):
        value, num, den = options[self._choose(len(options))]
        self.num *= num
        self.den *= den
        return value


def _fraction(by_den: dict[int, int]) -> Fraction:
    """The sum of numerator/denominator pairs as one exact fraction (one division, not many)."""
    if len(by_den) == 1:
        (d, n), = by_den.items()
        return Fraction(n, d)
    common = math.lcm(*by_den)
    return Fraction(sum(n * (common // d) for d, n in by_den.items()), common)



_OUTCOME_CACHE: dict[int, tuple[DiceKind, list]] = {}
_READ_CACHE: dict = {}


def _read_outcomes(kind: DiceKind, readings: tuple) -> list:
    """A kind's outcomes told apart only by what is read of the roll (its total, and doubles if read):
    one representative faces per group, with the group's summed weight (2d6 read by its total: 11)."""
    key = (id(kind), "doubles" in readings)
    found = _READ_CACHE.get(key)
    if found is None or found[0] is not kind:
        groups: dict = {}
        for faces, num, den in _outcomes(kind):
            g = (sum(faces), len(faces) > 1 and faces.count(faces[0]) == len(faces) if key[1] else None)
            if g in groups:
                rep, n, d = groups[g]
                groups[g] = (rep, n * den + num * d, d * den) if d != den else (rep, n + num, d)
            else:
                groups[g] = (faces, num, den)
        out = []
        for rep, n, d in groups.values():
            k = math.gcd(n, d)
            out.append((rep, n // k, d // k))
        found = _READ_CACHE[key] = (kind, out)
    return found[1]


def _outcomes(kind: DiceKind) -> list:
    """A kind's outcomes, computed once (keyed by identity: compiled code keeps its kinds alive)."""
    found = _OUTCOME_CACHE.get(id(kind))
    if found is None or found[0] is not kind:
        found = _OUTCOME_CACHE[id(kind)] = (kind, kind.outcomes())
    return found[1]


@dataclass
class Enumerator:
    """Exact distributions of procedure results, sharing memoised sub-procedure distributions."""

    ruleset: Any
    choices: dict
    budget: int = DEFAULT_BUDGET
    demands: dict = field(default_factory=dict)   # procedure -> result fields any use needs (odds/demand.py)
    paths: int = 0
    work: int = 0
    memo: dict = field(default_factory=dict)
    memo_hits: int = 0
    work_limit: int = DEFAULT_WORK

    def distribution(self, procedure, args: dict, given: list | None = None, depth: int = 0,
                     used: tuple | None = None) -> dict[Any, Fraction]:
        """Every outcome of running ``procedure`` on ``args`` with its exact probability. With ``used`` (how many
        answers of each choice the caller had used, where the situation answers a choice with a list), each path
        starts from there and each outcome that is not a stop is ``(result, answers used after it)``."""
        given = list(given or [])
        counts: dict[Any, dict[int, int]] = {}     # outcome -> {denominator: numerator}
        path: list[int] = []
        dice = PathDice(given)
        demand = self.demands.get(procedure.name, ALL)
        rt = Runtime(self.ruleset, dice, None, self.choices)
        rt.call_hook = self._hook(rt)
        steps = rt.limits["steps"]
        clear_choices = rt.choice_counts.clear if self.choices else None
        run = procedure.run
        try:
            while True:
                dice.given_used, dice.path, dice.at, dice.num, dice.den = 0, path, 0, 1, 1
                rt.steps_left, rt.depth = steps, depth + 1
                if clear_choices is not None:
                    clear_choices()
                    if used:
                        rt.choice_counts.update(used)
                try:
                    value = run(dict(args), rt)
                except Exception as e:          # a stop (refusal, unknown cell, fail) is an outcome
                    value = stop_outcome(e)
                if demand is not ALL:
                    value = project(value, demand)
                if used is not None and not isinstance(value, Stop):
                    value = (value, tuple(sorted(rt.choice_counts.items())))
                self.paths += 1
                if self.paths > self.budget:
                    raise LimitError(f"exact odds need more than {self.budget:,} paths through the dice",
                                     hint="use `umpire simulate` for an estimate, or raise --budget")
                self.work += steps - rt.steps_left + RUN_COST
                if self.work > self.work_limit:
                    raise work_error(self.work_limit)
                by_den = counts.get(value)
                if by_den is None:
                    by_den = counts[value] = {}
                by_den[dice.den] = by_den.get(dice.den, 0) + dice.num
                if not dice.advance():
                    break
        finally:
            rt.call_hook = None     # the hook and the runtime refer to each other: no garbage for the collector
        return {value: _fraction(by_den) for value, by_den in counts.items()}

    def _hook(self, rt: Runtime) -> Callable:
        list_choices = has_list_choices(self.choices)      # (the situation's choices do not change while it runs)

        def call(procedure, args, pos):
            if procedure.deterministic or rt.dice.pending_given:
                return rt.invoke(procedure, args)   # nothing to enumerate (or dice still fixed): just run it
            # where choices are answered by lists (one answer each time the decision comes up), a call's outcomes
            # depend on how many answers it starts from too: that is in the key, and each outcome carries how
            # many were used after it, which the caller goes on from
            used = tuple(sorted(rt.choice_counts.items())) if list_choices else None
            key = (procedure.name, outcome_key(args), used)
            dist = self.memo.get(key)
            if dist is None:
                dist = self.distribution(procedure, args, depth=rt.depth + 1, used=used)
                dist = self.memo[key] = [(v, p.numerator, p.denominator)
                                         for v, p in sorted(dist.items(), key=lambda kv: -kv[1])]
            else:
                self.memo_hits += 1
            return take_outcome(rt, dist, used)
        return call


def take_outcome(rt: Runtime, dist: list, used: tuple | None):
    """A memoised call's outcome on this path (``dist`` as PathDice.branch takes it): a stop replays the caller's
    path as that stop; with ``used`` (answers counted, see ``Enumerator.distribution``) the caller goes on from the
    answers the call used."""
    value = rt.dice.branch(dist)
    if isinstance(value, Stop):
        raise Replay(value)
    if used is None:
        return value
    value, after = value
    rt.choice_counts.clear()
    rt.choice_counts.update(after)
    return value


class Replay(Exception):
    """Carries a sub-procedure's stop outcome (refusal, unknown cell) up to the caller's path."""

    def __init__(self, stop: Stop):
        self.stop = stop


def run_procedure(rt: Runtime, procedure, args):
    try:
        return rt.invoke(procedure, args)
    except Exception as e:
        return stop_outcome(e)


def stop_outcome(e: Exception) -> "Stop":
    """An adjudication that ended without a result, as an outcome (or re-raised if it is not one)."""
    if isinstance(e, Replay):
        return e.stop
    if isinstance(e, Refusal):
        return Stop("refused", f"refused: {e.reason}")
    if isinstance(e, UnknownCellError):
        return Stop("needs chart", e.short)
    if isinstance(e, AdjudicationError) and not isinstance(e, LimitError):
        return Stop("error", f"error: {e.message}")
    raise e


def has_list_choices(choices: dict) -> bool:
    return any(isinstance(v, (list, tuple)) for v in choices.values())


def outcome_key(args: dict):
    """A memo key for a call's arguments; rolls, wherever they sit, keep their dice in it."""
    return tuple(sorted((k, key_form(v)) for k, v in args.items()))


# ---- grouping and reports --------------------------------------------------------------
