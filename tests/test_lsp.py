"""The language server as an editor meets it: `umpire lsp` over stdio, driven by pygls' own client.

On a shipped ruleset (its files are only read: the edits stay in the client's buffers).
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from conftest import ROOT

pytest.importorskip("pygls", reason="the language server needs pygls (pip install -e '.[lsp]')")
pytest.importorskip("lsprotocol", reason="the language server needs lsprotocol (pip install -e '.[lsp]')")

from lsprotocol import types as lsp  # noqa: E402
from pygls.lsp.client import LanguageClient  # noqa: E402
from pygls.uris import from_fs_path  # noqa: E402

RULESET = ROOT / "rulesets/aslsk"
MORALE = RULESET / "procedures/morale.ump"
WAIT = 90.0
"""Seconds a step may take before the test gives up (a loaded machine; no assertion is about time)."""


class Editor:
    """An LSP client holding open buffers and the diagnostics the server last published for each."""

    def __init__(self):
        self.client = LanguageClient("umpire-test", "1")
        self.diagnostics: dict[str, list[lsp.Diagnostic]] = {}
        self.changed = asyncio.Event()

        @self.client.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def published(params: lsp.PublishDiagnosticsParams):
            self.diagnostics[params.uri] = params.diagnostics
            self.changed.set()

    async def start(self):
        await self.client.start_io(sys.executable, "-m", "interpreter", "lsp")
        await self.client.initialize_async(lsp.InitializeParams(
            capabilities=lsp.ClientCapabilities(), root_uri=from_fs_path(str(RULESET)), process_id=None))
        self.client.initialized(lsp.InitializedParams())

    async def stop(self):
        await self.client.shutdown_async(None)
        self.client.exit(None)
        await self.client.stop()

    def open(self, path: Path, text: str | None = None) -> str:
        uri = from_fs_path(str(path))
        self.client.text_document_did_open(lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(
            uri=uri, language_id="ump" if path.suffix == ".ump" else "yaml", version=1,
            text=path.read_text() if text is None else text)))
        return uri

    def change(self, uri: str, text: str, version: int = 2) -> None:
        self.client.text_document_did_change(lsp.DidChangeTextDocumentParams(
            lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
            [lsp.TextDocumentContentChangeWholeDocument(text=text)]))

    async def diagnostics_where(self, uri: str, test) -> list[lsp.Diagnostic]:
        async def wait():
            while not test(self.diagnostics.get(uri)):
                self.changed.clear()
                await self.changed.wait()
            return self.diagnostics[uri]
        return await asyncio.wait_for(wait(), WAIT)


def _place(text: str, needle: str, offset: int = 0) -> lsp.Position:
    at = text.index(needle) + offset
    line = text.count("\n", 0, at)
    return lsp.Position(line, at - (text.rfind("\n", 0, at) + 1))


def run(coroutine):
    return asyncio.run(asyncio.wait_for(coroutine, WAIT * 4))


def test_a_misspelt_name_shows_the_checker_s_message_with_a_quick_fix_then_clears():
    text = MORALE.read_text()
    call = "lookup(wound_severity,"
    assert call in text
    wrong = text.replace(call, "lookup(wound_severty,", 1)

    async def session():
        editor = Editor()
        await editor.start()
        try:
            uri = editor.open(MORALE)
            assert list(await editor.diagnostics_where(uri, lambda d: d is not None)) == []
            editor.change(uri, wrong)
            found = await editor.diagnostics_where(uri, lambda d: bool(d))
            d = next(d for d in found if "wound_severty" in d.message)
            assert d.message.startswith("unknown table 'wound_severty'") and "did you mean 'wound_severity'?" in d.message
            assert d.severity == lsp.DiagnosticSeverity.Error and d.source == "umpire"
            start = _place(wrong, "wound_severty,")
            assert (d.range.start, d.range.end) == (start, lsp.Position(start.line, start.character + 13))
            actions = await editor.client.text_document_code_action_async(lsp.CodeActionParams(
                text_document=lsp.TextDocumentIdentifier(uri), range=d.range,
                context=lsp.CodeActionContext(diagnostics=[d])))
            assert [a.title for a in actions] == ["Change to 'wound_severity'"]
            edit = actions[0].edit.changes[uri][0]
            assert edit.new_text == "wound_severity" and edit.range == d.range
            editor.change(uri, text, 3)
            assert list(await editor.diagnostics_where(uri, lambda d: d is not None and len(d) == 0)) == []
        finally:
            await editor.stop()
    run(session())


def test_go_to_definition_from_a_call_and_a_hover_with_the_citation():
    text = MORALE.read_text()
    call_at = _place(text, "call morale_check(", len("call ") + 3)

    async def session():
        editor = Editor()
        await editor.start()
        try:
            uri = editor.open(MORALE)
            where = await editor.client.text_document_definition_async(
                lsp.DefinitionParams(text_document=lsp.TextDocumentIdentifier(uri), position=call_at))
            header = _place(text, "procedure morale_check(", len("procedure "))
            assert where.uri == uri and where.range.start == header
            shown = await editor.client.text_document_hover_async(
                lsp.HoverParams(text_document=lsp.TextDocumentIdentifier(uri), position=call_at))
            assert "procedure morale_check(unit: unit" in shown.contents.value
            assert "cites **ASLSK 3.2.3**" in shown.contents.value
            table_at = _place(text, "lookup(", len("lookup(") + 1)
            table_hover = await editor.client.text_document_hover_async(
                lsp.HoverParams(text_document=lsp.TextDocumentIdentifier(uri), position=table_at))
            assert "rows:" in table_hover.contents.value and "cells known" in table_hover.contents.value
            refs = await editor.client.text_document_references_async(lsp.ReferenceParams(
                text_document=lsp.TextDocumentIdentifier(uri), position=header,
                context=lsp.ReferenceContext(include_declaration=False)))
            files = {Path(r.uri).name for r in refs}
            assert "morale.ump" in files and any(name.endswith(".yaml") for name in files), files
            items = await editor.client.text_document_completion_async(lsp.CompletionParams(
                text_document=lsp.TextDocumentIdentifier(uri),
                position=lsp.Position(call_at.line, call_at.character - 3)))
            assert "morale_check" in {i.label for i in items.items} and "rally" in {i.label for i in items.items}
        finally:
            await editor.stop()
    run(session())


def test_completion_in_a_situation_offers_the_catalogue_entries_a_field_names():
    """The index behind the server, asked directly: a unit's counter, a hex's terrain (key_of), a procedure."""
    from interpreter.lsp import index as ix
    ruleset, found = ix.check_folder(RULESET.resolve(), {})
    assert found == [] or all(d["severity"] == "warning" for d in found)
    index = ix.build(RULESET.resolve(), ruleset, {})
    counters = {label for label, kind, _ in ix.completions(index, "", 1, "    - {id: G1, counter: ger", yaml=True)}
    assert "german 4-6-7" in counters and all(kind == "entry" for _, kind, _ in
                                              ix.completions(index, "", 1, "  unit: {counter: ", yaml=True))
    terrain = {label for label, _, _ in ix.completions(index, "", 1, "    - {id: G1, terrain: ", yaml=True)}
    assert "stone building" in terrain and "german 4-6-7" not in terrain
    assert "fire_attack" in {label for label, _, _ in ix.completions(index, "", 1, "procedure: fi", yaml=True)}
    assert ix.completions(index, "", 1, "title: a unit in wo", yaml=True) == []
