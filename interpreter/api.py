"""The public entry points: load a ruleset, load a situation, adjudicate.

``load_ruleset`` runs the whole pipeline (read -> schema -> model -> check ->
compile) and caches the result per process, keyed by the files' paths,
sizes and modification times, so repeated commands and test cases load once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .checker import check
from .compiler import Compiler
from .dice import DiceSource, GivenDice
from .errors import AdjudicationError, InputError, Refusal, did_you_mean
from .inputs import prepare_inputs
from .loader import find_root, read_ruleset, ruleset_files
from .model import Procedure, Ruleset
from .runtime import Runtime
from .schema import validate
from .source import Document, load_yaml
from .trace import Trace

_CACHE: dict[tuple, tuple[Ruleset, list[str]]] = {}


def _fingerprint(paths) -> tuple:
    out = []
    for p in paths:
        p = Path(p)
        try:
            st = p.stat()
            out.append((str(p.resolve()), st.st_size, st.st_mtime_ns))
        except FileNotFoundError:
            out.append((str(p), None, None))
    return tuple(out)


def load_ruleset(path, overlays: tuple = (), use_cache: bool = True, prefix_caching: bool = True) -> Ruleset:
    return load_ruleset_with_warnings(path, overlays, use_cache, prefix_caching)[0]


def load_ruleset_with_warnings(path, overlays: tuple = (), use_cache: bool = True,
                               prefix_caching: bool = True) -> tuple[Ruleset, list[str]]:
    """A ruleset folder (plus overlays, applied in order) as a checked, compiled Ruleset.

    ``prefix_caching=False`` compiles without reusing procedures' deterministic prefixes
    (for measuring what that reuse is worth).
    """
    root = find_root(path)
    overlays = tuple(str(o) for o in overlays)
    key = _fingerprint(ruleset_files(root) + [Path(o) for o in overlays]) + (prefix_caching,)
    if use_cache and key in _CACHE:
        return _CACHE[key]
    ruleset = read_ruleset(root)
    if overlays:
        from .overlay import apply_overlays
        apply_overlays(ruleset, overlays)
    warnings = check(ruleset)
    Compiler(ruleset, prefix_caching).compile()
    _CACHE[key] = (ruleset, warnings)
    return ruleset, warnings


def clear_cache() -> None:
    _CACHE.clear()


@dataclass
class Situation:
    """A situation file, loaded: the procedure to run, its prepared arguments, dice and choices."""

    file: str
    doc: Document
    ruleset: Ruleset
    procedure: Procedure
    args: dict
    dice: list
    dice_positions: list
    choices: dict
    seed: int | None
    title: str | None = None
    source: str | None = None
    path: tuple = ()             # where the situation's mapping sits in ``doc`` (a test case's place)


def find_procedure(ruleset: Ruleset, name: str, pos=None) -> Procedure:
    proc = ruleset.procedures.get(name)
    if proc is None:
        raise InputError(f"ruleset '{ruleset.id}' has no procedure '{name}' "
                         f"(it has: {', '.join(sorted(ruleset.procedures)) or 'none'})", pos,
                         did_you_mean(name, ruleset.procedures))
    return proc


def load_situation(path, overlays: tuple = ()) -> Situation:
    doc = load_yaml(path)
    validate(doc, "situation")
    data = doc.data
    ruleset_path = (Path(path).parent / data["ruleset"])
    try:
        find_root(ruleset_path)
    except InputError as e:
        raise InputError(e.message, doc.at(("ruleset",)), e.hint) from None
    extra = tuple(str(Path(path).parent / w) for w in data.get("with") or ()) + tuple(overlays)
    ruleset = load_ruleset(ruleset_path, extra)
    return situation_from(doc, (), data, ruleset)


def situation_from(doc: Document, path: tuple, data: dict, ruleset: Ruleset) -> Situation:
    """A Situation from a mapping (a situation file, or one test case)."""
    proc = find_procedure(ruleset, data["procedure"], doc.at(path + ("procedure",)))
    args = prepare_inputs(ruleset, proc, data.get("inputs") or {}, doc, path + ("inputs",))
    dice = list(data.get("dice") or [])
    positions = [doc.at(path + ("dice", i)) for i in range(len(dice))]
    choices = dict(data.get("choices") or {})
    check_choices(ruleset, proc, choices, doc, path + ("choices",))
    return Situation(doc.file, doc, ruleset, proc, args, dice, positions, choices,
                     data.get("seed"), data.get("title"), data.get("source"), path)


def decisions(ruleset: Ruleset, proc: Procedure) -> set[str]:
    """The names of every decision (``choose NAME``) the procedure, or any procedure it calls, can take."""
    from . import syntax as ast
    from .names import walk
    names, seen, todo = set(), set(), [proc.name]
    while todo:
        name = todo.pop()
        if name in seen or name not in ruleset.procedures:
            continue
        seen.add(name)
        for node in walk(ruleset.procedures[name].syntax.body):
            if isinstance(node, ast.Choose):
                names.add(node.name)
            elif isinstance(node, ast.Call):
                todo.append(node.procedure)
    return names


def check_choices(ruleset: Ruleset, proc: Procedure, choices: dict, doc: Document, path: tuple) -> None:
    """A name under ``choices:`` must be a decision the procedure can take (a misspelt one would be ignored)."""
    known = decisions(ruleset, proc)
    for name in choices:
        if name not in known:
            raise InputError(f"'{name}' is not a decision procedure '{proc.name}' takes "
                             f"(its decisions: {', '.join(sorted(known)) or 'none'})", doc.key_at(path + (name,)),
                             did_you_mean(name, known) or None)


@dataclass
class Outcome:
    status: str                     # "ok", "refused" or "error"
    value: Any = None
    reason: str | None = None       # for refusals and errors
    citation: str | None = None
    error: Exception | None = None
    trace: Trace | None = None
    dice: list = field(default_factory=list)
    seed: int | None = None
    warnings: list = field(default_factory=list)   # InputErrors that did not stop it (e.g. unused given dice)


def adjudicate(ruleset: Ruleset, procedure: Procedure, args: dict, dice: DiceSource,
               choices: dict | None = None, trace: bool = True) -> Outcome:
    """Run one procedure to its result; a refusal is an outcome, an adjudication error is caught too."""
    rt = Runtime(ruleset, dice, Trace() if trace else None, choices)
    outcome = Outcome("ok", trace=rt.trace, seed=getattr(dice, "seed", None))
    try:
        outcome.value = rt.invoke(procedure, args)
    except Refusal as r:
        outcome.status, outcome.reason, outcome.citation = "refused", r.reason, r.citation
    except AdjudicationError as e:
        outcome.status, outcome.reason, outcome.error = "error", str(e), e
    outcome.dice = [list(d) for d in getattr(dice, "history", [])]
    return outcome


def run_situation(s: Situation, seed: int | None = None, trace: bool = True) -> Outcome:
    dice = GivenDice(s.dice, seed if seed is not None else s.seed, s.dice_positions)
    outcome = adjudicate(s.ruleset, s.procedure, s.args, dice, s.choices, trace)
    if outcome.error is not None and point_at_situation(s, outcome.error):
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
    found = []
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
