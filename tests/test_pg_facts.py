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


def test_a_stated_elevation_is_traced_as_given_not_derived(cli, tmp_path):
    # 8.31: a firer on 40 m fires at a hex on 0 m from higher ground; without a map the levels are the
    # situation's, and the trace says so, as it does for every other stated fact
    s = tmp_path / "s.yaml"
    s.write_text(f"ruleset: {PG}\nprocedure: direct_fire\ninputs:\n"
                 "  firers: [{id: F, kind: infantry, hex_terrain: clear, activated: true, df: 11, df_range: 6,"
                 " range_to_target: 1, elevation: 40}]\n"
                 "  targets: [{id: X, kind: infantry, morale: 7, reduced_morale: 6, steps: 2}]\n"
                 "  hex: {terrain: clear, elevation: 0, friendly_units: false}\n  firers_in_assault_hex: false\ndice: [4, 3]\n")
    code, out, err = cli("resolve", s, "--explain")
    assert code in (0, 1), err
    assert "elevation of F = 40: given, not derived (F.elevation)" in out
    assert "elevation of the target hex = 0: given, not derived (hex.elevation)" in out


def test_a_spotter_s_stated_elevation_is_traced_as_given_where_it_lengthens_the_range(cli, tmp_path):
    # 8.33: 14 hexes by day is beyond the base 12; 20 m above the target adds 6 (PG-T-974)
    s = tmp_path / "s.yaml"
    s.write_text(f"ruleset: {PG}\nprocedure: can_spot\ninputs: {{spotter: {{id: S, kind: infantry, hex_terrain: clear}},"
                 " spotter_elevation: 20, target_elevation: 0, distance: 14, los: true, target_terrain: clear}\n")
    code, out, err = cli("resolve", s, "--explain")
    assert code == 0, err
    assert "elevation of S = 20: given, not derived (spotter_elevation)" in out
    assert "elevation of the hex S looks at = 0: given, not derived (target_elevation)" in out


def test_on_a_map_the_elevations_are_traced_as_derived(cli):
    code, out, err = cli("resolve", PG / "situations" / "direct_fire_on_map.yaml", "--explain")
    assert code in (0, 1), err
    assert "elevation of F = 0: derived from the map" in out
    assert "elevation of F = 0: given, not derived" not in out
