"""Reading YAML files into plain data that remembers where every value came from.

ruamel.yaml composes a node graph in which every node records its line and
column. We convert it into plain dicts, lists and scalars (what the JSON
Schemas and the model builders want) and keep a side table from each value's
path to its position, so any later error can point at file:line:column.

Safety and size: a file larger than ``MAX_FILE_BYTES`` is refused before it is
read; the parser's event stream is counted first, so a file with too many values
or nested too deeply is refused before any node graph is built; custom tags are
refused, duplicate keys are errors, aliases are expanded against the same value
budget (so a "billion laughs" file cannot exhaust memory), and numbers that are
not finite or have absurdly many digits are refused with their position.
"""

from __future__ import annotations

import math
import os
import stat
from pathlib import Path

from ..errors import InputError, Position
from .plain import data_class, factory

MAX_NODES = 200_000
"""Most values one YAML file may expand to (aliases count every time they are used)."""

MAX_FILE_BYTES = 2_000_000
"""Largest file (YAML or procedures) Umpire reads; checked before reading. Shipped files are under 20 kB."""

MAX_NESTING = 64
"""Deepest nesting of mappings and lists in a YAML file (aliases included)."""

MAX_NUMBER_DIGITS = 100
"""Most digits a number written in a YAML file may have."""

PathKey = tuple  # a path of mapping keys and list indexes from the document root


@data_class
class Document:
    """A loaded YAML file: plain ``data`` plus the position of every value."""

    file: str
    data: Any
    positions: dict[PathKey, Position] = factory(default_factory=dict)
    key_positions: dict[PathKey, Position] = factory(default_factory=dict)
    text_offsets: dict[PathKey, int] = factory(default_factory=dict)
    text: str = ""

    def block_indent(self, path: PathKey) -> int:
        """How far a block scalar's lines (``key: |``) are indented in the file (YAML strips it; 0 otherwise)."""
        if self.text_offsets.get(tuple(path)) != -1:
            return 0
        lines = self.text.splitlines()
        for line in lines[self.at(path).line:]:
            if line.strip():
                return len(line) - len(line.lstrip(" "))
        return 0

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
# ruamel.yaml is imported on first use: a load served by the load cache (loading/cache.py) reads no YAML.
TYPE_CHECKING = False   # (typing is for the checker only: importing it costs a warm start 2%)
if TYPE_CHECKING:     # the names _composer_now binds in this module at first use
    from typing import Any

    from ruamel.yaml import YAML
    from ruamel.yaml.error import MarkedYAMLError, YAMLError
    from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

_composer: YAML | None = None


def _composer_now() -> YAML:
    """The composer, ruamel.yaml imported (and its node and error classes bound here) on first use."""
    global _composer, MarkedYAMLError, YAMLError, MappingNode, Node, ScalarNode, SequenceNode
    if _composer is None:
        from ruamel.yaml import YAML
        from ruamel.yaml.error import MarkedYAMLError, YAMLError
        from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
        _composer = YAML(typ="safe", pure=False)
    return _composer

_STD = "tag:yaml.org,2002:"
_ALLOWED_TAGS = {_STD + t for t in ("str", "int", "float", "bool", "null", "map", "seq", "timestamp", "merge")}


def _mark_position(file: str, mark) -> Position:
    return Position(file, mark.line + 1, mark.column + 1) if mark else Position(file)


class NotARegularFile(OSError):
    """A path that names something other than a regular file (a FIFO, a device, a socket): never opened for
    reading, since reading one can block forever or never end."""

    def __init__(self, path, what: str):
        super().__init__(f"{path} is {what}, not a regular file")
        self.what = what


def file_kind(mode: int) -> str:
    """What a non-regular file is, in words."""
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def read_regular(path: Path | str, limit: int) -> bytes:
    """Up to ``limit + 1`` bytes of a regular file (a symbolic link to one is read as the file it names).

    Anything else is refused before it is opened (``IsADirectoryError``, ``NotARegularFile``): the path is
    checked with stat, then opened without blocking (a FIFO swapped in after the check cannot make the open
    wait for a writer) and checked again on the open file itself, so what is read is what was checked."""
    mode = os.stat(path).st_mode
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(str(path))
    if not stat.S_ISREG(mode):
        raise NotARegularFile(path, file_kind(mode))
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotARegularFile(path, file_kind(mode))
        os.set_blocking(fd, True)
        chunks, got = [], 0
        while got <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - got))
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_bytes(path: Path | str) -> bytes:
    """A file's bytes, refused with a plain error if it is missing, a folder, not a regular file (a FIFO, a
    device), unreadable or too large.

    `umpire set` edits bytes (keeping every byte it was not asked to change) and loading reads text:
    both come through here, so they refuse the same files with the same words.
    """
    p = Path(path)
    try:
        st = p.stat()
        size = st.st_size
        if size > MAX_FILE_BYTES and stat.S_ISREG(st.st_mode):
            raise InputError(f"{path} is {size:,} bytes, more than the limit of {MAX_FILE_BYTES:,} bytes for one "
                             "Umpire file (limit 'file size')", Position(str(path), 1, 1),
                             hint="split it into several files; no real ruleset file comes near this size")
        raw = read_regular(p, MAX_FILE_BYTES)
        if len(raw) > MAX_FILE_BYTES:  # it grew while we looked
            raise InputError(f"{path} is more than the limit of {MAX_FILE_BYTES:,} bytes for one Umpire file "
                             "(limit 'file size')", Position(str(path), 1, 1))
        return raw
    except FileNotFoundError:
        raise InputError(f"no such file: {path}") from None
    except IsADirectoryError:
        raise InputError(f"expected a file but found a folder: {path}") from None
    except NotARegularFile as e:
        raise InputError(f"{path} is {e.what}, not a regular file: Umpire reads only regular files",
                         Position(str(path)), hint="give the path of the file itself") from None
    except PermissionError:
        raise InputError(f"cannot read {path}: permission denied") from None
    except OSError as e:
        raise InputError(f"cannot read {path}: {e.strerror or e}") from None


def decode_text(raw: bytes, path: Path | str) -> str:
    """UTF-8 text of a file's bytes, or a plain error naming the first bad byte."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        before = raw[: e.start]
        line = before.count(b"\n") + 1
        column = len(before[before.rfind(b"\n") + 1:].decode("utf-8", "replace")) + 1
        raise InputError(f"this file is not UTF-8 text: byte 0x{raw[e.start]:02x} here is {e.reason}",
                         Position(str(path), line, column),
                         hint="save the file as UTF-8 (most editors offer it under 'Save with encoding')") from None


def referenced_file(base: Path | str, name: str, position: Position | None, what: str) -> Path:
    """The file a document names (an overlay, a situation) relative to ``base``, or a positioned error."""
    from ..errors import did_you_mean
    path = Path(base) / name
    try:
        mode = path.stat().st_mode
    except (OSError, ValueError):
        mode = None
    if mode is not None and stat.S_ISREG(mode):
        return path
    if mode is not None and stat.S_ISDIR(mode):
        raise InputError(f"{what} '{name}' is a folder, not a file", position)
    if mode is not None:
        raise InputError(f"{what} '{name}' is {file_kind(mode)}, not a regular file: Umpire reads only regular "
                         "files", position)
    folder = path.parent
    nearby = sorted(p.name for p in folder.iterdir() if p.is_file()) if folder.is_dir() else []
    hint = did_you_mean(path.name, nearby)
    raise InputError(f"{what} '{name}' does not exist (looked for {path})", position, hint)


def read_text(path: Path | str) -> str:
    """A file's text, refused with a plain error if it is missing, a folder, too large or not UTF-8."""
    text = decode_text(read_bytes(path), path)
    # One rule for a byte-order mark, in YAML and procedure files alike: some editors write one; it is not text.
    return text[1:] if text.startswith("\ufeff") else text


def check_text_size(text: str, file: str) -> None:
    """Refuse text (given directly rather than read from a file) over the file-size limit."""
    if len(text) > MAX_FILE_BYTES:
        raise InputError(f"this text is {len(text):,} characters, more than the limit of {MAX_FILE_BYTES:,} "
                         "for one Umpire file (limit 'file size')", Position(file, 1, 1))


def load_yaml(path: Path | str, text: str | None = None) -> Document:
    """Parse one YAML file into a positioned ``Document`` (or raise ``InputError``)."""
    file = str(path)
    if text is None:
        text = read_text(path)
    else:
        check_text_size(text, file)
    composer = _composer_now()
    try:
        _check_events(text, file)
        node = composer.compose(text)
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
    doc = Document(file, None, text=text)
    doc.positions[()] = Position(file, 1, 1)
    doc.data = _Builder(doc).plain(node, ()) if node is not None else None
    return doc


def _check_events(text: str, file: str) -> None:
    """Count the parser's events before composing: too many values or too deep a nesting fails fast.

    Composing builds a node (with marks) for every value and recurses once per level of
    nesting, so both are bounded here, in one streaming pass, before any node exists.
    """
    from ruamel.yaml.events import CollectionEndEvent, CollectionStartEvent, NodeEvent
    count = depth = 0
    for event in _composer_now().parse(text):
        if isinstance(event, CollectionStartEvent):
            depth += 1
            if depth > MAX_NESTING:
                raise InputError(f"values are nested more than {MAX_NESTING} deep (limit 'nesting')",
                                 _mark_position(file, event.start_mark),
                                 hint="no Umpire file needs this much nesting; flatten the structure")
        elif isinstance(event, CollectionEndEvent):
            depth -= 1
        if isinstance(event, NodeEvent):
            count += 1
            if count > MAX_NODES:
                raise InputError(f"this file has more than {MAX_NODES:,} values (limit 'values per file')",
                                 _mark_position(file, event.start_mark),
                                 hint="split it into several files")


def _pos(doc: Document, node) -> Position:
    return Position(doc.file, node.start_mark.line + 1, node.start_mark.column + 1)


class _Builder:
    """Converts a composed node graph to plain data, recording positions as it goes.

    Aliases are expanded: every use counts against the value budget, and the nesting
    limit applies to the expanded data, so neither a "billion laughs" file nor an alias
    that refers to the mapping containing it can run away.
    """

    def __init__(self, doc: Document):
        self.doc = doc
        self.budget = MAX_NODES
        self.depth = 0
        self.merged: dict[int, list] = {}   # id(mapping node) -> its pairs with merge keys expanded

    def plain(self, node: Node, path: PathKey) -> Any:
        doc = self.doc
        self.budget -= 1
        if self.budget < 0:
            raise InputError(f"this file expands to more than {MAX_NODES:,} values "
                             "(aliases are expanded each time they are used; limit 'values per file')",
                             _pos(doc, node))
        tag = node.tag or ""
        if tag not in _ALLOWED_TAGS:
            raise InputError(f"YAML tags such as '{tag}' are not allowed in Umpire files; write plain values",
                             _pos(doc, node))
        if isinstance(node, ScalarNode):
            return _scalar(node, doc)
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise InputError(f"values are nested more than {MAX_NESTING} deep once aliases are expanded "
                             "(limit 'nesting'); does an alias refer to a value that contains it?",
                             _pos(doc, node))
        try:
            if isinstance(node, MappingNode):
                return self.mapping(node, path)
            out_list = []
            for i, item in enumerate(node.value):
                child = path + (i,)
                doc.positions[child] = _pos(doc, item)
                _note_text_offset(item, child, doc)
                out_list.append(self.plain(item, child))
            return out_list
        finally:
            self.depth -= 1

    def mapping(self, node: MappingNode, path: PathKey) -> dict:
        doc = self.doc
        out: dict = {}
        for key, key_node, value_node in self.pairs(node):
            child = path + (key,)
            if key in out:
                raise InputError(f"YAML syntax: the key '{key}' appears twice in the same mapping; "
                                 "each key may appear once", _pos(doc, key_node))
            doc.key_positions[child] = _pos(doc, key_node)
            doc.positions[child] = _pos(doc, value_node)
            _note_text_offset(value_node, child, doc)
            out[key] = self.plain(value_node, child)
        return out

    def pairs(self, node: MappingNode) -> list:
        """A mapping's (key, key node, value node) triples with merge keys (<<) expanded.

        The mapping's own keys win over merged ones, and an earlier merge source wins over a
        later one (YAML's merge rule); two sources sharing a key is not a duplicate. Linear in
        the number of keys, and each mapping's expansion is worked out once.
        """
        found = self.merged.get(id(node))
        if found is not None:
            return found
        doc = self.doc
        own: list = []
        sources: list = []
        for k, v in node.value:
            if k.tag == _STD + "merge":
                sources += v.value if isinstance(v, SequenceNode) else [v]
                continue
            if not isinstance(k, ScalarNode):
                raise InputError("mapping keys must be plain text or numbers", _pos(doc, k))
            own.append((_key(k, doc), k, v))
        if not sources:
            self.merged[id(node)] = own
            return own
        taken = {key for key, _, _ in own}
        merged = []
        self.merged[id(node)] = []   # a merge that (through aliases) reaches this mapping adds nothing
        for src in sources:
            if not isinstance(src, MappingNode):
                raise InputError("a merge key (<<) needs a mapping", _pos(doc, src))
            self.depth += 1
            if self.depth > MAX_NESTING:
                raise InputError(f"merge keys (<<) are nested more than {MAX_NESTING} deep (limit 'nesting')",
                                 _pos(doc, src))
            try:
                for key, k, v in self.pairs(src):
                    if key not in taken:
                        taken.add(key)
                        merged.append((key, k, v))
            finally:
                self.depth -= 1
        result = own + merged
        self.merged[id(node)] = result
        return result


def _key(key_node: ScalarNode, doc: Document):
    """A mapping key as plain data: text or a whole number (any other scalar keeps its text, so ``false:`` is 'false')."""
    key = _scalar(key_node, doc)
    if isinstance(key, (float, bool)) or key is None:
        key = key_node.value
    return key




def _scalar(node: ScalarNode, doc: Document) -> Any:
    """A scalar by YAML 1.2 core-schema rules (what the resolver tagged it as)."""
    value, tag = node.value, node.tag
    if node.style:  # quoted or block text is always a string
        return value
    if tag in (_STD + "int", _STD + "float"):
        digits = sum(c.isdigit() for c in value)
        if digits > MAX_NUMBER_DIGITS:
            raise InputError(f"this number has {digits:,} digits, more than the limit of {MAX_NUMBER_DIGITS} "
                             "(limit 'number digits')", _pos(doc, node),
                             hint='quote it ("...") if it is meant as text')
    try:
        if tag == _STD + "int":
            v = value.replace("_", "")
            if v.lower().startswith(("0x", "-0x", "+0x")):
                return int(v, 16)
            if v.lower().startswith(("0o", "-0o", "+0o")):
                return int(v, 8)
            if v.lower().startswith(("0b", "-0b", "+0b")):
                return int(v, 2)
            return int(v)
        if tag == _STD + "float":
            v = value.lower().replace("_", "")
            number = float(v) if v not in (".inf", "+.inf", "-.inf", ".nan") else math.inf
            if not math.isfinite(number):
                raise InputError(f"'{value}' is not a finite number; Umpire numbers are exact and finite",
                                 _pos(doc, node), hint='quote it ("...") if it is meant as text')
            return number
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
