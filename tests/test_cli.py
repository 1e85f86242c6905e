"""What a user sees: the explain trace of a book example, help texts, and robustness to any text."""

import json
import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from interpreter.errors import InputError, Position
from interpreter.reading.parser import parse_expression, parse_module
from interpreter.reading.source import load_yaml

from conftest import ROOT


def test_explain_cites_the_rules_at_each_step_of_the_book_example(cli):
    code, out, err = cli("resolve", ROOT / "rulesets/aslsk/situations/prep_fire_fg_pbf.yaml", "--explain")
    assert code == 0, err
    expected_in_order = [
        "[ASLSK 3.2.2] fire_attack(",
        "point_blank: x2",                                       # the adjacent 6-6-6
        "A-O6 (american 6-6-6) at range 1: 6 FP x 2 = 12",
        "[ASLSK 1.1.1] target_tem: +3",
        "los_hindrance: +1",
        "[ASLSK 3.2.3] roll dr: 2d6 -> colored 1, white 5 = 6",
        "final DR 10, FP 19 -> column 16 -> NMC",
        "[cell: ASLSK 3.2.2 Prep Fire Phase example",             # the cell cites the example revealing it
        "morale_check(unit: G1",
    ]
    at = 0
    for text in expected_in_order:
        found = out.find(text, at)
        assert found >= 0, f"missing or out of order: {text!r}"
        at = found
    assert "state: broken" in out and "state: pinned" in out      # G1 rolls 9, G2 rolls 7 (the book's dice)


@pytest.mark.parametrize("command", ["check", "list", "resolve", "test", "odds", "simulate", "charts", "diff",
                                     "set", "schema", "serve", "sweep"])
def test_every_command_explains_itself(command, capsys):
    from interpreter.cli.main import main
    with pytest.raises(SystemExit) as e:
        main([command, "--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert f"usage: umpire {command}" in out and len(out.splitlines()) > 4


DSL_ALPHABET = string.ascii_letters[:12] + string.digits[:4] + " .,:()[]{}+-*/<=>!\"@#\n" + "    "


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet=DSL_ALPHABET, max_size=60))
def test_any_text_gives_a_positioned_error_or_a_tree_never_a_crash(text):
    for parse in (lambda: parse_expression(text, Position("x.yaml", 3, 7)),
                  lambda: parse_module("procedure p():\n    " + text + "\n", "x.ump")):
        try:
            parse()
        except InputError as e:
            assert e.position is not None and e.position.file in ("x.yaml", "x.ump")


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet="ab:- {}[]&*!|>'\"#\n01", max_size=60))
def test_any_yaml_text_gives_data_or_a_positioned_error(text):
    try:
        load_yaml("y.yaml", text)
    except InputError as e:
        assert e.position is not None and e.position.file == "y.yaml"


def test_brief_trace_keeps_the_checkable_steps_and_drops_the_rest(cli):
    path = ROOT / "rulesets/aslsk/situations/prep_fire_fg_pbf.yaml"
    _, full, _ = cli("resolve", path, "--explain")
    code, brief, _ = cli("resolve", path, "--brief")
    assert code == 0
    assert len(brief.splitlines()) < len(full.splitlines())
    assert "final DR 10, FP 19 -> column 16 -> NMC" in brief and "target_tem: +3" in brief
    assert "not applied" in full and "not applied" not in brief


def test_test_runs_one_file_s_cases_when_given_a_test_file(cli):
    path = ROOT / "rulesets/aslsk/tests/examples_pto.yaml"
    code, out, err = cli("test", path)
    assert code == 0, out + err
    in_file = path.read_text().count("\n  - id:")
    assert in_file > 0 and f"{in_file} passed, 0 failed" in out
    code, out, err = cli("test", ROOT / "rulesets/aslsk/ruleset.yaml")   # not a test file: positioned errors
    assert code == 2 and "ruleset.yaml:1:1" in err


def test_test_on_a_ruleset_that_does_not_load_reports_its_error_once(cli, tmp_path):
    # each case used to load the broken ruleset again (minutes for a few hundred cases) and repeat its error
    import shutil
    from conftest import FIXTURE
    root = tmp_path / "mini"
    shutil.copytree(FIXTURE, root)
    (root / "procedures/probe.ump").write_text("procedure probe(units: int):\n    return units\n")
    cases = (root / "tests/cases.yaml").read_text().count("\n  - id:")
    assert cases >= 2
    code, out, err = cli("test", root)
    assert code == 2
    assert err.count("has the name of a catalogue") == 1, err
    assert "probe.ump:1:" in err
    assert f"0 passed, 0 failed, 1 invalid ({cases} cases not run: their ruleset did not load)" in out
    code, out, err = cli("test", root, "--json")
    import json
    doc = json.loads(out)
    assert doc["not_run"] == cases and len(doc["errors"]) == 1


def test_check_warns_about_a_case_id_used_in_two_test_files(cli, tmp_path):
    import json
    import shutil
    from conftest import FIXTURE
    root = tmp_path / "mini"
    shutil.copytree(FIXTURE, root)
    (root / "tests/more.yaml").write_text(
        "ruleset: ..\ncases:\n  - id: FIX-2\n    procedure: morale_check\n"
        "    inputs: {unit: {id: X, counter: rifle}, mc: 1}\n    dice: [6]\n    expect: {state: pinned}\n")
    code, out, err = cli("check", root)
    assert code == 0 and ": ok" in out, out + err
    assert "more.yaml:3:5: warning: case id 'FIX-2' is also used at " in err, err
    assert "cases.yaml:" in err.split("is also used at")[1]
    code, out, err = cli("check", root, "--json")
    warned = [d for d in json.loads(out)["diagnostics"] if "FIX-2" in d["message"]]
    assert len(warned) == 1 and warned[0]["file"].endswith("more.yaml") and warned[0]["line"] == 3


def test_resolve_json_without_the_trace_is_small_and_keeps_the_result(cli):
    path = ROOT / "rulesets/aslsk/situations/prep_fire_fg_pbf.yaml"
    _, full, _ = cli("resolve", path, "--json")
    code, short, err = cli("resolve", path, "--json", "--no-trace")
    assert code == 0, err
    full_data, short_data = json.loads(full), json.loads(short)
    assert "trace" not in short_data and full_data["trace"]
    assert short_data["result"] == full_data["result"] and short_data["dice"] == full_data["dice"]
    assert len(short) * 20 < len(full)


def test_brief_and_explain_together_are_refused(cli):
    path = ROOT / "rulesets/aslsk/situations/prep_fire_fg_pbf.yaml"
    with pytest.raises(SystemExit) as e:
        cli("resolve", path, "--brief", "--explain")
    assert e.value.code == 2
    code, _, err = cli("resolve", path, "--no-trace")
    assert code == 2 and "--no-trace goes with --json" in err


def test_odds_plot_without_matplotlib_is_refused_before_any_work(cli, monkeypatch, tmp_path):
    import sys
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    path = ROOT / "rulesets/aslsk/situations/prep_fire_fg_pbf.yaml"
    code, out, err = cli("odds", path, "--plot", tmp_path / "out.png")
    assert code == 2 and "needs matplotlib" in err
    assert out == ""          # no odds worked out and printed first


def test_help_text_names_every_exit_code(capsys):
    from interpreter.cli.main import main
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert "exit codes:" in out
    for code in ("0", "1", "2", "3", "130"):
        assert f"\n  {code}  " in out
