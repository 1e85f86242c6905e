"""The record of an adjudication: every roll, lookup, modifier, decision and result.

Events are small dicts (so ``--json`` is free); ``explain`` renders them as an
indented account a player can check against the rulebook, citation first.
"""

from __future__ import annotations

from typing import Any

from ..model.values import thaw


class Trace:
    __slots__ = ("events", "depth")

    def __init__(self):
        self.events: list[dict] = []
        self.depth = 0

    def add(self, kind: str, text: str, cite: str | None = None, origin=None, **data: Any) -> None:
        event = {"kind": kind, "depth": self.depth, "text": text}
        if cite:
            event["cite"] = cite
        if origin is not None:
            event["from"] = str(origin)
        if data:
            event["data"] = data
        self.events.append(event)

    def as_json(self) -> list[dict]:
        return [dict(e, data=thaw(e["data"])) if "data" in e else e for e in self.events]


_MARKS = {"call": "> ", "result": "= ", "refuse": "x ", "modifier": "- "}


_BRIEF_KINDS = {"call", "result", "roll", "lookup", "stack", "choose", "refuse", "note"}


def brief_events(events: list[dict]) -> list[dict]:
    """What a player checks against the book: cited steps, rolls, lookups, totals, decisions, results.

    Left out: uncited intermediate values and modifiers that did not apply.
    """
    out = []
    for e in events:
        if e["kind"] == "modifier":
            if "not applied" not in e["text"]:
                out.append(e)
        elif e["kind"] in _BRIEF_KINDS or e.get("cite") or e.get("from"):
            out.append(e)
    return out


def explain(events: list[dict]) -> str:
    """The trace as indented lines: '[XYZ 3.2.3] roll dr: 2d6 -> colored 3, white 4 = 7'."""
    lines = []
    for e in events:
        indent = "  " * e["depth"]
        mark = _MARKS.get(e["kind"], "")
        cite = f"[{e['cite']}] " if e.get("cite") else ""
        origin = f"  (from {e['from']})" if e.get("from") else ""
        lines.append(f"{indent}{mark}{cite}{e['text']}{origin}")
    return "\n".join(lines)
