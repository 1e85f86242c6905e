"""Ruleset folder to validated model: read, schema-check and build each file.

The pipeline is ``source`` (positioned YAML) -> ``schema`` (shape) -> this
module (model objects, expressions parsed in place) -> ``checker`` (names and
arity across files) -> ``compiler`` (closures). ``load_ruleset`` runs it all.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ..errors import ErrorCollector, InputError, InputErrors
from ..model.dice import DiceKind
from ..model.ruleset import (
    DEFAULT_LIMITS,
    Catalogue,
    FieldDef,
    Modifier,
    Procedure,
    Ruleset,
    Stack,
    TypeDef,
    cite_with_prefix,
)
from ..model.tables import build_table
from ..model.values import exact, freeze
from ..reading import syntax as ast

TYPE_CHECKING = False   # (typing is for the checker only: importing it costs a warm start 2%)
if TYPE_CHECKING:   # annotations only
    from ..reading.source import Document

# The YAML reader, the schemas and the procedure parser (ruamel.yaml, jsonschema, lark) are imported
# where they are used: a load served from the cache (loading/cache.py) never needs them.

MANIFEST = "ruleset.yaml"


def find_root(path: Path | str) -> Path:
    """The ruleset folder for a path given on the command line (the folder or its manifest)."""
    p = Path(os.path.normpath(path))
    if p.is_file() and p.name == MANIFEST:
        p = p.parent
    if not p.exists():
        raise InputError(f"no such ruleset folder: {path}")
    if not (p / MANIFEST).is_file():
        raise InputError(f"{path} is not a ruleset folder: it has no {MANIFEST}",
                         hint="a ruleset folder holds ruleset.yaml, tables/, stacks/, catalogues/ and procedures/")
    return p


DEFINITION_FOLDERS = ("tables", "stacks", "catalogues")


def ruleset_files(root: Path) -> list[Path]:
    """Every file that makes up the ruleset, in load order (what a cache key depends on)."""
    files = [root / MANIFEST]
    for folder in DEFINITION_FOLDERS:
        files += _matching(root / folder, _yaml_name)
    files += _matching(root / "procedures", _procedure_name)
    return files


def _yaml_name(name: str) -> bool:
    """Whether ``name`` matches ``*.y*ml`` (``.yaml``, ``.yml``), as fnmatch would, without compiling it."""
    return name.endswith("ml") and ".y" in name[:-2]


def _procedure_name(name: str) -> bool:
    """Whether ``name`` matches ``*.ump``."""
    return name.endswith(".ump")


def _matching(folder: Path, wanted) -> list[Path]:
    """``sorted(folder.glob(pattern))`` for the pattern ``wanted`` tests, in one directory read (this runs on every
    load, cached or not; fnmatch compiled each pattern to a regular expression at every start)."""
    try:
        names = sorted(n for n in os.listdir(folder) if not n.startswith(".") and wanted(n))
    except OSError:
        return []
    return [folder / n for n in names]


def read_ruleset(root: Path, texts: dict[str, str] | None = None) -> Ruleset:
    """Read and build every file of a ruleset folder (not yet cross-checked or compiled).

    ``texts`` (path -> content), when given, are the files' contents already read (the load cache
    reads each file once, so the model is built from exactly the text its key was computed from).
    """
    from ..reading.parser import parse_module
    from ..reading.schema import validate
    from ..reading.source import load_yaml, read_text
    texts = texts or {}
    errors = ErrorCollector()
    manifest = load_yaml(root / MANIFEST, texts.get(str(root / MANIFEST)))
    validate(manifest, "ruleset")
    m = manifest.data
    prefix = m.get("cite_prefix", "")
    ruleset = Ruleset(id=m["ruleset"], title=m["title"], root=root, cite_prefix=prefix,
                      source=m.get("source"), dice=_dice(m), types={}, tables={}, stacks={},
                      catalogues={}, procedures={}, limits=dict(DEFAULT_LIMITS, **(m.get("limits") or {})))
    ruleset.files.append(str(root / MANIFEST))
    with errors.attempt():
        ruleset.types = _types(manifest)
    for path in ruleset_files(root)[1:]:
        ruleset.files.append(str(path))
        folder = path.parent.name
        with errors.attempt():
            text = texts.get(str(path))
            if folder in DEFINITION_FOLDERS:
                doc = load_yaml(path, text)
                validate(doc, folder)
                add_definitions(ruleset, folder, doc)
            else:
                add_procedures(ruleset, parse_module(read_text(path) if text is None else text, str(path)))
    errors.raise_any()
    return ruleset


# ---- manifest parts ---------------------------------------------------------------

def _dice(m: dict) -> dict[str, DiceKind]:
    kinds = {}
    for name, d in (m.get("dice") or {}).items():
        kinds[name] = DiceKind(name, tuple(d["dice"]), d["sides"], d.get("zero_reads_as"))
    return kinds


_LIST_TYPE = r"^\s*list\s*\[\s*(.+?)\s*\]\s*$"
_KEY_TYPE = r"^\s*key_of\s*\[\s*(\w+)\s*\]\s*$"
# (texts: re compiles each when a type is first parsed, which a warm start never does)


def parse_type(text) -> ast.TypeRef | tuple:
    """A field type as written in YAML ('int', 'list[unit]', 'key_of[terrain]', {enum: [...]})."""
    if isinstance(text, dict):
        return ("enum", list(text["enum"]))
    m = re.match(_LIST_TYPE, text)
    if m:
        return ast.TypeRef("list", parse_type(m.group(1)))
    m = re.match(_KEY_TYPE, text)
    if m:
        return ast.TypeRef("key_of", m.group(1))
    return ast.TypeRef(text.strip())


def _types(doc: Document) -> dict[str, TypeDef]:
    types = {}
    for tname, t in (doc.data.get("types") or {}).items():
        fields = {}
        for fname, f in t["fields"].items():
            where = ("types", tname, "fields", fname)
            if isinstance(f, dict) and "type" in f:
                fields[fname] = FieldDef(fname, parse_type(f["type"]), freeze(f.get("default")), "default" in f,
                                         doc.key_at(where))
            else:
                fields[fname] = FieldDef(fname, parse_type(f), None, False, doc.key_at(where))
        types[tname] = TypeDef(tname, fields, t.get("catalogue"), t.get("key"), doc.key_at(("types", tname)))
    return types


# ---- definitions files --------------------------------------------------------------

def add_definitions(ruleset: Ruleset, kind: str, doc: Document) -> None:
    """Add the tables, stacks or catalogues of one file, refusing names defined twice."""
    cite = lambda text: cite_with_prefix(ruleset.cite_prefix, text)
    target = getattr(ruleset, kind)
    build = {"tables": build_table, "stacks": build_stack, "catalogues": build_catalogue}[kind]
    errors = ErrorCollector()
    for name, spec in doc.data[kind].items():
        path = (kind, name)
        with errors.attempt():
            if name in target:
                raise InputError(f"{kind[:-1]} '{name}' is defined twice (first at {target[name].pos})",
                                 doc.key_at(path))
            target[name] = build(name, spec, doc, path, cite)
    errors.raise_any()


def yaml_expression(doc: Document, path: tuple, value) -> ast.Expr:
    """A DSL expression written as a YAML value (text is parsed; numbers and booleans are literals)."""
    pos = doc.text_at(path)
    if isinstance(value, str):
        from ..reading.parser import parse_expression
        return parse_expression(value, pos)
    if isinstance(value, float):
        value = exact(value)
    return ast.Literal(pos, value)


def build_stack(name: str, spec: dict, doc: Document, path: tuple, cite) -> Stack:
    mods: list = []
    errors: list = []
    seen: dict = {}
    for i, m in enumerate(spec["modifiers"]):
        where = path + ("modifiers", i)
        if m["id"] in seen:
            errors.append(InputError(f"modifier id '{m['id']}' is used twice in stack '{name}' "
                                     f"(first at {seen[m['id']]})", doc.at(where + ("id",))))
            continue
        seen[m["id"]] = doc.at(where + ("id",))
        try:
            text = {k: str(m[k]) for k in ("value", "when", "times") if k in m}
            mods.append(Modifier(
                id=m["id"], value=yaml_expression(doc, where + ("value",), m["value"]),
                when=yaml_expression(doc, where + ("when",), m["when"]) if "when" in m else None,
                times=yaml_expression(doc, where + ("times",), m["times"]) if "times" in m else None,
                group=m.get("group"), cite=cite(m.get("cite")), pos=doc.at(where), text=text))
        except InputError as e:
            errors.append(e)
        if m.get("group") and m["group"] not in (spec.get("groups") or {}):
            errors.append(InputError(f"modifier '{m['id']}' names group '{m['group']}', which stack '{name}' "
                                     "does not declare under groups:", doc.at(where + ("group",)),
                                     hint="declare it, e.g. groups: {" + m["group"] + ": min}"))
    if errors:
        raise InputErrors(errors)
    limits = spec.get("limits") or {}
    number = lambda v: exact(v) if isinstance(v, float) else v
    params = spec.get("params") or []
    param_types = {k: parse_type(v) for k, v in params.items()} if isinstance(params, dict) else {}
    return Stack(name, spec["title"], cite(spec.get("cite")), list(params),
                 spec.get("combine", "sum"), dict(spec.get("groups") or {}), number(limits.get("min")),
                 number(limits.get("max")), number(spec.get("refuse_below")), number(spec.get("refuse_above")),
                 mods, doc.at(path), param_types)


def build_catalogue(name: str, spec: dict, doc: Document, path: tuple, cite) -> Catalogue:
    entries = {str(k): freeze(v) for k, v in spec["entries"].items()}
    positions = {str(k): doc.key_at(path + ("entries", k)) for k in spec["entries"]}
    return Catalogue(name, spec.get("title", name), cite(spec.get("cite")), entries, doc.at(path), positions)


def add_procedures(ruleset: Ruleset, procedures: list[ast.Procedure]) -> None:
    errors = []
    for p in procedures:
        if p.name in ruleset.procedures:
            errors.append(InputError(f"procedure '{p.name}' is defined twice (first at {ruleset.procedures[p.name].pos})",
                                     p.pos))
            continue
        ruleset.procedures[p.name] = Procedure(p.name, p, ruleset.cite(p.cite), p.doc, list(p.params), p.pos)
    if errors:
        raise InputErrors(errors)
