"""Procedure inputs: a JSON Schema derived from the signature, and coercion to DSL values.

A situation's ``inputs:`` are validated against the schema derived from the
procedure's parameters and the ruleset's record types (so errors are
positioned like any schema error), then record inputs are completed from
their catalogue entry and field defaults.
"""

from __future__ import annotations

import weakref
from fractions import Fraction

from ..errors import ErrorCollector, InputError, did_you_mean
from ..model.ruleset import Procedure, Ruleset, TypeDef
from ..model.values import Record, exact, freeze, thaw
from ..reading import syntax as ast
from ..reading.source import Document

TYPE_CHECKING = False   # (typing is for the checker only: importing it costs a warm start 2%)
if TYPE_CHECKING:
    from typing import Any

_SCALAR_SCHEMAS: dict[str, dict] = {
    "int": {"type": "integer"},
    "number": {"anyOf": [{"type": "number"}, {"type": "string", "pattern": r"^\s*-?\d+\s*/\s*\d+\s*$"}]},
    "bool": {"type": "boolean"},
    "text": {"type": ["string", "number"]},
    "any": {},
    "map": {"description": "a map comes from the situation's `map:` (with `units:` and `markers:`), not its inputs"},
}


def type_schema(ruleset: Ruleset, ref, seen: frozenset = frozenset()) -> dict:
    """The JSON Schema of one field or parameter type."""
    if isinstance(ref, tuple):  # ("enum", [...])
        return {"enum": list(ref[1])}
    if ref.name == "list":
        return {"type": "array", "items": type_schema(ruleset, ref.item, seen)}
    if ref.name == "key_of":
        # membership is checked in coerce (its message names the catalogue and the nearest entry);
        # the entries are offered as examples, for editors and the workbench's form
        cat = ruleset.catalogues.get(ref.item)
        return {"type": "string", "description": f"an entry of catalogue '{ref.item}'",
                **({"examples": sorted(cat.entries)} if cat is not None else {})}
    if ref.name in _SCALAR_SCHEMAS:
        return dict(_SCALAR_SCHEMAS[ref.name])
    t = ruleset.types.get(ref.name)
    if t is None or ref.name in seen:
        return {}
    return record_schema(ruleset, t, seen | {ref.name})


def record_schema(ruleset: Ruleset, t: TypeDef, seen: frozenset = frozenset()) -> dict:
    props = {name: type_schema(ruleset, f.type, seen) for name, f in t.fields.items()}
    for name, f in t.fields.items():
        if f.has_default and f.default is not None:
            props[name] = dict(props[name], default=thaw(f.default))
    required = [] if t.catalogue else [n for n, f in t.fields.items() if not f.has_default]
    schema = {"type": "object", "properties": props, "additionalProperties": False}
    if t.catalogue:
        # the catalogue entry named by the key supplies defaults (checked in complete_record); its entries
        # are offered as examples, for editors and the workbench's form
        cat = ruleset.catalogues.get(t.catalogue)
        if cat is not None and t.key in props:
            props[t.key] = dict(props[t.key], examples=sorted(cat.entries),
                                description=f"an entry of catalogue '{t.catalogue}' (its fields fill the rest)")
    elif required:
        schema["required"] = required
    return schema


def procedure_schema(ruleset: Ruleset, proc: Procedure) -> dict:
    """The JSON Schema of a situation's ``inputs:`` for this procedure."""
    # a map comes from the situation's `map:`, never from its inputs
    params = [p for p in proc.params if isinstance(p.type, tuple) or p.type.name != "map"]
    props = {p.name: type_schema(ruleset, p.type) for p in params}
    required = [p.name for p in params if p.default is None]
    schema = {"$schema": "http://json-schema.org/draft-07/schema#",
              "title": f"inputs of {proc.name}", "type": "object", "properties": props,
              "additionalProperties": False}
    if required:
        schema["required"] = required
    return schema


def situation_schema(ruleset: Ruleset, proc: Procedure) -> dict:
    """The JSON Schema of a whole situation file for this procedure (``umpire schema RULESET PROC --situation``).

    The shipped situation schema with ``procedure`` fixed to this one and ``inputs`` typed by its
    parameters, so a ``$schema`` modeline pointing at it flags a wrong input name or value in any YAML editor.
    """
    import json

    from ..reading.schema import SCHEMA_DIR
    schema = json.loads((SCHEMA_DIR / "situation.schema.json").read_text(encoding="utf-8"))
    schema.pop("$id", None)
    schema["title"] = f"Umpire situation for {proc.name} (ruleset {ruleset.id})"
    schema["properties"]["procedure"] = {"const": proc.name}
    inputs = procedure_schema(ruleset, proc)
    del inputs["$schema"]
    schema["properties"]["inputs"] = inputs
    if inputs.get("required"):
        schema["required"] = list(schema["required"]) + ["inputs"]
    return schema


def check_inputs(ruleset: Ruleset, proc: Procedure, inputs: dict, doc: Document, path: tuple) -> None:
    """Validate inputs against the procedure's schema (once: the load cache remembers inputs that passed, and
    then the schema module is not even imported)."""
    from .cache import checked_once

    def validate() -> None:
        from ..reading.schema import validate_value
        validate_value(inputs, procedure_schema(ruleset, proc), doc, path, "inputs")
    checked_once(f"inputs of {proc.name}", ruleset.cache_key, inputs, validate, doc, path)


def prepare_inputs(ruleset: Ruleset, proc: Procedure, inputs: dict, doc: Document, path: tuple) -> dict:
    """Validate and coerce a situation's inputs into the procedure's arguments."""
    inputs = inputs or {}
    for p in proc.params:
        if p.name in inputs and not isinstance(p.type, tuple) and p.type.name == "map":
            raise InputError(f"'{p.name}' is the map: it comes from the situation's `map:` (with `units:` and "
                             "`markers:`), not from its inputs", doc.key_at(path + (p.name,)),
                             "move it to `map:` beside `inputs:`")
    check_inputs(ruleset, proc, inputs, doc, path)
    args = {}
    errors = ErrorCollector()     # every input's error at once (add, not a context manager per input)
    for p in proc.params:
        if p.name in inputs:
            try:
                args[p.name] = coerce(ruleset, p.type, inputs[p.name], doc, path + (p.name,))
            except InputError as e:
                errors.add(e)
    errors.raise_any()
    return args


def coerce(ruleset: Ruleset, ref, value: Any, doc: Document, path: tuple) -> Any:
    if value is None:           # null (no value) of any type
        return value
    if isinstance(ref, tuple):  # ("enum", values): the schema let it through only when it is one of them
        if value not in ref[1]:
            raise InputError(f"'{value}' is not one of {', '.join(map(str, ref[1]))}", doc.at(path),
                             did_you_mean(str(value), [str(v) for v in ref[1]]))
        return value
    if ref.name == "list":
        return tuple(coerce(ruleset, ref.item, v, doc, path + (i,)) for i, v in enumerate(value))
    if ref.name == "number":
        if isinstance(value, str):
            num, den = value.split("/")
            value = Fraction(int(num), int(den))
        if isinstance(value, float):
            value = exact(value)
        return value.numerator if isinstance(value, Fraction) and value.denominator == 1 else value
    if ref.name == "text":
        return str(value)
    if ref.name == "key_of":
        entries = ruleset.catalogues[ref.item].entries
        if value not in entries:
            raise InputError(f"'{value}' is not an entry of catalogue '{ref.item}'", doc.at(path),
                             did_you_mean(value, entries) or f"its entries: {', '.join(list(entries)[:12])}"
                             + (", ..." if len(entries) > 12 else ""))
        return value
    if ref.name in ruleset.types:
        return complete_record(ruleset, ruleset.types[ref.name], value, doc, path)
    _check_field_names(value, doc, path)
    return freeze(value)


class _At:
    """Where a parameter's default is written: the position every error in completing it names."""

    def __init__(self, pos):
        self.pos = pos

    def at(self, path):
        return self.pos


def holds_record_type(ruleset: Ruleset, ref) -> bool:
    """Whether values of this type are (lists of) records of a declared type, which inputs complete (never an
    enumeration or a key_of name)."""
    while not isinstance(ref, tuple) and ref.name == "list":
        ref = ref.item
    return not isinstance(ref, tuple) and ref.name in ruleset.types


def complete_default(ruleset: Ruleset, ref, value: Any, pos) -> Any:
    """A parameter's written-out default of a record type (or a list of them), completed as an input of that
    type is: its catalogue entry's fields, then the type's field defaults. Errors name the default's position."""
    at: Document = _At(pos)     # type: ignore[assignment]   # _At answers every .at(path) with pos
    return coerce(ruleset, ref, value, at, ())


def _check_field_names(value: Any, doc: Document, path: tuple) -> None:
    """Every key of a record given as input is a name: YAML also reads `{id: A, 0}` as a record with
    the number 0 for a key, which no field name can be."""
    if isinstance(value, dict):
        for k, v in value.items():
            if not isinstance(k, str):
                raise InputError(f"a record's field names are text; this one is {k!r}", doc.at(path + (k,)),
                                 "write the field as `name: value`")
            _check_field_names(v, doc, path + (k,))
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            _check_field_names(v, doc, path + (i,))


_DEFAULTS: dict = {}
"""(id of a ruleset, id of one of its types) -> (weak references to both, the type's field defaults): a ruleset
that is let go is not kept alive by it."""


def _defaults(ruleset: Ruleset, t: TypeDef) -> list:
    """The type's fields with a default, as (name, default, None or the type to complete it as), worked out once
    per ruleset and type rather than for every record given: a record-typed field's default is completed like
    a given record (its own field defaults)."""
    found = _DEFAULTS.get((id(ruleset), id(t)))
    if found is not None and found[0]() is ruleset and found[1]() is t:
        return found[2]
    plan = [(name, f.default, f.type if isinstance(f.default, (dict, list)) and not isinstance(f.type, tuple)
             and (f.type.name in ruleset.types or f.type.name == "list") else None)
            for name, f in t.fields.items() if f.has_default]
    if len(_DEFAULTS) >= 4096:
        _DEFAULTS.clear()
    _DEFAULTS[(id(ruleset), id(t))] = (weakref.ref(ruleset), weakref.ref(t), plan)
    return plan


_STARTS: dict = {}
"""(id of a ruleset, id of one of its types, a catalogue key or None) -> (weak references to both, the catalogue
entry, what a record of that type and key starts from): its entry's fields and the field defaults it leaves out."""


def _start(ruleset: Ruleset, t: TypeDef, key: str | None, entry, doc: Document, path: tuple) -> dict:
    """What a record input of type ``t`` starts from before its given fields: the fields of ``entry``, its catalogue
    entry under ``key`` (None: no entry), then the type's field defaults it leaves out (completed as given records are). Worked out
    once per ruleset, type and entry (the values are immutable), not for every record given: a test run or a
    sweep gives the same counters again and again. A default that cannot be completed raises, as each time."""
    memo_key = (id(ruleset), id(t), None if entry is None else key)
    found = _STARTS.get(memo_key)
    if found is not None and found[0]() is ruleset and found[1]() is t and found[2] is entry:
        return found[3]
    data: dict = {}
    if entry is not None:
        data.update((k, v) for k, v in entry.items() if k != "source")
    for name, default, ref in _defaults(ruleset, t):
        if name not in data:
            data[name] = default if ref is None else coerce(ruleset, ref, default, doc, path + (name,))
    if len(_STARTS) >= 4096:
        _STARTS.clear()
    _STARTS[memo_key] = (weakref.ref(ruleset), weakref.ref(t), entry, data)
    return data


def complete_record(ruleset: Ruleset, t: TypeDef, value: dict, doc: Document, path: tuple) -> Record:
    """A record input: its catalogue entry's fields, then field defaults, then what was given."""
    unlisted = entry = key = None
    if t.catalogue and t.key in value:
        cat = ruleset.catalogues[t.catalogue]
        key = str(value[t.key])
        entry = cat.entries.get(key)
        if entry is None:
            unlisted = key  # a counter the catalogue does not list: every field must be given inline
    data = dict(_start(ruleset, t, key, entry, doc, path))
    fields = t.fields
    for name, v in value.items():
        data[name] = coerce(ruleset, fields[name].type, v, doc, path + (name,))
    missing = [] if fields.keys() <= data.keys() else [n for n in fields if n not in data]
    if missing and unlisted is not None:
        cat = ruleset.catalogues[str(t.catalogue)]      # unlisted is set only for a type with a catalogue
        raise InputError(f"'{unlisted}' is not in catalogue '{t.catalogue}', so every field must be given here; "
                         f"missing: {', '.join(missing)}", doc.at(path + (t.key,)),
                         did_you_mean(unlisted, cat.entries) or f"catalogue entries: {', '.join(list(cat.entries)[:12])}")
    if missing:
        raise InputError(f"this {t.name} has no value for {', '.join(repr(m) for m in missing)}"
                         + (f" (and its {t.catalogue} entry does not give one)" if t.catalogue else ""), doc.at(path))
    return Record(data)


def signature(proc: Procedure) -> str:
    parts = []
    for p in proc.params:
        text = f"{p.name}: {ast.type_text(p.type)}"
        if p.default is not None:
            text += f" = {ast.unparse(p.default)}"
        parts.append(text)
    return f"{proc.name}({', '.join(parts)})"
