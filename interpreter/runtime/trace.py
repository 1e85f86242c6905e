"""The record of an adjudication: every roll, lookup, modifier, decision and result.

Events are small dicts (so ``--json`` is free); ``explain`` renders them as an
indented account a player can check against the rulebook, citation first.
"""

from __future__ import annotations

from ..model.values import thaw
from ..reading.syntax import GIVEN_NOT_DERIVED

TYPE_CHECKING = False   # (typing is for the checker only: importing it costs a warm start 2%)
if TYPE_CHECKING:
    from typing import Any


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


_BRIEF_KINDS = {"roll", "lookup", "choose", "refuse", "note", "emit"}
"""Events a player checks against the book: rolls, table lookups, decisions, refusals and the rules' own notes
(cited emits too). Calls, results, conditions and intermediate values are the working, kept for --explain."""


def _brief_groups(events: list[dict]):
    """The brief trace as (events, times): a modifier stack travels with the modifiers that applied; a step
    repeated at once with the same text (the same stack or lookup for each of several targets) comes once,
    with how many times it ran. Rolls are never merged: two rolls are two rolls, whatever they show."""
    groups: list[list] = []
    i, n = 0, len(events)
    while i < n:
        e = events[i]
        kind = e["kind"]
        i += 1
        if kind == "stack":
            applied = []
            while i < n and events[i]["kind"] == "modifier":
                if "not applied" not in events[i]["text"]:
                    applied.append(events[i])
                i += 1
            if not applied and "(capped from" not in e["text"]:
                continue        # nothing applied: the stack's identity (+0, x1) says nothing to check
            group = [e, *applied]
        elif kind == "note" and GIVEN_NOT_DERIVED in e["text"]:
            continue            # a fact the situation stated, as the player wrote it: nothing to check
        elif kind in _BRIEF_KINDS or (e.get("from") and kind not in ("result", "modifier")):
            group = [e]
        else:
            continue
        key = [(g["kind"], g["text"], g.get("cite"), g.get("from")) for g in group]
        if groups and kind != "roll" and groups[-1][2] == key:
            groups[-1][1] += 1
        else:
            groups.append([group, 1, key])
    return [(g, times) for g, times, _ in groups]


def brief_events(events: list[dict]) -> list[dict]:
    """What a player checks against the book, in the order the rules took the steps (the events themselves,
    so a page can mark them in the full trace): see ``_brief_groups``."""
    return [e for group, _ in _brief_groups(events) for e in group]


def brief(events: list[dict]) -> str:
    """The brief trace as lines, one step each, unindented: a stack's total with the modifiers that made it,
    '(x2)' for a step taken twice in a row, each line citing its rule."""
    lines = []
    for group, times in _brief_groups(events):
        head = group[0]
        text = head["text"]
        if head["kind"] == "stack" and len(group) > 1:
            parts = []
            for m in group[1:]:
                name, _, value = m["text"].partition(": ")
                part = f"{name} {value}" if value else name
                if m.get("cite") and m.get("cite") != head.get("cite"):
                    part += f" [{m['cite']}]"
                if m.get("from"):
                    part += f" (from {m['from']})"
                parts.append(part)
            text += " (" + ", ".join(parts) + ")"
        cite = f"[{head['cite']}] " if head.get("cite") else ""
        origin = f"  (from {head['from']})" if head.get("from") else ""
        again = f"  (x{times})" if times > 1 else ""
        lines.append(f"{cite}{text}{origin}{again}")
    return "\n".join(lines)


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
