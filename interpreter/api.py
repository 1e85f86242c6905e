"""The public entry points: load a ruleset, load a situation, adjudicate.

``load_ruleset`` runs the whole pipeline (read -> schema -> model -> check ->
compile). A second process on unchanged files reads the checked model from the
on-disk cache (loading/cache.py) instead; within a process the result is also kept,
keyed by the files' paths, sizes and modification times, so repeated commands
and test cases load once. Procedures are compiled the first time they run.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from .errors import AdjudicationError, InputError, Refusal, diagnostics, did_you_mean
from .loading.loader import MANIFEST, find_root, ruleset_files
from .model.dice import DiceSource, GivenDice
from .model.ruleset import Procedure, Ruleset
from .model.values import thaw
from .reading.plain import data_class, factory
from .reading.source import Document, referenced_file
from .runtime.memory import gc_paused
from .runtime.state import Runtime
from .runtime.trace import Trace

TYPE_CHECKING = False   # (typing is for the checker only: importing it costs a warm start 2%)
if TYPE_CHECKING:
    from typing import Any

# Reading, validating and checking sources (ruamel.yaml, jsonschema, lark, the checker) are imported only when
# a load is not served by the cache; see loading/cache.py. Trace and runtime are light and always needed.

_CACHE: dict[tuple, tuple[Ruleset, list[str]]] = {}
KEPT_LOADS = 16
"""Most loaded rulesets a process keeps (least recently used dropped first): a long-running process, such as
a workbench worker given a new house rule on every request, must not grow without end."""


def _fingerprint(paths) -> tuple:
    out = []
    for p in paths:
        p = str(p)
        try:
            st = os.stat(p)
            out.append((p, st.st_size, st.st_mtime_ns))
        except OSError:
            out.append((p, -1, -1))     # missing: unlike any file's size and time
    return tuple(out)


def load_ruleset(path, overlays: tuple = (), use_cache: bool = True, prefix_caching: bool = True,
                 charts_near=None) -> Ruleset:
    return load_ruleset_with_warnings(path, overlays, use_cache, prefix_caching, charts_near=charts_near)[0]


def load_ruleset_with_warnings(path, overlays: tuple = (), use_cache: bool = True,
                               prefix_caching: bool = True, lazy: bool = True,
                               charts_near=None) -> tuple[Ruleset, list[str]]:
    """A ruleset folder (plus overlays, applied in order) as a checked, compiled Ruleset.

    The player's applied charts (loading/applied.py: the registered chart overlay for this ruleset, or
    one in a ``charts/`` folder in ``charts_near``) come first, unless turned off (``--no-charts``).

    ``use_cache=False`` loads afresh in this process (the on-disk cache, which is keyed by the files'
    contents, still serves it). ``prefix_caching=False`` compiles without reusing procedures'
    deterministic prefixes (for measuring what that reuse is worth). ``lazy=False`` compiles every
    procedure now rather than when it first runs.
    """
    from .compiling.compiler import Compiler
    root = find_root(path)
    overlays = tuple(str(o) for o in overlays)
    from .loading.applied import charts_for
    mine = charts_for(root, charts_near)
    if mine:
        given = {os.path.realpath(o) for o in overlays}
        overlays = tuple(c for c in mine if os.path.realpath(c) not in given) + overlays
    key = (str(Path(root).resolve()),) + _fingerprint(ruleset_files(root) + list(overlays)) + (prefix_caching,)
    if use_cache and key in _CACHE:
        _CACHE[key] = found = _CACHE.pop(key)      # now the most recently used
        return found
    with gc_paused():
        ruleset, warnings = read_checked(root, overlays)
        Compiler(ruleset, prefix_caching).compile(lazy=lazy, analysed=True)
    while len(_CACHE) >= KEPT_LOADS:
        del _CACHE[next(iter(_CACHE))]
    _CACHE[key] = (ruleset, warnings)
    return ruleset, warnings


def read_checked(root: Path, overlays: tuple = ()) -> tuple[Ruleset, list[str]]:
    """The ruleset's checked and analysed model (not compiled) and its warnings: from the on-disk
    cache when an entry for exactly these file contents exists, else built and then stored."""
    from .loading import cache as load_cache
    texts = cache_key = None
    if load_cache.folder() is not None:
        from .reading.source import read_text
        try:
            sources = [(str(p), read_text(p)) for p in ruleset_files(root)] + [(o, read_text(o)) for o in overlays]
        except InputError:
            pass            # reported, in its place, by the load below
        else:
            texts = dict(sources)
            cache_key = load_cache.ruleset_key(root, sources, overlays)
            found = load_cache.load_ruleset_entry(cache_key)
            if found is not None:
                found[0].cache_key = cache_key
                return found
    from .analysis.facts import analyse
    from .compiling.checker import check
    from .loading.loader import read_ruleset
    ruleset = read_ruleset(root, texts)
    if overlays:
        from .loading.overlay import apply_overlays
        apply_overlays(ruleset, overlays, texts)
    warnings = check(ruleset)
    analyse(ruleset)
    if cache_key is not None:
        load_cache.save_ruleset_entry(cache_key, ruleset, warnings)
    ruleset.cache_key = cache_key
    return ruleset, warnings


def clear_cache() -> None:
    """Forget what this process has loaded (the on-disk cache is kept: it is keyed by content)."""
    from .loading import cache as load_cache
    _CACHE.clear()
    load_cache.forget()


@data_class
class Situation:
    """A situation file, loaded: the procedure to run, its prepared arguments, dice and choices."""

    file: str
    doc: Document
    ruleset: Ruleset
    procedure: Procedure
    args: dict
    dice: list
    dice_positions: Sequence     # where each given dice entry is written (a list, or looked up when asked)
    choices: dict
    seed: int | None
    title: str | None = None
    source: str | None = None
    path: tuple = ()             # where the situation's mapping sits in ``doc`` (a test case's place)
    board: Any = None            # the map value with its units and markers, when the situation gives a map


def find_procedure(ruleset: Ruleset, name: str, pos=None) -> Procedure:
    proc = ruleset.procedures.get(name)
    if proc is None:
        names = sorted(ruleset.procedures)
        listed = f"it has: {', '.join(names)}" if len(names) <= 8 else \
            f"it has {len(names)}; `umpire list {ruleset.root}` lists them"
        raise InputError(f"ruleset '{ruleset.id}' has no procedure '{name}' ({listed or 'it has none'})", pos,
                         did_you_mean(name, names))
    return proc


def load_situation(path, overlays: tuple = (), text: str | None = None, roots=None) -> Situation:
    """A situation file, or ``text`` read as if it were the file at ``path``.

    ``roots`` (ruleset folders), when given, are the only rulesets the situation may name,
    and the only places its ``with:`` overlays may come from (a server's served rulesets).
    """
    from .loading.cache import valid_document
    doc = valid_document(path, "situation", text)
    data = doc.data
    ruleset_path = (Path(path).parent / data["ruleset"])
    if roots is not None:           # asked before the path is looked at: no answer says whether it exists
        allowed = [Path(r).resolve() for r in roots]
        named = Path(os.path.normpath(ruleset_path.absolute()))
        if named.name == MANIFEST:
            named = named.parent
        if named not in allowed:
            raise InputError(f"this situation names a ruleset that is not open here ({data['ruleset']})",
                             doc.at(("ruleset",)), "open rulesets: " + ", ".join(p.name for p in allowed))
    try:
        find_root(ruleset_path)
    except InputError as e:
        raise InputError(e.message, doc.at(("ruleset",)), e.hint) from None
    extra = tuple(str(referenced_file(Path(path).parent, w, doc.at(("with", i)), "overlay"))
                  for i, w in enumerate(data.get("with") or ()))
    if roots is not None:
        for i, w in enumerate(extra):
            if not any(Path(w).resolve().is_relative_to(a) for a in allowed):
                raise InputError(f"overlay '{data['with'][i]}' is outside the open rulesets",
                                 doc.at(("with", i)), "choose it as an overlay instead")
    ruleset = load_ruleset(ruleset_path, extra + tuple(overlays), charts_near=Path(path).parent)
    return situation_from(doc, (), data, ruleset)


def situation_from(doc: Document, path: tuple, data: dict, ruleset: Ruleset, board: tuple | None = None) -> Situation:
    """A Situation from a mapping (a situation file, or one test case). ``board``, when the map is written
    elsewhere (a test case reusing a situation), is where its map and its placements are: two (document, path
    of a mapping in it, the mapping)."""
    from .loading.inputs import prepare_inputs
    from .loading.maps import Places
    proc = ruleset.procedures.get(data["procedure"]) or \
        find_procedure(ruleset, data["procedure"], doc.at(path + ("procedure",)))
    args = prepare_inputs(ruleset, proc, data.get("inputs") or {}, doc, path + ("inputs",))
    dice = list(data.get("dice") or [])
    positions = Places(doc, path + ("dice",), len(dice))
    choices = dict(data.get("choices") or {})
    check_choices(ruleset, proc, choices, doc, path + ("choices",))
    s = Situation(doc.file, doc, ruleset, proc, args, dice, positions, choices,
                  data.get("seed"), data.get("title"), data.get("source"), path)
    own = (doc, path, data)
    attach_board(s, *(board or (own, own)))
    return s


def attach_board(s: Situation, source: tuple, placed: tuple) -> None:
    """The situation's map (``map:``) with the units and markers ``placed`` (``units:``, ``markers:``), each a
    (document, path, mapping), into every parameter of type map."""
    from .loading.maps import load_board, map_params
    doc, path, data = source
    board = load_board(s.ruleset, doc, path, data, placed)
    names = map_params(s.procedure)
    if board is None:
        for p in s.procedure.params:
            if p.name in names and p.default is None:
                raise InputError(f"procedure '{s.procedure.name}' needs a map (its parameter '{p.name}'), and this "
                                 "situation gives none", doc.at(path + ("procedure",)),
                                 "add `map: FILE` (a map file), or write the map here")
        return
    if not names:
        raise InputError(f"procedure '{s.procedure.name}' takes no map (it has no parameter of type map), so this "
                         "map would not be read", doc.key_at(path + ("map",)),
                         "remove `map:`, or choose a procedure that reads the board")
    s.board = board
    for name in names:
        s.args[name] = board


def decisions(ruleset: Ruleset, proc: Procedure) -> set[str]:
    """The names of every decision (``choose NAME``) the procedure, or any procedure it calls, can take."""
    found = proc.analysis.get("decisions")      # worked out at load (analysis.analyse)
    if found is None:
        from .analysis.purity import decisions_by_procedure
        found = decisions_by_procedure(ruleset)[proc.name]
    return found


def check_choices(ruleset: Ruleset, proc: Procedure, choices: dict, doc: Document, path: tuple) -> None:
    """A name under ``choices:`` must be a decision the procedure can take (a misspelt one would be ignored)."""
    if not choices:
        return
    known = decisions(ruleset, proc)
    for name in choices:
        if name not in known:
            raise InputError(f"'{name}' is not a decision procedure '{proc.name}' takes "
                             f"(its decisions: {', '.join(sorted(known)) or 'none'})", doc.key_at(path + (name,)),
                             did_you_mean(name, known) or None)


@data_class
class Outcome:
    # adjudicate() builds it with positional arguments: keep this field order
    status: str                     # "ok", "refused" or "error"
    value: Any = None
    reason: str | None = None       # for refusals and errors
    citation: str | None = None
    error: AdjudicationError | None = None
    trace: Trace | None = None
    dice: list = factory(default_factory=list)
    seed: int | None = None
    warnings: list = factory(default_factory=list)   # InputErrors that did not stop it (e.g. unused given dice)

    def __init__(self, status: str, value: Any = None, reason: str | None = None, citation: str | None = None,
                 error: AdjudicationError | None = None, trace: Trace | None = None, dice: list | None = None,
                 seed: int | None = None, warnings: list | None = None):
        # written out: one is made per run (a simulation's), and a generic __init__ costs more than a small
        # procedure's run
        self.status, self.value, self.reason, self.citation, self.error = status, value, reason, citation, error
        self.trace, self.dice, self.seed = trace, [] if dice is None else dice, seed
        self.warnings = [] if warnings is None else warnings


def adjudicate(ruleset: Ruleset, procedure: Procedure, args: dict, dice: DiceSource,
               choices: dict | None = None, trace: bool = True) -> Outcome:
    """Run one procedure to its result; a refusal is an outcome, an adjudication error is caught too."""
    rt = Runtime(ruleset, dice, Trace() if trace else None, choices)
    # positional: keywords cost more than a small procedure's run
    outcome = Outcome("ok", None, None, None, None, rt.trace, [], getattr(dice, "seed", None), [])
    try:
        rt.depth = 1       # rt.invoke without its frame: this runtime ends with the adjudication
        env = dict(args)   # a procedure uses its argument dict as its locals
        if trace:
            outcome.value = procedure.run(env, rt)
        else:              # procedure.run without its frame: the defaults, then the untraced run
            fill = procedure.fill_defaults
            if fill is not None:
                fill(env, rt)
            outcome.value = procedure.run_untraced(env, rt)
    except Refusal as r:
        outcome.status, outcome.reason, outcome.citation = "refused", r.reason, r.citation
    except AdjudicationError as e:
        outcome.status, outcome.reason, outcome.error = "error", str(e), e
    history = getattr(dice, "history", None)
    if history:
        outcome.dice = [list(d) for d in history]
    return outcome


def run_situation(s: Situation, seed: int | None = None, trace: bool = True) -> Outcome:
    dice = GivenDice(s.dice, seed if seed is not None else s.seed, s.dice_positions)
    outcome = adjudicate(s.ruleset, s.procedure, s.args, dice, s.choices, trace)
    if outcome.error is not None and point_at_situation(s, outcome.error):
        outcome.reason = str(outcome.error)
    elif outcome.error is not None and outcome.error.code == "missing-fact":
        given = "inputs" in (_get(s.doc.data, s.path) or {})
        outcome.error.related.append((s.doc.at(s.path + (("inputs",) if given else ())),
                                      "the situation that states neither"))
        outcome.reason = str(outcome.error)
    if outcome.status != "error" and dice.used < len(dice.entries):
        unused = len(dice.entries) - dice.used
        outcome.warnings.append(InputError(
            f"{unused} given dice entr{'y was' if unused == 1 else 'ies were'} not used: the adjudication "
            f"rolled {dice.used} time{'s' if dice.used != 1 else ''}, but the situation lists {len(dice.entries)}",
            s.dice_positions[dice.used] if dice.used < len(s.dice_positions) else None,
            "remove the extra entries, or check that the situation is the one you meant", code="unused-dice"))
    return outcome


def point_at_situation(s: Situation, error: AdjudicationError) -> bool:
    """If the situation supplied the value the rules could not use, name its line too (``error.related``)."""
    value = getattr(error, "value", None)
    if not isinstance(value, str) or not value or isinstance(value, bool):
        return False
    found: list = []
    for key in ("inputs", "choices"):
        stack = [(s.path + (key,), _get(s.doc.data, s.path + (key,)))]
        while stack and len(found) < 3:
            path, v = stack.pop()
            if isinstance(v, dict):
                stack.extend((path + (k,), x) for k, x in reversed(list(v.items())))
            elif isinstance(v, list):
                stack.extend((path + (i,), x) for i, x in reversed(list(enumerate(v))))
            elif v == value:
                found.append(path)
    for path in found:
        error.related.append((s.doc.at(path), f"the value '{value}' comes from the situation here"))
    return bool(found)


def _get(data, path: tuple):
    for p in path:
        try:
            data = data[p]
        except (KeyError, IndexError, TypeError):
            return None
    return data


# ---- the same results as data, for `--json` and the web workbench ---------------------------

def outcome_json(s: Situation, outcome: Outcome) -> dict:
    """One adjudication's result and trace as data (``umpire resolve --json``)."""
    from .loading.applied import applied_to
    data = {"situation": s.file, "procedure": s.procedure.name, "charts": applied_to(s.ruleset),
            "status": outcome.status,
            "result": thaw(outcome.value), "dice": outcome.dice, "seed": outcome.seed}
    if outcome.status != "ok":
        data["reason"] = outcome.reason
        if outcome.citation:
            data["cite"] = outcome.citation
    if outcome.error is not None and hasattr(outcome.error, "short"):
        data["needs_chart"] = outcome.error.short
    problems = ([outcome.error] if outcome.error is not None else []) + list(outcome.warnings)
    if problems:
        data["diagnostics"] = [dict(d, severity="warning") if p in outcome.warnings else d
                               for p in problems for d in diagnostics(p)]
    data["trace"] = outcome.trace.as_json() if outcome.trace else []
    return data


def describe_ruleset(r: Ruleset) -> dict:
    """Everything a ruleset defines, as data (``umpire list --json --full``, the web workbench)."""
    from .loading.inputs import signature
    from .model.tables import UNKNOWN
    from .model.values import show
    from .reading.syntax import type_text, unparse

    def cell(t, ri, ci):
        v = t.cells[ri][ci]
        if v is UNKNOWN:
            return None
        out = {"value": show(v), "source": t.sources.get((ri, ci))}
        if (ri, ci) in t.origins:
            out["from"] = str(t.origins[(ri, ci)])
        return out

    def axis(a):
        return None if a is None else {"title": a.title, "match": a.match, "open": a.open,
                                       "headings": [None if h is None else show(h) for h in a.headings]}

    return {
        "ruleset": r.id, "title": r.title, "source": r.source, "overlays": list(r.overlays),
        "dice": {name: str(k) for name, k in r.dice.items()},
        "types": {name: {"catalogue": t.catalogue, "key": t.key,
                         "fields": {f.name: {"type": type_text(f.type), "default": thaw(f.default),
                                             "has_default": f.has_default} for f in t.fields.values()}}
                  for name, t in r.types.items()},
        "procedures": [{"name": p.name, "signature": signature(p), "cite": p.cite, "doc": p.doc,
                        "file": str(p.pos),
                        "params": [{"name": a.name, "type": type_text(a.type),
                                    "default": None if a.default is None else unparse(a.default)}
                                   for a in p.params]}
                       for p in r.procedures.values()],
        "tables": [{"name": t.name, "title": t.title, "cite": t.cite, "player_aid": t.player_aid,
                    "cells": t.size, "known": t.known_count, "file": str(t.pos),
                    "rows": axis(t.rows), "columns": axis(t.columns),
                    "results": [{"code": rc.code, "pattern": rc.pattern, "means": rc.means}
                                for rc in t.results.values()],
                    "grid": [[cell(t, ri, ci) for ci in range(len(row))] for ri, row in enumerate(t.cells)]}
                   for t in r.tables.values()],
        "stacks": [{"name": s.name, "title": s.title, "cite": s.cite, "params": s.params, "combine": s.combine,
                    "limits": [thaw(s.limit_min), thaw(s.limit_max)],
                    "refuse_below": thaw(s.refuse_below), "refuse_above": thaw(s.refuse_above),
                    "groups": dict(s.groups), "file": str(s.pos),
                    "modifiers": [{"id": m.id, "value": m.text.get("value", unparse(m.value)),
                                   "when": m.text.get("when") if m.when is not None else None,
                                   "times": m.text.get("times") if m.times is not None else None,
                                   "group": m.group, "cite": m.cite,
                                   "from": str(m.origin) if m.origin else None} for m in s.modifiers]}
                   for s in r.stacks.values()],
        "catalogues": [{"name": c.name, "title": c.title, "cite": c.cite,
                        "entries": {k: thaw(dict(v)) for k, v in c.entries.items()}}
                       for c in r.catalogues.values()],
    }
