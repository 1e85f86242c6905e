"""The path reference of the exact-odds parity tests (tests/test_states.py): every path through the dice run on its
own, with nothing merged (no live states, no demand analysis, no factored lists, no shared distributions).

It is interpreter/odds/paths.py's Enumerator (which shares only memoised sub-procedure distributions) with two
things more, neither of which changes a distribution:

- A call is memoised also where the situation answers a choice with a list (one answer per time the decision
  comes up, in order), which the Enumerator runs inline on every path of its caller. How many answers of each
  choice were used when the call is made is part of the memo key, and each outcome of the call carries how many
  were used after it: the same runs of the same procedure on the same arguments from the same place in the
  answers give the same distribution (a V&V case with lists of answers: 4,085 paths instead of 9,281, 0.15 s instead of 1.9 s).
- The memo is kept for the process, per ruleset (the object) and choices: a call the rules make in many cases or
  situations (the same procedure on equal arguments at the same depth) is enumerated once. Each comparison still
  counts the paths a memo of its own would have run (each entry keeps the paths of its own runs and the calls it
  made), so whether a comparison is within the cap does not depend on which comparisons ran before it.

Nothing of the state engine is used.
"""

from __future__ import annotations

from fractions import Fraction

from interpreter.errors import LimitError
from interpreter.odds.grouping import Stop
from interpreter.odds.paths import RUN_COST, Enumerator, PathDice, _fraction, outcome_key, stop_outcome, take_outcome
from interpreter.runtime.memory import gc_paused
from interpreter.runtime.state import Runtime

_MEMOS: dict = {}
"""(id of the ruleset, the choices) -> (the ruleset, memo): the ruleset is kept beside its memo, so the id stays its."""


class _Entry:
    """One memoised call: its distribution (as PathDice.branch takes it), the paths its own runs took and the memo
    keys of the calls those runs made."""

    __slots__ = ("dist", "paths", "calls")

    def __init__(self, dist: list, paths: int, calls: set):
        self.dist, self.paths, self.calls = dist, paths, calls


class Reference(Enumerator):
    """Exact distributions path by path, sub-procedure calls memoised (under lists of answers too)."""

    def __init__(self, ruleset, choices: dict, budget: int):
        super().__init__(ruleset, choices, budget, work_limit=10**15)   # (bounded by the paths alone)
        key = (id(ruleset), repr(sorted(choices.items())))
        found = _MEMOS.get(key)
        if found is None or found[0] is not self.ruleset:
            found = _MEMOS[key] = (self.ruleset, {})
        self.memo = found[1]
        self.seen: set = set()      # the memo keys this enumeration reached (its paths counted)
        self.calls: list[set] = []  # per distribution being worked out, the keys of the calls its runs made
        self.answers = any(isinstance(v, (list, tuple)) for v in self.choices.values())

    def distribution(self, procedure, args: dict, given: list | None = None, depth: int = 0,
                     used: tuple | None = None) -> dict:
        """Every outcome of ``procedure`` on ``args`` with its exact probability. With ``used`` (how many answers
        of each choice were used before the call, when the choices hold lists), each path starts there and each
        outcome is ``(result, answers used after it)``."""
        return self._distribution(procedure, args, given, depth, used)[0]

    def _distribution(self, procedure, args, given, depth, used) -> tuple[dict, int]:
        counts: dict = {}
        path: list[int] = []
        dice = PathDice(list(given or []))
        rt = Runtime(self.ruleset, dice, None, self.choices)
        rt.call_hook = self._hook(rt)
        steps = rt.limits["steps"]
        choice_counts = rt.choice_counts
        own = 0
        try:
            while True:
                dice.given_used, dice.path, dice.at, dice.num, dice.den = 0, path, 0, 1, 1
                rt.steps_left, rt.depth = steps, depth + 1
                choice_counts.clear()
                if used:
                    choice_counts.update(used)
                try:
                    value = procedure.run(dict(args), rt)
                except Exception as e:          # a stop (refusal, unknown cell, fail) is an outcome
                    value = stop_outcome(e)
                if used is not None and not isinstance(value, Stop):
                    value = (value, tuple(sorted(choice_counts.items())))
                own += 1
                self._count(1)
                self.work += steps - rt.steps_left + RUN_COST
                by_den = counts.get(value)
                if by_den is None:
                    by_den = counts[value] = {}
                by_den[dice.den] = by_den.get(dice.den, 0) + dice.num
                if not dice.advance():
                    break
        finally:
            rt.call_hook = None     # the hook and the runtime refer to each other: no garbage for the collector
        return {value: _fraction(by_den) for value, by_den in counts.items()}, own

    def _count(self, paths: int) -> None:
        self.paths += paths
        if self.paths > self.budget:
            raise LimitError(f"exact odds need more than {self.budget:,} paths through the dice")

    def _reach(self, key) -> None:
        """A memoised call this enumeration had not reached: count the paths its own memo would have run for it."""
        todo = [key]
        while todo:
            k = todo.pop()
            if k not in self.seen:
                self.seen.add(k)
                entry = self.memo[k]
                self._count(entry.paths)
                todo.extend(entry.calls)

    def _hook(self, rt: Runtime):
        answers, memo, seen = self.answers, self.memo, self.seen

        def call(procedure, args, pos):
            if procedure.deterministic or rt.dice.pending_given:
                return rt.invoke(procedure, args)   # nothing to enumerate (or dice still fixed): just run it
            used = tuple(sorted(rt.choice_counts.items())) if answers else None
            key = (procedure.name, outcome_key(args), used, rt.depth)
            if self.calls:
                self.calls[-1].add(key)
            entry = memo.get(key)
            if entry is None:
                seen.add(key)
                self.calls.append(set())
                try:
                    dist, own = self._distribution(procedure, args, None, rt.depth + 1, used)
                finally:
                    made = self.calls.pop()
                entry = memo[key] = _Entry([(v, p.numerator, p.denominator)
                                            for v, p in sorted(dist.items(), key=lambda kv: -kv[1])], own, made)
            else:
                self.memo_hits += 1
                if key not in seen:
                    self._reach(key)
            return take_outcome(rt, entry.dist, used)
        return call


def reference(situation, paths: int) -> dict[object, Fraction] | None:
    """Every outcome of the situation with its exact weight; None when that takes more than ``paths`` paths
    through the dice (counted as a memo of its own would run them). Run with the cyclic collector paused, as
    exact_odds runs (runtime.memory.gc_paused)."""
    with gc_paused():
        try:
            return Reference(situation.ruleset, situation.choices, paths).distribution(
                situation.procedure, situation.args, situation.dice)
        except LimitError:
            return None
