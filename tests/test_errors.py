"""Bad input gets a positioned, plain-language error and exit code 2, never a traceback."""

import json
import re

import pytest

from conftest import FIXTURE, write_ruleset

POSITIONED = re.compile(r"[^\s:]+:\d+:\d+: error: ")


def assert_clean_error(code, err, *fragments):
    assert code == 2, err
    assert "Traceback" not in err
    assert POSITIONED.search(err), err
    for f in fragments:
        assert f in err, err


def test_malformed_yaml_file(tmp_path, cli):
    root = write_ruleset(tmp_path, {"tables/broken.yaml": "tables:\n  t: {title: x\n"})
    code, out, err = cli("check", root)
    assert_clean_error(code, err, "broken.yaml:", "YAML syntax")


def test_schema_error_points_at_the_key_with_did_you_mean(tmp_path, cli):
    text = (FIXTURE / "stacks/fire.yaml").read_text().replace("refuse_below: -3", "refuse_bellow: -3")
    root = write_ruleset(tmp_path, {"stacks/fire.yaml": text})
    code, out, err = cli("check", root)
    assert_clean_error(code, err, "fire.yaml:", "unknown key 'refuse_bellow'", "did you mean 'refuse_below'")
    line = next(i for i, l in enumerate(text.splitlines(), 1) if "refuse_bellow" in l)
    assert f"fire.yaml:{line}:" in err


def test_dsl_expression_error_in_yaml_is_positioned_at_the_expression(tmp_path, cli):
    text = (FIXTURE / "stacks/fire.yaml").read_text().replace("when: range == 1", "when: range = 1")
    root = write_ruleset(tmp_path, {"stacks/fire.yaml": text})
    code, out, err = cli("check", root)
    assert_clean_error(code, err, "unexpected '='", "use == to compare")
    line = next(i for i, l in enumerate(text.splitlines(), 1) if "range = 1" in l)
    col = text.splitlines()[line - 1].index("= 1") + 1
    assert f"fire.yaml:{line}:{col}:" in err


def test_dsl_syntax_error_in_a_procedure_file(tmp_path, cli):
    root = write_ruleset(tmp_path, {"procedures/extra.ump": "procedure broken(x: int)\n    return x\n"})
    code, out, err = cli("check", root)
    assert_clean_error(code, err, "extra.ump:1:", "expected", "':'")


def test_unknown_names_get_did_you_mean(tmp_path, cli):
    root = write_ruleset(tmp_path, {"procedures/extra.ump":
                                    "procedure p(unit: unit):\n    let m = unit.moral\n    return lookup(fir, row: m)\n"})
    code, out, err = cli("check", root)
    assert_clean_error(code, err, "extra.ump:2:13", "no field 'moral'", "did you mean 'morale'",
                       "unknown table 'fir'", "did you mean 'fire'")


def test_unreachable_statement_and_wrong_arity(tmp_path, cli):
    root = write_ruleset(tmp_path, {"procedures/extra.ump":
                                    "procedure p(x: int):\n    return x\n    note \"never\"\n\n"
                                    "procedure q():\n    return call p(y: 1)\n"})
    code, out, err = cli("check", root)
    assert_clean_error(code, err, "extra.ump:3:5", "can never run", "has no parameter 'y'", "needs 'x'")


def test_table_cell_that_matches_no_result_code(tmp_path, cli):
    text = (FIXTURE / "tables/fire.yaml").read_text().replace("[1MC, 1KIA, 1KIA, 2KIA]", "[1MC, 1KAI, 1KIA, 2KIA]")
    root = write_ruleset(tmp_path, {"tables/fire.yaml": text})
    code, out, err = cli("check", root)
    assert_clean_error(code, err, "'1KAI' matches none", "#KIA")


def test_malformed_situation(tmp_path, cli):
    root = write_ruleset(tmp_path, {"situations/bad.yaml":
                                    "ruleset: ..\nprocedure: atack\ninputs: {}\n"})
    code, out, err = cli("resolve", root / "situations/bad.yaml")
    assert_clean_error(code, err, "bad.yaml:2:", "no procedure 'atack'", "did you mean 'attack'")


def test_situation_inputs_are_checked_against_the_procedure_signature(tmp_path, cli):
    root = write_ruleset(tmp_path, {"situations/bad.yaml":
                                    "ruleset: ..\nprocedure: attack\ninputs:\n  firers: [{id: A, counter: rifle, fpp: 3}]\n"
                                    "  target: []\n  range: two\n"})
    code, out, err = cli("resolve", root / "situations/bad.yaml")
    assert_clean_error(code, err, "unknown key 'fpp'", "did you mean 'fp'", "inputs.range should be a whole number")


def test_bad_given_dice(tmp_path, cli):
    root = write_ruleset(tmp_path, {"situations/bad.yaml":
                                    "ruleset: ..\nprocedure: morale_check\ninputs: {unit: {id: X, counter: rifle}}\n"
                                    "dice: [[3, 9]]\n"})
    code, out, err = cli("resolve", root / "situations/bad.yaml")
    assert_clean_error(code, err, "bad.yaml:4:8", "d6 shows 1 to 6, not 9")


@pytest.mark.parametrize("text,fragment", [
    ("a: 1\na: 2\n", "appears twice"),
    ("a: !!python/object:os.system x\n", "tags"),
])
def test_unsafe_or_ambiguous_yaml_is_refused(tmp_path, cli, text, fragment):
    root = write_ruleset(tmp_path, {"catalogues/extra.yaml": text})
    code, out, err = cli("check", root)
    assert_clean_error(code, err, fragment)


def test_alias_bomb_is_refused_without_exhausting_memory(tmp_path, cli):
    lines = ["a: &a [1,1,1,1,1,1,1,1,1]"]
    for i, name in enumerate("bcdefgh"):
        prev = "abcdefgh"[i]
        lines.append(f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
    root = write_ruleset(tmp_path, {"catalogues/extra.yaml": "\n".join(lines) + "\n"})
    code, out, err = cli("check", root)
    assert_clean_error(code, err, "expands to more than")


def test_missing_ruleset_folder(cli, tmp_path):
    code, out, err = cli("check", tmp_path / "nothing")
    assert code == 2 and "no such ruleset folder" in err and "Traceback" not in err


def test_a_case_overriding_a_situation_s_dice_points_at_its_own_dice(tmp_path, cli):
    root = write_ruleset(tmp_path, {"tests/more.yaml":
                                    "ruleset: ..\ncases:\n  - id: X\n    situation: ../situations/attack.yaml\n"
                                    "    dice: [[2, 3], [4, 9]]\n    expect: {fp: 14}\n"})
    code, out, err = cli("test", root)
    assert_clean_error(code, err, "more.yaml:5:20", "d6 shows 1 to 6, not 9")


def _ruleset_with_hex(tmp_path, default="open"):
    ruleset = (FIXTURE / "ruleset.yaml").read_text().replace("\nlimits:", (
        "\n  hex:\n    fields:\n"
        f"      terrain: {{type: \"key_of[terrain]\", default: {default}}}\nlimits:"))
    procs = (FIXTURE / "procedures/fire.ump").read_text() + (
        "\nprocedure cover(where: hex, alternative: key_of[terrain] = \"open\") cite \"9.9\":\n"
        "    return {tem: terrain[where.terrain].tem, other: terrain[alternative].tem}\n")
    return write_ruleset(tmp_path, {"ruleset.yaml": ruleset, "procedures/fire.ump": procs})


def _hex_situation(root, inputs):
    path = root / "situations/cover.yaml"
    path.write_text(f"ruleset: ..\nprocedure: cover\ninputs:\n{inputs}")
    return path


def test_a_key_of_input_must_name_an_entry_of_its_catalogue(tmp_path, cli):
    root = _ruleset_with_hex(tmp_path)
    assert cli("check", root)[0] == 0
    ok = _hex_situation(root, "  where: {terrain: woods}\n  alternative: building\n")
    code, out, err = cli("resolve", ok)
    assert code == 0 and "tem: 1" in out and "other: 2" in out, out + err
    bad = _hex_situation(root, "  where: {terrain: wood}\n")
    code, out, err = cli("resolve", bad)
    assert_clean_error(code, err, "cover.yaml:4:20", "'wood' is not an entry of catalogue 'terrain'",
                       "did you mean 'woods'")
    bad = _hex_situation(root, "  where: {}\n  alternative: buildings\n")
    code, out, err = cli("resolve", bad)
    assert_clean_error(code, err, "cover.yaml:5:16", "'buildings' is not an entry of catalogue 'terrain'")


def test_check_refuses_a_key_of_an_unknown_catalogue_or_a_default_outside_it(tmp_path, cli):
    root = _ruleset_with_hex(tmp_path, default="forest")
    code, out, err = cli("check", root)
    assert_clean_error(code, err, "defaults to 'forest', which is not an entry of catalogue 'terrain'")
    text = (root / "ruleset.yaml").read_text().replace("key_of[terrain]", "key_of[terain]").replace("forest", "open")
    (root / "ruleset.yaml").write_text(text)
    code, out, err = cli("check", root)
    assert_clean_error(code, err, "names catalogue 'terain', which does not exist", "did you mean 'terrain'")


def test_check_refuses_a_record_default_missing_a_field_its_type_needs(tmp_path, cli):
    # 'ghost' is no catalogue entry, so every field of a unit must be written out: morale is missing
    root = write_ruleset(tmp_path, {"procedures/shoot.ump": (
        'procedure shoot(target: unit = {id: "T", counter: "ghost", fp: 2}):\n    return {m: target.morale}\n')})
    code, out, err = cli("check", root)
    assert_clean_error(code, err, "shoot.ump:1:32", "the default of parameter 'target'", "missing: morale")


LIMBER = ('procedure limber(gun: any, action: one_of["limber", "unlimber"] = "limber"):\n'
          '    return {gun: gun, limbered: action == "limber"}\n')


def test_a_one_of_parameter_takes_only_its_values(tmp_path, cli):
    root = write_ruleset(tmp_path, {"procedures/limber.ump": LIMBER, "situations/ok.yaml":
                                    "ruleset: ..\nprocedure: limber\ninputs: {gun: G, action: unlimber}\n",
                                    "situations/bad.yaml":
                                    "ruleset: ..\nprocedure: limber\ninputs: {gun: G, action: unlimbr}\n"})
    code, out, err = cli("resolve", root / "situations/ok.yaml", "--json")
    assert code == 0, err
    assert json.loads(out)["result"]["limbered"] is False
    code, out, err = cli("resolve", root / "situations/bad.yaml")
    assert_clean_error(code, err, "bad.yaml:3:", "unlimbr")
    code, out, err = cli("list", root)
    assert 'action: one_of["limber", "unlimber"] = "limber"' in out


def test_check_refuses_a_literal_outside_a_one_of_parameter(tmp_path, cli):
    root = write_ruleset(tmp_path, {"procedures/limber.ump": LIMBER + (
        '\nprocedure tow(gun: any):\n    return call limber(gun: gun, action: "limbr")\n')})
    code, out, err = cli("check", root)
    assert_clean_error(code, err, "limber.ump:5:42", "'limbr' is not one of the values of parameter 'action'",
                       "did you mean 'limber'")


def test_a_file_that_is_not_utf8_is_reported_at_its_line_and_column(tmp_path, cli):
    root = write_ruleset(tmp_path, {})
    (root / "procedures" / "latin1.ump").write_bytes(b'procedure x():\n    return "caf\xe9"\n')
    code, out, err = cli("check", root)
    assert_clean_error(code, err, "latin1.ump:2:16:", "not UTF-8", "byte 0xe9", "save the file as UTF-8")


def test_a_byte_order_mark_is_accepted_in_procedure_files_as_in_yaml(tmp_path, cli):
    root = write_ruleset(tmp_path, {})
    (root / "procedures" / "bom.ump").write_bytes(b"\xef\xbb\xbfprocedure with_bom():\n    return 1\n")
    (root / "tables" / "fire.yaml").write_bytes(b"\xef\xbb\xbf" + (root / "tables" / "fire.yaml").read_bytes())
    code, out, err = cli("check", root)
    assert code == 0, err
    code, out, err = cli("list", root)
    assert "with_bom" in out


def test_a_text_parsed_before_keeps_its_own_place_and_its_error():
    # the parser keeps the trees of texts it parsed (reading/parser.py): the same text in another file gets
    # that file's positions, and a text that failed fails again at the same place (never a kept half-tree)
    from interpreter.errors import InputError
    from interpreter.reading.parser import parse_module
    good = "procedure p(x: int):\n    return x + 1\n"
    first, second = parse_module(good, "a.ump")[0], parse_module(good, "b.ump")[0]
    assert (first.pos.file, second.pos.file) == ("a.ump", "b.ump")
    assert parse_module(good, "a.ump")[0] is first     # parsed once
    bad = "procedure p(x: int):\n    return x +\n"
    errors = []
    for _ in range(2):
        with pytest.raises(InputError) as e:
            parse_module(bad, "c.ump")
        errors.append(str(e.value))
    assert errors[0] == errors[1] and "c.ump:2" in errors[0]


def test_reject_stops_with_an_input_error_where_fail_cannot_adjudicate(tmp_path, cli):
    """`reject` is for a situation that contradicts itself (exit 2, like a missing fact); `fail` for a
    question the rules leave open (exit 1); both stop at the statement's line, in the ruleset's words."""
    root = write_ruleset(tmp_path, {"procedures/extra.ump":
                                    "procedure placed(stated: text, mapped: text):\n"
                                    "    if stated != mapped:\n"
                                    "        reject \"stated in {stated}, but the map places it in {mapped}\" cite \"1.1\"\n"
                                    "    if stated == \"off\":\n"
                                    "        fail \"no rule covers a unit off the board\"\n"
                                    "    return stated\n"})
    contradicted = root / "situations" / "contradicted.yaml"
    contradicted.write_text("ruleset: ..\nprocedure: placed\ninputs: {stated: A1, mapped: B2}\n")
    unsettled = root / "situations" / "unsettled.yaml"
    unsettled.write_text("ruleset: ..\nprocedure: placed\ninputs: {stated: \"off\", mapped: \"off\"}\n")
    code, out, err = cli("resolve", contradicted)
    assert code == 2 and "extra.ump:3:9" in out + err and "stated in A1, but the map places it in B2" in out + err
    code, out, err = cli("resolve", unsettled)
    assert code == 1 and "extra.ump:5:9" in out + err and "no rule covers a unit off the board" in out + err
    code, out, err = cli("resolve", contradicted, "--json")
    assert code == 2 and '"rejected-input"' in out
    assert cli("check", root)[0] == 0


def test_model_classes_behave_as_dataclasses_did():
    """reading/plain.py's data_class: fresh defaults per instance, equality by fields, a readable repr."""
    from interpreter.model.dice import DiceKind
    from interpreter.model.ruleset import Change, FieldDef, Ruleset
    from interpreter.reading.plain import data_fields
    a, b = Change("tables", "ift", "filled", None), Change("tables", "ift", "filled", origin=None)
    assert a == b and a is not b and a.fields == () and a != Change("tables", "ift", "other", None)
    assert repr(a) == "Change(group='tables', name='ift', what='filled', origin=None, action='', item=None, fields=())"
    with pytest.raises(TypeError):
        Change("tables", "ift")             # a field without a default must be given
    with pytest.raises(TypeError):
        hash(a)
    with pytest.raises(TypeError):
        FieldDef("x", "int", nope=1)
    r1 = Ruleset("r", "t", None, "", None, {}, {}, {}, {}, {}, {}, {})
    r2 = Ruleset("r", "t", None, "", None, {}, {}, {}, {}, {}, {}, {}, parts={1: 2})
    assert r1.files == [] and r1.files is not r2.files and r1 == r2        # parts is not compared
    assert "parts" not in repr(r2) and data_fields(Ruleset)[-1] == "parts"
    d = DiceKind("dr", ("colored", "white"), 6)
    assert d == DiceKind("dr", ("colored", "white"), 6) and hash(d) == hash(DiceKind("dr", ("colored", "white"), 6))
    assert d.unordered().ordered is False and d.ordered is True and d.unordered() != d
    import pickle
    assert pickle.loads(pickle.dumps(d)) == d
