"""Reading YAML files into plain data that remembers where every value came from.

ruamel.yaml's round-trip loader records the line and column of every key and
item. We convert its tree into plain dicts, lists and scalars (what the JSON
Schemas and the model builders want) and keep a side table from each value's
path to its position, so any later error can point at file:line:column.

Safety: custom tags are refused, duplicate keys are errors, and aliases are
expanded against a node budget so a "billion laughs" file cannot exhaust memory.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq, TaggedScalar
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.scalarstring import (DoubleQuotedScalarString, FoldedScalarString,
                                      LiteralScalarString, SingleQuotedScalarString)

from .errors import InputError, Position

MAX_NODES = 200_000
"""Most values one YAML file may expand to (aliases count every time they are used)."""

PathKey = tuple  # a path of mapping keys and list indexes from the document root


@dataclass
class Document:
    """A loaded YAML file: plain ``data`` plus the position of every value."""

    file: str
    data: Any
    positions: dict[PathKey, Position] = field(default_factory=dict)
    key_positions: dict[PathKey, Position] = field(default_factory=dict)
    text_offsets: dict[PathKey, int] = field(default_factory=dict)

    def at(self, path: PathKey = ()) -> Position:
        """The position of the value at ``path`` (or of its nearest known parent)."""
        path = tuple(path)
        while path:
            if path in self.positions:
                return self.positions[path]
            path = path[:-1]
        return self.positions.get((), Position(self.file, 1, 1))

    def key_at(self, path: PathKey) -> Position:
        """The position of the mapping key that names ``path`` (for 'unknown key' errors)."""
        return self.key_positions.get(tuple(path)) or self.at(path)

    def text_at(self, path: PathKey) -> Position:
        """Where the text of a string scalar starts (after any opening quote)."""
        pos = self.at(path)
        return pos.shifted(column=pos.column + self.text_offsets.get(tuple(path), 0)) \
            if self.text_offsets.get(tuple(path), 0) >= 0 else pos


_yaml = YAML(typ="rt")
_yaml.allow_duplicate_keys = False
_yaml.preserve_quotes = True


def _mark_position(file: str, mark) -> Position:
    return Position(file, mark.line + 1, mark.column + 1) if mark else Position(file)


def read_text(path: Path | str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"no such file: {path}") from None
    except IsADirectoryError:
        raise InputError(f"expected a file but found a folder: {path}") from None
    except UnicodeDecodeError as e:
        raise InputError(f"{path} is not UTF-8 text ({e.reason} at byte {e.start})") from None


def load_yaml(path: Path | str, text: str | None = None) -> Document:
    """Parse one YAML file into a positioned ``Document`` (or raise ``InputError``)."""
    file = str(path)
    if text is None:
        text = read_text(path)
    try:
        tree = _yaml.load(text)
    except MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        problem = (e.problem or "invalid YAML").strip()
        if "duplicate key" in problem or type(e).__name__ == "DuplicateKeyError":
            problem = "this key appears twice in the same mapping; each key may appear once"
        elif e.context:
            problem = f"{problem} ({e.context.strip()})"
        raise InputError(f"YAML syntax: {problem}", _mark_position(file, mark)) from None
    except YAMLError as e:
        raise InputError(f"YAML syntax: {e}", Position(file, 1, 1)) from None
    doc = Document(file, None)
    budget = [MAX_NODES]
    doc.positions[()] = Position(file, 1, 1)
    doc.data = _plain(tree, (), doc, budget)
    return doc


def _plain(node: Any, path: PathKey, doc: Document, budget: list[int]) -> Any:
    """Convert a ruamel node to plain data, recording positions as we go."""
    budget[0] -= 1
    if budget[0] < 0:
        raise InputError(f"this file expands to more than {MAX_NODES} values "
                         "(aliases are expanded each time they are used)", doc.at(path))
    tag = getattr(node, "tag", None)
    tag_value = getattr(tag, "value", tag) if tag is not None else None
    if isinstance(node, TaggedScalar) or (isinstance(tag_value, str) and tag_value.startswith("!")
                                          and not tag_value.startswith("tag:yaml.org")):
        raise InputError(f"YAML tags such as '{tag_value}' are not allowed in Umpire files; "
                         "write plain values", doc.at(path))
    if isinstance(node, CommentedMap):
        out = {}
        for key, value in node.items():
            if not isinstance(key, (str, int, float, bool)) or isinstance(key, TaggedScalar):
                raise InputError("mapping keys must be plain text or numbers", doc.at(path))
            key = str(key) if not isinstance(key, (int, bool)) else key
            child = path + (key,)
            try:
                kl, kc = node.lc.key(key)
                doc.key_positions[child] = Position(doc.file, kl + 1, kc + 1)
                vl, vc = node.lc.value(key)
                doc.positions[child] = Position(doc.file, vl + 1, vc + 1)
            except (KeyError, TypeError, AttributeError):
                doc.positions[child] = doc.at(path)
            _note_text_offset(value, child, doc)
            out[key] = _plain(value, child, doc, budget)
        return out
    if isinstance(node, CommentedSeq):
        out = []
        for i, value in enumerate(node):
            child = path + (i,)
            try:
                il, ic = node.lc.item(i)
                doc.positions[child] = Position(doc.file, il + 1, ic + 1)
            except (KeyError, TypeError, AttributeError, IndexError):
                doc.positions[child] = doc.at(path)
            _note_text_offset(value, child, doc)
            out.append(_plain(value, child, doc, budget))
        return out
    if isinstance(node, (dict, list)):  # merged or aliased plain containers
        items = node.items() if isinstance(node, dict) else enumerate(node)
        return ({k: _plain(v, path + (k,), doc, budget) for k, v in items} if isinstance(node, dict)
                else [_plain(v, path + (i,), doc, budget) for i, v in items])
    if isinstance(node, bool) or node is None:
        return node
    if isinstance(node, int):
        return int(node)
    if isinstance(node, float):
        return float(node)
    if isinstance(node, str):
        return str(node)
    return node


def _note_text_offset(value: Any, path: PathKey, doc: Document) -> None:
    """Remember where a string's text starts relative to its node (quotes, block scalars)."""
    if isinstance(value, (DoubleQuotedScalarString, SingleQuotedScalarString)):
        doc.text_offsets[path] = 1
    elif isinstance(value, (LiteralScalarString, FoldedScalarString)):
        doc.text_offsets[path] = -1  # block scalar: the text starts on the next line
