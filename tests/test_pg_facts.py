"""Panzer Grenadier: a unit's kind is a fact of the counter, never assumed (issue 24).

A unit record given without its `kind` is an input error before anything runs, positioned at the record and
naming the unit and the field (exit 2, no traceback). The rule-derived cases of the other facts are YAML cases
(rulesets/panzer-grenadier/tests/last_defaults.yaml); an input error cannot be one, so it is tested here.
"""

from conftest import ROOT

PG = ROOT / "rulesets" / "panzer-grenadier"


def _situation(tmp_path, inputs: str):
    s = tmp_path / "s.yaml"
    s.write_text(f"ruleset: {PG}\nprocedure: fire_strength\ninputs:\n{inputs}")
    return s


def test_a_unit_without_its_kind_is_an_input_error_naming_the_unit_and_the_field(cli, tmp_path):
    s = _situation(tmp_path, "  firers: [{id: INF, kind: infantry, df: 5}, {id: HMG, df: 8}]\n")
    code, out, err = cli("resolve", s)
    assert code == 2
    assert f"{s}:4:46:" in err                                  # the record of the second firer
    assert "inputs.firers[1] ('HMG') is missing the required key 'kind'" in err
    assert "Traceback" not in err


def test_the_same_units_with_their_kinds_stated_combine_their_fire(cli, tmp_path):
    s = _situation(tmp_path, "  firers: [{id: INF, kind: infantry, df: 5}, {id: HMG, kind: hmg, df: 8}]\n")
    code, out, err = cli("resolve", s, "--json")
    assert code == 0, err
    assert '"strength": 13' in out                             # 5 + 8 in one hex (6.41)
