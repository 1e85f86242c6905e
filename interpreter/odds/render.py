"""Odds and simulation reports as text bars and as a matplotlib picture.
"""

from __future__ import annotations

import math

from ..errors import (
    InputError,
)
from .exact import NEEDS_CHART, Report
from .grouping import (
    exact_sum,
)


def render(report: Report, title: str, width: int = 30) -> str:
    lines = [title]
    label_w = min(60, max((len(r[0]) for r in report.rows), default=10))
    real = [r for r in report.rows if not r[0].startswith(NEEDS_CHART)]
    gaps = [r for r in report.rows if r[0].startswith(NEEDS_CHART)]
    rows = real + gaps
    frac_w = max(12, max((len(str(p)) for _, p, _ in rows), default=0))
    after_real = len(lines)     # where the real outcomes end (a long label takes a line of its own)
    for i, (label, p, se) in enumerate(rows):
        if gaps and i == len(real):
            after_real = len(lines)
            share = report.needs_chart()
            lines.append(f"  -- needs an unknown chart cell: {float(share) * 100:.2f}%"
                         + (f" ({share}) " if report.exact else " ") + "(not a result: supply the chart to resolve)")
        pct = float(p) * 100
        bar = "█" * int(round(pct / 100 * width))
        if len(label) > label_w:       # a long label on a line of its own: the numbers stay in their columns
            lines.append(f"  {label}")
            label = ""
        if report.exact:
            lines.append(f"  {label:<{label_w}}  {str(p):>{frac_w}}  {pct:6.2f}%  {bar}")
        else:
            lines.append(f"  {label:<{label_w}}  {pct:6.2f}% ± {(se or 0.0) * 100:4.2f}  {bar}")
    if report.exact:
        work = (f"{report.paths:,} paths through the dice, at most {report.states:,} live states" if report.states
                else f"{report.paths:,} paths through the dice")
        if gaps:
            lines.insert(after_real, f"  real outcomes: {float(report.total - report.needs_chart()) * 100:.2f}%"
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
        raise InputError("--plot needs matplotlib: pip install -e '.[plot]' in the checkout "
                         "(or pip install matplotlib)") from None
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
