"""Messages that teach: each case an author met writing a ruleset from docs/language.md (issue 29)."""

from __future__ import annotations

import json

import pytest

from conftest import ROOT


@pytest.fixture
def made(tmp_path, cli, monkeypatch):
    """A ruleset from `umpire init`, with some text replaced in some files: made({file: (old, new)})."""
    monkeypatch.chdir(tmp_path)
    assert cli("init", "g")[0] == 0

    def change(edits: dict) -> str:
        for rel, (old, new) in edits.items():
            path = tmp_path / "g" / rel
            text = path.read_text()
            assert old in text, (rel, old)
            path.write_text(text.replace(old, new))
        return "g"
    return change


def _error(cli, *args) -> str:
    code, out, err = cli(*args)
    assert code == 2 and "Traceback" not in err, out + err
    return err


def test_an_unquoted_comma_in_a_flow_mapping_says_to_quote_the_text(made, cli):
    root = made({"situations/first_check.yaml": ("unit: {id: A, morale: 7", "unit: {id: A pinned, then broken, morale: 7")})
    err = _error(cli, "check", root)
    assert "unknown key 'then broken'" in err
    assert 'quote text that holds a comma: id: "A pinned, then broken"' in err


def test_a_slice_says_how_to_take_the_rest_of_a_list(made, cli):
    root = made({"procedures/morale.ump": ("    emit final_dr = final\n",
                                            "    emit final_dr = final\n    let rest = [1, 2][1:]\n")})
    err = _error(cli, "check", root)
    assert "unexpected ':'; expected ']'" in err and "range(1, len(xs))" in err


def test_an_over_indented_line_is_reported_at_that_line(made, cli):
    root = made({"procedures/morale.ump": ("    let final = dr.original + drm\n",
                                            "        let final = dr.original + drm\n")})
    err = _error(cli, "check", root)
    assert "morale.ump:7:9: error: unexpected indentation" in err, err


def test_a_line_that_ends_too_early_reads_plainly(made, cli):
    root = made({"procedures/morale.ump": ("let final = dr.original + drm", "let final =")})
    err = _error(cli, "check", root)
    assert "unexpected end of the line; expected" in err and "unexpected the" not in err


def test_a_dedent_to_no_block_is_reported_at_its_line(made, cli):
    root = made({"procedures/morale.ump": ("    emit final_dr = final\n", "    if final > 0:\n        emit a = 1\n"
                                                                          "      emit final_dr = final\n")})
    err = _error(cli, "check", root)
    assert "morale.ump:10:7: error: this line's indentation does not match any enclosing block" in err, err


def test_a_mistyped_result_code_gets_the_nearest_code(made, cli):
    root = made({"tables/morale.yaml": ('      ">=3": [broken]\n',
                                        '      ">=3": [PTX]\n    results:\n'
                                        '      passed: {pattern: passed}\n      pinned: {pattern: pinned}\n'
                                        '      ptc: {pattern: PTC}\n')})
    err = _error(cli, "check", root)
    assert "'PTX' matches none of table 'morale_results''s result codes" in err and "did you mean 'PTC'?" in err


def test_a_parameter_given_by_the_start_of_its_name_gets_did_you_mean(made, cli):
    root = made({"procedures/morale.ump": ("apply(morale_drm, unit: unit)", "apply(morale_drm, u: unit)")})
    err = _error(cli, "check", root)
    assert "has no parameter 'u' (it takes: unit)" in err and "did you mean 'unit'?" in err


def test_an_unknown_procedure_names_the_nearest_few_not_all(cli, tmp_path):
    situation = tmp_path / "s.yaml"
    situation.write_text(f"ruleset: {ROOT / 'rulesets/aslsk'}\nprocedure: fire_atack\ninputs: {{}}\n")
    err = _error(cli, "resolve", situation)
    assert "has no procedure 'fire_atack'" in err and "did you mean 'fire_attack'" in err
    assert "morale_check" not in err and "umpire list" in err and len(err) < 600, err


def test_every_error_of_overlays_arrives_in_one_run(made, cli, tmp_path):
    root = made({})
    first = tmp_path / "first.yaml"
    first.write_text("overlay: a\ntitle: a\nextends: another-game\nkind: house rule\nchanges: []\n")
    second = tmp_path / "second.yaml"
    second.write_text("overlay: b\ntitle: b\nextends: g\nkind: house rule\nchanges:\n"
                      "  - stack: morale_drms\n    remove: terrain\n"
                      "  - stack: morale_drm\n    modify: terain\n    set: {value: 1}\n")
    err = _error(cli, "check", root, "--with", first, "--with", second)
    assert "extends 'another-game'" in err and "no stack 'morale_drms'" in err and "no modifier 'terain'" in err and "3 errors" in err, err


def test_check_json_gives_each_diagnostic_its_end(made, cli):
    root = made({"procedures/morale.ump": ("apply(morale_drm,", "apply(morale_drms,")})
    code, out, err = cli("check", root, "--json")
    found = json.loads(out)["diagnostics"]
    d = next(d for d in found if "morale_drms" in d["message"])
    assert d["end"] == {"line": d["line"], "column": d["column"] + len("morale_drms")}, d
    assert d["hint"] == "did you mean 'morale_drm'?"
