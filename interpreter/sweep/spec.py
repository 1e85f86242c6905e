"""A sweep spec, read and checked before any cell runs.

Every problem is an ``InputError`` at the spec's own line and column: the schema's findings, a base
situation or overlay that does not exist, an axis path into an input the procedure does not take, an
axis value the procedure refuses (a catalogue entry misspelt: "did you mean"), a listed row that
names an axis twice or misses one, and a grid larger than the cap.
"""

from __future__ import annotations

import copy
import itertools
import math
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InputError, InputErrors, did_you_mean
from ..reading.source import Document, Position

MAX_CELLS = 10_000
"""Most tasks (cells x overlays) a sweep runs unless raised (``max_cells:`` or ``--max-cells``)."""


@dataclass
class Axis:
    name: str
    paths: list[tuple]                  # each a path into the situation's data: ("inputs", "unit", "terrain")
    values: list
    labels: list
    position: Position
    path_position: Position
    value_positions: list = field(default_factory=list)


@dataclass
class Variant:
    """One rule set to compare: the ruleset with these overlays (none for the ruleset as it is)."""

    name: str
    overlays: tuple                     # overlay files, in order (the base situation's own first)
    shown: tuple                        # the overlays as the spec names them


@dataclass
class Spec:
    file: str
    doc: Document
    name: str
    title: str | None
    root: Path                          # the ruleset folder
    situation_file: str                 # what each cell's situation is read as (positions, relative names)
    base: dict                          # the base situation's data (ruleset, procedure, inputs, dice, choices)
    axes: list[Axis]
    cells: list[tuple]                  # each cell's value index on every axis
    variants: list[Variant]
    question: dict                      # {"odds": {...}} or {"simulate": {...}}, defaults filled in
    heatmap: dict | None

    @property
    def tasks(self) -> int:
        return len(self.cells) * len(self.variants)


def load_spec(path, text: str | None = None, max_cells: int | None = None, roots=None) -> Spec:
    """Read and check a sweep spec (or ``text`` as if it were that file); nothing is run but the checks.

    ``roots`` (ruleset folders), when given, are the only rulesets the spec may use, and the only places
    its overlays and base situation may come from (the workbench's served rulesets)."""
    from ..api import load_ruleset
    from ..loading.cache import valid_document
    from ..loading.loader import find_root
    from ..reading.source import referenced_file
    doc = valid_document(path, "sweep", text)
    data = doc.data
    here = Path(path).parent

    # the base situation: a file, or ruleset + procedure + inputs here
    if "situation" in data:
        for key in ("ruleset", "procedure", "inputs", "choices"):
            if key in data:
                raise InputError(f"'{key}' goes with a base situation given here, not with 'situation'",
                                 doc.key_at((key,)), "name the base situation (situation:) or give ruleset, "
                                 "procedure and inputs, not both")
        if roots is not None and not _inside(here / data["situation"], roots):
            raise InputError(f"situation '{data['situation']}' is outside the open rulesets", doc.at(("situation",)),
                             "name a situation of an open ruleset")
        sit_path = referenced_file(here, data["situation"], doc.at(("situation",)), "situation")
        sit_doc = valid_document(sit_path, "situation")
        base = copy.deepcopy(sit_doc.data)
        situation_file = str(sit_path)
        ruleset_path = sit_path.parent / base["ruleset"]
        where = doc.at(("situation",))
        own = tuple(str(referenced_file(sit_path.parent, w, sit_doc.at(("with", i)), "overlay"))
                    for i, w in enumerate(base.pop("with", None) or ()))
    else:
        missing = [k for k in ("ruleset", "procedure") if k not in data]
        if missing:
            raise InputError(f"a sweep needs a base situation: 'situation: FILE', or 'ruleset' and 'procedure' "
                             f"(missing: {', '.join(missing)})", doc.at(()),
                             "add situation: ../situations/NAME.yaml, or ruleset: and procedure: with inputs:")
        base = {k: copy.deepcopy(data[k]) for k in ("ruleset", "procedure", "inputs", "choices") if k in data}
        situation_file = str(path)
        ruleset_path = here / data["ruleset"]
        where = doc.at(("ruleset",))
        own = ()
    try:
        root = find_root(ruleset_path)
    except InputError as e:
        raise InputError(e.message, where, e.hint) from None
    base["ruleset"] = str(root)
    if roots is not None:
        _within_roots(doc, root, roots, own, data)

    variants = _variants(doc, here, own, roots)
    rulesets = [load_ruleset(root, v.overlays) for v in variants]   # each overlay checked, in its own file
    axes = [_axis(doc, i, a, rulesets[0]) for i, a in enumerate(data["axes"])]
    seen: dict[str, int] = {}
    for i, a in enumerate(axes):
        if a.name in seen:
            raise InputError(f"axis '{a.name}' is named twice (axes {seen[a.name] + 1} and {i + 1})",
                             doc.at(("axes", i, "name")), "give each axis its own name")
        seen[a.name] = i
    cells = _cells(doc, data, axes, len(variants), max_cells or data.get("max_cells") or MAX_CELLS,
                   max_cells is not None)
    question = _question(data["question"])
    for axis in axes:
        _check_axis(doc, base, axis, situation_file, rulesets)
    heatmap = data.get("heatmap")
    if heatmap is not None:
        _check_heatmap(doc, heatmap, axes)
    return Spec(str(path), doc, data.get("sweep") or Path(path).stem, data.get("title"), root, situation_file,
                base, axes, cells, variants, question, heatmap)


def _inside(path: Path, roots) -> bool:
    return any(path.resolve().is_relative_to(Path(r).resolve()) for r in roots)


def _within_roots(doc, root, roots, own, data) -> None:
    allowed = [Path(r).resolve() for r in roots]
    if Path(root).resolve() not in allowed:
        raise InputError("this sweep names a ruleset that is not open here", doc.at(("situation",))
                         if "situation" in data else doc.at(("ruleset",)),
                         "open rulesets: " + ", ".join(p.name for p in allowed))
    for w in own:
        if not _inside(Path(w), roots):
            raise InputError(f"the base situation's overlay '{w}' is outside the open rulesets",
                             doc.at(("situation",)))


def _variants(doc, here: Path, own: tuple, roots) -> list[Variant]:
    from ..reading.source import referenced_file
    out: list[Variant] = []
    for i, entry in enumerate(doc.data.get("overlays") or [None]):
        if entry is None or entry == "none":
            names: list = []
        else:
            names = [entry] if isinstance(entry, str) else list(entry)
        files = []
        for j, name in enumerate(names):
            at = ("overlays", i) if isinstance(entry, str) else ("overlays", i, j)
            if roots is not None and not _inside(here / name, roots):
                raise InputError(f"overlay '{name}' is outside the open rulesets", doc.at(at))
            found = referenced_file(here, name, doc.at(at), "overlay")
            files.append(str(found))
        label = "+".join(Path(n).stem for n in names) or "none"
        if any(v.name == label for v in out):
            label = f"{label} ({i + 1})"
        out.append(Variant(label, own + tuple(files), tuple(names)))
    return out


def _axis(doc: Document, i: int, a: dict, ruleset) -> Axis:
    at = ("axes", i)
    paths_text = a["path"] if isinstance(a["path"], list) else [a["path"]]
    paths = [tuple(int(p) if p.isdigit() else p for p in t.split(".")) for t in paths_text]
    kinds = [k for k in ("values", "range", "catalogue") if k in a]
    if len(kinds) > 1:
        raise InputError(f"axis '{a['name']}' gives both {kinds[0]} and {kinds[1]}", doc.key_at(at + (kinds[1],)),
                         "an axis takes its values from one of values, range or catalogue")
    if "entries" in a and "catalogue" not in a:
        raise InputError("'entries' picks entries of a catalogue: add 'catalogue: NAME'", doc.key_at(at + ("entries",)))
    positions: list = []
    if "values" in a:
        values = list(a["values"])
        positions = [doc.at(at + ("values", j)) for j in range(len(values))]
    elif "range" in a:
        r = a["range"]
        step = r.get("step", 1)
        if (r["to"] - r["from"]) * step < 0:
            raise InputError(f"range from {r['from']} to {r['to']} by {step} is empty", doc.at(at + ("range",)),
                             "swap from and to, or change the sign of step")
        count = (r["to"] - r["from"]) // step + 1
        if count > MAX_CELLS:
            raise InputError(f"range from {r['from']} to {r['to']} has {count:,} values, more than {MAX_CELLS:,}",
                             doc.at(at + ("range",)))
        values = list(range(r["from"], r["to"] + (1 if step > 0 else -1), step))
        positions = [doc.at(at + ("range",))] * len(values)
    elif "catalogue" in a:
        name = a["catalogue"]
        catalogue = ruleset.catalogues.get(name)
        if catalogue is None:
            raise InputError(f"ruleset '{ruleset.id}' has no catalogue '{name}' (it has: "
                             f"{', '.join(sorted(ruleset.catalogues)) or 'none'})", doc.at(at + ("catalogue",)),
                             did_you_mean(name, ruleset.catalogues))
        if "entries" in a:
            values = list(a["entries"])
            positions = [doc.at(at + ("entries", j)) for j in range(len(values))]
            for v, pos in zip(values, positions):
                if v not in catalogue.entries:
                    raise InputError(f"'{v}' is not an entry of catalogue '{name}'", pos,
                                     did_you_mean(v, catalogue.entries))
        else:
            values = list(catalogue.entries)
            positions = [doc.at(at + ("catalogue",))] * len(values)
    else:
        values, positions = [], []      # listed rows give them
    labels = a.get("labels")
    if labels is not None:
        if len(labels) != len(values):
            raise InputError(f"axis '{a['name']}' has {len(values)} values but {len(labels)} labels",
                             doc.at(at + ("labels",)), "give one label per value, in the same order")
    else:
        labels = [label_of(v) for v in values]
    if len(set(map(str, labels))) != len(labels):
        raise InputError(f"axis '{a['name']}' has two values with the same label", doc.at(at),
                         "give labels: one distinct label per value")
    return Axis(a["name"], paths, values, list(labels), doc.at(at), doc.at(at + ("path",)), positions)


def label_of(value) -> str | int | float | bool:
    """How a value is named in rows and on a heat map's axes: scalars as they are, others as compact JSON."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None or isinstance(value, (str, int, float)):
        return "null" if value is None else value
    import json
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


def _cells(doc: Document, data: dict, axes: list[Axis], variants: int, cap: int, from_command: bool) -> list[tuple]:
    rows = data.get("rows")
    if rows is None:
        for i, a in enumerate(axes):
            if not a.values:
                raise InputError(f"axis '{a.name}' has no values: give values, range or catalogue "
                                 "(or list the cells under rows:)", doc.at(("axes", i)))
        count = math.prod(len(a.values) for a in axes)
    else:
        count = len(rows)
    if count * variants > cap:
        raise InputError(f"this sweep has {count:,} cells x {variants} overlay set{'s' if variants != 1 else ''} "
                         f"= {count * variants:,} tasks, more than the cap of {cap:,}",
                         doc.at(("rows",)) if rows is not None else doc.at(("axes",)),
                         "raise the cap with --max-cells N" + ("" if from_command else " (or max_cells: in the spec)")
                         + ", or vary fewer values")
    if rows is None:
        return list(itertools.product(*(range(len(a.values)) for a in axes)))
    names = [a.name for a in axes]
    out = []
    for r, row in enumerate(rows):
        for key in row:
            if key not in names:
                raise InputError(f"row {r + 1} names '{key}', which is not an axis (axes: {', '.join(names)})",
                                 doc.key_at(("rows", r, key)), did_you_mean(key, names))
        cell = []
        for a in axes:
            if a.name not in row:
                raise InputError(f"row {r + 1} gives no value for axis '{a.name}'", doc.at(("rows", r)),
                                 "each row gives every axis its value")
            value, pos = row[a.name], doc.at(("rows", r, a.name))
            if a.values and value not in a.values:
                raise InputError(f"row {r + 1}: {label_of(value)!r} is not one of axis '{a.name}''s values",
                                 pos, did_you_mean(str(value), map(str, a.labels)))
            if value not in a.values:
                a.values.append(value)
                a.labels.append(label_of(value))
                a.value_positions.append(pos)
            cell.append(a.values.index(value))
        out.append(tuple(cell))
    return out


def _question(q: dict) -> dict:
    if "odds" in q:
        o = q["odds"]
        return {"odds": {"by": list(o.get("by") or []), "all_dice": o.get("all_dice", True),
                         "budget": o.get("budget")}}
    s = q["simulate"]
    return {"simulate": {"by": list(s.get("by") or []), "runs": s["runs"], "seed": s.get("seed", 0),
                         "all_dice": s.get("all_dice", True)}}


def set_path(data: dict, path: tuple, value, pos: Position | None = None) -> None:
    """Put ``value`` at ``path`` in the situation's data, making the mappings on the way; a list index
    must be one the base situation has."""
    node = data
    for depth, key in enumerate(path[:-1]):
        nxt = path[depth + 1]
        if isinstance(node, list):
            if not isinstance(key, int) or key >= len(node):
                raise InputError(f"{_words(path[:depth])} has {len(node)} item{'s' if len(node) != 1 else ''}: "
                                 f"no item {key} to set", pos, "index a list from 0, within the base situation")
            node = node[key]
            continue
        if not isinstance(node, dict):
            raise InputError(f"{_words(path[:depth])} is not a mapping or a list: cannot set {_words(path)}", pos)
        if key not in node or node[key] is None:
            node[key] = [] if isinstance(nxt, int) else {}
        node = node[key]
    last = path[-1]
    if isinstance(node, list):
        if not isinstance(last, int) or last >= len(node):
            raise InputError(f"{_words(path[:-1])} has {len(node)} item{'s' if len(node) != 1 else ''}: "
                             f"no item {last} to set", pos, "index a list from 0, within the base situation")
        node[last] = copy.deepcopy(value)
    elif isinstance(node, dict):
        node[last] = copy.deepcopy(value)
    else:
        raise InputError(f"{_words(path[:-1])} is not a mapping or a list: cannot set {_words(path)}", pos)


def _words(path: tuple) -> str:
    return ".".join(map(str, path)) or "the situation"


def cell_data(spec: Spec, cell: tuple) -> dict:
    """The situation's data for one cell: the base with every axis's value put in place."""
    data = copy.deepcopy(spec.base)
    for axis, j in zip(spec.axes, cell):
        for p in axis.paths:
            set_path(data, p, axis.values[j], axis.path_position)
    return data


def _check_axis(doc: Document, base: dict, axis: Axis, situation_file: str, rulesets: list) -> None:
    """Every value of the axis, put into the base situation alone, must be an input the procedure takes:
    an error points at the axis's path (an input or field the procedure does not have) or at the value."""
    from ..api import situation_from
    for j, value in enumerate(axis.values):
        data = copy.deepcopy(base)
        for p in axis.paths:
            set_path(data, p, value, axis.path_position)
        for ruleset in rulesets:
            try:
                situation_from(Document(situation_file, data), (), data, ruleset)
            except InputError as e:
                errors = e.errors if isinstance(e, InputErrors) else [e]
                first = errors[0]
                about_path = first.message.startswith(("unknown key", "unknown input", "procedure"))
                where = axis.path_position if about_path else (
                    axis.value_positions[j] if j < len(axis.value_positions) else axis.position)
                what = first.message if about_path else \
                    f"axis '{axis.name}' value {label_of(value)!r}: {first.message}"
                raise InputError(what, where, first.hint) from None


def _check_heatmap(doc: Document, heatmap: dict, axes: list[Axis]) -> None:
    names = [a.name for a in axes]
    for key in ("x", "y"):
        if heatmap[key] not in names:
            raise InputError(f"heatmap {key} '{heatmap[key]}' is not an axis (axes: {', '.join(names)})",
                             doc.at(("heatmap", key)), did_you_mean(heatmap[key], names))
    if heatmap["x"] == heatmap["y"]:
        raise InputError("heatmap x and y are the same axis", doc.at(("heatmap", "y")), "choose two axes")
    for key, value in (heatmap.get("where") or {}).items():
        if key not in names:
            raise InputError(f"heatmap where names '{key}', which is not an axis", doc.key_at(("heatmap", "where", key)),
                             did_you_mean(key, names))
        axis = axes[names.index(key)]
        if value not in axis.values and value not in axis.labels:
            raise InputError(f"{label_of(value)!r} is not a value of axis '{key}'", doc.at(("heatmap", "where", key)),
                             did_you_mean(str(value), map(str, axis.labels)))
