"""What an adjudication changed in the records it was given: the inputs' records by id, the result's lists of
records, which of those restate the inputs, and the fields that differ.

The CLI's and the workbench's table of changes (tools/reports.changed_fields) and the default odds grouping
(odds/grouping.by_changes) both read a result this way.
"""

from __future__ import annotations

from .values import Record

_SEARCH_DEPTH = 6
"""How deep into the inputs and the result records with an ``id`` are looked for (the units of a situation sit
one or two levels down; nothing deeper is a unit a player listed)."""


def input_records(args) -> dict:
    """Every record of the inputs that has a text ``id``, by id (the first one wins: a unit listed twice is the
    same unit). These are the 'before' of each record of the result that has the same id."""
    found: dict = {}

    def walk(v, depth):
        if depth > _SEARCH_DEPTH:
            return
        if isinstance(v, Record):
            if isinstance(v.get("id"), str):
                found.setdefault(v["id"], v)
            for x in v.values():
                walk(x, depth + 1)
        elif isinstance(v, (tuple, list)):
            for x in v:
                walk(x, depth + 1)
    for v in dict(args).values():
        walk(v, 0)
    return found


def record_lists(value, at: str = "", depth: int = 0):
    """(path, list) for each list of records in the result (nested records too), in the result's order."""
    if depth > _SEARCH_DEPTH or not isinstance(value, Record):
        return
    for k, v in value.items():
        path = f"{at}.{k}" if at else str(k)
        if isinstance(v, tuple) and v and all(isinstance(x, Record) for x in v):
            yield path, v
        elif isinstance(v, Record):
            yield from record_lists(v, path, depth + 1)


def record_changes(before, after) -> tuple[list, list]:
    """(changed, added) between an input record and the result's record of the same id: the fields both have
    with different values, as (field, before, after), and the result's fields the input does not have, as
    (field, value). The id itself is neither."""
    changed = [(k, before[k], v) for k, v in after.items() if k != "id" and k in before and before[k] != v]
    added = [(k, v) for k, v in after.items() if k != "id" and k not in before]
    return changed, added


def is_view_of_inputs(records, inputs: dict) -> bool:
    """Whether a list of the result's records restates input records (each has the id of one and carries more
    of the input's fields than new ones): such a list is best read as what changed."""
    shared = new = 0
    for r in records:
        before = inputs.get(r.get("id")) if isinstance(r.get("id"), str) else None
        if before is None:
            return False
        for k in r:
            if k != "id":
                if k in before:
                    shared += 1
                else:
                    new += 1
    return shared > new
