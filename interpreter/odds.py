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

from .demand import ALL, demanded, project
from .dice import DiceKind, DiceSource, SeededDice
from .errors import AdjudicationError, InputError, LimitError, Refusal, UnknownCellError, did_you_mean
from .runtime import Runtime
from .values import Record, key_form, show

DEFAULT_BUDGET = 200_000
"""Most paths (complete runs) one exact enumeration may take before it refuses."""


class _Stop:
    """An outcome that is not a result: a refusal, an unknown cell, a failure. Hashable, for grouping."""

    __slots__ = ("label", "kind")

    def __init__(self, kind: str, label: str):
        self.kind, self.label = kind, label

    def __eq__(self, other):
        return isinstance(other, _Stop) and other.label == self.label

    def __hash__(self):
        return hash(("stop", self.label))


class _PathDice(DiceSource):
    """Follows a path of choices; records each branch point's width for the odometer.

    The path's probability is kept as an integer numerator and denominator, so no
    fraction arithmetic happens inside the enumeration loop.
    """

    __slots__ = ("given", "given_used", "path", "at", "widths", "num", "den")

    def __init__(self, given: list):
        self.given = given
        self.widths: list[int] = []

    def reset(self, path: list[int]) -> None:
        self.given_used = 0
        self.path = path
        self.at = 0
        self.num = 1
        self.den = 1

    @property
    def pending_given(self) -> bool:
        return self.given_used < len(self.given)

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
        outcomes = _outcomes(kind)
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
    memo: dict = field(default_factory=dict)
    memo_hits: int = 0

    def distribution(self, procedure, args: dict, given: list | None = None, depth: int = 0) -> dict[Any, Fraction]:
        """Every outcome of running ``procedure`` on ``args`` with its exact probability."""
        given = list(given or [])
        counts: dict[Any, dict[int, int]] = {}     # outcome -> {denominator: numerator}
        path: list[int] = []
        dice = _PathDice(given)
        demand = self.demands.get(procedure.name, ALL)
        rt = Runtime(self.ruleset, dice, None, self.choices)
        rt.call_hook = self._hook(rt)
        steps = rt.limits["steps"]
        clear_choices = rt.choice_counts.clear if self.choices else None
        run = procedure.run
        while True:
            dice.given_used, dice.path, dice.at, dice.num, dice.den = 0, path, 0, 1, 1
            rt.steps_left, rt.depth = steps, depth + 1
            if clear_choices is not None:
                clear_choices()
            try:
                value = run(dict(args), rt)
            except Exception as e:          # a stop (refusal, unknown cell, fail) is an outcome
                value = _stop(e)
            if demand is not ALL:
                value = project(value, demand)
            self.paths += 1
            if self.paths > self.budget:
                raise LimitError(f"exact odds need more than {self.budget:,} paths through the dice",
                                 hint="use `umpire simulate` for an estimate, or raise --budget")
            by_den = counts.get(value)
            if by_den is None:
                by_den = counts[value] = {}
            by_den[dice.den] = by_den.get(dice.den, 0) + dice.num
            # odometer: advance the last branch point that has options left
            del path[dice.at:]
            widths = dice.widths
            i = len(path) - 1
            while i >= 0 and path[i] + 1 >= widths[i]:
                i -= 1
            if i < 0:
                break
            path[i] += 1
            del path[i + 1:]
        return {value: _fraction(by_den) for value, by_den in counts.items()}

    def _hook(self, rt: Runtime) -> Callable:
        def call(procedure, args, pos):
            if procedure.deterministic or rt.dice.pending_given or _has_list_choices(self.choices):
                return rt.invoke(procedure, args)   # nothing to enumerate (or dice still fixed): just run it
            key = (procedure.name, _key(args))
            dist = self.memo.get(key)
            if dist is None:
                dist = self.distribution(procedure, args, depth=rt.depth + 1)
                dist = self.memo[key] = [(v, p.numerator, p.denominator)
                                         for v, p in sorted(dist.items(), key=lambda kv: -kv[1])]
            else:
                self.memo_hits += 1
            value = rt.dice.branch(dist)
            if isinstance(value, _Stop):
                raise _Replay(value)
            return value
        return call


class _Replay(Exception):
    """Carries a sub-procedure's stop outcome (refusal, unknown cell) up to the caller's path."""

    def __init__(self, stop: _Stop):
        self.stop = stop


def _run(rt: Runtime, procedure, args):
    try:
        return rt.invoke(procedure, args)
    except Exception as e:
        return _stop(e)


def _stop(e: Exception) -> "_Stop":
    """An adjudication that ended without a result, as an outcome (or re-raised if it is not one)."""
    if isinstance(e, _Replay):
        return e.stop
    if isinstance(e, Refusal):
        return _Stop("refused", f"refused: {e.reason}")
    if isinstance(e, UnknownCellError):
        return _Stop("needs chart", e.short)
    if isinstance(e, AdjudicationError) and not isinstance(e, LimitError):
        return _Stop("error", f"error: {e.message}")
    raise e


def _has_list_choices(choices: dict) -> bool:
    return any(isinstance(v, (list, tuple)) for v in choices.values())


def _key(args: dict):
    """A memo key for a call's arguments; rolls, wherever they sit, keep their dice in it."""
    return tuple(sorted((k, key_form(v)) for k, v in args.items()))


# ---- grouping and reports --------------------------------------------------------------

def field_value(value, path: str):
    """A dotted field of a result ('units.G1.state'); lists of records with ids are searched by id."""
    current = value
    for part in path.split("."):
        if isinstance(current, Record) and part in current:
            current = current[part]
        elif isinstance(current, tuple):
            match = [v for v in current if isinstance(v, Record) and str(v.get("id")) == part]
            if match:
                current = match[0]
            elif part.isdigit() and int(part) < len(current):
                current = current[int(part)]
            else:
                return _MissingField(path)
        else:
            return _MissingField(path)
    return current


class _MissingField:
    def __init__(self, path):
        self.path = path

    def __eq__(self, other):
        return isinstance(other, _MissingField) and other.path == self.path

    def __hash__(self):
        return hash(("missing", self.path))

    def __repr__(self):
        return f"(no {self.path})"


def group_label(value, by: list[str]) -> str:
    if isinstance(value, _Stop):
        return value.label
    if not by:
        return show(value)
    parts = []
    for f in by:
        v = field_value(value, f)
        parts.append(f"{f}={v!r}" if isinstance(v, _MissingField) else f"{f}={show(v)}")
    return ", ".join(parts)


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

    def as_json(self) -> dict:
        return {"exact": self.exact, "paths": self.paths, "runs": self.runs, "seconds": round(self.seconds, 4),
                "total": str(self.total),
                "outcomes": [dict({"outcome": label, "share": float(p)},
                                  **({"fraction": str(p)} if self.exact else {"count": int(p * self.runs),
                                                                                "standard_error": se}))
                             for label, p, se in self.rows]}


def check_fields(values, by: list[str]) -> None:
    """A --by field that no outcome has is a typo: say so, with the fields there are."""
    results = [v for v in values if not isinstance(v, _Stop)]
    if not results or not by:
        return
    for f in by:
        if all(isinstance(field_value(v, f), _MissingField) for v in results):
            have = sorted({k for v in results if isinstance(v, Record) for k in v})
            head = f.split(".", 1)[0]
            raise InputError(f"no outcome has the field '{f}'" + (f"; the results have: {', '.join(have)}" if have
                                                                   else "; the results are not records"),
                             hint=did_you_mean(head, have) if head not in have else
                             "a dotted path goes into records and, in lists of records, by id")


def exact_sum(fractions) -> Fraction:
    """A sum of fractions with one division (over their least common denominator)."""
    fractions = list(fractions)
    if not fractions:
        return Fraction(0)
    common = math.lcm(*(f.denominator for f in fractions))
    return Fraction(sum(f.numerator * (common // f.denominator) for f in fractions), common)


def group(dist: dict, by: list[str]) -> list[tuple[str, Fraction]]:
    check_fields(dist, by)
    grouped: dict[str, list] = {}
    for value, p in dist.items():
        grouped.setdefault(group_label(value, by), []).append(p)
    shares = [(label, ps[0] if len(ps) == 1 else exact_sum(ps)) for label, ps in grouped.items()]
    return sorted(shares, key=lambda kv: (-float(kv[1]), kv[0]))


def exact_odds(situation, by: list[str], budget: int = DEFAULT_BUDGET, merge_unneeded: bool = True) -> Report:
    """Exact odds of a situation's outcomes grouped by ``by``.

    ``merge_unneeded`` merges sub-results that differ only in fields no grouping can see
    (demand.py); turning it off gives the same answer, more slowly (the tests compare them).
    """
    start = time.perf_counter()
    demands = demanded(situation.ruleset, situation.procedure.name, by) if merge_unneeded else {}
    enum = Enumerator(situation.ruleset, situation.choices, budget, demands)
    dist = enum.distribution(situation.procedure, situation.args, situation.dice)
    rows = [(label, p, None) for label, p in group(dist, by)]
    return Report(rows, exact_sum(dist.values()), enum.paths, True, seconds=time.perf_counter() - start,
                  memo_hits=enum.memo_hits)


def simulate(situation, runs: int, seed: int | None, by: list[str], progress: bool = False) -> Report:
    """Monte Carlo: ``runs`` seeded adjudications (given dice fixed), grouped like exact odds."""
    from .dice import GivenDice
    start = time.perf_counter()
    rng_seed = seed if seed is not None else SeededDice().seed
    master = SeededDice(rng_seed)      # one stream for the whole simulation: reproducible from one seed
    if situation.dice:
        dice = GivenDice(situation.dice, None, situation.dice_positions)
        dice.fallback = master
    else:
        dice = master
    counts: dict[str, int] = defaultdict(int)
    check_fields([_run(Runtime(situation.ruleset, SeededDice(rng_seed), None, situation.choices),
                       situation.procedure, situation.args)], by)
    show_bar = progress and sys.stderr.isatty() and runs >= 2000
    step = max(1, runs // 100)
    proc, args, ruleset, choices = situation.procedure, situation.args, situation.ruleset, situation.choices
    rt = Runtime(ruleset, dice, None, choices)
    steps = rt.limits["steps"]
    for i in range(runs):
        rt.steps_left, rt.depth = steps, 0
        rt.choice_counts.clear()
        if dice is not master:
            dice.used = 0
            dice.history.clear()
        counts[group_label(_run(rt, proc, args), by)] += 1
        if show_bar and i % step == 0:
            _bar(i, runs, start)
    if show_bar:
        _bar(runs, runs, start)
        sys.stderr.write("\n")
    rows = []
    for label, c in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        p = Fraction(c, runs)
        se = math.sqrt(float(p) * (1 - float(p)) / runs)
        rows.append((label, p, se))
    report = Report(rows, Fraction(1), 0, False, runs=runs, seconds=time.perf_counter() - start)
    report.seed = rng_seed
    return report


def _bar(done: int, total: int, start: float) -> None:
    width = 30
    filled = int(width * done / total)
    elapsed = time.perf_counter() - start
    rate = done / elapsed if elapsed > 0 else 0
    eta = (total - done) / rate if rate else 0
    sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done:,}/{total:,} runs "
                     f"{rate:,.0f}/s, {eta:.0f}s left   ")
    sys.stderr.flush()


def render(report: Report, title: str, width: int = 30) -> str:
    lines = [title]
    label_w = min(60, max((len(r[0]) for r in report.rows), default=10))
    for label, p, se in report.rows:
        pct = float(p) * 100
        bar = "█" * int(round(pct / 100 * width))
        if report.exact:
            lines.append(f"  {label:<{label_w}}  {str(p):>12}  {pct:6.2f}%  {bar}")
        else:
            lines.append(f"  {label:<{label_w}}  {pct:6.2f}% ± {se * 100:4.2f}  {bar}")
    if report.exact:
        lines.append(f"  total {report.total} over {report.paths:,} paths "
                     f"({report.memo_hits:,} shared sub-results), {report.seconds * 1000:.1f} ms")
    else:
        lines.append(f"  {report.runs:,} runs, seed {report.seed}, {report.seconds:.2f} s "
                     "(± is one standard error)")
    return "\n".join(lines)


def plot(report: Report, title: str, path: str) -> None:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise InputError("--plot needs matplotlib: pip install 'umpire[plot]' (or pip install matplotlib)") from None
    labels = [r[0] for r in report.rows][::-1]
    shares = [float(r[1]) * 100 for r in report.rows][::-1]
    import textwrap
    fig, ax = plt.subplots(figsize=(9, 0.45 * len(labels) + 1.8))
    bars = ax.barh(labels, shares, xerr=None if report.exact else [r[2] * 100 for r in report.rows][::-1])
    for bar, share in zip(bars, shares):
        ax.text(bar.get_width(), bar.get_y() + bar.get_height() / 2, f" {share:.1f}%", va="center", fontsize=9)
    ax.set_xlim(0, max(shares + [1]) * 1.15)
    ax.set_xlabel("chance (%)" + ("" if report.exact else f", {report.runs:,} runs (bars: one standard error)"))
    ax.set_title("\n".join(textwrap.wrap(title, 70)), fontsize=11)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
