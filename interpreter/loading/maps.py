"""A situation's board: its map (a map file or one written in the situation), and the units and markers on it.

The map is read and checked like every other file (schemas/map.schema.json, positioned errors); terrain and
feature names are checked against the ruleset's catalogues the map names; every placement must name a hex of
the map. The result is one map value (model/hexmap.py), which fills the procedure's parameters of type ``map``.
"""

from __future__ import annotations

import stat
import weakref
from collections.abc import Sequence
from pathlib import Path

from ..errors import InputError, did_you_mean
from ..model.hexmap import _widths, build_map, label_text, place
from ..model.ruleset import Ruleset
from ..model.values import Record, freeze
from ..reading.source import Document, referenced_file


def referenced_at(base: Path | str, name: str, doc: Document, path: tuple, what: str) -> Path:
    """``referenced_file`` for a name written at ``path`` in ``doc``: the document's position is looked up only
    when the file is not there (a cached document decodes its positions when first asked for one)."""
    found = Path(base) / name
    try:
        if stat.S_ISREG(found.stat().st_mode):
            return found
    except (OSError, ValueError):
        pass
    return referenced_file(base, name, doc.at(path), what)


class Places(Sequence):
    """The positions of the ``count`` items of the list at ``path`` in ``doc`` (given dice entries), each looked
    up when first asked for: only an entry that is reported needs its place."""

    def __init__(self, doc: Document, path: tuple, count: int):
        self.doc, self.path, self.size = doc, path, count

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self.size))]
        if not -self.size <= i < self.size:
            raise IndexError(i)
        return self.doc.at(self.path + (i % self.size,))


def map_params(proc) -> list[str]:
    return [p.name for p in proc.params if not isinstance(p.type, tuple) and p.type.name == "map"]


def load_board(ruleset: Ruleset, doc: Document, path: tuple, data: dict, placed: tuple | None = None) -> Record | None:
    """The map value of a situation (or test case) mapping at ``path`` in ``doc``, with its placements (from
    ``placed``, another (document, path, mapping), when they are written elsewhere: a test case that moves the
    units of the situation it reuses); None when it gives no map. Units or markers without a map are an error
    (they would have nowhere to stand)."""
    spec = data.get("map")
    pdoc, ppath, pdata = placed or (doc, path, data)
    if spec is None:
        for key in ("units", "markers"):
            if pdata.get(key):
                raise InputError(f"`{key}:` places things on a map, but this situation gives no `map:`",
                                 pdoc.key_at(ppath + (key,)), "add `map: FILE` (a map file) or write the map here")
        return None
    if isinstance(spec, str):
        from .cache import valid_document
        file = referenced_at(Path(doc.file).parent, spec, doc, path + ("map",), "map")
        board = _map_file(ruleset, valid_document(file, "map"))
    else:
        if not getattr(doc, "maps_valid", False):
            from ..reading.schema import validate_value, validator
            validate_value(spec, validator("map").schema, doc, path + ("map",), "map")
        board = _read_map(ruleset, doc, path + ("map",))
    return _place(board, pdoc, ppath, pdata)


_BOARDS: dict = {}
"""(id of a ruleset, key of a map file's content) -> (a weak reference to the ruleset, the map value): the test
cases of a file that share a map file build its map once (a map value never changes)."""
BOARDS_KEPT = 32


def _map_file(ruleset: Ruleset, doc: Document) -> Record:
    key = getattr(doc, "cache_key", None)
    if key is None:
        return _read_map(ruleset, doc, ())
    found = _BOARDS.get((id(ruleset), key))
    if found is not None and found[0]() is ruleset:
        return found[1]
    board = _read_map(ruleset, doc, ())
    if len(_BOARDS) >= BOARDS_KEPT:
        _BOARDS.clear()
    _BOARDS[(id(ruleset), key)] = (weakref.ref(ruleset), board)
    return board


def _read_map(ruleset: Ruleset, doc: Document, path: tuple) -> Record:
    data = doc.data
    for p in path:
        data = data[p]
    at = lambda p: doc.at(path + p)          # noqa: E731
    named = data.get("catalogues") or {}
    for kind, name in named.items():
        if name not in ruleset.catalogues:
            raise InputError(f"ruleset '{ruleset.id}' has no catalogue '{name}' for this map's {kind}",
                             at(("catalogues", kind)), did_you_mean(name, ruleset.catalogues)
                             or f"its catalogues: {', '.join(sorted(ruleset.catalogues)) or 'none'}")

    def check(kind, value, where):
        name = named.get(kind)
        if name is None:
            return
        entries = ruleset.catalogues[name].entries
        if value not in entries:
            raise InputError(f"'{value}' is not an entry of catalogue '{name}' (this map's {kind})", at(where),
                             did_you_mean(value, entries) or f"its entries: {', '.join(list(entries)[:12])}"
                             + (", ..." if len(entries) > 12 else ""))

    return build_map(data, at, check)


def _place(board: Record, doc: Document, path: tuple, data: dict) -> Record:
    hexes = board["hexes"]
    widths = _widths(board["boards"])
    units: list = []
    markers: list = []
    seen: dict[str, int] = {}
    for key in ("units", "markers"):
        placed = []
        for i, item in enumerate(data.get(key) or ()):
            label = label_text(item["hex"], widths)
            label = (board.get("aliases") or {}).get(label, label)    # a shared edge hex: one hex, one label
            if label not in hexes:
                raise InputError(f"hex '{label}' is not on the map, so nothing can be placed there",
                                 doc.at(path + (key, i, "hex")), did_you_mean(label, hexes) or None)
            if key == "units":
                uid = str(item["id"])
                if uid in seen:
                    raise InputError(f"unit '{uid}' is placed twice (also item {seen[uid] + 1})",
                                     doc.at(path + (key, i, "id")), "a unit stands in one hex; give each its own id")
                seen[uid] = i
            placed.append(freeze(dict(item, hex=label, **({"id": str(item["id"])} if key == "units" else {}))))
        if key == "units":
            units = placed
        else:
            markers = placed
    return place(board, tuple(units), tuple(markers))
