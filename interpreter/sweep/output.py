"""A sweep's rows, as data, CSV and a heat map.

One row per cell and overlay set, in cell order (the axes' product, last axis fastest, or the listed
rows), each overlay set in the spec's order: the axis values, the status (ok, or why the cell has no
answer: needs chart, refused, error, limit, invalid), each outcome's share, the needs-chart share apart,
and for every overlay set after the first the change it makes to each share against the first.
"""

from __future__ import annotations

import csv
import io
from fractions import Fraction

from .cells import exact, share
from .spec import Spec


def build_rows(spec: Spec, tasks: list[dict], results: list[dict]) -> list[dict]:
    rows = []
    per = len(spec.variants)
    for t, result in enumerate(results):
        c, v = divmod(t, per)
        cell = spec.cells[c]
        row = {"cell": c, "overlay": spec.variants[v].name,
               "axes": {a.name: a.labels[j] for a, j in zip(spec.axes, cell)},
               "status": result["status"], "reason": result.get("reason"),
               "needs_chart": share(result["needs_chart"]) if "needs_chart" in result else None,
               "outcomes": {k: share(x) for k, x in (result.get("outcomes") or {}).items()}}
        if all(isinstance(x, str) for x in (result.get("outcomes") or {}).values()) and result.get("outcomes"):
            row["fractions"] = dict(result["outcomes"])
        if v > 0:
            base = results[t - v]
            if base.get("outcomes") is not None and result.get("outcomes") is not None:
                labels = list(dict.fromkeys(list(base["outcomes"]) + list(result["outcomes"])))
                row["change"] = {k: float(exact(result["outcomes"].get(k, "0")) - exact(base["outcomes"].get(k, "0")))
                                 for k in labels}
            else:
                row["change"] = None
        row["key"] = tasks[t]["key"]
        rows.append(row)
    return rows


def outcome_labels(rows: list[dict]) -> list[str]:
    """Every outcome seen, the most likely over the whole sweep first (ties by label): stable for a sweep."""
    totals: dict[str, Fraction] = {}
    for r in rows:
        for k, x in r["outcomes"].items():
            totals[k] = totals.get(k, 0) + Fraction(x)
    return sorted(totals, key=lambda k: (-totals[k], k))


def as_json(spec: Spec, rows: list[dict]) -> dict:
    return {"sweep": spec.name, "title": spec.title, "spec": spec.file, "question": _question_shown(spec),
            "axes": [{"name": a.name, "path": [".".join(map(str, p)) for p in a.paths], "values": a.labels}
                     for a in spec.axes],
            "overlays": [{"name": v.name, "files": list(v.shown)} for v in spec.variants],
            "cells": len(spec.cells), "tasks": spec.tasks, "outcomes": outcome_labels(rows),
            "statuses": _statuses(rows), "rows": rows}


def _question_shown(spec: Spec) -> dict:
    return spec.question


def _statuses(rows: list[dict]) -> dict:
    out: dict[str, int] = {}
    for r in rows:
        out[r["status"]] = out.get(r["status"], 0) + 1
    return dict(sorted(out.items()))


def as_csv(spec: Spec, rows: list[dict]) -> str:
    labels = outcome_labels(rows)
    changes = len(spec.variants) > 1
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["cell", "overlay", *[a.name for a in spec.axes], "status", "reason", "needs_chart", *labels,
                *([f"change {k}" for k in labels] if changes else [])])
    for r in rows:
        line = [r["cell"], r["overlay"], *r["axes"].values(), r["status"], r["reason"] or "",
                "" if r["needs_chart"] is None else repr(r["needs_chart"])]
        line += [repr(r["outcomes"][k]) if k in r["outcomes"] else ("" if r["status"] != "ok" else "0.0")
                 for k in labels]
        if changes:
            ch = r.get("change")
            line += ["" if not ch or k not in ch else repr(ch[k]) for k in labels]
        w.writerow(line)
    return out.getvalue()


def summary(spec: Spec, rows: list[dict]) -> str:
    st = _statuses(rows)
    return (f"{len(spec.cells):,} cells x {len(spec.variants)} overlay set{'s' if len(spec.variants) != 1 else ''}"
            f" = {spec.tasks:,} rows: " + ", ".join(f"{n:,} {k}" for k, n in st.items()))


# ---- the heat map --------------------------------------------------------------------------------------

def heatmap(spec: Spec, rows: list[dict], out, chosen: dict | None = None) -> None:
    """One outcome's share over two axes, a panel per overlay set, and the change each overlay set after
    the first makes as a diverging map (red less likely, blue more); axes not drawn either fixed by
    ``where`` or one row of panels per value combination. A cell with no answer is grey and crossed."""
    import itertools

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
    hm = chosen or spec.heatmap
    if hm is None:
        from ..errors import InputError
        raise InputError("a heat map needs heatmap: {outcome, x, y} in the spec", spec.doc.at(()))
    names = [a.name for a in spec.axes]
    ax_x, ax_y = spec.axes[names.index(hm["x"])], spec.axes[names.index(hm["y"])]
    where = dict(hm.get("where") or {})
    free = [a for a in spec.axes if a.name not in (hm["x"], hm["y"]) and a.name not in where]
    facets = list(itertools.product(*(a.labels for a in free)))[:12]
    outcome = hm["outcome"]
    index = {}
    for r in rows:
        index[(r["overlay"], tuple(r["axes"][a.name] for a in spec.axes))] = r
    variants = [v.name for v in spec.variants]
    ncols = len(variants) + (len(variants) - 1)
    fig, axes = plt.subplots(len(facets), ncols, figsize=(2.2 + 0.42 * len(ax_x.labels) * ncols,
                                                          1.2 + (0.36 * len(ax_y.labels) + 0.9) * len(facets)),
                             squeeze=False, constrained_layout=True)
    big = len(ax_x.labels) * len(ax_y.labels) <= 400

    def grid(variant, facet, key):
        g = np.full((len(ax_y.labels), len(ax_x.labels)), np.nan)
        for yi, yl in enumerate(ax_y.labels):
            for xi, xl in enumerate(ax_x.labels):
                fixed = dict(zip([a.name for a in free], facet))
                fixed.update({ax_x.name: xl, ax_y.name: yl})
                for k, v in where.items():
                    axis = spec.axes[names.index(k)]
                    fixed[k] = v if v in axis.labels else axis.labels[axis.values.index(v)]
                r = index.get((variant, tuple(fixed[a.name] for a in spec.axes)))
                if r is None or r["status"] != "ok":
                    continue
                if key == "share":
                    g[yi, xi] = r["outcomes"].get(outcome, 0.0)
                elif r.get("change") is not None:
                    g[yi, xi] = r["change"].get(outcome, 0.0)
        return g

    changes = [grid(v, f, "change") for f in facets for v in variants[1:]]
    limit = max([float(np.nanmax(np.abs(c))) for c in changes if not np.all(np.isnan(c))] + [0.01])
    shares_im = change_im = None
    for fi, facet in enumerate(facets):
        facet_text = ", ".join(f"{a.name}={lab}" for a, lab in zip(free, facet))
        panels = [(v, "share") for v in variants] + [(v, "change") for v in variants[1:]]
        for ci, (variant, kind) in enumerate(panels):
            ax = axes[fi][ci]
            g = grid(variant, facet, kind)
            cmap = plt.get_cmap("viridis" if kind == "share" else "RdBu").with_extremes(bad="#d0d0d0")
            im = ax.imshow(np.ma.masked_invalid(g), cmap=cmap, aspect="auto", origin="lower",
                           vmin=0 if kind == "share" else -limit, vmax=1 if kind == "share" else limit)
            if kind == "share":
                shares_im = im
            else:
                change_im = im
            if big:
                for yi in range(g.shape[0]):
                    for xi in range(g.shape[1]):
                        val = g[yi, xi]
                        if np.isnan(val):
                            ax.text(xi, yi, "×", ha="center", va="center", fontsize=7, color="#707070")
                        elif len(ax_x.labels) <= 16:
                            txt = f"{val * 100:.0f}" if kind == "share" else f"{val * 100:+.0f}"
                            dark = (val < 0.55) if kind == "share" else abs(val) > 0.6 * limit
                            ax.text(xi, yi, txt, ha="center", va="center", fontsize=6.5,
                                    color="white" if dark else "black")
            ax.set_xticks(range(len(ax_x.labels)), [str(v) for v in ax_x.labels], rotation=60, ha="right",
                          fontsize=7)
            ax.set_yticks(range(len(ax_y.labels)), [str(v) for v in ax_y.labels], fontsize=7)
            title = (f"{variant}: P({outcome})" if kind == "share" else f"change: {variant} − {variants[0]}")
            ax.set_title(title + (f"\n{facet_text}" if facet_text else ""), fontsize=8)
            if fi == len(facets) - 1:
                ax.set_xlabel(ax_x.name, fontsize=8)
            if ci == 0:
                ax.set_ylabel(ax_y.name, fontsize=8)
    if shares_im is not None:
        fig.colorbar(shares_im, ax=[axes[f][c] for f in range(len(facets)) for c in range(len(variants))],
                     shrink=0.8, label=f"P({outcome})")
    if change_im is not None:
        fig.colorbar(change_im, ax=[axes[f][c] for f in range(len(facets)) for c in range(len(variants), ncols)],
                     shrink=0.8, label="change in share (blue: more likely)")
    fig.suptitle((spec.title or spec.name) + "   (× : no answer in that cell — needs chart, refused or error)",
                 fontsize=9)
    fig.savefig(out, dpi=110)
    plt.close(fig)
