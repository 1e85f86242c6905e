"""Odds, simulation and overlay comparisons as data: what ``--json`` prints and the workbench shows.

These sit above both ``interpreter.api`` (loading and adjudicating) and ``interpreter.odds``.
"""

from __future__ import annotations

from ..api import Situation, load_ruleset, load_situation
from ..errors import InputError
from ..model.changes import input_records, is_view_of_inputs, record_changes, record_lists


def stop_kind(label: str) -> str | None:
    """Which kind of stop an odds row is ("needs chart", "refused", "error"), or None for a result."""
    for kind in ("needs chart", "refused", "error"):
        if label.startswith(kind + ":"):
            return kind
    return None


def report_json(report, s: Situation, by: list) -> dict:
    """An odds or simulation report as data; each outcome says whether it is a stop (needs chart ...)."""
    from ..loading.applied import applied_to
    data = dict(report.as_json(), situation=s.file, charts=applied_to(s.ruleset), by=list(by))
    if not report.exact:
        data["seed"] = report.seed
        data["jobs"] = getattr(report, "jobs", 1)
    for row in data["outcomes"]:
        row["stop"] = stop_kind(row["outcome"])
    return data


def odds_json(s: Situation, by: list, all_dice: bool = False, budget: int | None = None) -> dict:
    """Exact odds as data (``umpire odds --json``)."""
    from ..odds.exact import budgeted_odds
    if all_dice:
        s.dice, s.dice_positions = [], []
    return report_json(budgeted_odds(s, list(by), budget, by_change=True), s, by)


def simulate_json(s: Situation, runs: int, seed: int | None, by: list) -> dict:
    """A Monte Carlo estimate as data (``umpire simulate --json``)."""
    from ..odds.simulation import simulate
    if runs < 1:
        raise InputError("--runs must be at least 1")
    return report_json(simulate(s, runs, seed, list(by)), s, by)


def overlay_diff(ruleset_path, overlays: tuple, situation=None, by: list | tuple = (), all_dice: bool = False,
                 situation_text: str | None = None, roots=None) -> dict:
    """What overlays change, and (with a situation) the outcome shares before and after (``umpire diff``).

    Each change is ``{"name", "text": in words, "change": {"action", "item", "fields": [{"field", "before",
    "after"}]}, "from"}``. The situation's given dice stay fixed unless ``all_dice`` (as ``umpire odds``)."""
    if not overlays:
        raise InputError("diff compares the ruleset with overlays: add --with OVERLAY")
    r = load_ruleset(ruleset_path, tuple(overlays))
    groups: dict[str, list] = {}
    for c in r.changes:
        groups.setdefault(c.group, []).append(c)
    data: dict = {"changes": {g: [{"name": c.name, "text": c.what, "change": c.as_json(), "from": str(c.origin)}
                                  for c in cs]
                              for g, cs in groups.items()}}
    if situation is not None:
        from ..odds.exact import exact_odds
        before_s = load_situation(situation, (), situation_text, roots)
        after_s = load_situation(situation, tuple(overlays), situation_text, roots)
        if all_dice:
            for sit in (before_s, after_s):
                sit.dice, sit.dice_positions = [], []
        before = {label: p for label, p, _ in exact_odds(before_s, list(by), by_change=True).rows}
        after = {label: p for label, p, _ in exact_odds(after_s, list(by), by_change=True).rows}
        labels = sorted(set(before) | set(after),     # largest share first; equal shares by label (any process)
                        key=lambda label: (-max(before.get(label, 0), after.get(label, 0)), label))
        data["outcomes"] = [{"outcome": label, "before": str(before.get(label, 0)), "after": str(after.get(label, 0)),
                             "change": float(after.get(label, 0)) - float(before.get(label, 0)), "stop": stop_kind(label)}
                            for label in labels]
    return data


# ---- what an adjudication changed ------------------------------------------------------------------------------

def changed_fields(args, value) -> list[dict]:
    """What the adjudication changed, per record of the result whose id is a record of the inputs (``--json``'s
    ``changes``; the workbench's table): ``{"at": path in the result, "id", "changed": [{"field", "before",
    "after"}], "added": [{"field", "value"}]}``, one entry per such record with anything changed or added;
    ``view`` says whether its list restates the inputs (then the CLI shows it as a table of changes)."""
    from ..model.values import thaw
    inputs = input_records(args)
    out = []
    for at, records in record_lists(value):
        view = is_view_of_inputs(records, inputs)
        for r in records:
            rid = r.get("id")
            before = inputs.get(rid) if isinstance(rid, str) else None
            if before is None:
                continue
            changed, added = record_changes(before, r)
            if changed or (added and view):
                out.append({"at": at, "id": rid, "view": view,
                            "changed": [{"field": k, "before": thaw(b), "after": thaw(a)} for k, b, a in changed],
                            "added": [{"field": k, "value": thaw(v)} for k, v in added] if view else []})
    return out
