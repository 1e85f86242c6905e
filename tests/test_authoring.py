"""Starting and editing a ruleset: `umpire init`, per-procedure situation schemas, the first-ruleset guide."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import ROOT

MODELINE = re.compile(r"^# yaml-language-server: \$schema=(\S+)", re.M)


def _editor_findings(path: Path) -> list[str]:
    """What a YAML editor shows for the file: its modeline's schema, validated as yaml-language-server does."""
    from jsonschema import Draft7Validator
    from ruamel.yaml import YAML
    text = path.read_text(encoding="utf-8")
    m = MODELINE.search(text)
    assert m, f"{path} has no schema modeline"
    schema_path = (path.parent / m.group(1)).resolve()
    assert schema_path.is_file(), f"{path}: its modeline names {schema_path}, which does not exist"
    schema = json.loads(schema_path.read_text(encoding="utf-8"))
    data = YAML(typ="safe").load(text)
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in Draft7Validator(schema).iter_errors(data)]


def test_init_makes_a_ruleset_that_checks_tests_and_resolves_clean(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = cli("init", "my-game")
    assert code == 0, err
    root = tmp_path / "my-game"
    for folder in ("tables", "stacks", "catalogues", "procedures", "situations", "tests"):
        assert any((root / folder).iterdir()), folder
    code, out, err = cli("check", "my-game")
    assert code == 0 and "my-game: ok" in out and err == "", err
    code, out, err = cli("test", "my-game")
    assert code == 0 and "2 passed, 0 failed" in out, out + err
    code, out, err = cli("resolve", "my-game/situations/first_check.yaml")
    assert code == 0 and "state: pinned" in out, out + err


def test_every_file_init_writes_has_a_modeline_whose_schema_accepts_it(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert cli("init", "my-game")[0] == 0
    files = sorted((tmp_path / "my-game").rglob("*.yaml"))
    assert len(files) == 6
    for f in files:
        assert _editor_findings(f) == [], f


def test_init_refuses_a_folder_that_is_not_empty_and_a_bad_id(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "notes.txt").write_text("mine")
    code, out, err = cli("init", "taken")
    assert code == 2 and "already exists" in err and (tmp_path / "taken" / "notes.txt").read_text() == "mine"
    code, out, err = cli("init", "My Game")
    assert code == 2 and "cannot be a ruleset id" in err and "Traceback" not in err


def test_a_situation_schema_for_a_procedure_flags_a_wrong_input_name_and_a_wrong_value(cli, tmp_path):
    """`umpire schema RULESET PROC --situation` validates a whole situation file (what a modeline points at)."""
    from jsonschema import Draft7Validator
    from ruamel.yaml import YAML
    code, out, err = cli("schema", ROOT / "rulesets/aslsk", "morale_check", "--situation")
    assert code == 0, err
    schema = json.loads(out)
    validator = Draft7Validator(schema)
    shipped = YAML(typ="safe").load((ROOT / "rulesets/aslsk/situations/morale_check_boxcars_elr.yaml").read_text())
    good = {"ruleset": "..", "procedure": "morale_check", "title": "t", "dice": [[3, 4]],
            "inputs": {"unit": {"id": "G1", "counter": "german 4-6-7"}}}
    assert list(validator.iter_errors(good)) == []
    assert list(validator.iter_errors(shipped)) == []
    wrong = dict(good, inputs={"unti": {"id": "G1", "counter": "german 4-6-7"}})
    assert any("unti" in e.message for e in validator.iter_errors(wrong))
    seven = dict(good, inputs={"unit": {"id": "G1", "counter": "german 4-6-7", "morale": "seven"}})
    found = list(validator.iter_errors(seven))
    assert [list(e.absolute_path) for e in found] == [["inputs", "unit", "morale"]]
    other = dict(good, procedure="rally")
    assert any("procedure" in list(e.absolute_path) for e in validator.iter_errors(other))


def test_the_situation_init_writes_is_flagged_through_its_modeline_when_an_input_is_wrong(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert cli("init", "my-game")[0] == 0
    situation = tmp_path / "my-game/situations/first_check.yaml"
    text = situation.read_text()
    situation.write_text(text.replace("unit: {id: A, morale: 7", "units: {id: A, morale: seven"))
    findings = _editor_findings(situation)
    assert any("units" in f for f in findings), findings
    situation.write_text(text.replace("morale: 7", "morale: seven"))
    assert [f.split(":")[0] for f in _editor_findings(situation)] == ["inputs/unit/morale"]


GUIDE = ROOT / "docs/first-ruleset.md"
_BLOCK = re.compile(r"(?:<!-- (?P<action>append|edit): (?P<file>\S+) -->\n)?```(?P<lang>\w*)\n(?P<body>.*?)```", re.S)


def test_the_first_ruleset_guide_runs_as_written(cli, tmp_path, monkeypatch):
    """Every command of docs/first-ruleset.md, in order, with its edits: the output it shows, the exit it implies."""
    monkeypatch.chdir(tmp_path)
    commands = 0
    for block in _BLOCK.finditer(GUIDE.read_text(encoding="utf-8")):
        body, action, file = block["body"], block["action"], block["file"]
        if action == "append":
            path = tmp_path / file
            path.write_text(path.read_text() + body)
        elif action == "edit":
            path = tmp_path / file
            old = "".join(line[1:] + "\n" for line in body.splitlines() if line.startswith("-"))
            new = "".join(line[1:] + "\n" for line in body.splitlines() if line.startswith("+"))
            assert old in path.read_text(), f"the guide's edit of {file} does not apply"
            path.write_text(path.read_text().replace(old, new))
        elif block["lang"] == "console":
            lines = body.splitlines()
            assert lines[0].startswith("$ umpire "), lines[0]
            code, out, err = cli(*lines[0][len("$ umpire "):].split())
            shown = [line for line in lines[1:] if line.strip()]
            wants_error = any(": error: " in line for line in shown)
            assert code == (2 if wants_error else 0), (lines[0], out, err)
            for line in shown:
                assert line.strip() in out + err, (lines[0], line, out + err)
            commands += 1
    assert commands >= 8
