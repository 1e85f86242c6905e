"""Reading YAML files into plain data that remembers where every value came from.

ruamel.yaml composes a node graph in which every node records its line and
column. We convert it into plain dicts, lists and scalars (what the JSON
Schemas and the model builders want) and keep a side table from each value's
path to its position, so any later error can point at file:line:column.

Safety: custom tags are refused, duplicate keys are errors, and aliases are
expanded against a node budget so a "billion laughs" file cannot exhaust memory.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import re

from ruamel.yaml import YAML
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

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


# The C parser (ruamel.yaml.clib) when installed; ruamel falls back to its pure-Python parser.
# We only *compose* the node graph: every node keeps its start mark (line, column), tag and
# quoting style, and we build plain data ourselves, so nothing in the file can construct objects.
_composer = YAML(typ="safe", pure=False)

_STD = "tag:yaml.org,2002:"
_ALLOWED_TAGS = {_STD + t for t in ("str", "int", "float", "bool", "null", "map", "seq", "timestamp", "merge")}


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
        node = _composer.compose(text)
    except MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        problem = (e.problem or "invalid YAML").strip()
        if e.context:
            problem = f"{problem} ({e.context.strip()})"
        raise InputError(f"YAML syntax: {problem}", _mark_position(file, mark)) from None
    except YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        raise InputError(f"YAML syntax: {getattr(e, 'problem', None) or e}",
                         _mark_position(file, mark) if mark else Position(file, 1, 1)) from None
    doc = Document(file, None)
    doc.positions[()] = Position(file, 1, 1)
    doc.data = _plain(node, (), doc, [MAX_NODES]) if node is not None else None
    return doc


def _pos(doc: Document, node) -> Position:
    return Position(doc.file, node.start_mark.line + 1, node.start_mark.column + 1)


def _plain(node: Node, path: PathKey, doc: Document, budget: list[int]) -> Any:
    """Convert a composed node to plain data, recording positions as we go."""
    budget[0] -= 1
    if budget[0] < 0:
        raise InputError(f"this file expands to more than {MAX_NODES} values "
                         "(aliases are expanded each time they are used)", _pos(doc, node))
    tag = node.tag or ""
    if tag not in _ALLOWED_TAGS:
        raise InputError(f"YAML tags such as '{tag}' are not allowed in Umpire files; write plain values",
                         _pos(doc, node))
    if isinstance(node, MappingNode):
        out: dict = {}
        for key_node, value_node in _merged(node, doc):
            if not isinstance(key_node, ScalarNode):
                raise InputError("mapping keys must be plain text or numbers", _pos(doc, key_node))
            key = _scalar(key_node, doc)
            if isinstance(key, float) or key is None:
                key = key_node.value
            child = path + (key,)
            if key in out:
                raise InputError(f"YAML syntax: the key '{key}' appears twice in the same mapping; "
                                 "each key may appear once", _pos(doc, key_node))
            doc.key_positions[child] = _pos(doc, key_node)
            doc.positions[child] = _pos(doc, value_node)
            _note_text_offset(value_node, child, doc)
            out[key] = _plain(value_node, child, doc, budget)
        return out
    if isinstance(node, SequenceNode):
        out_list = []
        for i, item in enumerate(node.value):
            child = path + (i,)
            doc.positions[child] = _pos(doc, item)
            _note_text_offset(item, child, doc)
            out_list.append(_plain(item, child, doc, budget))
        return out_list
    return _scalar(node, doc)


def _merged(node: MappingNode, doc: Document):
    """A mapping's (key, value) pairs with YAML merge keys (<<) expanded; later keys win."""
    pairs = []
    for k, v in node.value:
        if k.tag == _STD + "merge":
            sources = v.value if isinstance(v, SequenceNode) else [v]
            for src in sources:
                if not isinstance(src, MappingNode):
                    raise InputError("a merge key (<<) needs a mapping", _pos(doc, src))
                pairs += [(sk, sv) for sk, sv in _merged(src, doc)
                          if not any(_same_key(sk, ok) for ok, _ in node.value)]
        else:
            pairs.append((k, v))
    return pairs


def _same_key(a, b) -> bool:
    return isinstance(a, ScalarNode) and isinstance(b, ScalarNode) and a.value == b.value


_INT = re.compile(r"^[-+]?(0|[1-9][0-9]*)$")


def _scalar(node: ScalarNode, doc: Document) -> Any:
    """A scalar by YAML 1.2 core-schema rules (what the resolver tagged it as)."""
    value, tag = node.value, node.tag
    if node.style:  # quoted or block text is always a string
        return value
    try:
        if tag == _STD + "int":
            v = value.replace("_", "")
            if v.lower().startswith(("0x", "-0x", "+0x")):
                return int(v, 16)
            if v.lower().startswith(("0o", "-0o", "+0o")):
                return int(v, 8)
            return int(v)
        if tag == _STD + "float":
            v = value.lower().replace("_", "")
            if v in (".inf", "+.inf"):
                return float("inf")
            if v == "-.inf":
                return float("-inf")
            if v == ".nan":
                return float("nan")
            return float(v)
    except ValueError:
        return value
    if tag == _STD + "bool":
        return value.lower() == "true"
    if tag == _STD + "null":
        return None
    return value


def _note_text_offset(node, path: PathKey, doc: Document) -> None:
    """Remember where a string's text starts relative to its node (quotes, block scalars)."""
    style = getattr(node, "style", None)
    if style in ('"', "'"):
        doc.text_offsets[path] = 1
    elif style in ("|", ">"):
        doc.text_offsets[path] = -1  # block scalar: the text starts on the next line
