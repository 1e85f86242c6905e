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

import math
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable

from .demand import ALL, analyse, project
from .grouping import (By, Stop, by_keys, check_fields, demanded_fields, exact_sum, group, group_label,  # noqa: F401
                       group_weights, weights_sum)
from .dice import DiceKind, DiceSource, SeededDice
from .errors import AdjudicationError, InputError, LimitError, Refusal, UnknownCellError
from .api import gc_paused
from .runtime import Runtime
from .values import key_form

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

    def __init__(self, given: list, readings: dict | None = None):
        self.given = given
        self.readings = readings     # roll name -> what is read of it (roll_usage.roll_readings), or None
        self.widths: list[int] = []
        self.lazy_ok = False     # (states.py) may a call's result keep independent lists factored here?
        self.got_lazy = False    # (states.py) did one?

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



_OUTCOME_CACHE: dict[DiceKind, list] = {}
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
            g = math.gcd(n, d)
            out.append((rep, n // g, d // g))
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
    demands: dict = field(default_factory=dict)   # procedure -> result fields any use needs (demand.py)
    paths: int = 0
    work: int = 0
    memo: dict = field(default_factory=dict)
    memo_hits: int = 0
    work_limit: int = DEFAULT_WORK

    def distribution(self, procedure, args: dict, given: list | None = None, depth: int = 0) -> dict[Any, Fraction]:
        """Every outcome of running ``procedure`` on ``args`` with its exact probability."""
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
                try:
                    value = run(dict(args), rt)
                except Exception as e:          # a stop (refusal, unknown cell, fail) is an outcome
                    value = stop_outcome(e)
                if demand is not ALL:
                    value = project(value, demand)
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
        def call(procedure, args, pos):
            if procedure.deterministic or rt.dice.pending_given or has_list_choices(self.choices):
                return rt.invoke(procedure, args)   # nothing to enumerate (or dice still fixed): just run it
            key = (procedure.name, outcome_key(args))
            dist = self.memo.get(key)
            if dist is None:
                dist = self.distribution(procedure, args, depth=rt.depth + 1)
                dist = self.memo[key] = [(v, p.numerator, p.denominator)
                                         for v, p in sorted(dist.items(), key=lambda kv: -kv[1])]
            else:
                self.memo_hits += 1
            value = rt.dice.branch(dist)
            if isinstance(value, Stop):
                raise Replay(value)
            return value
        return call


class Replay(Exception):
    """Carries a sub-procedure's stop outcome (refusal, unknown cell) up to the caller's path."""

    def __init__(self, stop: Stop):
        self.stop = stop


def _run(rt: Runtime, procedure, args):
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

    def needs_chart(self) -> Fraction:
        """The share of outcomes that stop on a chart cell nobody has supplied (kept apart from results)."""
        return exact_sum(p for label, p, _ in self.rows if label.startswith(NEEDS_CHART))

    def as_json(self) -> dict:
        needs = self.needs_chart()
        return {"exact": self.exact, "paths": self.paths, "states": self.states, "runs": self.runs,
                "seconds": round(self.seconds, 4), "total": str(self.total),
                "needs_chart": {"share": float(needs), **({"fraction": str(needs)} if self.exact else {})},
                "real_outcomes": {"share": float(1 - needs) if not self.exact else float(self.total - needs),
                                  **({"fraction": str(self.total - needs)} if self.exact else {})},
                "outcomes": [dict({"outcome": label, "share": float(p)},
                                  **({"fraction": str(p)} if self.exact else {"count": int(p * self.runs),
                                                                                "standard_error": se}))
                             for label, p, se in self.rows]}


def exact_odds(situation, by: list[str], budget: int = DEFAULT_BUDGET, merge_unneeded: bool = True,
               merge_states: bool = True, factor: bool = True, quick_paths: int = QUICK_PATHS,
               work: int = DEFAULT_WORK, share: bool = True) -> Report:
    """Exact odds of a situation's outcomes grouped by ``by``.

    ``merge_states`` enumerates by live states (states.py): branches that reach the same live
    state merge. ``merge_unneeded`` merges sub-results that differ only in fields no grouping can
    see (demand.py). ``factor`` keeps independent lists factored (independent.py), ``share`` lets calls
    that differ only in fields passed on share a distribution (passed_on.py).
    Turning any off gives the same answer, more slowly (the tests compare them);
    with both off, every path through the dice is run (the budget then counts paths). Asked for the
    whole result (no ``by``), up to ``quick_paths`` paths are first tried one by one: with every
    field kept, states rarely merge and few paths are cheaper run as they are. With ``by``, states
    merge, and the state enumeration goes first.
    ``work`` bounds the steps of work in all (each attempt), so no question runs for long unrefused.
    """
    # The cyclic collector is paused while the question is answered (as api.gc_paused pauses it for a load)
    # and restored as it was, however this returns. This is safe because exact odds leave no cyclic
    # garbage (every distribution takes its runtime's call hook off when done: tests/test_odds.py checks
    # that nothing is left for the collector): everything is freed by reference counting as before, the
    # same memory at the same moments, and the collector would only traverse the live states again and
    # again (a third of an 8-squad question's time). The question is answered in a function of its own, so
    # all it made is gone before the collector is back on (only the report is left for it to see).
    with gc_paused():
        return _exact_odds(situation, by, budget, merge_unneeded, merge_states, factor, quick_paths, work, share)


def _exact_odds(situation, by, budget, merge_unneeded, merge_states, factor, quick_paths, work, share) -> Report:
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
    if dist is None and states:
        from .states import StateEnumerator
        enum = StateEnumerator(ruleset, situation.choices, budget, demands, var_demands, factor=factor,
                               work=work, share=share)
        try:
            found = enum.distribution(situation.procedure, situation.args, situation.dice)
        except LimitError as e:
            if "live states" in e.message:
                e.hint = _narrower(situation, by, e.hint)
            raise
        work, peak = enum.runs, enum.peak
    else:
        if dist is None:
            enum = Enumerator(ruleset, situation.choices, budget, demands, work_limit=work)
            dist = enum.distribution(situation.procedure, situation.args, situation.dice)
            work, peak = enum.paths, 0
        found = {v: (p.numerator, p.denominator) for v, p in dist.items()}
    rows = [(label, p, None) for label, p in group_weights(found, keys)]
    return Report(rows, weights_sum(list(found.values())), work, True, seconds=time.perf_counter() - start,
                  memo_hits=enum.memo_hits, states=peak)


def budgeted_odds(situation, by: list[str], budget: int | None = None) -> Report:
    """Exact odds as ``umpire odds --budget N`` asks: N live states at most, and 50 x N steps of work."""
    budget = budget or DEFAULT_BUDGET
    try:
        return exact_odds(situation, by, budget, work=budget * WORK_PER_BUDGET)
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
    from . import syntax as ast
    from .names import walk
    fields = {n.name for n in walk(body) if isinstance(n, ast.Emit)}
    for n in walk(body):
        if isinstance(n, ast.Return) and isinstance(n.value, ast.RecordExpr):
            fields |= {k for k, _ in n.value.fields}
    return fields


BLOCK_RUNS = 1_000
"""A simulation is cut into blocks of this many runs, each with its own stream drawn from the seed:
the counts depend on the seed (and the number of runs) alone, not on how many processes share the blocks."""

MAX_JOBS = 64


def simulate(situation, runs: int, seed: int | None, by: list[str], progress: bool = False,
             jobs: int = 1) -> Report:
    """Monte Carlo: ``runs`` seeded adjudications (given dice fixed), grouped like exact odds.

    ``jobs`` processes share the blocks of runs (BLOCK_RUNS); the same seed gives the same
    counts whatever ``jobs`` is.
    """
    start = time.perf_counter()
    if not 1 <= jobs <= MAX_JOBS:
        raise InputError(f"-j must be between 1 and {MAX_JOBS} processes, not {jobs}")
    by = by_keys(by, situation.ruleset)
    rng_seed = seed if seed is not None else SeededDice().seed
    check_fields([_run(Runtime(situation.ruleset, SeededDice(rng_seed), None, situation.choices),
                       situation.procedure, situation.args)], by)
    blocks = [(b, min(BLOCK_RUNS, runs - b * BLOCK_RUNS)) for b in range(-(-runs // BLOCK_RUNS))]
    show_bar = progress and sys.stderr.isatty() and runs >= 2000
    counts: dict[str, int] = defaultdict(int)
    done = 0
    for block in _blocks_run(situation, rng_seed, by, blocks, jobs):
        for label, c in block.items():
            counts[label] += c
        done += sum(block.values())
        if show_bar:
            _bar(done, runs, start)
    if show_bar:
        sys.stderr.write("\n")
    rows = []
    for label, c in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        p = Fraction(c, runs)
        se = math.sqrt(float(p) * (1 - float(p)) / runs)
        rows.append((label, p, se))
    report = Report(rows, Fraction(1), 0, False, runs=runs, seconds=time.perf_counter() - start)
    report.seed = rng_seed
    report.jobs = jobs
    return report


def block_seed(seed: int, block: int) -> int:
    """The seed of one block's stream (the same on every machine and in every process)."""
    import random
    return random.Random(f"umpire simulate seed {seed} block {block}").getrandbits(64)


def _simulate_block(situation, seed: int, by, block: int, runs: int) -> dict:
    """The outcome counts of one block of runs."""
    from .dice import GivenDice
    stream = SeededDice(block_seed(seed, block))
    if situation.dice:
        dice = GivenDice(situation.dice, None, situation.dice_positions)
        dice.fallback = stream
    else:
        dice = stream
    proc, args = situation.procedure, situation.args
    rt = Runtime(situation.ruleset, dice, None, situation.choices)
    steps = rt.limits["steps"]
    counts: dict[str, int] = defaultdict(int)
    one = by[0] if len(by) == 1 else None     # one --by: labelled without the join
    fill = proc.fill_defaults
    for _ in range(runs):
        rt.steps_left, rt.depth = steps, 1     # (the depth of rt.invoke, which this loop does in place)
        if rt.choice_counts:
            rt.choice_counts.clear()
        if dice is not stream:
            dice.used = 0
            dice.history.clear()
        try:
            env = dict(args)     # a procedure uses its argument dict as its locals
            if fill is not None:  # proc.run without its frame: the defaults, then the untraced run
                fill(env, rt)
            value = proc.run_untraced(env, rt)
        except Exception as e:
            value = stop_outcome(e)
        counts[one.label(value) if one is not None and value.__class__ is not Stop else group_label(value, by)] += 1
    return dict(counts)


_FORKED: tuple = ()     # (situation, seed, by) in a worker process, inherited when the pool forks


def _forked_block(block: tuple):
    from .errors import UmpireError
    situation, seed, by = _FORKED
    try:
        return _simulate_block(situation, seed, by, *block)
    except UmpireError:
        return None         # the parent runs this block itself, to raise the same error with its position


def _blocks_run(situation, seed: int, by, blocks: list, jobs: int):
    """Each block's counts as it finishes: in this process, or in ``jobs`` forked processes."""
    import multiprocessing
    if jobs == 1 or len(blocks) == 1 or "fork" not in multiprocessing.get_all_start_methods():
        for block in blocks:        # (where processes cannot fork, the same blocks run here: same counts)
            yield _simulate_block(situation, seed, by, *block)
        return
    global _FORKED
    _FORKED = (situation, seed, by)
    try:
        with multiprocessing.get_context("fork").Pool(min(jobs, len(blocks))) as pool:
            for block, counts in zip(blocks, pool.imap(_forked_block, blocks)):
                yield counts if counts is not None else _simulate_block(situation, seed, by, *block)
    finally:
        _FORKED = ()


def _bar(done: int, total: int, start: float) -> None:
    width = 30
    filled = int(width * done / total)
    elapsed = time.perf_counter() - start
    rate = done / elapsed if elapsed > 0 else 0
    eta = (total - done) / rate if rate else 0
    sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done:,}/{total:,} runs "
                     f"{rate:,.0f}/s, {eta:.0f}s left   ")
    sys.stderr.flush()


NEEDS_CHART = "needs chart"


def render(report: Report, title: str, width: int = 30) -> str:
    lines = [title]
    label_w = min(60, max((len(r[0]) for r in report.rows), default=10))
    real = [r for r in report.rows if not r[0].startswith(NEEDS_CHART)]
    gaps = [r for r in report.rows if r[0].startswith(NEEDS_CHART)]
    rows = real + gaps
    for i, (label, p, se) in enumerate(rows):
        if gaps and i == len(real):
            share = report.needs_chart()
            lines.append(f"  -- needs an unknown chart cell: {float(share) * 100:.2f}%"
                         + (f" ({share}) " if report.exact else " ") + "(not a result: supply the chart to resolve)")
        pct = float(p) * 100
        bar = "█" * int(round(pct / 100 * width))
        if report.exact:
            lines.append(f"  {label:<{label_w}}  {str(p):>12}  {pct:6.2f}%  {bar}")
        else:
            lines.append(f"  {label:<{label_w}}  {pct:6.2f}% ± {se * 100:4.2f}  {bar}")
    if report.exact:
        work = (f"{report.paths:,} statement runs, at most {report.states:,} live states" if report.states
                else f"{report.paths:,} paths")
        if gaps:
            lines.insert(len(real) + 1, f"  real outcomes: {float(report.total - report.needs_chart()) * 100:.2f}%"
                                        f" ({report.total - report.needs_chart()})")
        lines.append(f"  total {report.total} over {work} "
                     f"({report.memo_hits:,} shared sub-results), {report.seconds * 1000:.1f} ms")
    else:
        jobs = getattr(report, "jobs", 1)
        lines.append(f"  {report.runs:,} runs, seed {report.seed}" + (f", {jobs} processes" if jobs > 1 else "") +
                     f", {report.seconds:.2f} s "
                     "(± is one standard error)")
    return "\n".join(lines)


PLOTTED = 24
"""Most bars of each kind drawn; the smaller outcomes are summed into one bar (their count in its label)."""


def _plotted(all_rows: list, rows: list, prefix: str = "") -> list:
    if len(rows) <= PLOTTED:
        return rows
    rest = rows[PLOTTED - 1:]
    share = exact_sum(p for _, p, _ in rest)
    se = None if rest[0][2] is None else math.sqrt(sum(x[2] ** 2 for x in rest))
    return rows[:PLOTTED - 1] + [(f"{prefix}{len(rest)} other outcomes (each below {float(rest[0][1]) * 100:.1f}%)",
                                  share, se)]


def plot(report: Report, title: str, path: str) -> None:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise InputError("--plot needs matplotlib: pip install 'umpire[plot]' (or pip install matplotlib)") from None
    import textwrap
    import warnings
    rows = _plotted(report.rows, [r for r in report.rows if not r[0].startswith(NEEDS_CHART)]) + \
        _plotted(report.rows, [r for r in report.rows if r[0].startswith(NEEDS_CHART)], "needs chart: ")
    labels = ["\n".join(textwrap.wrap(r[0], 90)) for r in rows][::-1]     # whole labels, wrapped, never cut
    shares = [float(r[1]) * 100 for r in rows][::-1]
    colours = ["#9a9a9a" if r[0].startswith(NEEDS_CHART) else "#3b75af" for r in rows][::-1]
    lines_per_row = [label.count("\n") + 1 for label in labels]
    fig, ax = plt.subplots(figsize=(10, 0.32 * sum(lines_per_row) + 0.2 * len(labels) + 2.0))
    bars = ax.barh(range(len(labels)), shares, color=colours,
                   xerr=None if report.exact else [r[2] * 100 for r in rows][::-1])
    ax.set_yticks(range(len(labels)), labels, fontsize=8)
    if any(r[0].startswith(NEEDS_CHART) for r in rows):
        from matplotlib.patches import Patch
        ax.legend(handles=[Patch(color="#3b75af", label="result"),
                           Patch(color="#9a9a9a", label=f"needs an unknown chart cell "
                                                        f"({float(report.needs_chart()) * 100:.1f}%)")],
                  loc="lower right", fontsize=8)
    for bar, share in zip(bars, shares):
        ax.text(bar.get_width(), bar.get_y() + bar.get_height() / 2, f" {share:.1f}%", va="center", fontsize=9)
    ax.set_xlim(0, max(shares + [1]) * 1.15)
    ax.set_xlabel("chance (%)" + ("" if report.exact else f", {report.runs:,} runs (bars: one standard error)"))
    fig.suptitle("\n".join(textwrap.wrap(title, 100)), fontsize=10)   # the figure's width, not the axes'

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")      # a layout that cannot fit everything still draws; no noise
        fig.tight_layout()
        fig.savefig(path)
    plt.close(fig)
