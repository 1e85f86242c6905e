"""The loaded model as JSON data and back, for the on-disk load cache (loading/cache.py).

Only data is stored: every JSON object is a one-key tag naming how to rebuild
the value (a tuple, a dict with any keys, a record, a fraction, a position, a
syntax node, or an instance of one of the model classes listed in
``_CLASSES``). Decoding builds nothing else, so a planted cache file can at
worst describe a wrong model, never run code; the cache's checksum and key
make even that an accident that cannot happen by chance.

Positions name their file by an index into a file table kept beside the data,
so a model read back points at the same file:line:column as the one built
from the sources. A procedure's fields and its body are stored as JSON texts of
their own and only decoded when something reads them (``LazyProcedure``): a
command that runs a few procedures of a large ruleset decodes only those.

The file table starts with the ruleset's own files in load order, so a procedure of the ruleset has the
same body text whatever overlays the entry was stored with; a process that loads the ruleset under several
overlays (``umpire test``: a case's fixture, a house rule) decodes each such body once and shares the
(immutable) syntax tree between the loads.
"""

from __future__ import annotations

import json
import re
from fractions import Fraction
from pathlib import Path

from ..analysis.caching import CachePlan
from ..errors import Position
from ..model.dice import DiceKind
from ..model.ruleset import (
    NOT_COMPILED,
    Catalogue,
    Change,
    FieldDef,
    Modifier,
    Procedure,
    Ruleset,
    Stack,
    TypeDef,
)
from ..model.tables import OFF, UNKNOWN, UNSURE, Axis, ResultCode, Table
from ..model.values import Record
from ..reading import syntax as ast
from ..reading.plain import data_fields
from ..reading.source import Document, load_yaml

LATER_FROM = 5
"""A branch whose body has this many syntax nodes or more (a statement or two) keeps it as a text of its own,
decoded when the branch is first read (syntax.Branch.later): shorter ones cost less decoded with the rest than
kept apart. (Counted as the body is encoded: measuring its text would write it out twice, a fifth more time to
store a ruleset.)"""


class CodecError(ValueError):
    """The value cannot be stored as data (encoding), or the data does not describe a model (decoding)."""


_NODES = {cls.__name__: cls for cls in vars(ast).values()     # the concrete syntax node classes
          if isinstance(cls, type) and issubclass(cls, ast.Node) and cls._fields
          and all(hasattr(cls, f) for f in cls._fields)}
_NODE_FIELDS = {cls: cls._fields for cls in _NODES.values()}
_CLASSES = {cls.__name__: cls for cls in (FieldDef, TypeDef, Modifier, Stack, Catalogue, Ruleset, Axis, ResultCode,
                                          Table, DiceKind, CachePlan, Change)}
_FIELD_NAMES = {cls: set(data_fields(cls)) for cls in (*_CLASSES.values(), Procedure)}
_SENTINELS = {"UNKNOWN": UNKNOWN, "OFF": OFF, "UNSURE": UNSURE, "NOT_COMPILED": NOT_COMPILED}
_SENTINEL_NAMES = {id(v): k for k, v in _SENTINELS.items()}


class Encoder:
    """Turns model values into JSON-ready data; ``files`` collects the file table of positions."""

    def __init__(self, files=()):
        self.files: list[str] = []
        self.bodies: list[str] = []     # each procedure's syntax tree, as its own JSON text
        self._file_index: dict[str, int] = {}
        self._reach = -1                # the highest file index used since it was last reset
        self._nodes = 0                 # syntax nodes encoded so far (a branch's body is kept apart from LATER_FROM)
        for name in files:              # the table starts with these, in order
            self.file(name)

    def file(self, name: str) -> int:
        i = self._file_index.get(name)
        if i is None:
            i = self._file_index[name] = len(self.files)
            self.files.append(name)
        if i > self._reach:
            self._reach = i
        return i

    def encode(self, v):
        cls = v.__class__
        if v is None or cls is str or cls is bool or cls is int:
            return v
        if cls is float:
            return v
        if cls is list:
            return [self.encode(x) for x in v]
        if cls is tuple:
            return {"t": [self.encode(x) for x in v]}
        if cls is dict:
            return {"d": [self.encode(x) for kv in v.items() for x in kv]}
        if cls is Record:
            return {"r": [self.encode(x) for kv in v.items() for x in kv]}
        if cls is Fraction:
            return {"f": [v.numerator, v.denominator]}
        if cls is Position:
            return {"p": [self.file(v.file), v.line, v.column, list(v.end) if v.end is not None else None]}
        if id(v) in _SENTINEL_NAMES:
            return {"s": _SENTINEL_NAMES[id(v)]}
        if isinstance(v, ast.Node):
            if _NODES.get(cls.__name__) is not cls:
                raise CodecError(f"unknown syntax node {cls.__name__}")
            return self.syntax(v)
        if isinstance(v, Procedure):
            if isinstance(v, LazyProcedure):
                v.decode_all()
            attrs = {k: x for k, x in vars(v).items() if k not in _LAZY_SLOTS}
            syntax = attrs.pop("syntax", None) if "syntax" in attrs else attrs.pop("_syntax", None)
            if syntax is None:
                syntax = v.syntax
            now = {k: attrs.pop(k) for k in _EAGER if k in attrs}
            self.bodies.append(json.dumps(self._attrs(attrs), separators=(",", ":"), allow_nan=True))
            attrs_at = len(self.bodies) - 1
            reach, self._reach = self._reach, -1
            tree = self.syntax(syntax)      # (its branches' bodies stored as texts of their own: ``syntax``)
            self.bodies.append(json.dumps(tree, separators=(",", ":"), allow_nan=True))
            # the body's text, its branches' texts (the ones between its fields' and its own) and the files its
            # positions name (indexes up to its reach) decide its tree
            reach, self._reach = self._reach, max(reach, self._reach)
            return {"q": [self._attrs(now), attrs_at, len(self.bodies) - 1, reach]}
        if isinstance(v, Path):
            return {"path": str(v)}
        if isinstance(v, re.Pattern):
            return {"x": [v.pattern, v.flags]}
        if cls is set or cls is frozenset:
            ordered = sorted(v, key=lambda x: (type(x).__name__, repr(x)))    # the same bytes for equal sets
            return {"set" if cls is set else "fset": [self.encode(x) for x in ordered]}
        if _CLASSES.get(cls.__name__) is cls:
            if hasattr(v, "__dict__"):
                return {"o": [cls.__name__, self._attrs(vars(v))]}
            return {"i": [cls.__name__, self._attrs({f: getattr(v, f) for f in data_fields(v)})]}
        raise CodecError(f"cannot store a {cls.__name__} as data")

    def syntax(self, v):
        """A syntax tree, compactly: a node as {"m": [class, file, line, column, other fields...]} (its position
        inline) and tuples as plain lists (a syntax tree holds no lists; the decoder makes them tuples again)."""
        cls = v.__class__
        if cls is tuple:
            return [self.syntax(x) for x in v]
        if cls is list:
            raise CodecError("a list inside a syntax tree")
        fields = _NODE_FIELDS.get(cls)
        if fields is None:
            return self.encode(v)
        self._nodes += 1
        if cls is ast.Branch:       # (its body encoded once, inner branches included)
            before = self._nodes
            tree = self.syntax(v.body)
            if self._nodes - before >= LATER_FROM:     # decoded when first read (syntax.Branch.later)
                self.bodies.append(json.dumps(tree, separators=(",", ":"), allow_nan=True))
                return {"B": [self.syntax(v.condition), len(self.bodies) - 1, self.syntax(v.cite),
                              self.syntax(v.pos), any(ast.may_return(s) for s in v.body)]}
            return {"n": ["Branch"] + [tree if f == "body" else self.syntax(getattr(v, f)) for f in fields]}
        pos = getattr(v, fields[0]) if fields[0] == "pos" else None
        if pos.__class__ is Position and pos.end is None:
            return {"m": [cls.__name__, self.file(pos.file), pos.line, pos.column]
                    + [self.syntax(getattr(v, f)) for f in fields[1:]]}
        return {"n": [cls.__name__] + [self.syntax(getattr(v, f)) for f in fields]}

    def _attrs(self, attrs: dict) -> list:
        out = []
        for k, x in attrs.items():
            out.append(k)
            out.append(self.encode(x))
        return out


_SETTERS = {cls: [getattr(cls, f).__set__ for f in cls._fields] for cls in _NODES.values()}
# per class name, for the "m" form (position first): the class, its position's setter, the other fields'
# setters and the length of the stored list
_MAKERS = {name: (cls, _SETTERS[cls][0], tuple(_SETTERS[cls][1:]), len(cls._fields) + 3)
           for name, cls in _NODES.items() if cls._fields[0] == "pos"}


_new = object.__new__     # a syntax node's class has no __new__ of its own


def _tuples(items: list) -> tuple:
    return tuple(_tuples(x) if x.__class__ is list else x for x in items)


def _pairs(items: list) -> dict:
    if len(items) % 2:
        raise CodecError("odd key/value list")
    it = iter(items)
    return dict(zip(it, it))


class Decoder:
    """Rebuilds model values from data written by ``Encoder``, with ``files`` as the position file table."""

    def __init__(self, files: list[str], bodies: list | tuple = ()):
        if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
            raise CodecError("bad file table")
        self.files = files
        self.bodies = bodies
        self._positions: dict = {}
        self._decode = json.JSONDecoder(object_hook=self.hook).decode    # made once, not once a text

    def loads(self, text: str | bytes):
        return self._decode(text.decode("utf-8", "surrogatepass") if isinstance(text, bytes) else text)   # as json.loads

    def _later_body(self, at: int):
        """What decodes a branch's stored body: a tuple of statements, or CodecError."""
        def decode() -> tuple:
            body = self.loads(self.bodies[at])
            if body.__class__ is not list or not all(isinstance(s, ast.Statement) for s in body):
                raise CodecError("a branch's body is not a list of statements")
            return tuple(body)
        return decode

    def hook(self, obj: dict):
        if len(obj) != 1:
            raise CodecError("a stored value has one tag")
        tag, v = obj.popitem()
        if tag == "m":      # a syntax node with its position inline; lists in it are tuples
            cls, set_pos, rest, width = _MAKERS[v[0]]
            if len(v) != width:
                raise CodecError(f"{v[0]} has {width - 3} fields")
            node = _new(cls)
            key = (v[1], v[2], v[3])
            pos = self._positions.get(key)
            if pos is None:
                pos = self._positions[key] = Position(self.files[v[1]], v[2], v[3])
            set_pos(node, pos)
            i = 4
            for set_field in rest:
                x = v[i]
                set_field(node, _tuples(x) if x.__class__ is list else x)
                i += 1
            return node
        if tag == "n":
            cls = _NODES[v[0]]
            node = _new(cls)
            setters = _SETTERS[cls]
            if len(v) - 1 != len(setters):
                raise CodecError(f"{v[0]} has {len(setters)} fields")
            for i, set_field in enumerate(setters):
                x = v[i + 1]
                set_field(node, _tuples(x) if x.__class__ is list else x)
            return node
        if tag == "B":      # a branch whose body is a text of its own, decoded when first read
            condition, at, cite, pos, returns = v
            if not (at.__class__ is int and 0 <= at < len(self.bodies)) or returns.__class__ is not bool \
                    or pos.__class__ is not Position:
                raise CodecError("a branch's body is missing")
            node = _new(ast.Branch)
            set_condition, _, set_cite, set_pos = _SETTERS[ast.Branch]
            set_condition(node, condition)
            set_cite(node, cite)
            set_pos(node, pos)
            node.later(self._later_body(at), returns)
            return node
        if tag == "p":
            key = (v[0], v[1], v[2])
            pos = self._positions.get(key) if v[3] is None else None
            if pos is None:
                if not (isinstance(v[1], int) and isinstance(v[2], int)):
                    raise CodecError("bad position")
                pos = Position(self.files[v[0]], v[1], v[2], tuple(v[3]) if v[3] is not None else None)
                if v[3] is None:
                    self._positions[key] = pos
            return pos
        if tag == "t":
            return tuple(v)
        if tag == "d":
            return _pairs(v)
        if tag == "r":
            return Record(_pairs(v))
        if tag == "f":
            return Fraction(v[0], v[1])
        if tag == "s":
            return _SENTINELS[v]
        if tag == "o":
            model_cls = _CLASSES[v[0]]
            attrs = _pairs(v[1])
            if not _FIELD_NAMES[model_cls] <= attrs.keys():
                raise CodecError(f"a stored {v[0]} lacks some of its fields")
            made = model_cls.__new__(model_cls)
            made.__dict__.update(attrs)
            return made
        if tag == "i":
            return _CLASSES[v[0]](**_pairs(v[1]))
        if tag == "q":      # a procedure: its name and class-defaulted fields now, the rest when first read
            now, attrs_at, body_at, reach = v
            now = _pairs(now)
            if not _EAGER <= now.keys() or not all(isinstance(i, int) and 0 <= i < len(self.bodies)
                                                   for i in (attrs_at, body_at)) or attrs_at >= body_at \
                    or not (reach.__class__ is int and -1 <= reach < len(self.files)):
                raise CodecError("a procedure's fields or body are missing")
            proc = LazyProcedure.__new__(LazyProcedure)
            proc.__dict__.update(now, _attrs_text=self.bodies[attrs_at], _syntax_text=self.bodies[body_at],
                                 _syntax_decoder=self, _syntax_reach=reach, _syntax_branches=(attrs_at + 1, body_at))
            return proc
        if tag == "path":
            return Path(v)
        if tag == "x":
            return re.compile(v[0], v[1])
        if tag == "set":
            return set(v)
        if tag == "fset":
            return frozenset(v)
        raise CodecError(f"unknown tag {tag!r}")


_LAZY_SLOTS = ("_attrs_text", "_syntax_text", "_syntax_decoder", "_syntax_reach", "_syntax_branches")

_BODIES: dict = {}
"""(a procedure body's stored text, the files its positions name) -> its syntax tree, decoded once per process:
the loads of one ruleset under different overlays store most bodies alike. Syntax is immutable, so the loads
share the tree (each procedure gets its own top node, holding its own parameter nodes)."""
BODIES_KEPT = 2048
"""Most bodies kept (then the memo starts again): a few rulesets' worth, so a long-running process stays bounded."""
# decoded with the procedure: its name, and the fields whose defaults are class attributes (reading one of
# those would find the class's default, not the stored value, and never reach __getattr__)
_EAGER = frozenset({"name"} | {f for f in _FIELD_NAMES[Procedure] if hasattr(Procedure, f)})


class LazyProcedure(Procedure):
    """A procedure read from the cache: its fields (parameters, analysis, compiled slots) are decoded the
    first time one is read, its syntax tree the first time it is read: a command decodes only the
    procedures it uses, of a ruleset whose procedures are most of the cache entry."""

    def __getattr__(self, attr: str):
        d = self.__dict__
        text = d.get("_attrs_text")
        if text is None or attr.startswith("__"):
            raise AttributeError(attr)
        attrs = _pairs(d["_syntax_decoder"].loads(text))
        if not _FIELD_NAMES[Procedure] - _EAGER - {"syntax"} <= attrs.keys():
            raise CodecError("a stored procedure lacks some of its fields")
        del d["_attrs_text"]
        for k, x in attrs.items():
            d.setdefault(k, x)      # a field set since it was read keeps its new value
        return object.__getattribute__(self, attr)

    @property
    def syntax(self) -> ast.Procedure:
        d = self.__dict__
        syntax = d.get("_syntax")
        if syntax is None:
            decoder, text, (first, last) = d["_syntax_decoder"], d.pop("_syntax_text"), d.pop("_syntax_branches")
            key = (text, tuple(decoder.bodies[first:last]), tuple(decoder.files[:d.pop("_syntax_reach") + 1]))
            shared = _BODIES.get(key)
            if shared is None:
                shared = decoder.loads(text)
                if not isinstance(shared, ast.Procedure):
                    raise CodecError("a procedure's body is not a procedure")
                if len(_BODIES) >= BODIES_KEPT:
                    _BODIES.clear()
                _BODIES[key] = shared
            # this procedure's own top node over the shared body, with its parameter nodes (as a fresh load does)
            syntax = _new(ast.Procedure)
            for f, set_field in zip(ast.Procedure._fields, _SETTERS[ast.Procedure]):
                set_field(syntax, getattr(shared, f))
            if syntax.params == tuple(self.params):
                object.__setattr__(syntax, "params", tuple(self.params))
            d["_syntax"] = syntax
            d.pop("_syntax_decoder", None)
        return syntax

    @syntax.setter
    def syntax(self, value) -> None:
        self.__dict__["_syntax"] = value
        for k in ("_syntax_text", "_syntax_decoder", "_syntax_reach", "_syntax_branches"):
            self.__dict__.pop(k, None)

    def decode_all(self) -> None:
        """Decode the fields and the body now (checks that the stored texts describe a procedure)."""
        self.params  # noqa: B018
        self.syntax  # noqa: B018


def dumps(value, files=()) -> tuple[list[str], str, list[str]]:
    """``value`` as (file table, JSON text, procedure bodies as JSON texts); raises CodecError for anything
    that is not model data. No text contains a line break, so an entry can keep one per line. The file table
    starts with ``files`` (a ruleset's own, in load order), in order."""
    enc = Encoder(files)
    text = json.dumps(enc.encode(value), separators=(",", ":"), allow_nan=True)
    return enc.files, text, enc.bodies


def loads(files: list[str], text: str, bodies: list | tuple = ()):
    """The value ``dumps`` gave; raises CodecError (or ValueError, KeyError...) if the data is malformed.
    Procedure bodies are decoded when first read."""
    return Decoder(files, bodies).loads(text)


def plain(v) -> bool:
    """Whether ``v`` is JSON as it stands (text-keyed dicts, lists, text, numbers, true/false/null), so it reads
    back the same from plain JSON, with no tags to rebuild."""
    cls = v.__class__
    if cls is dict:
        return all(k.__class__ is str and plain(x) for k, x in v.items())
    if cls is list:
        return all(plain(x) for x in v)
    return v is None or cls is str or cls is int or cls is float or cls is bool


def _path_text(path) -> str | None:
    """A path of text keys and list indexes as the key of a keyed position table; None for any other path."""
    for p in path:
        if p.__class__ is not str and p.__class__ is not int:
            return None
    return json.dumps(list(path), separators=(",", ":"))


def dump_document(doc) -> tuple[str, list[str]]:
    """A positioned YAML document (source.Document) as JSON texts: its data (plain JSON, marked ``P``, when it is
    plain, as YAML data usually is; else tagged, marked ``T``), then each position table, then the text offsets.
    A table is a JSON object from each path (as the JSON text of its list of keys and indexes) to [line, column]
    (and [end line, end column] when known), which a lookup reads without building the table; or, when some path
    holds a key that is not text (YAML allows a number or a truth as a key), rows of [path, line, column].
    Every position is in ``doc.file``. The tables are texts of their own, decoded only when a position is first
    asked for."""
    def rows(table: dict) -> str:
        keyed: dict | None = {}
        out = []
        for path, pos in table.items():
            if pos.file != doc.file:
                raise CodecError("a document's positions are in its own file")
            place = [pos.line, pos.column] + ([list(pos.end)] if pos.end is not None else [])
            out.append([list(path)] + place)
            if keyed is not None:
                text = _path_text(path)
                if text is None:
                    keyed = None
                else:
                    keyed[text] = place
        return json.dumps(keyed if keyed is not None else out, separators=(",", ":"), allow_nan=True)
    data = ("P" + json.dumps(doc.data, separators=(",", ":"), allow_nan=True) if plain(doc.data) else
            "T" + json.dumps(Encoder().encode(doc.data), separators=(",", ":"), allow_nan=True))
    return data, [rows(doc.positions), rows(doc.key_positions),
                  json.dumps([[list(p), offset] for p, offset in doc.text_offsets.items()], separators=(",", ":"))]


def _table(file: str, rows: list | dict, made: dict) -> dict:
    if rows.__class__ is dict:      # keyed: path text -> [line, column(, end)]
        rows = [[json.loads(k)] + v for k, v in rows.items()]
    out = {}
    for row in rows:
        if len(row) == 3:
            at = (row[1], row[2])
            pos = made.get(at)
            if pos is None:
                if not (row[1].__class__ is int and row[2].__class__ is int):
                    raise CodecError("bad position")
                pos = made[at] = Position(file, row[1], row[2])
        else:
            pos = Position(file, row[1], row[2], tuple(row[3]))
        out[tuple(row[0])] = pos
    return out


_NOT_KEYED = object()


class StoredDocument(Document):
    """A Document read from the load cache: its position tables are decoded the first time one is read
    (a run that reports nothing at a position never decodes them). Should a stored table prove malformed,
    the positions are read again from the file's text, as a load without the cache would.

    Until then, ``at`` and ``key_at`` read a keyed table (``dump_document``) without building it: a test run that
    reports a few places in a file of hundreds of cases (an error's related line, an unused die) reads those."""

    def _keyed(self, which: int):
        """The keyed table ``which`` (0: positions, 1: key positions) as JSON gives it, or _NOT_KEYED: the tables
        are decoded already, or this one is stored as rows (or malformed: the full decode deals with that)."""
        d = self.__dict__
        stored = d.get("_stored_tables")
        if stored is None:
            return _NOT_KEYED
        keyed = d.get("_keyed_tables")
        if keyed is None:
            keyed = d["_keyed_tables"] = [None, None]
        found = keyed[which]
        if found is None:
            try:
                found = json.loads(stored[which])
            except ValueError:
                found = _NOT_KEYED
            if found.__class__ is not dict:
                found = _NOT_KEYED
            keyed[which] = found
        return found

    def _keyed_position(self, place):
        """A position as a keyed table holds it ([line, column] or [line, column, [end line, end column]]);
        None when malformed."""
        if place.__class__ is list and 2 <= len(place) <= 3 and place[0].__class__ is int \
                and place[1].__class__ is int:
            if len(place) == 2:
                return Position(self.file, place[0], place[1])
            if place[2].__class__ is list:
                return Position(self.file, place[0], place[1], tuple(place[2]))
        return None

    def at(self, path=()) -> Position:
        table = self._keyed(0)
        if table is not _NOT_KEYED:
            path = tuple(path)
            while True:
                text = _path_text(path)
                if text is None:
                    break               # a path no keyed table holds: the full table answers
                place = table.get(text)
                if place is not None:
                    pos = self._keyed_position(place)
                    if pos is None:
                        break
                    return pos
                if not path:
                    return Position(self.file, 1, 1)
                path = path[:-1]
        return Document.at(self, path)

    def key_at(self, path) -> Position:
        table = self._keyed(1)
        if table is not _NOT_KEYED:
            text = _path_text(path)
            if text is not None:
                place = table.get(text)
                if place is None:
                    return self.at(path)
                pos = self._keyed_position(place)
                if pos is not None:
                    return pos
        return Document.key_at(self, path)

    def _tables(self) -> dict:
        d = self.__dict__
        stored = d.pop("_stored_tables", None)
        d.pop("_keyed_tables", None)
        if stored is not None:
            try:
                made: dict = {}
                positions, keys, offsets = (json.loads(x) for x in stored)
                tables = {"positions": _table(self.file, positions, made),
                          "key_positions": _table(self.file, keys, made),
                          "text_offsets": {tuple(p): int(o) for p, o in offsets}}
            except Exception:     # a malformed entry: the positions as the YAML gives them
                fresh = load_yaml(self.file, d.get("text", ""))
                tables = {"positions": fresh.positions, "key_positions": fresh.key_positions,
                          "text_offsets": fresh.text_offsets}
            for k, v in tables.items():
                d.setdefault(k, v)     # a table set since it was read keeps its new value
        return d

    def __eq__(self, other):      # the same as a Document with the same fields (a data class's asks for
        if not isinstance(other, Document):      # the very same class)
            return NotImplemented
        return all(getattr(self, f) == getattr(other, f)
                   for f in ("file", "data", "positions", "key_positions", "text_offsets", "text"))
    # (defining __eq__ leaves __hash__ None, as a Document's: it is mutable)

    positions = property(lambda self: self._tables()["positions"],
                         lambda self, v: self.__dict__.__setitem__("positions", v))
    key_positions = property(lambda self: self._tables()["key_positions"],
                             lambda self, v: self.__dict__.__setitem__("key_positions", v))
    text_offsets = property(lambda self: self._tables()["text_offsets"],
                            lambda self, v: self.__dict__.__setitem__("text_offsets", v))


def load_document(file: str, text: str, main: str, tables: list):
    """The Document ``dump_document`` stored (its ``main`` text and its three ``tables`` texts), read from
    ``file`` whose content is ``text``."""
    if len(tables) != 3:
        raise CodecError("a stored document has three position tables")
    if main[:1] == "P":
        data = json.loads(main[1:])
    elif main[:1] == "T":
        data = Decoder([]).loads(main[1:])
    else:
        raise CodecError("unknown document layout")
    doc = StoredDocument.__new__(StoredDocument)
    doc.__dict__.update(file=file, data=data, text=text, _stored_tables=tuple(tables))
    return doc
