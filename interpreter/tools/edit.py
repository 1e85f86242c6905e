"""Changing one value in a YAML file without touching anything else.

``umpire set FILE PATH VALUE`` finds the scalar at PATH with ruamel.yaml's
event parser (which knows each scalar's exact start and end offsets), splices
the new text in, and validates the whole result before writing. Comments,
key order, quoting style, blank lines: every byte outside the replaced
scalar stays as it was. If the new file would be invalid, nothing is written.

The file is checked as its kind is used: a ruleset file with its whole ruleset, a
situation as ``resolve`` reads it (procedure, inputs, choices and given dice). The
write is atomic (a temporary file in the same folder, renamed over the original,
with the original's permissions), so an interrupted ``set`` never leaves half a file.
"""

from __future__ import annotations

import json
import os
import re
import stat
import tempfile
from pathlib import Path

from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError
from ruamel.yaml.events import (
    AliasEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
)

from ..errors import InputError, Position, did_you_mean
from ..reading.source import decode_text, read_bytes

_PLAIN_SAFE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_ .+/()-]*$")


def parse_path(text: str) -> list[str]:
    """'stacks.ift_drm.modifiers.target_tem.value' -> its parts; [n] and quoted parts also work."""
    parts = []
    for m in re.finditer(r'"([^"]*)"|\[([^\]]*)\]|([^.\[\]"]+)', text):
        parts.append(next(g for g in m.groups() if g is not None))
    if not parts:
        raise InputError(f"'{text}' is not a path; write keys separated by dots, e.g. stacks.ift_drm.limits.max")
    return parts


def yaml_scalar(value_text: str) -> str:
    """The text to write for a value given on the command line (a YAML/JSON scalar or plain text)."""
    v = value_text.strip()
    if re.fullmatch(r"-?\d+", v) or v in ("true", "false", "null") or re.fullmatch(r"-?\d+\.\d+", v):
        return v
    if v.startswith('"') and v.endswith('"'):
        return v
    if _PLAIN_SAFE.match(v) and not v.endswith(" ") and v.lower() not in ("yes", "no", "on", "off", "~"):
        return v
    return json.dumps(v, ensure_ascii=False)


def locate_scalar(text: str, parts: list[str], file: str) -> tuple[int, int, str]:
    """(start offset, end offset, style) of the scalar at the path; raises a clear error if it is not there."""
    yaml = YAML(typ="rt")
    try:
        events = list(yaml.parse(text))
    except YAMLError as e:
        raise InputError(f"YAML syntax: {e}", Position(file, 1, 1)) from None

    def skip_node(i: int) -> int:
        """Index after the node starting at events[i]."""
        depth = 0
        while True:
            e = events[i]
            if isinstance(e, (MappingStartEvent, SequenceStartEvent)):
                depth += 1
            elif isinstance(e, (MappingEndEvent, SequenceEndEvent)):
                depth -= 1
            i += 1
            if depth == 0:
                return i

    # find the document's root node
    i = next(k for k, e in enumerate(events) if isinstance(e, (MappingStartEvent, SequenceStartEvent, ScalarEvent)))
    walked = []
    for part in parts:
        node = events[i]
        walked.append(part)
        where = ".".join(walked)
        if isinstance(node, MappingStartEvent):
            i += 1
            keys = []
            found = False
            while not isinstance(events[i], MappingEndEvent):
                key = events[i]
                keys.append(getattr(key, "value", "?"))
                if isinstance(key, ScalarEvent) and key.value == part:
                    i += 1
                    found = True
                    break
                i = skip_node(i)      # the key
                i = skip_node(i)      # its value
            if not found:
                raise InputError(f"there is no key '{part}' at {where}; `umpire set` changes existing values",
                                 Position(file, node.start_mark.line + 1, node.start_mark.column + 1),
                                 did_you_mean(part, keys) or f"keys here: {', '.join(map(str, keys))}")
        elif isinstance(node, SequenceStartEvent):
            i += 1
            items = []
            while not isinstance(events[i], SequenceEndEvent):
                items.append(i)
                i = skip_node(i)
            chosen = None
            if part.lstrip("-").isdigit():
                k = int(part)
                if -len(items) <= k < len(items):
                    chosen = items[k]
            else:  # a list of mappings: pick the item whose id is this part
                for start in items:
                    if isinstance(events[start], MappingStartEvent):
                        j = start + 1
                        while not isinstance(events[j], MappingEndEvent):
                            if isinstance(events[j], ScalarEvent) and events[j].value == "id" and \
                                    isinstance(events[j + 1], ScalarEvent) and events[j + 1].value == part:
                                chosen = start
                                break
                            j = skip_node(j)
                            j = skip_node(j)
                    if chosen is not None:
                        break
            if chosen is None:
                raise InputError(f"no item '{part}' at {where} (the list has {len(items)} items; use an index "
                                 "or an item's id)", Position(file, node.start_mark.line + 1, node.start_mark.column + 1))
            i = chosen
        else:
            raise InputError(f"{'.'.join(walked[:-1]) or 'the top'} is a single value, so it has no '{part}'",
                             Position(file, node.start_mark.line + 1, node.start_mark.column + 1))
    node = events[i]
    if isinstance(node, AliasEvent):
        raise InputError("that value is an alias (*name); change the anchored value instead",
                         Position(file, node.start_mark.line + 1, node.start_mark.column + 1))
    if not isinstance(node, ScalarEvent):
        raise InputError(f"{'.'.join(parts)} is a {'mapping' if isinstance(node, MappingStartEvent) else 'list'}, "
                         "not a single value; name one of its values", Position(file, node.start_mark.line + 1,
                                                                                 node.start_mark.column + 1))
    return node.start_mark.index, node.end_mark.index, node.style or ""


def set_value(file: str, path_text: str, value_text: str, validate_fn, notes: list | None = None) -> tuple[str, str]:
    """Change one scalar in place. ``validate_fn(new_text)`` raises InputError if the result is invalid.

    Returns (old text, new text) of the scalar. Nothing is written when validation fails. What the user should
    know about the write (a hard link it breaks) is added to ``notes``.
    """
    p = Path(file)
    raw = read_bytes(p)
    text = decode_text(raw, file)
    start, end, style = locate_scalar(text, parse_path(path_text), file)
    old = text[start:end]
    if style in ("|", ">"):
        raise InputError("that value is a block of text (| or >); edit it in the file", Position(file))
    new_scalar = yaml_scalar(value_text)
    text_value = value_text[1:-1] if new_scalar.startswith('"') and value_text.startswith('"') else value_text
    if style == '"':      # keep the quoting the file used for this value
        new_scalar = json.dumps(text_value, ensure_ascii=False)
    elif style == "'":
        new_scalar = "'" + text_value.replace("'", "''") + "'"
    new_text = text[:start] + new_scalar + text[end:]
    validate_fn(new_text)
    # keep the file's own line endings and encoding: only the scalar's bytes change
    found = write_atomically(p, raw[:len(text[:start].encode("utf-8"))] + new_scalar.encode("utf-8")
                             + raw[len(text[:end].encode("utf-8")):])
    if notes is not None:
        notes.extend(found)
    return old, new_scalar


def write_atomically(p: Path, data: bytes) -> list[str]:
    """Replace a file's content all at once: a temporary file in the same folder, renamed over it.

    The file keeps its permissions and its owner and group; a read-only file is refused rather than
    replaced, as is anything but a regular file, and one whose owner cannot be kept (nothing is written). A
    symbolic link is followed (the file it points to changes, the link stays). Returns notes for the user:
    a file with other hard links is replaced by a new file, so its other names keep the old content.
    """
    target = p.resolve()
    try:
        st = target.stat()
    except OSError as e:
        raise InputError(f"cannot write {p}: {e.strerror or e}") from None
    if not stat.S_ISREG(st.st_mode):
        from ..reading.source import file_kind
        raise InputError(f"{p} is {file_kind(st.st_mode)}, not a regular file; nothing was written")
    mode = stat.S_IMODE(st.st_mode)
    if not mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH):
        raise InputError(f"{p} is read-only; nothing was written", hint="make it writable first (chmod u+w)")
    notes = []
    if st.st_nlink > 1:
        notes.append(f"{p} had {st.st_nlink - 1} other hard link(s): the change is a new file under this name, "
                     "so the other names keep the old content")
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        if hasattr(os, "chown"):
            tst = os.stat(tmp)
            if (tst.st_uid, tst.st_gid) != (st.st_uid, st.st_gid):
                try:
                    os.chown(tmp, st.st_uid, st.st_gid)
                except OSError:
                    raise InputError(f"cannot write {p} and keep its owner and group (uid {st.st_uid}, gid "
                                     f"{st.st_gid}): the change would give the file to you; nothing was written",
                                     hint="run as the file's owner, or copy the file and change the copy") from None
                os.chmod(tmp, mode)      # chown may clear set-id bits
        os.replace(tmp, target)
        tmp = None
    except PermissionError:
        raise InputError(f"cannot write {p}: permission denied (the folder must be writable too, for the "
                         "temporary file the change is written to first); nothing was written") from None
    except OSError as e:
        raise InputError(f"cannot write {p}: {e.strerror or e}; nothing was written") from None
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
    return notes
