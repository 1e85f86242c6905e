"""JSON Schema validation of YAML files, with errors that point at file:line:column.

The schemas in ``schemas/`` (shipped inside the package when installed) are the
single description of each file kind (and what editors use through
yaml-language-server); this module only translates
jsonschema's findings into plain-language, positioned ``InputError``s.
"""

from __future__ import annotations

import json
from functools import lru_cache

from ..errors import InputError, InputErrors, did_you_mean
from . import shipped
from .source import Document

SCHEMA_DIR = shipped.folder("schemas")
"""The JSON Schemas: the checkout's ``schemas/``, or the installed package's copy (reading/shipped.py)."""

_TYPE_WORDS = {"string": "text", "integer": "a whole number", "number": "a number", "boolean": "true or false",
               "object": "a mapping (key: value)", "array": "a list", "null": "nothing (null)"}


# jsonschema is imported on first use: a load served by the load cache (loading/cache.py) validates nothing.

@lru_cache(maxsize=None)
def validator(kind: str):
    from jsonschema import Draft7Validator
    schema = json.loads((SCHEMA_DIR / f"{kind}.schema.json").read_text(encoding="utf-8"))
    return Draft7Validator(schema)


def validate(doc: Document, kind: str) -> None:
    """Raise ``InputErrors`` listing every schema violation in ``doc``."""
    errors = sorted(validator(kind).iter_errors(doc.data), key=lambda e: list(map(str, e.absolute_path)))
    if errors:
        raise InputErrors([translate(doc, e, kind) for e in errors[:20]])


def validate_written_maps(doc: Document, kind: str) -> None:
    """Check the maps written inside a situation or test file (``map:`` as a mapping) against the map schema,
    with errors worded for a map; afterwards ``doc.maps_valid`` says so, and the load cache keeps only documents
    that passed, so a cached document's maps are not checked again (a warm start imports no jsonschema)."""
    data = doc.data if isinstance(doc.data, dict) else {}
    owners = [((), data)] if kind == "situation" else \
        [(("cases", i), case) for i, case in enumerate(data.get("cases") or []) if isinstance(case, dict)] \
        if kind == "tests" else []
    for path, owner in owners:
        if isinstance(owner.get("map"), dict):
            validate_value(owner["map"], validator("map").schema, doc, path + ("map",), "map")
    doc.maps_valid = True       # type: ignore[attr-defined]


def validate_value(value, schema: dict, doc: Document, base_path: tuple, what: str) -> None:
    """Validate a value (e.g. a situation's inputs) against a derived schema."""
    from jsonschema import Draft7Validator
    errors = list(Draft7Validator(schema).iter_errors(value))
    if errors:
        raise InputErrors([translate(doc, e, what, base_path) for e in errors[:20]])


def _path_words(path) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "the top level"


def translate(doc: Document, error, kind: str, base_path: tuple = ()) -> InputError:
    """One jsonschema error as a positioned, plain-language InputError."""
    error = _most_specific(error)
    path = base_path + tuple(error.absolute_path)
    where = _path_words(path)
    validator_name = error.validator
    if validator_name == "additionalProperties":
        allowed = list(error.schema.get("properties", {}))
        extra = [k for k in error.instance if k not in allowed]
        key = extra[0] if extra else "?"
        hint = did_you_mean(key, allowed) or _flow_comma_hint(error.instance, key)
        expected = ", ".join(allowed) if allowed else "no other keys"
        return InputError(f"unknown key '{key}' in {where}; expected one of: {expected}",
                          doc.key_at(path + (key,)), hint=hint)
    if validator_name == "required":
        missing = error.message.split("'")[1] if "'" in error.message else error.message
        named = error.instance.get("id") if isinstance(error.instance, dict) else None
        # a record that names itself (a unit's `id`) is named too, so the error says which one it is
        who = f" ('{named}')" if isinstance(named, (str, int)) and not isinstance(named, bool) else ""
        return InputError(f"{where}{who} is missing the required key '{missing}'", doc.at(path))
    if validator_name == "type":
        wanted = error.validator_value
        types = [wanted] if isinstance(wanted, str) else wanted
        words = " or ".join(_TYPE_WORDS.get(t, t) for t in types)
        return InputError(f"{where} should be {words}, not {_describe(error.instance)}", doc.at(path))
    if validator_name == "enum":
        options = ", ".join(map(str, error.validator_value))
        return InputError(f"{where} is {_describe(error.instance)}; expected one of: {options}", doc.at(path),
                          hint=did_you_mean(error.instance, map(str, error.validator_value)))
    if validator_name == "pattern":
        return InputError(f"{where} ({_describe(error.instance)}) is not a valid name here: use letters, "
                          "digits and _ (lower case and - for ruleset ids)", doc.at(path))
    if validator_name in ("minItems", "minLength"):
        return InputError(f"{where} must not be empty", doc.at(path))
    if validator_name in ("minimum", "maximum"):
        return InputError(f"{where} is {error.instance}; {error.message.split(' is ', 1)[-1]}", doc.at(path))
    if validator_name in ("oneOf", "anyOf"):
        if kind == "tests" and validator_name == "anyOf":
            return InputError(f"{where} needs either 'procedure' (with inputs) or 'situation'", doc.at(path))
        return InputError(f"{where} is {_describe(error.instance)}, which is not one of the accepted forms",
                          doc.at(path))
    return InputError(f"{where}: {error.message}", doc.at(path))


def _flow_comma_hint(mapping, key) -> str | None:
    """A key with no value right after a text value is usually text with a comma in a {...} mapping."""
    if not isinstance(mapping, dict) or mapping.get(key, 0) is not None:
        return None
    keys = list(mapping)
    before = keys[keys.index(key) - 1] if keys.index(key) > 0 else None
    if before is None or not isinstance(mapping[before], str):
        return None
    return (f"in a {{...}} mapping a comma ends the entry, so '{before}: {mapping[before]}, {key}' reads as "
            f"two entries; quote text that holds a comma: {before}: \"{mapping[before]}, {key}\"")


def _most_specific(error):
    """For oneOf/anyOf, the sub-error that went deepest is usually the useful one."""
    if error.validator in ("oneOf", "anyOf") and error.context:
        deepest = max(error.context, key=lambda e: (len(e.absolute_path), e.validator != "type"))
        if len(deepest.absolute_path) > len(error.absolute_path):
            return _most_specific(deepest)
    return error


def _describe(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "nothing"
    if isinstance(value, str):
        return f"text '{value}'" if len(value) < 40 else "text"
    if isinstance(value, (int, float)):
        return f"the number {value}"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__
