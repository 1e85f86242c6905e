"""The commands that report a distribution of outcomes: ``odds`` (exact) and ``simulate`` (Monte Carlo)."""

from __future__ import annotations

import json

from ..errors import InputError
from .args import positive_int, runs_count

PLOT_FORMATS = (".png", ".svg", ".pdf")


def plot_path(text: str) -> str:
    """An argparse type for --plot: a known image format in a folder that exists (checked before any work)."""
    import argparse
    from pathlib import Path
    p = Path(text)
    if p.suffix.lower() not in PLOT_FORMATS:
        raise argparse.ArgumentTypeError(f"'{text}' does not end in {', '.join(PLOT_FORMATS)}; "
                                         "the file name says which image format to write")
    folder = p.parent if str(p.parent) else Path(".")
    if not folder.is_dir():
        raise argparse.ArgumentTypeError(f"the folder '{folder}' does not exist")
    if p.is_dir():
        raise argparse.ArgumentTypeError(f"'{text}' is a folder")
    return text


def by_option(p) -> None:
    """--by, the same on odds, simulate and diff."""
    p.add_argument("--by", action="append", default=[], metavar="FIELD|EXPR",
                   help="group by a result field (result, units.G1.state) or an expression over the result's fields "
                        "('count(u for u in units if u.state == \"broken\")'); repeatable; default: the whole result")


def dice_options(p) -> None:
    """--all-dice and --keep-dice, the same on odds, simulate and diff: the situation's dice stay by default."""
    g = p.add_mutually_exclusive_group()
    g.add_argument("--all-dice", action="store_true",
                   help="ignore the dice listed in the situation and enumerate (or roll) every die")
    g.add_argument("--keep-dice", action="store_true",
                   help="keep the dice listed in the situation fixed (the default; dice it does not list are "
                        "enumerated or rolled)")


def _distribution_options(p, what: str) -> None:
    """Options shared by the commands that report a distribution of outcomes."""
    by_option(p)
    p.add_argument("--json", action="store_true", help=f"print the {what} as JSON")
    p.add_argument("--plot", metavar="FILE.png", type=plot_path,
                   help="draw it as a bar chart (needs matplotlib); .png, .svg or .pdf")


def add_odds(sub, overlay_option) -> None:
    o = sub.add_parser("odds", help="exact odds of every outcome of a situation",
                       description="Enumerate every roll the procedure makes (keeping individual dice) and "
                                   "print each outcome's exact probability. Dice given in the situation stay fixed.")
    o.add_argument("situation", help="a situation YAML file")
    overlay_option(o)
    _distribution_options(o, "exact distribution")
    dice_options(o)
    o.add_argument("--budget", type=positive_int, default=None,
                   help="most live states to keep apart at any point before refusing (default 200,000); "
                        "the steps of work in all are bounded at 50 times this")
    o.set_defaults(func=cmd_odds)


def add_simulate(sub, overlay_option) -> None:
    s = sub.add_parser("simulate", help="Monte Carlo estimate of a situation's outcomes",
                       description="Run the situation many times with seeded dice and count each outcome.")
    s.add_argument("situation", help="a situation YAML file")
    overlay_option(s)
    s.add_argument("-n", "--runs", type=runs_count, default=10_000,
                   help="number of runs (default 10,000; at most 10,000,000)")
    s.add_argument("--seed", type=int, help="seed (a random one is drawn and printed if not given)")
    s.add_argument("-j", "--jobs", type=int, default=1, metavar="N",
                   help="share the runs among N processes; the same seed gives the same counts whatever N is "
                        "(runs go in blocks of 1,000, each with its own stream drawn from the seed)")
    dice_options(s)
    _distribution_options(s, "estimated distribution, with standard errors")
    s.set_defaults(func=cmd_simulate)


def cmd_odds(args) -> int:
    from ..odds.exact import budgeted_odds
    s = _situation(args)
    return _show(budgeted_odds(s, args.by, args.budget, by_change=True), s, args, "exact odds")


def cmd_simulate(args) -> int:
    from ..odds.simulation import simulate
    s = _situation(args)
    return _show(simulate(s, args.runs, args.seed, args.by, progress=not args.json, jobs=args.jobs), s, args,
                 "simulation")


def _situation(args):
    """The situation named on the command line, with its given dice dropped under --all-dice.

    A --plot that cannot be drawn is refused here, before any odds are worked out."""
    from ..api import load_situation
    if args.plot:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            raise InputError("--plot needs matplotlib, which is not installed (from a checkout: "
                             "pip install -e '.[plot]'; or pip install matplotlib)") from None
    s = load_situation(args.situation, tuple(args.overlays))
    if args.all_dice:
        s.dice, s.dice_positions = [], []
    return s


def _show(report, s, args, kind: str) -> int:
    """One report as a table or JSON, and as a plot when asked: the same for odds and simulate."""
    from ..odds.render import plot, render
    grouped = ", ".join(args.by) if args.by else report.grouping
    title = f"{kind}: {s.title or s.procedure.name}" + (f" (grouped by {grouped})" if grouped else "")
    if args.json:
        from ..tools.reports import report_json
        print(json.dumps(report_json(report, s, args.by), indent=2))
    else:
        from ..loading.applied import charts_line
        print("\n".join([render(report, title)] + charts_line(s.ruleset)))
    if args.plot:
        try:
            plot(report, title, args.plot)
        except OSError as e:
            raise InputError(f"cannot write the plot to {args.plot}: {e.strerror or e}") from None
    return 0
