"""The validated model of a ruleset: what the loader builds and the compiler reads.

Everything here is plain data plus AST; compiled closures are attached by the
compiler (``Procedure.run``, ``Modifier.value_fn`` ...), so the model can be
checked and listed without compiling it.
"""

from __future__ import annotations

import sys
from pathlib import Path

from ..errors import Position
from ..reading import syntax as ast
from ..reading.plain import data_class, factory
from .dice import DiceKind
from .tables import Table
from .values import Record

TYPE_CHECKING = False   # (typing is for the checker only: importing it costs a warm start 2%)
if TYPE_CHECKING:
    from typing import Any, Callable

DEFAULT_LIMITS = {"steps": 100_000, "loop": 1_000, "depth": 32, "dice": 20,
                  "list": 100_000, "text": 100_000, "digits": 1_000, "nesting": 64, "sides": 10_000,
                  "cells": 6_400_000}
"""Bounds on one adjudication; a ruleset may change them in ruleset.yaml ``limits:`` up to LIMIT_CEILINGS."""

LIMIT_CEILINGS = {"steps": 100_000_000, "loop": 1_000_000, "depth": 200, "dice": 100,
                  "list": 10_000_000, "text": 10_000_000, "digits": 100_000, "nesting": 200, "sides": 1_000_000,
                  "cells": 100_000_000}
"""The most a ruleset may raise each limit to (the schema refuses more)."""

# Python refuses to turn an int of over 4,300 digits into text (a guard against slow conversions of
# untrusted numbers). Every number the language builds is already bounded by limit 'digits', so the
# interpreter lets numbers up to that ceiling print (``--json``, the workbench) and keeps the guard above it.
if sys.get_int_max_str_digits() and sys.get_int_max_str_digits() < LIMIT_CEILINGS["digits"] + 1:
    sys.set_int_max_str_digits(LIMIT_CEILINGS["digits"] + 1)

SCALAR_TYPES = {"int", "number", "bool", "text", "any", "map"}


@data_class
class FieldDef:
    name: str
    type: Any                 # a TypeRef, or ("enum", [...])
    default: Any = None
    has_default: bool = False
    pos: Position | None = None


@data_class
class TypeDef:
    """A record type for procedure inputs (e.g. a unit), optionally backed by a catalogue."""

    name: str
    fields: dict[str, FieldDef]
    catalogue: str | None = None
    key: str | None = None
    pos: Position | None = None


@data_class
class Modifier:
    id: str
    value: ast.Expr
    when: ast.Expr | None
    times: ast.Expr | None
    group: str | None
    cite: str | None
    pos: Position
    text: dict[str, str] = factory(default_factory=dict)   # the source text of each expression
    origin: Position | None = None                       # set when an overlay added/changed it
    value_fn: Callable | None = None
    when_fn: Callable | None = None
    times_fn: Callable | None = None


@data_class
class Stack:
    name: str
    title: str
    cite: str | None
    params: list[str]
    combine: str
    groups: dict[str, str]
    limit_min: Any
    limit_max: Any
    refuse_below: Any
    refuse_above: Any
    modifiers: list[Modifier]
    pos: Position
    param_types: dict = factory(default_factory=dict)   # name -> TypeRef, where the stack declares them


@data_class
class Catalogue:
    name: str
    title: str
    cite: str | None
    entries: dict[str, Record]
    pos: Position
    entry_positions: dict[str, Position] = factory(default_factory=dict)

    @property
    def field_names(self) -> set[str]:
        names: set[str] = set()
        for e in self.entries.values():
            names.update(e.keys())
        return names


def NOT_COMPILED(env: dict, rt) -> Any:
    """A procedure's run before the compiler has set it (compiling/compiler.py sets every one at load); the load
    cache stores it by name (loading/codec.py)."""
    raise RuntimeError("procedure run before it was compiled")


@data_class
class Procedure:
    name: str
    syntax: ast.Procedure
    cite: str | None
    doc: str | None
    params: list[ast.Param]
    pos: Position
    run: Callable = NOT_COMPILED         # compiled: run(args: dict, rt) -> Record
    run_untraced: Callable = NOT_COMPILED  # compiled: the untraced run, every argument given (compiling/compiler.py)
    deterministic: bool = False          # no roll or choice, here or in what it calls: a pure function
    memo: dict = factory(default_factory=dict)   # results of deterministic calls (untraced runs only)
    prefix_cache: dict = factory(default_factory=dict)  # args -> state after the deterministic prefix
    suffix_cache: dict = factory(default_factory=dict)  # state -> outcome of the deterministic ending
    fill_defaults: Callable | None = None  # compiled: fills the defaults of missing arguments (odds/states.py)
    analysis: dict = factory(default_factory=dict)   # what compiling needs to know of it (analysis.analyse, at load)


@data_class
class Change:
    """One change an overlay applied, for `umpire diff` and for conflict detection (loading/overlay.py)."""

    group: str          # "tables", "stacks", "catalogues", "procedures"
    name: str
    what: str           # the change in words (umpire diff's line)
    origin: Position
    action: str = ""    # the same as data: what was done ("changed modifier", "filled cells", "set", ...)
    item: str | None = None     # to which part (a modifier's id, a catalogue entry), if not the whole
    fields: tuple = ()  # (field, before, after) for each value it changed; None for "not there"

    def as_json(self) -> dict:
        """The change as data: its action, item and each field's value before and after (as text)."""
        return {"action": self.action, "item": self.item,
                "fields": [{"field": f, "before": shown(b), "after": shown(a)} for f, b, a in self.fields]}


def shown(value) -> str | None:
    """A setting's value as a player reads it: limits {max: 4} as 'max 4'; None stays None (not there)."""
    from .values import show
    if value is None:
        return None
    if isinstance(value, dict):
        parts = [f"{k} {shown(v)}" for k, v in value.items() if v is not None]
        return ", ".join(parts) if parts else "none"
    if isinstance(value, (list, tuple)):
        return ", ".join(shown(v) or "none" for v in value)
    return show(value) if not isinstance(value, str) else value


@data_class(apart=("parts",))
class Ruleset:
    id: str
    title: str
    root: Path
    cite_prefix: str
    source: str | None
    dice: dict[str, DiceKind]
    types: dict[str, TypeDef]
    tables: dict[str, Table]
    stacks: dict[str, Stack]
    catalogues: dict[str, Catalogue]
    procedures: dict[str, Procedure]
    limits: dict[str, int]
    files: list[str] = factory(default_factory=list)
    overlays: list[str] = factory(default_factory=list)
    changes: list = factory(default_factory=list)      # what the overlays changed (Change)
    cache_key: str | None = None   # the on-disk cache key of exactly these sources (loading/cache.py), when known
    rolls_may_hide: bool = True    # can a roll sit inside a record or list? (analysis/facts.py, at load)
    parts: dict | None = None      # compiled closures by syntax node id (neither compared nor shown)

    def cite(self, text: str | None) -> str | None:
        return cite_with_prefix(self.cite_prefix, text)


def cite_with_prefix(prefix: str, text: str | None) -> str | None:
    """With prefix 'XYZ': '3.2.3' -> 'XYZ 3.2.3'; a citation that starts with a letter is kept as written."""
    if text is None:
        return None
    text = str(text).strip()
    if prefix and text and not text[0].isalpha():
        return f"{prefix} {text}"
    return text
