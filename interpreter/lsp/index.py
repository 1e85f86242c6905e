"""What the language server knows of a ruleset: where each name is defined and used, and what to show for it.

Pure Python over the checked model and the files' texts (no pygls here), so it is tested directly.
Names are procedures, tables, modifier stacks, catalogues and their entries, record types and labelled
steps. References come from the procedures' syntax trees and the stacks' expressions (exact), and from
the YAML files that name things by key (``procedure:``, ``table:``, ``stack:``, ``catalogue:``, an
entry given as a value).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import Position, UmpireError, diagnostics, warning_diagnostic
from ..model.ruleset import Ruleset
from ..reading import syntax as ast

KINDS = ("procedure", "table", "stack", "catalogue", "entry", "type", "label")

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_YAML_KEYS = {"procedure": "procedure", "table": "table", "stack": "stack", "catalogue": "catalogue",
              "replace_step": "label", "insert_before": "label", "insert_after": "label", "remove_step": "label"}


@dataclass(frozen=True)
class Span:
    """A range in a file: 1-based line, 1-based start column, end column just after it (one line)."""

    file: str
    line: int
    column: int
    end: int

    def covers(self, file: str, line: int, column: int) -> bool:
        return self.file == file and self.line == line and self.column <= column <= self.end


@dataclass
class Index:
    root: Path
    ruleset: Ruleset | None
    texts: dict[str, str]
    definitions: dict[tuple, Span] = field(default_factory=dict)
    references: dict[tuple, list[Span]] = field(default_factory=dict)

    # ---- questions an editor asks -----------------------------------------------------

    def symbol_at(self, file: str, line: int, column: int) -> tuple | None:
        """(kind, name) of the name at this place (1-based line and column), or None."""
        for key, span in self.definitions.items():
            if span.covers(file, line, column):
                return key
        for key, spans in self.references.items():
            if any(s.covers(file, line, column) for s in spans):
                return key
        word = word_at(self.text(file), line, column)
        if word is None:
            return None
        before = self.text(file).splitlines()[line - 1][:word[1] - 1] if line <= len(self.text(file).splitlines()) \
            else ""
        for kind in _context_kinds(before):
            if (kind, word[0]) in self.definitions:
                return (kind, word[0])
        return None

    def definition(self, key: tuple) -> Span | None:
        return self.definitions.get(key)

    def usages(self, key: tuple) -> list[Span]:
        return sorted(set(self.references.get(key, [])), key=lambda s: (s.file, s.line, s.column))

    def hover(self, key: tuple) -> str | None:
        r = self.ruleset
        if r is None:
            return None
        kind, name = key
        if kind == "procedure" and name in r.procedures:
            from ..loading.inputs import signature
            p = r.procedures[name]
            lines = [f"```ump\nprocedure {signature(p)}\n```"]
            if p.cite:
                lines.append(f"cites **{p.cite}**")
            if p.doc:
                lines.append(p.doc)
            return "\n\n".join(lines)
        if kind == "table" and name in r.tables:
            return _table_hover(r.tables[name])
        if kind == "stack" and name in r.stacks:
            s = r.stacks[name]
            lines = [f"**{s.name}**: {s.title}" + (f" ({s.cite})" if s.cite else ""),
                     f"params: {', '.join(s.params)}; combine: {s.combine}"]
            for m in s.modifiers:
                when = f" when `{m.text['when']}`" if "when" in m.text else ""
                lines.append(f"- `{m.id}`: `{m.text.get('value', '')}`{when}" + (f" ({m.cite})" if m.cite else ""))
            return "\n".join(lines)
        if kind == "catalogue" and name in r.catalogues:
            c = r.catalogues[name]
            names = sorted(c.entries)
            return (f"**catalogue {c.name}**" + (f" ({c.cite})" if c.cite else "") + f": {len(names)} entries\n\n"
                    + ", ".join(names[:30]) + (" ..." if len(names) > 30 else ""))
        if kind == "entry":
            cat_name, entry = name
            found = r.catalogues.get(cat_name)
            if found is None or entry not in found.entries:
                return None
            c = found
            from ..model.values import show
            fields = "\n".join(f"- {k}: `{show(v)}`" for k, v in c.entries[entry].items())
            return f"**{cat_name}[\"{entry}\"]**\n\n{fields}"
        if kind == "type" and name in r.types:
            from ..reading.syntax import type_text
            t = r.types[name]
            fields = "\n".join(f"- {f.name}: `{type_text(f.type)}`" + (" (has a default)" if f.has_default else "")
                               for f in t.fields.values())
            source = f" (defaults from catalogue {t.catalogue}, entry named by {t.key})" if t.catalogue else ""
            return f"**record type {name}**{source}\n\n{fields}"
        if kind == "label":
            return f"labelled step **@{name[1]}** of procedure {name[0]} (overlays replace, insert around or remove it)"
        return None

    def names(self, kind: str) -> list[str]:
        r = self.ruleset
        if r is None:
            return []
        things: dict = {"procedure": r.procedures, "table": r.tables, "stack": r.stacks,
                        "catalogue": r.catalogues, "type": r.types}
        return sorted(things.get(kind, {}))

    def text(self, file: str) -> str:
        if file not in self.texts:
            try:
                self.texts[file] = Path(file).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                self.texts[file] = ""
        return self.texts[file]


def _context_kinds(before: str) -> list[str]:
    """Which kinds of name fit after this text on the line, most likely first."""
    tail = before.rstrip()
    if tail.endswith("call"):
        return ["procedure"]
    if re.search(r"\b(lookup|locate)\s*\($", tail):
        return ["table"]
    if re.search(r"\b(apply|uncapped)\s*\($", tail):
        return ["stack"]
    key = re.search(r"\b(\w+)\s*:\s*$", tail)
    if key and key.group(1) in _YAML_KEYS:
        return [_YAML_KEYS[key.group(1)]]
    return ["procedure", "table", "stack", "catalogue", "type"]


def word_at(text: str, line: int, column: int) -> tuple[str, int, int] | None:
    """(word, start column, end column) of the name at this 1-based place, or None."""
    lines = text.splitlines()
    if not 1 <= line <= len(lines):
        return None
    for m in _WORD.finditer(lines[line - 1]):
        if m.start() + 1 <= column <= m.end() + 1:
            return m.group(0), m.start() + 1, m.end() + 1
    return None


def _table_hover(t) -> str:
    from ..model.tables import UNKNOWN
    from ..model.values import show

    def axis(a, what):
        heads = ", ".join("?" if h is None else show(h) for h in a.headings[:24])
        return f"{what}: {a.title} ({a.match}) [{heads}{' ...' if len(a.headings) > 24 else ''}]"

    lines = [f"**{t.name}**: {t.title}" + (f" ({t.cite})" if t.cite else "")]
    if getattr(t, "structure_unknown", False):
        return lines[0] + "\n\nthe rulebook gives neither its rows nor its columns"
    lines.append(axis(t.rows, "rows"))
    if t.columns is not None:
        lines.append(axis(t.columns, "columns"))
    lines.append(f"{t.known_count} of {t.size} cells known")
    shown = 0
    for ri, row in enumerate(t.cells):
        for ci, v in enumerate(row):
            if v is UNKNOWN or shown >= 12:
                continue
            where = show(t.rows.headings[ri]) + (f", {show(t.columns.headings[ci])}" if t.columns else "")
            source = t.sources.get((ri, ci))
            lines.append(f"- {where}: `{show(v)}`" + (f" ({source})" if source else ""))
            shown += 1
    if t.results:
        lines.append("result codes: " + ", ".join(f"`{k}` ({rc.pattern})" for k, rc in t.results.items()))
    return "\n".join(lines)


# ---- building it ------------------------------------------------------------------------

def check_folder(root: Path, texts: dict[str, str]) -> tuple[Ruleset | None, list[dict]]:
    """The ruleset at ``root`` read with these file texts in place of the disk's, checked, and its diagnostics
    (the same as ``umpire check --json`` gives): (ruleset or None, diagnostics). A procedure file whose text
    did not change is not parsed again: the parser keeps the trees it made (reading/parser.py)."""
    from ..analysis.facts import analyse
    from ..compiling.checker import check
    from ..loading.loader import read_ruleset
    texts = dict(texts)
    try:
        ruleset = read_ruleset(root, texts)
    except UmpireError as e:
        return None, diagnostics(e, texts)
    try:
        warnings = check(ruleset)
        analyse(ruleset)
    except UmpireError as e:
        return ruleset, diagnostics(e, texts)
    return ruleset, [warning_diagnostic(w) for w in warnings] + _situation_diagnostics(root, texts)


def _situation_diagnostics(root: Path, texts: dict[str, str]) -> list[dict]:
    """An open situation file checked as `umpire check` checks it (its inputs against its procedure)."""
    from ..api import load_situation
    found = []
    for file, text in texts.items():
        path = Path(file)
        if path.parent.name == "situations" and path.parent.parent == root and path.suffix in (".yaml", ".yml"):
            try:
                load_situation(path, text=text)
            except UmpireError as e:
                found += diagnostics(e, texts)
    return found


_COMPLETE_AFTER = [
    (re.compile(r"\bcall\s+\w*$"), "procedure"),
    (re.compile(r"\b(lookup|locate)\(\s*\w*$"), "table"),
    (re.compile(r"\b(apply|uncapped)\(\s*\w*$"), "stack"),
    (re.compile(r"^\s*-?\s*procedure:\s*\w*$"), "procedure"),
    (re.compile(r"^\s*-?\s*table:\s*\w*$"), "table"),
    (re.compile(r"^\s*-?\s*stack:\s*\w*$"), "stack"),
    (re.compile(r"^\s*-?\s*catalogue:\s*\w*$"), "catalogue"),
]
_ENTRY_AFTER = re.compile(r"\b(\w+)\[\"[^\"]*$")
_CODE_AFTER = re.compile(r"\.code\s*(==|!=|in)\s*\[?[^\n]*\"[^\"]*$")


def completions(index: Index, text: str, line: int, before: str, yaml: bool = False) -> list[tuple[str, str, str]]:
    """What may be written at the end of ``before`` (the line up to the cursor): (label, kind, detail).

    In a YAML file: names after ``procedure:``, ``table:``, ``stack:``, ``catalogue:``, and a catalogue's
    entries as the value of a field that names one (a ``key_of[C]`` field, or a record type's key)."""
    r = index.ruleset
    if r is None:
        return []
    if yaml:
        for pattern, kind in _COMPLETE_AFTER[3:]:
            if pattern.search(before):
                return [(n, kind, _detail(index, kind, n)) for n in index.names(kind)]
        field = _YAML_VALUE.search(before)
        catalogues = _catalogues_named_by(r, field.group(1)) if field else []
        return [(e, "entry", f"entry of catalogue {c}") for c in catalogues for e in sorted(r.catalogues[c].entries)]
    m = _ENTRY_AFTER.search(before)
    if m and m.group(1) in r.catalogues:
        return [(e, "entry", f"entry of catalogue {m.group(1)}") for e in sorted(r.catalogues[m.group(1)].entries)]
    if _CODE_AFTER.search(before):
        return sorted({(code, "code", f"result code of table {t.name}: {rc.pattern}")
                       for t in r.tables.values() for code, rc in t.results.items()})
    for pattern, kind in _COMPLETE_AFTER:
        if pattern.search(before):
            return [(n, kind, _detail(index, kind, n)) for n in index.names(kind)]
    if before.count('"') % 2:          # inside a string: no names
        return []
    found = [(w, "keyword", "keyword") for w in _KEYWORDS]
    found += [(n, "local", "in scope") for n in sorted(_locals(text, line))]
    found += [(n, "catalogue", _detail(index, "catalogue", n)) for n in index.names("catalogue")]
    return found


_YAML_VALUE = re.compile(r"(?:^|[\s{,])([A-Za-z_]\w*)\s*:\s*[\"']?[^,{}\"':]*$")


def _catalogues_named_by(r: Ruleset, field: str) -> list[str]:
    """The catalogues whose entries a record field of this name takes, in the ruleset's record types."""
    found = []
    for t in r.types.values():
        f = t.fields.get(field)
        ref = f.type if f is not None else None
        while isinstance(ref, ast.TypeRef) and ref.name == "list":
            ref = ref.item
        if isinstance(ref, ast.TypeRef) and ref.name == "key_of":
            found.append(ref.item)
        if t.catalogue and t.key == field:
            found.append(t.catalogue)
    return [c for c in dict.fromkeys(found) if c in r.catalogues]


_KEYWORDS = ("let", "set", "roll", "emit", "return", "note", "fail", "reject", "refuse", "choose", "if", "elif", "else",
             "for each", "call", "lookup", "apply", "uncapped", "locate", "cite", "with", "and", "or", "not",
             "true", "false", "null")


def _detail(index: Index, kind: str, name: str) -> str:
    r = index.ruleset
    assert r is not None        # completions() asks only with a ruleset
    if kind == "procedure":
        from ..loading.inputs import signature
        return signature(r.procedures[name])
    kinds: dict = {"table": r.tables, "stack": r.stacks, "catalogue": r.catalogues}
    thing = kinds.get(kind, {}).get(name)
    return getattr(thing, "title", None) or kind


_BINDS = re.compile(r"^\s*(?:let|roll|choose)\s+([A-Za-z_]\w*)|^\s*for each\s+([A-Za-z_]\w*)")
_HEADER = re.compile(r"^procedure\s+\w+\s*\((.*)\)")


def _locals(text: str, line: int) -> set[str]:
    """The names the procedure around this line binds above it: its parameters, lets, rolls, loop names."""
    lines = text.splitlines()[:line]
    found: set[str] = set()
    for row in reversed(lines):
        m = _BINDS.match(row)
        if m:
            found.add(m.group(1) or m.group(2))
        header = _HEADER.match(row)
        if header:
            found.update(re.findall(r"(?:^|,)\s*([A-Za-z_]\w*)\s*:", header.group(1)))
            break
    return found


def build(root: Path, ruleset: Ruleset | None, texts: dict[str, str]) -> Index:
    """The index of a ruleset already read (``ruleset`` None when it did not read: no names then)."""
    index = Index(root, ruleset, dict(texts))
    if ruleset is None:
        return index
    r = ruleset
    for name, p in r.procedures.items():
        index.definitions[("procedure", name)] = _name_span(index, p.pos, name)
        _walk_procedure(index, p.syntax, name)
    for kind, things in (("table", r.tables), ("stack", r.stacks), ("catalogue", r.catalogues),
                         ("type", r.types)):
        for name, thing in things.items():
            if thing.pos is not None:
                index.definitions[(kind, name)] = _key_span(index, thing.pos, name)
    for cname, c in r.catalogues.items():
        for entry, pos in c.entry_positions.items():
            index.definitions[("entry", (cname, entry))] = _key_span(index, pos, entry)
    for s in r.stacks.values():
        for m in s.modifiers:
            for e in (m.value, m.when, m.times):
                if e is not None:
                    _walk(index, e)
    _yaml_references(index)
    return index


def _line(index: Index, file: str, line: int) -> str:
    lines = index.text(file).splitlines()
    return lines[line - 1] if 1 <= line <= len(lines) else ""


def _name_span(index: Index, pos: Position, name: str) -> Span:
    """The span of ``name`` at or after ``pos`` on its line (a node starts at its keyword: ``call NAME``)."""
    text = _line(index, pos.file, pos.line)
    m = re.compile(r"(?<![\w\"-])" + re.escape(name) + r"(?![\w\"-])").search(text, max(pos.column - 1, 0))
    if m is None:
        return Span(pos.file, pos.line, pos.column, pos.column + len(name))
    return Span(pos.file, pos.line, m.start() + 1, m.end() + 1)


def _key_span(index: Index, pos: Position, name: str) -> Span:
    """The span of a YAML key ``name`` whose value is at ``pos`` (the key is on that line or one above it)."""
    for line in range(pos.line, max(pos.line - 3, 0), -1):
        text = _line(index, pos.file, line)
        m = re.search(r"(^|[\s{,])[\"']?(" + re.escape(name) + r")[\"']?\s*:", text)
        if m:
            return Span(pos.file, line, m.start(2) + 1, m.end(2) + 1)
    return Span(pos.file, pos.line, pos.column, pos.column + len(name))


def _add(index: Index, key: tuple, span: Span) -> None:
    index.references.setdefault(key, []).append(span)


def _walk_procedure(index: Index, p: ast.Procedure, name: str) -> None:
    for param in p.params:
        _type_refs(index, param.type, param.pos)
        if param.default is not None:
            _walk(index, param.default)
    for statement in _statements(p.body):
        if getattr(statement, "label", None):
            span = _label_span(index, statement.pos, statement.label)
            if span is not None:
                index.definitions[("label", (name, statement.label))] = span
        _walk(index, statement)


def _statements(body):
    for s in body or ():
        yield s
        if isinstance(s, ast.If):
            for b in s.branches:
                yield from _statements(b.body)
        elif isinstance(s, ast.ForEach):
            yield from _statements(s.body)


def _label_span(index: Index, pos: Position, label: str) -> Span | None:
    for line in range(pos.line, max(pos.line - 4, 0), -1):
        text = _line(index, pos.file, line)
        at = text.find("@" + label)
        if at >= 0:
            return Span(pos.file, line, at + 2, at + 2 + len(label))
    return None


def _type_refs(index: Index, ref, pos: Position | None) -> None:
    if pos is None or isinstance(ref, tuple) or ref is None:
        return
    if ref.name == "list":
        _type_refs(index, ref.item, pos)
    elif ref.name == "key_of":
        _add(index, ("catalogue", ref.item), _name_span(index, pos, ref.item))
    elif index.ruleset is not None and ref.name in index.ruleset.types:
        text = _line(index, pos.file, pos.line)
        m = re.compile(r":\s*(list\[)?(" + re.escape(ref.name) + r")\b").search(text, max(pos.column - 1, 0))
        if m:
            _add(index, ("type", ref.name), Span(pos.file, pos.line, m.start(2) + 1, m.end(2) + 1))


def _walk(index: Index, node) -> None:
    """Every reference inside a statement or an expression."""
    r = index.ruleset
    assert r is not None        # build() walks only a ruleset that read
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, (tuple, list)):
            stack.extend(n)
            continue
        if not isinstance(n, ast.Node):
            continue
        pos = getattr(n, "pos", None)
        if isinstance(pos, Position) and pos.line:
            if isinstance(n, ast.Call):
                _add(index, ("procedure", n.procedure), _name_span(index, pos, n.procedure))
            elif isinstance(n, (ast.Lookup, ast.Locate)):
                _add(index, ("table", n.table), _name_span(index, pos, n.table))
            elif isinstance(n, ast.Apply):
                _add(index, ("stack", n.stack), _name_span(index, pos, n.stack))
            elif isinstance(n, ast.Name) and n.name in r.catalogues:
                _add(index, ("catalogue", n.name), _name_span(index, pos, n.name))
            elif isinstance(n, ast.Index) and isinstance(n.target, ast.Name) and n.target.name in r.catalogues \
                    and isinstance(n.index, ast.Literal) and isinstance(n.index.value, str):
                ipos = n.index.pos
                if isinstance(ipos, Position) and ipos.line:
                    text = _line(index, ipos.file, ipos.line)
                    at = text.find(n.index.value, max(ipos.column - 1, 0))
                    if at >= 0:
                        _add(index, ("entry", (n.target.name, n.index.value)),
                             Span(ipos.file, ipos.line, at + 1, at + 1 + len(n.index.value)))
        for f in n._fields:
            if f != "pos":
                stack.append(getattr(n, f))


_YAML_NAME = re.compile(r"^(?P<indent>\s*-?\s*)(?P<key>procedure|table|stack|catalogue|replace_step|insert_before|"
                        r"insert_after|remove_step)\s*:\s*[\"']?(?P<name>[A-Za-z_][A-Za-z0-9_]*)[\"']?\s*(#.*)?$")


def _yaml_references(index: Index) -> None:
    """``procedure: NAME`` and the like in situations, tests and overlays under the ruleset folder."""
    for path in sorted(index.root.rglob("*.y*ml")):
        if path.name == "ruleset.yaml" or path.parent.name in ("tables", "stacks", "catalogues"):
            continue
        file = str(path)
        procedure = None
        for number, text in enumerate(index.text(file).splitlines(), 1):
            m = _YAML_NAME.match(text)
            if not m:
                continue
            kind = _YAML_KEYS[m["key"]]
            name = m["name"]
            span = Span(file, number, m.start("name") + 1, m.end("name") + 1)
            if kind == "procedure":
                procedure = name
            if kind == "label":
                if procedure is not None:
                    _add(index, ("label", (procedure, name)), span)
            else:
                _add(index, (kind, name), span)
