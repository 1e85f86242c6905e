"""``umpire lsp``: the language server (pygls over stdio) for .ump procedures and a ruleset's YAML files.

Diagnostics are the checker's own (``index.check_folder``: the codes, messages and hints of ``umpire check
--json``), published a moment after the author stops typing; a procedure file whose text is unchanged is
not parsed again (the parser keeps its trees). Hover, go to definition, find references and completion read the index of the last
ruleset that read; a did-you-mean hint with one candidate offers a quick fix.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path

from .. import __version__
from .index import Index, Span, build, check_folder, completions

DEBOUNCE_SECONDS = 0.3
"""How long the server waits after the last change before checking the ruleset again."""

_ONE_CANDIDATE = re.compile(r"^did you mean '([^']+)'\?$")

_KINDS = {"procedure": lsp.CompletionItemKind.Function, "table": lsp.CompletionItemKind.Struct,
          "stack": lsp.CompletionItemKind.Class, "catalogue": lsp.CompletionItemKind.Module,
          "entry": lsp.CompletionItemKind.EnumMember, "code": lsp.CompletionItemKind.Constant,
          "keyword": lsp.CompletionItemKind.Keyword, "local": lsp.CompletionItemKind.Variable}


class UmpireServer(LanguageServer):
    def __init__(self):
        super().__init__("umpire", __version__, text_document_sync_kind=lsp.TextDocumentSyncKind.Incremental)
        self.indexes: dict[Path, Index] = {}
        self.pending: dict[Path, asyncio.Task] = {}
        self.published: dict[Path, set[str]] = {}

    # ---- files and rulesets --------------------------------------------------------------

    def root_of(self, uri: str) -> Path | None:
        path = to_fs_path(uri)
        if path is None:
            return None
        folder = Path(path).resolve().parent
        for candidate in (folder, *folder.parents):
            if (candidate / "ruleset.yaml").is_file():
                return candidate
        return None

    def open_texts(self, root: Path) -> dict[str, str]:
        texts = {}
        for uri, doc in self.workspace.text_documents.items():
            path = to_fs_path(uri)
            if path and Path(path).resolve().is_relative_to(root):
                texts[str(Path(path).resolve())] = doc.source
        return texts

    def refresh(self, root: Path) -> None:
        texts = self.open_texts(root)
        ruleset, found = check_folder(root, texts)
        if ruleset is not None or root not in self.indexes:
            self.indexes[root] = build(root, ruleset, texts)
        else:   # keep the names of the last ruleset that read, with the new texts
            old = self.indexes[root]
            self.indexes[root] = build(root, old.ruleset, texts)
        self.publish(root, found)

    def publish(self, root: Path, found: list[dict]) -> None:
        by_file: dict[str, list[lsp.Diagnostic]] = {}
        for d in found:
            file = d.get("file") or str(root / "ruleset.yaml")
            by_file.setdefault(str(Path(file).resolve()), []).append(to_lsp(d))
        for file in (self.published.get(root, set()) | set(self.open_texts(root))) - set(by_file):
            by_file[file] = []          # cleared, and an open file with nothing to say hears so
        for file, diags in by_file.items():
            self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=from_fs_path(file),
                                                                                diagnostics=diags))
        self.published[root] = {f for f, d in by_file.items() if d}

    def schedule(self, uri: str, delay: float = DEBOUNCE_SECONDS) -> None:
        root = self.root_of(uri)
        if root is None:
            return
        task = self.pending.pop(root, None)
        if task is not None:
            task.cancel()

        async def later():
            await asyncio.sleep(delay)
            self.refresh(root)
        self.pending[root] = asyncio.ensure_future(later())

    def index_for(self, uri: str) -> Index | None:
        root = self.root_of(uri)
        if root is None:
            return None
        if root not in self.indexes:
            self.refresh(root)
        return self.indexes[root]


def to_lsp(d: dict) -> lsp.Diagnostic:
    line = max((d.get("line") or 1) - 1, 0)
    column = max((d.get("column") or 1) - 1, 0)
    end = d.get("end")
    end_pos = lsp.Position(end["line"] - 1, end["column"] - 1) if end else lsp.Position(line, column + 1)
    message = d["message"] + (f"\nhint: {d['hint']}" if d.get("hint") else "")
    severity = {"error": lsp.DiagnosticSeverity.Error, "warning": lsp.DiagnosticSeverity.Warning}.get(
        str(d.get("severity")), lsp.DiagnosticSeverity.Information)
    return lsp.Diagnostic(range=lsp.Range(lsp.Position(line, column), end_pos), message=message,
                          severity=severity, code=d.get("code"), source="umpire",
                          data={"hint": d.get("hint")})


def _span_location(span: Span) -> lsp.Location:
    return lsp.Location(uri=from_fs_path(span.file),
                        range=lsp.Range(lsp.Position(span.line - 1, span.column - 1),
                                        lsp.Position(span.line - 1, span.end - 1)))


server = UmpireServer()


def _file(uri: str) -> str:
    return str(Path(to_fs_path(uri) or uri).resolve())


@server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: UmpireServer, params: lsp.DidOpenTextDocumentParams):
    ls.schedule(params.text_document.uri, 0)


@server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: UmpireServer, params: lsp.DidChangeTextDocumentParams):
    ls.schedule(params.text_document.uri)


@server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: UmpireServer, params: lsp.DidSaveTextDocumentParams):
    ls.schedule(params.text_document.uri, 0)


def _symbol(ls: UmpireServer, uri: str, position: lsp.Position):
    index = ls.index_for(uri)
    if index is None:
        return None, None
    doc = ls.workspace.get_text_document(uri)
    index.texts[_file(uri)] = doc.source
    return index, index.symbol_at(_file(uri), position.line + 1, position.character + 1)


@server.feature(lsp.TEXT_DOCUMENT_DEFINITION)
def definition(ls: UmpireServer, params: lsp.DefinitionParams):
    index, key = _symbol(ls, params.text_document.uri, params.position)
    span = index.definition(key) if key else None
    return _span_location(span) if span else None


@server.feature(lsp.TEXT_DOCUMENT_REFERENCES)
def references(ls: UmpireServer, params: lsp.ReferenceParams):
    index, key = _symbol(ls, params.text_document.uri, params.position)
    if key is None:
        return []
    spans = index.usages(key)
    if params.context.include_declaration and index.definition(key):
        spans = [index.definition(key)] + spans
    return [_span_location(s) for s in spans]


@server.feature(lsp.TEXT_DOCUMENT_HOVER)
def hover(ls: UmpireServer, params: lsp.HoverParams):
    index, key = _symbol(ls, params.text_document.uri, params.position)
    text = index.hover(key) if key else None
    if not text:
        return None
    return lsp.Hover(contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=text))


@server.feature(lsp.TEXT_DOCUMENT_COMPLETION, lsp.CompletionOptions(trigger_characters=["(", "\"", " ", "["]))
def completion(ls: UmpireServer, params: lsp.CompletionParams):
    index = ls.index_for(params.text_document.uri)
    if index is None:
        return []
    doc = ls.workspace.get_text_document(params.text_document.uri)
    lines = doc.source.splitlines()
    line = lines[params.position.line] if params.position.line < len(lines) else ""
    before = line[:params.position.character]
    items = [lsp.CompletionItem(label=name, kind=_KINDS.get(kind), detail=detail)
             for name, kind, detail in completions(index, doc.source, params.position.line + 1, before,
                                                      yaml=params.text_document.uri.endswith((".yaml", ".yml")))]
    return lsp.CompletionList(is_incomplete=False, items=items)


@server.feature(lsp.TEXT_DOCUMENT_CODE_ACTION,
                lsp.CodeActionOptions(code_action_kinds=[lsp.CodeActionKind.QuickFix]))
def code_action(ls: UmpireServer, params: lsp.CodeActionParams):
    actions = []
    for d in params.context.diagnostics:
        hint = (d.data or {}).get("hint") if isinstance(d.data, dict) else None
        m = _ONE_CANDIDATE.match(hint or "")
        if not m:
            continue
        edit = lsp.TextEdit(range=d.range, new_text=m.group(1))
        actions.append(lsp.CodeAction(title=f"Change to '{m.group(1)}'", kind=lsp.CodeActionKind.QuickFix,
                                      diagnostics=[d], is_preferred=True,
                                      edit=lsp.WorkspaceEdit(changes={params.text_document.uri: [edit]})))
    return actions


def serve() -> None:
    server.start_io()
