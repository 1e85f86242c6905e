"""Argument types shared by the subcommands."""

from __future__ import annotations

import argparse


def positive_int(text: str) -> int:
    """An argparse type: a whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def runs_count(text: str) -> int:
    """An argparse type for ``simulate -n``: a whole number from 1 to the simulation's cap."""
    from ..odds.simulation import MAX_RUNS
    if len(text.strip().lstrip("+")) > 12:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_RUNS:,} runs")
    value = positive_int(text)
    if value > MAX_RUNS:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_RUNS:,} runs, not {value:,}")
    return value
