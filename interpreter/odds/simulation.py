"""Monte Carlo estimates: seeded blocks of runs, the same answer on any number of worker processes.
"""

from __future__ import annotations

import math
import sys
import time
from collections import defaultdict
from fractions import Fraction

from ..errors import (
    InputError,
)
from ..model.dice import SeededDice
from ..runtime.state import Runtime
from .exact import Report
from .grouping import (
    Stop,
    by_keys,
    check_fields,
    group_label,
)
from .paths import run_procedure, stop_outcome

BLOCK_RUNS = 1_000
"""A simulation is cut into blocks of this many runs, each with its own stream drawn from the seed:
the counts depend on the seed (and the number of runs) alone, not on how many processes share the blocks."""

MAX_JOBS = 64

MAX_RUNS = 10_000_000
"""The most runs one simulation takes (minutes of work on one core); past it, ask for exact odds or fewer runs."""


def simulate(situation, runs: int, seed: int | None, by: list[str], progress: bool = False,
             jobs: int = 1) -> Report:
    """Monte Carlo: ``runs`` seeded adjudications (given dice fixed), grouped like exact odds.

    ``jobs`` processes share the blocks of runs (BLOCK_RUNS); the same seed gives the same
    counts whatever ``jobs`` is.
    """
    start = time.perf_counter()
    if not 1 <= runs <= MAX_RUNS:
        raise InputError(f"-n must be between 1 and {MAX_RUNS:,} runs, not {runs:,}" if runs < 10**12
                         else f"-n must be between 1 and {MAX_RUNS:,} runs (got a number of {len(str(runs))} digits)")
    if not 1 <= jobs <= MAX_JOBS:
        raise InputError(f"-j must be between 1 and {MAX_JOBS} processes, not {jobs}")
    keys = by_keys(by, situation.ruleset)
    rng_seed = seed if seed is not None else SeededDice().seed
    check_fields([run_procedure(Runtime(situation.ruleset, SeededDice(rng_seed), None, situation.choices),
                       situation.procedure, situation.args)], keys)
    blocks = [(b, min(BLOCK_RUNS, runs - b * BLOCK_RUNS)) for b in range(-(-runs // BLOCK_RUNS))]
    show_bar = progress and sys.stderr.isatty() and runs >= 2000
    counts: dict[str, int] = defaultdict(int)
    done = 0
    for block in _blocks_run(situation, rng_seed, keys, blocks, jobs):
        for label, c in block.items():
            counts[label] += c
        done += sum(block.values())
        if show_bar:
            _bar(done, runs, start)
    if show_bar:
        sys.stderr.write("\n")
    rows: list[tuple[str, Fraction, float | None]] = []
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
    from ..model.dice import GivenDice
    stream = SeededDice(block_seed(seed, block))
    given = GivenDice(situation.dice, None, situation.dice_positions) if situation.dice else None
    if given is not None:
        given.fallback = stream
    dice = given if given is not None else stream
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
        if given is not None:
            given.used = 0
            given.history.clear()
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
    from ..errors import UmpireError
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
