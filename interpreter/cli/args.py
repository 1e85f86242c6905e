"""Argument types shared by the subcommands."""

from __future__ import annotations

import argparse
import os
import sys


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


def terminal_columns() -> int:
    """The terminal's width as ``shutil.get_terminal_size`` gives it (``COLUMNS``, else the terminal of standard
    output, else 80), without importing shutil: its import (and bz2's, lzma's, zlib's with it) is a tenth of a
    short command's start-up, and argparse makes a formatter, so asks the width, for every option it adds."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns if columns > 0 else 80


def formatter(base: type[argparse.HelpFormatter]) -> type[argparse.HelpFormatter]:
    """``base`` with its width found by ``terminal_columns`` (argparse's own formatters import shutil for it)."""
    found = _FORMATTERS.get(base)
    if found is None:
        def __init__(self, prog, indent_increment=2, max_help_position=24, width=None):
            base.__init__(self, prog, indent_increment, max_help_position,
                          terminal_columns() - 2 if width is None else width)     # (argparse keeps 2 spare)
        found = _FORMATTERS[base] = type(base.__name__, (base,), {"__init__": __init__, "__doc__": base.__doc__})
    return found


_FORMATTERS: dict = {}
