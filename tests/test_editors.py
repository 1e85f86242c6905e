"""The editor files in editors/: the VS Code extension's manifest and the TextMate grammar for .ump files."""

from __future__ import annotations

import json
import re

from conftest import ROOT

VSCODE = ROOT / "editors/vscode"


def _grammar_words() -> set[str]:
    """Every word the lark grammar spells out as a literal: the language's keywords."""
    text = (ROOT / "grammar/umpire.lark").read_text(encoding="utf-8")
    text = re.sub(r"//[^\n]*", "", text)
    return set(re.findall(r'"([A-Za-z_]+)"', text))


def _highlighted_words(grammar: dict) -> set[str]:
    words = set()

    def visit(rule):
        if isinstance(rule, dict):
            for key in ("match", "begin", "end"):     # every pattern compiles (TextMate regexes are Oniguruma;
                if isinstance(rule.get(key), str):     # these use only what Python's re reads the same way)
                    re.compile(rule[key])
            for key in ("match", "begin"):
                for group in re.findall(r"\\\\b\((\w+(?:\|\w+)*)\)", json.dumps(rule.get(key, ""))):
                    words.update(group.split("|"))
            for value in rule.values():
                visit(value)
        elif isinstance(rule, list):
            for item in rule:
                visit(item)
    visit(grammar)
    return words


def test_the_grammar_is_valid_json_and_highlights_exactly_the_language_s_keywords():
    grammar = json.loads((VSCODE / "syntaxes/ump.tmLanguage.json").read_text(encoding="utf-8"))
    assert grammar["scopeName"] == "source.ump" and "ump" in grammar["fileTypes"]
    keywords = _grammar_words()
    assert {"procedure", "call", "lookup", "uncapped", "key_of", "one_of", "each"} <= keywords
    highlighted = _highlighted_words(grammar)
    assert keywords - highlighted == set(), "a keyword of the language is not highlighted"
    assert highlighted - keywords == set(), "a highlighted word is not a keyword of the language"


def test_the_extension_starts_umpire_lsp_for_ump_files():
    manifest = json.loads((VSCODE / "package.json").read_text(encoding="utf-8"))
    language = manifest["contributes"]["languages"][0]
    assert language["extensions"] == [".ump"]
    assert (VSCODE / language["configuration"]).is_file()
    json.loads((VSCODE / language["configuration"]).read_text(encoding="utf-8"))
    assert (VSCODE / manifest["contributes"]["grammars"][0]["path"]).is_file()
    assert manifest["contributes"]["configuration"]["properties"]["umpire.command"]["default"] == ["umpire", "lsp"]
    assert (VSCODE / manifest["main"]).is_file()
