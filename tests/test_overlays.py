"""Overlays (house rules and players' charts), charts, diff, and lossless in-place editing."""

import json
import os

import pytest

from interpreter.api import load_ruleset, load_situation, run_situation
from interpreter.errors import InputError, InputErrors

from conftest import FIXTURE, write_ruleset

HEADER = "overlay: t\nextends: mini\nchanges:\n"


def overlay(tmp_path, body, name="o.yaml"):
    path = tmp_path / name
    path.write_text(HEADER + body, encoding="utf-8")
    return path


def errors_of(exc):
    return "\n".join(str(e) for e in getattr(exc, "errors", [exc]))


def test_house_rule_changes_a_modifier_and_the_trace_says_where_it_came_from(tmp_path):
    o = overlay(tmp_path, "  - stack: drm\n    modify: terrain\n    set: {value: 3}\n")
    s = load_situation(FIXTURE / "situations/attack.yaml", (str(o),))
    out = run_situation(s)
    assert out.value["final_dr"] == 8   # dice 2+3, woods now +3 instead of +1
    lines = [e for e in out.trace.events if e["text"].startswith("terrain:")]
    assert lines and lines[0]["from"].startswith(str(o)) and ":4:" in lines[0]["from"]


def test_added_modifier_goes_where_asked(tmp_path):
    o = overlay(tmp_path, "  - stack: drm\n    add: {id: night, value: 1, cite: house rule}\n    after: terrain\n")
    r = load_ruleset(FIXTURE, (str(o),))
    assert [m.id for m in r.stacks["drm"].modifiers][:2] == ["terrain", "night"]


def _labelled(tmp_path, line: str, label: str, change: str, steps: str):
    """The fixture ruleset with ``@label`` put on the line of the attack procedure that is ``line``, and an
    overlay making the ``change`` (replace_step, insert_after...) at that label with these ``steps``."""
    indent = line[:len(line) - len(line.lstrip())]
    root = write_ruleset(tmp_path, {"procedures/fire.ump": (FIXTURE / "procedures/fire.ump").read_text().replace(
        line + "\n", f"{indent}@{label}\n{line}\n")})
    o = tmp_path / "o.yaml"
    o.write_text(f"overlay: t\nextends: mini\nchanges:\n  - procedure: attack\n    {change}: {label}\n"
                 f"    steps: |\n      {steps}\n")
    return root, o


def test_procedure_step_replaced_by_label(tmp_path):
    root, o = _labelled(tmp_path, '    if dr.doubles and leader_drm == 0 cite "1.3":', "cower", "replace_step",
                        'note "house rule: fire groups never cower"')
    s = load_situation(root / "situations/attack.yaml", (str(o),))
    s.dice = [[3, 3], [1, 1]]
    assert run_situation(load_situation(root / "situations/attack.yaml")).value["shift"] == 0  # dice from file
    base = load_situation(root / "situations/attack.yaml")
    base.dice = [[3, 3], [1, 1]]
    assert run_situation(base).value["shift"] == 2           # the base rules cower on doubles
    out = run_situation(s)
    assert out.value["shift"] == 0
    assert any("never cower" in e["text"] for e in out.trace.events)
    assert any(e.get("from", "").startswith(str(o)) for e in out.trace.events)



def test_a_step_put_inside_a_branch_is_marked_as_the_overlays_when_the_branch_first_runs(tmp_path):
    """(a traced run compiles an `if` branch when it first takes it, compiling/lazy.py: by then the compiler has
    compiled other procedures, and the step still says which overlay it came from, and only it does)"""
    root, o = _labelled(tmp_path, "        set cower = 2 if any(f.inexperienced for f in firers) else 1", "cowering",
                        "insert_after", 'note "house rule: cowering noted"')
    s = load_situation(root / "situations/attack.yaml", (str(o),))
    s.dice = [[2, 3], [1, 1]]
    out = run_situation(s)                  # no doubles: the branch is not taken (nor compiled)
    assert not any("cowering noted" in e["text"] for e in out.trace.events)
    s.dice = [[3, 3], [1, 1]]
    out = run_situation(s)                  # doubles: it runs
    at = [i for i, e in enumerate(out.trace.events) if "cowering noted" in e["text"]]
    marked = [e for e in out.trace.events if e.get("from")]
    assert at and [e["text"] for e in marked] == ["overlay step"], marked   # that step's alone
    assert out.trace.events[at[0] - 1] is marked[0] and marked[0]["from"].startswith(f"{o}:7:")

def test_steps_inserted_before_and_after_a_label(tmp_path):
    root = write_ruleset(tmp_path, {"procedures/fire.ump": (FIXTURE / "procedures/fire.ump").read_text().replace(
        '    emit shift = cower\n', '    @shift\n    emit shift = cower\n')})
    o = tmp_path / "o.yaml"
    o.write_text("overlay: t\nextends: mini\nchanges:\n  - procedure: attack\n    insert_before: shift\n    steps: |\n"
                 "      set cower = 0\n  - procedure: attack\n    insert_after: shift\n    steps: |\n"
                 "      emit house = true\n")
    s = load_situation(root / "situations/attack.yaml", (str(o),))
    s.dice = [[3, 3], [1, 1]]
    out = run_situation(s)
    assert out.value["shift"] == 0 and out.value["house"] is True


def test_catalogue_change(tmp_path):
    o = overlay(tmp_path, "  - catalogue: units\n    entry: rifle\n    set: {morale: 9}\n")
    r = load_ruleset(FIXTURE, (str(o),))
    assert r.catalogues["units"].entries["rifle"]["morale"] == 9
    assert r.catalogues["units"].entries["rifle"]["fp"] == 4


def test_stack_cap_changed(tmp_path):
    o = overlay(tmp_path, "  - stack: drm\n    set: {limits: {max: 1}}\n")
    assert load_ruleset(FIXTURE, (str(o),)).stacks["drm"].limit_max == 1


def test_targets_that_do_not_exist_get_did_you_mean(tmp_path):
    o = overlay(tmp_path, "  - stack: drmm\n    remove: terrain\n  - stack: drm\n    remove: terain\n"
                          "  - procedure: attack\n    remove_step: nothing\n")
    with pytest.raises(InputErrors) as e:
        load_ruleset(FIXTURE, (str(o),))
    text = errors_of(e.value)
    assert "no stack 'drmm'" in text and "did you mean 'drm'" in text
    assert "no modifier 'terain'" in text and "did you mean 'terrain'" in text
    assert "no step labelled @nothing" in text
    assert f"{o}:4:" in text


def test_two_overlays_changing_the_same_thing_conflict(tmp_path):
    a = overlay(tmp_path, "  - stack: drm\n    modify: terrain\n    set: {value: 2}\n", "a.yaml")
    b = overlay(tmp_path, "  - stack: drm\n    remove: terrain\n", "b.yaml")
    with pytest.raises(InputErrors) as e:
        load_ruleset(FIXTURE, (str(a), str(b)))
    assert "conflict" in errors_of(e.value) and "a.yaml:4" in errors_of(e.value)


def test_overlay_for_another_ruleset_is_refused(tmp_path):
    o = tmp_path / "o.yaml"
    o.write_text("overlay: t\nextends: aslsk\nchanges: []\n")
    with pytest.raises(InputError, match="extends 'aslsk'"):
        load_ruleset(FIXTURE, (str(o),))


def test_chart_overlay_fills_unknown_cells(tmp_path):
    o = overlay(tmp_path, "  - table: partial\n    set_cells:\n      - {row: 2, column: B, value: 9}\n")
    r = load_ruleset(FIXTURE, (str(o),))
    value, _, _ = r.tables["partial"].lookup(1, "B")
    assert value == 9


def test_chart_value_contradicting_a_revealed_cell_is_refused_with_its_source(tmp_path):
    o = overlay(tmp_path, "  - table: partial\n    set_cells:\n      - {row: 5, column: A, value: 4}\n")
    with pytest.raises(InputErrors) as e:
        load_ruleset(FIXTURE, (str(o),))
    text = errors_of(e.value)
    assert "rulebook reveals 5" in text and "fixture" in text and f"{o}:6:" in text


def test_charts_lists_unknown_cells_and_template_is_a_valid_overlay(cli, tmp_path):
    code, out, err = cli("charts", FIXTURE)
    assert code == 0 and "partial" in out and "1 of 6 cells known, 5 unknown" in out
    code, out, err = cli("charts", FIXTURE, "--template")
    assert code == 0
    assert "- table: partial\n    columns: [\"A\", \"B\", ~]\n" in out    # an empty slot: its columns are open
    assert '"4-6": [5, ~, ~]   # from the rulebook: fixture' in out
    assert "- table: fire\n" not in out           # every cell known, no open axis
    assert "nowhere" in out                       # where on the player aid
    template = tmp_path / "my-charts.yaml"
    template.write_text(out.replace('"≤3": [~, ~, ~]', '"≤3": [~, 7, ~]'))
    code, out2, err = cli("check", FIXTURE, "--with", template)
    assert code == 0, err
    r = load_ruleset(FIXTURE, (str(template),))
    assert r.tables["partial"].lookup(0, "B")[0] == 7


def terrain_drm_house_rule(tmp_path):
    """A ruleset with one situation and an overlay that changes the terrain DRM (for ``umpire diff``)."""
    o = overlay(tmp_path, "  - stack: drm\n    modify: terrain\n    set: {value: 3}\n")
    root = write_ruleset(tmp_path, {"situations/s.yaml": "ruleset: ..\nprocedure: attack\ninputs:\n"
                                    "  firers: [{id: A, counter: rifle}]\n  target: [{id: X, counter: rifle, terrain: woods}]\n"
                                    "  range: 1\n"})
    o2 = tmp_path / "o2.yaml"
    o2.write_text(o.read_text())
    return root, o2


def test_diff_lists_changes_and_outcome_shift(cli, tmp_path):
    root, o2 = terrain_drm_house_rule(tmp_path)
    code, out, err = cli("diff", root, "--with", o2, "--situation", root / "situations/s.yaml", "--by", "result",
                         "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["changes"]["stacks"][0]["name"] == "drm"
    assert abs(sum(r["change"] for r in data["outcomes"])) < 1e-9
    assert any(r["change"] != 0 for r in data["outcomes"])



def test_diff_without_json_prints_the_changes_and_the_outcome_table(cli, tmp_path):
    root, o2 = terrain_drm_house_rule(tmp_path)
    code, out, err = cli("diff", root, "--with", o2, "--situation", root / "situations/s.yaml", "--by", "result")
    assert code == 0, err
    assert out.startswith("stacks:\n  drm: ")
    assert "outcomes of " in out and "before" in out and "after" in out
    assert "%" in out.split("outcomes of ")[1]

def test_diff_shows_each_changed_value_before_and_after_and_json_gives_it_as_data(cli, tmp_path):
    root, o2 = terrain_drm_house_rule(tmp_path)
    o2.write_text(o2.read_text() + "  - stack: drm\n    set: {limits: {max: 1}}\n"
                  "  - catalogue: units\n    entry: rifle\n    set: {morale: 9}\n")
    code, out, err = cli("diff", root, "--with", o2)
    assert code == 0, err
    assert 'drm: changed modifier terrain: value terrain[target.terrain].tem -> 3' in out
    assert "drm: settings: limits max 3 -> max 1" in out and "{'max'" not in out
    assert "units: changed entry rifle: morale 7 -> 9" in out
    code, out, err = cli("diff", root, "--with", o2, "--json")
    changes = json.loads(out)["changes"]
    modify, settings = changes["stacks"]
    assert modify["change"] == {"action": "changed modifier", "item": "terrain", "fields": [
        {"field": "value", "before": "terrain[target.terrain].tem", "after": "3"}]}
    assert settings["change"]["fields"] == [{"field": "limits", "before": "max 3", "after": "max 1"}]
    assert changes["catalogues"][0]["change"]["fields"] == [{"field": "morale", "before": "7", "after": "9"}]
    assert modify["text"].startswith("changed modifier terrain")


def test_diff_keeps_the_situation_s_dice_as_odds_does_and_takes_an_expression_to_group_by(cli, tmp_path):
    root, o2 = terrain_drm_house_rule(tmp_path)
    situation = FIXTURE / "situations/attack.yaml"
    by = 'count(u for u in states if u.state == "broken")'
    outcomes = {}
    for dice in ((), ("--keep-dice",), ("--all-dice",)):
        code, out, err = cli("diff", FIXTURE, "--with", o2, "--situation", situation, "--json", *dice)
        assert code == 0, err
        outcomes[dice] = json.loads(out)["outcomes"]
        code, odds_out, err = cli("odds", situation, "--json", *dice)
        assert code == 0, err
        assert {r["outcome"] for r in outcomes[dice]} >= {r["outcome"] for r in json.loads(odds_out)["outcomes"]}
    assert outcomes[()] == outcomes[("--keep-dice",)]
    assert len(outcomes[("--all-dice",)]) > len(outcomes[()])       # every roll enumerated only when asked
    code, out, err = cli("diff", FIXTURE, "--with", o2, "--situation", situation, "--all-dice", "--by", by)
    assert code == 0, err
    assert f"(by {by})" in out and f"  {by}=0  " in out and f"  {by}=1  " in out
    with pytest.raises(SystemExit):
        cli("diff", FIXTURE, "--with", o2, "--all-dice", "--keep-dice")


# ---- umpire set ---------------------------------------------------------------------------

def test_set_validates_in_place_whatever_else_the_folder_holds_and_never_copies_it(cli, tmp_path, monkeypatch):
    """A symlink to /dev/zero and a FIFO in the ruleset: refused by name (the load reads regular files only),
    nothing copied into $TMPDIR, no hang; without them the same change validates and is written."""
    from test_hostile import hang_guard
    root = write_ruleset(tmp_path, {})
    scratch = tmp_path / "tmpdir"
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))
    import tempfile
    monkeypatch.setattr(tempfile, "tempdir", None)
    target = root / "stacks" / "fire.yaml"
    before = target.read_bytes()
    for name, make in (("zero.yaml", lambda p: os.symlink("/dev/zero", p)), ("pipe.yaml", os.mkfifo)):
        make(root / "tables" / name)
        with hang_guard(60):
            code, out, err = cli("set", target, "stacks.drm.limits.max", "2")
        assert code == 2 and f"tables/{name}" in err and "not a regular file" in err, err
        assert target.read_bytes() == before and not list(scratch.iterdir())
        (root / "tables" / name).unlink()
    code, out, err = cli("set", target, "stacks.drm.limits.max", "2")
    assert code == 0, err
    assert target.read_bytes() == before.replace(b"limits: {max: 3}", b"limits: {max: 2}")
    assert not list(scratch.iterdir())


def test_set_takes_a_symlinked_ruleset_yaml_for_what_it_is_and_keeps_the_link(cli, tmp_path):
    root = write_ruleset(tmp_path, {})
    real = tmp_path / "manifest.yaml"
    (root / "ruleset.yaml").rename(real)
    os.symlink(real, root / "ruleset.yaml")
    text = real.read_text()
    title = next(line for line in text.splitlines() if line.startswith("title:"))
    code, out, err = cli("set", root / "ruleset.yaml", "title", "Renamed")
    assert code == 0, err
    assert (root / "ruleset.yaml").is_symlink() and real.read_text() == text.replace(title, "title: Renamed")


def test_set_says_when_a_hard_link_is_broken(cli, tmp_path):
    root = write_ruleset(tmp_path, {})
    target = root / "stacks" / "fire.yaml"
    other = tmp_path / "other-name.yaml"
    os.link(target, other)
    code, out, err = cli("set", target, "stacks.drm.limits.max", "2")
    assert code == 0, err
    assert "1 other hard link(s)" in err and "keep the old content" in err
    assert b"max: 3" in other.read_bytes() and b"max: 2" in target.read_bytes()
    code, out, err = cli("set", target, "stacks.drm.limits.max", "1")     # no other link now: nothing said
    assert code == 0 and "hard link" not in err


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="giving a file away needs root")
def test_set_keeps_the_file_s_owner_group_and_mode(cli, tmp_path):
    root = write_ruleset(tmp_path, {})
    target = root / "stacks" / "fire.yaml"
    os.chown(target, 12345, 23456)
    target.chmod(0o640)
    code, out, err = cli("set", target, "stacks.drm.limits.max", "2")
    assert code == 0, err
    st = target.stat()
    assert (st.st_uid, st.st_gid, st.st_mode & 0o777) == (12345, 23456, 0o640)



def test_set_changes_one_value_and_keeps_every_other_byte(cli, tmp_path):
    root = write_ruleset(tmp_path, {})
    path = root / "stacks/fire.yaml"
    before = path.read_bytes()
    code, out, err = cli("set", path, "stacks.drm.limits.max", "4")
    assert code == 0, err
    after = path.read_bytes()
    assert after == before.replace(b"limits: {max: 3}", b"limits: {max: 4}")
    # by id in a list, keeping the quoting style of the old value
    code, out, err = cli("set", path, "stacks.drm.modifiers.smoke.times", "floor(smoke / 2)")
    assert code == 0, err
    assert path.read_bytes() == after.replace(b'times: "ceil(smoke / 2)"', b'times: "floor(smoke / 2)"')
    assert load_ruleset(root).stacks["drm"].limit_max == 4


def test_set_keeps_comments_and_crlf_line_endings(cli, tmp_path):
    root = write_ruleset(tmp_path, {})
    path = root / "catalogues/units.yaml"
    text = path.read_text().replace("\n", "\r\n").replace("entries:", "entries:   # the counters")
    path.write_bytes(text.encode())
    code, out, err = cli("set", path, "catalogues.units.entries.rifle.morale", "8")
    assert code == 0, err
    assert path.read_bytes() == text.replace("rifle: {fp: 4, morale: 7}", "rifle: {fp: 4, morale: 8}").encode()


def test_set_that_would_make_the_file_invalid_writes_nothing(cli, tmp_path):
    root = write_ruleset(tmp_path, {})
    path = root / "stacks/fire.yaml"
    before = path.read_bytes()
    code, out, err = cli("set", path, "stacks.fp_multipliers.combine", "average")
    assert code == 2 and "expected one of: sum, product" in err
    code, out, err = cli("set", path, "stacks.drm.modifiers.terrain.value", "terrain[target.terain].tem")
    assert code == 2 and "did you mean" in err and str(path) in err
    code, out, err = cli("set", path, "stacks.drm.modifier.terrain.value", "1")
    assert code == 2 and "did you mean 'modifiers'" in err
    assert path.read_bytes() == before


def test_added_procedure_is_marked_in_the_trace_and_runs(tmp_path):
    o = tmp_path / "o.yaml"
    o.write_text("overlay: t\nextends: mini\nchanges:\n  - add_procedures: |\n"
                 "      procedure double_check(unit: unit):\n          let a = call morale_check(unit: unit)\n"
                 "          let b = call morale_check(unit: unit)\n          return [a.state, b.state]\n")
    root = write_ruleset(tmp_path, {"situations/d.yaml": "ruleset: ..\nprocedure: double_check\n"
                                    "inputs: {unit: {id: X, counter: rifle}}\ndice: [[6, 6], [1, 1]]\n"})
    out = run_situation(load_situation(root / "situations/d.yaml", (str(o),)))
    assert out.value == ("broken", "ok")
    call = out.trace.events[0]
    assert call["kind"] == "call" and call["from"].startswith(f"{o}:5:")
    with pytest.raises(InputErrors, match="already has a procedure 'attack'"):
        o2 = tmp_path / "o2.yaml"
        o2.write_text("overlay: t\nextends: mini\nchanges:\n  - add_procedures: |\n"
                      "      procedure attack():\n          return 1\n")
        load_ruleset(FIXTURE, (str(o2),))


_NO_AXES = """tables:
  secret:
    title: A chart the rulebook only names
    cite: "9.9"
    structure: unknown
  scale:
    title: A chart whose rows the rulebook shows in part
    rows: {title: letter, match: exact, headings: [D], open: true}
    cells:
      - {row: D, value: 7, source: "9.9 example"}
"""

_READS = """procedure read_secret(x: int):
    return lookup(secret, row: x)

procedure read_scale(x: text):
    return lookup(scale, row: x)
"""


def test_a_table_of_unknown_structure_stops_every_lookup_and_charts_say_so(cli, tmp_path):
    root = write_ruleset(tmp_path, {"tables/more.yaml": _NO_AXES, "procedures/reads.ump": _READS})
    from test_language import run
    out = run("read_secret", {"x": 3}, root=root)
    assert out.status == "error" and "needs chart" in str(out.error.kind) and "neither its rows nor its columns" in out.reason
    assert run("read_scale", {"x": "D"}, root=root).value == 7
    out = run("read_scale", {"x": "E"}, root=root)
    assert out.status == "error" and "needs chart" in out.error.kind
    code, text, err = cli("charts", root)
    assert code == 0
    assert "secret: A chart the rulebook only names\n  structure unknown" in text
    assert "1 of 1 cells known, 0 unknown\n  rows open: the rulebook shows only some" in text
    assert "3 tables have rows or columns the rulebook does not show" in text   # the fixture has one too
    code, template, err = cli("charts", root, "--template")
    assert code == 0 and "- table: secret" in template and "replace:" in template
    assert "- table: scale\n    grid:\n      \"D\": 7   # from the rulebook: MINI 9.9 example" in template
    code, out, err = cli("check", root)
    assert "'secret' is never used" not in out + err   # declared only to record that the rulebook names it


def test_check_warns_of_an_unused_table_unless_it_is_kept_for_players_to_read(cli, tmp_path):
    tables = """tables:
  printed:
    title: A chart the rulebook prints for players
    reference: true
    rows: {title: kind, match: exact, headings: [a, b]}
    grid: {a: [1], b: [2]}
  forgotten:
    title: A chart no procedure reads
    rows: {title: kind, match: exact, headings: [a]}
    grid: {a: [1]}
"""
    root = write_ruleset(tmp_path, {"tables/more.yaml": tables})
    code, out, err = cli("check", root)
    assert code == 0
    assert "table 'forgotten' is never used by a procedure" in out + err
    assert "'printed'" not in out + err
    code, text, err = cli("charts", root)
    assert "printed: A chart the rulebook prints for players" in text     # still listed for players


def test_a_table_of_unknown_structure_may_be_replaced_by_a_chart_overlay(tmp_path):
    root = write_ruleset(tmp_path, {"tables/more.yaml": _NO_AXES, "procedures/reads.ump": _READS})
    chart = tmp_path / "chart.yaml"
    chart.write_text("overlay: mine\nextends: mini\nkind: charts\nchanges:\n  - table: secret\n    replace:\n"
                     "      title: my secret chart\n      rows: {match: exact, headings: [3]}\n      grid: {3: [5]}\n"
                     "      source: my chart\n")
    r = load_ruleset(root, (str(chart),))
    assert r.tables["secret"].lookup(3)[0] == 5


def test_a_table_cannot_both_be_of_unknown_structure_and_list_rows(tmp_path):
    bad = _NO_AXES.replace("    structure: unknown\n", "    structure: unknown\n    rows: {match: exact, headings: [1]}\n")
    root = write_ruleset(tmp_path, {"tables/more.yaml": bad})
    with pytest.raises(Exception) as e:
        load_ruleset(root)
    assert "more.yaml" in str(e.value) or "more.yaml" in errors_of(e.value)


def test_a_case_may_change_some_inputs_of_the_situation_it_reuses(tmp_path):
    from interpreter.tools.testing import load_cases, run_case
    root = write_ruleset(tmp_path, {"tests/changes.yaml": """ruleset: ..
cases:
  - id: longer
    situation: ../situations/attack.yaml
    change_inputs: {range: 8}
    expect: {fp: 7/2}
  - id: all-replaced
    situation: ../situations/attack.yaml
    inputs: {firers: [{id: A, counter: rifle}], target: [{id: X, counter: rifle}], range: 8}
    expect: {fp: 2}
  - id: bad-change
    situation: ../situations/attack.yaml
    change_inputs: {range: far}
    expect: {fp: 2}
"""})
    cases = {c.id: c for c in load_cases(root / "tests" / "changes.yaml")}
    longer = run_case(cases["longer"])
    assert longer.passed, longer.problems      # the firers and target still come from the situation
    assert run_case(cases["all-replaced"]).passed
    with pytest.raises(InputErrors) as e:
        run_case(cases["bad-change"])
    assert "changes.yaml:13:28" in str(e.value) and "whole number" in str(e.value)


def test_a_process_keeps_a_bounded_number_of_loaded_rulesets(tmp_path):
    # a workbench worker is handed a new house rule on every request: each makes a ruleset, and the
    # process must drop the least recently used ones rather than grow without end
    from interpreter import api
    api.clear_cache()
    overlays = [overlay(tmp_path, f"  - stack: drm\n    modify: terrain\n    set: {{value: {i}}}\n", f"o{i}.yaml")
                for i in range(api.KEPT_LOADS + 1)]
    first = load_ruleset(FIXTURE, (str(overlays[0]),))
    loaded = [load_ruleset(FIXTURE, (str(o),)) for o in overlays[1:-1]]
    assert load_ruleset(FIXTURE, (str(overlays[0]),)) is first     # used again: now the most recent
    load_ruleset(FIXTURE, (str(overlays[-1]),))                      # one more than the bound
    assert len(api._CACHE) == api.KEPT_LOADS
    assert load_ruleset(FIXTURE, (str(overlays[0]),)) is first      # kept: it was used recently
    again = load_ruleset(FIXTURE, (str(overlays[1]),))              # the least recently used was dropped
    assert again is not loaded[0] and len(api._CACHE) == api.KEPT_LOADS
    assert load_ruleset(FIXTURE, (str(overlays[3]),)) is loaded[2]      # the rest are kept
    api.clear_cache()


def test_a_test_case_may_bring_its_own_overlays_after_the_files(tmp_path):
    # the file's overlay makes woods +3 (final DR 8); one case adds a second overlay, a -1 modifier (final DR 7)
    root = write_ruleset(tmp_path, {})
    (root / "woods3.yaml").write_text(HEADER + "  - stack: drm\n    modify: terrain\n    set: {value: 3}\n")
    (root / "night.yaml").write_text("overlay: night\nextends: mini\nchanges:\n  - stack: drm\n"
                                     "    add: {id: night, value: -1, cite: house rule}\n    after: terrain\n")
    (root / "tests" / "cases.yaml").write_text(
        "ruleset: ..\nwith: [../woods3.yaml]\ncases:\n"
        "  - id: FILE-ONLY\n    situation: ../situations/attack.yaml\n    expect: {final_dr: 8}\n"
        "  - id: OWN-TOO\n    situation: ../situations/attack.yaml\n    with: [../night.yaml]\n"
        "    expect: {final_dr: 7}\n")
    from interpreter.tools.testing import collect, run_case
    cases = {c.id: c for c in collect(root)}
    assert cases["OWN-TOO"].overlays == (str(root / "tests/../woods3.yaml"), str(root / "tests/../night.yaml"))
    for case in cases.values():
        result = run_case(case)
        assert result.passed, (case.id, result.problems)


# ---- chart overlays: the cells the rulebook reveals, on every route --------------------------

_CONTRADICTIONS = {
    # route: (change text, line and column of the contradicting value in the overlay)
    "set_cells": ("  - table: partial\n    set_cells:\n      - {row: 5, column: A, value: 4}\n", "6:36"),
    "grid": ('  - table: partial\n    grid:\n      "4-6": [4, "?"]\n', "6:15"),
    "replace": ('  - table: partial\n    replace:\n      title: my partial chart\n'
                '      rows: {title: roll, match: bands, headings: ["≤3", "4-6", "≥7"]}\n'
                '      columns: {title: letter, match: exact, headings: [A, B]}\n'
                '      source: my card\n      grid:\n        "≤3": [1, 2]\n        "4-6": [4, 3]\n'
                '        "≥7": [5, 6]\n', "12:17"),
}


@pytest.mark.parametrize("route", sorted(_CONTRADICTIONS))
def test_a_chart_contradicting_a_revealed_cell_is_refused_on_every_route(tmp_path, route):
    body, at = _CONTRADICTIONS[route]
    o = overlay(tmp_path, body)
    with pytest.raises(InputErrors) as e:
        load_ruleset(FIXTURE, (str(o),))
    text = errors_of(e.value)
    assert "table 'partial' row 4-6, column A: your chart says 4, but the rulebook reveals 5 (fixture)" in text
    assert f"{o}:{at}" in text


def test_a_whole_table_replacement_keeps_the_revealed_cells(tmp_path):
    # the replacement leaves the revealed cell blank: it keeps the book's value and source
    o = overlay(tmp_path, '  - table: partial\n    replace:\n      title: my partial chart\n'
                          '      rows: {title: roll, match: bands, headings: ["≤3", "4-6", "≥7"]}\n'
                          '      columns: {title: letter, match: exact, headings: [A, B]}\n'
                          '      source: my card\n      grid:\n        "≤3": [1, 2]\n        "4-6": ["?", 3]\n'
                          '        "≥7": [5, 6]\n')
    t = load_ruleset(FIXTURE, (str(o),)).tables["partial"]
    assert t.lookup(5, "A")[0] == 5 and t.sources[(1, 0)] == "fixture"
    assert t.lookup(5, "B")[0] == 3
    # a replacement without the rulebook's column A is refused too
    o = overlay(tmp_path, '  - table: partial\n    replace:\n      title: my partial chart\n'
                          '      rows: {title: roll, match: bands, headings: ["≤3", "4-6", "≥7"]}\n'
                          '      columns: {title: letter, match: exact, headings: [B]}\n'
                          '      source: my card\n      grid: {"≤3": [2], "4-6": [3], "≥7": [6]}\n', "o2.yaml")
    with pytest.raises(InputErrors) as e:
        load_ruleset(FIXTURE, (str(o),))
    assert "rulebook reveals 5 (fixture), but your table 'partial' has no column 'A'" in errors_of(e.value)
    assert f"{o}:4:" in errors_of(e.value)


def test_valor_and_victory_armour_chart_replaced_with_a_wrong_printed_cell_is_refused(tmp_path):
    from conftest import ROOT
    o = tmp_path / "vv.yaml"
    o.write_text("overlay: mine\nextends: valor-and-victory\nkind: charts\nchanges:\n"
                 "  - table: armor_elimination\n    replace:\n      title: TEST FIXTURE (made-up values)\n"
                 "      rows: {match: exact, headings: [D]}\n      columns: {match: exact, headings: [D, E]}\n"
                 "      source: TEST FIXTURE\n      grid: {D: [6, 5]}\n")
    with pytest.raises(InputErrors) as e:
        load_ruleset(ROOT / "rulesets/valor-and-victory", (str(o),))
    text = errors_of(e.value)
    assert "column D: your chart says 6, but the rulebook reveals 7" in text
    assert "Anti-Tank Combat Example" in text and f"{o}:11:" in text


# ---- chart overlays: axes the rulebook leaves open -------------------------------------------

def _adjudicate(root, overlays, proc_name, args):
    from interpreter.api import adjudicate, find_procedure
    from interpreter.model.dice import GivenDice
    r = load_ruleset(root, tuple(map(str, overlays)))
    return adjudicate(r, find_procedure(r, proc_name), args, GivenDice([], 0), None)


_LHY_BAND = """overlay: band-fixture
title: TEST FIXTURE (made-up range band, NOT the real chart)
extends: last-hundred-yards
kind: test fixture
changes:
  - table: sa_range_band
    set_cells:
      - {row: 3, column: 8, value: close}   # TEST FIXTURE value
  - add_procedures: |
      procedure read_band(distance: int, printed: int):
          return lookup(sa_range_band, row: distance, column: printed)
"""


def test_a_new_row_on_an_open_axis_is_added_and_read_by_an_adjudication(tmp_path):
    from conftest import ROOT
    lhy = ROOT / "rulesets/last-hundred-yards"
    o = tmp_path / "band.yaml"
    o.write_text(_LHY_BAND)
    assert _adjudicate(lhy, [o], "read_band", {"distance": 3, "printed": 8}).value == "close"
    assert _adjudicate(lhy, [o], "read_band", {"distance": 8, "printed": 8}).value == "long"   # the book's cell
    out = _adjudicate(lhy, [o], "read_band", {"distance": 5, "printed": 8})
    assert out.status == "error" and "needs chart" in out.error.kind        # still open: 5 is not on it
    # a new column too (the printed range 6), and a printed cell still checked
    o.write_text(_LHY_BAND.replace("      - {row: 3, column: 8, value: close}   # TEST FIXTURE value\n",
                                   "      - {row: 3, column: 6, value: medium}   # TEST FIXTURE value\n"))
    assert _adjudicate(lhy, [o], "read_band", {"distance": 3, "printed": 6}).value == "medium"
    o.write_text(_LHY_BAND.replace("row: 3, column: 8, value: close", "row: 8, column: 8, value: close"))
    with pytest.raises(InputErrors, match=r"your chart says close, but the rulebook reveals long \(.*11.3.2 example"):
        load_ruleset(lhy, (str(o),))


_PG_DIRECT_FIRE = """overlay: pg-fire-fixture
title: TEST FIXTURE (made-up Direct Fire Table, NOT the real chart)
extends: panzer-grenadier
kind: test fixture
changes:
  - table: direct_fire_table
    columns: [1, 2, 4, 7, 11, 16, 22, 28]
    grid:          # TEST FIXTURE values
      2:  [X, X, X, 2X, 2X, 3X, 3X, 4X]
      3:  [M, M, X, X, 2X, 2X, 3X, 3X]
      4:  [-, M, M, M1, M1, X, X, 2X]
      5:  [-, -, M, M, M1, X, X, 2X]
      6:  [-, -, -, M, M, M1, X, X]
      7:  [-, -, -, -, M, M, M1, X]
      8:  [-, -, -, -, -, M, M, M1]
      9:  [-, -, -, -, -, -, M, M]
      10: [-, -, -, -, -, -, -, M]
      11: [-, -, -, -, -, -, -, -]
      12: [-, -, -, -, -, -, -, -]
  - add_procedures: |
      procedure read_fire(roll: int, strength: int):
          return lookup(direct_fire_table, row: roll, column: strength)
"""


def test_a_card_s_column_headings_extend_an_open_axis_and_the_new_columns_are_read(tmp_path):
    from conftest import ROOT
    pg = ROOT / "rulesets/panzer-grenadier"
    o = tmp_path / "fire.yaml"
    o.write_text(_PG_DIRECT_FIRE)
    t = load_ruleset(pg, (str(o),)).tables["direct_fire_table"]
    assert t.columns.headings == [1, 2, 4, 7, 11, 16, 22, 28] and not t.columns.open
    assert t.sources[(2, 4)] == load_ruleset(pg).tables["direct_fire_table"].sources[(2, 2)]   # book's M1 kept
    assert str(_adjudicate(pg, [o], "read_fire", {"roll": 3, "strength": 1}).value["text"]) == "M"
    assert str(_adjudicate(pg, [o], "read_fire", {"roll": 2, "strength": 40}).value["text"]) == "4X"   # 28 and up
    # the rulebook's headings are checked: 4, 7, 11, 16, 22 run side by side on the card
    o.write_text(_PG_DIRECT_FIRE.replace("[1, 2, 4, 7, 11, 16, 22, 28]", "[1, 2, 4, 7, 9, 11, 16, 22]"))
    with pytest.raises(InputErrors) as e:
        load_ruleset(pg, (str(o),))
    assert "do not run as the rulebook's do: it shows 4, 7, 11, 16, 22 side by side" in errors_of(e.value)
    assert f"{o}:7:14" in errors_of(e.value)
    o.write_text(_PG_DIRECT_FIRE.replace("[1, 2, 4, 7, 11, 16, 22, 28]", "[1, 2, 7, 11, 16, 22, 28]"))
    with pytest.raises(InputErrors, match="your card's columns lack '4'"):
        load_ruleset(pg, (str(o),))


def test_a_new_heading_is_refused_where_the_rulebook_closes_the_axis_or_leaves_no_gap(tmp_path):
    # the fixture's partial table: rows (bands) printed in full, columns (letters) open
    o = overlay(tmp_path, "  - table: partial\n    set_cells:\n      - {row: 8-9, column: A, value: 1}\n")
    with pytest.raises(InputErrors) as e:
        load_ruleset(FIXTURE, (str(o),))
    assert "table 'partial' has no row '8-9'" in errors_of(e.value)
    assert "the rulebook prints all of its rows" in errors_of(e.value) and f"{o}:6:" in errors_of(e.value)
    o = overlay(tmp_path, "  - table: partial\n    set_cells:\n      - {row: 5, column: C, value: 1}\n")
    t = load_ruleset(FIXTURE, (str(o),)).tables["partial"]
    assert t.columns.headings == ["A", "B", "C"] and t.lookup(5, "C")[0] == 1 and t.lookup(5, "A")[0] == 5
    from conftest import ROOT
    o = tmp_path / "pg.yaml"
    o.write_text("overlay: x\nextends: panzer-grenadier\nkind: test fixture\nchanges:\n"
                 "  - table: direct_fire_table\n    set_cells:\n      - {row: 2, column: 9, value: M}\n"
                 "  - table: bombardment_table\n    set_cells:\n      - {row: 2, column: 8, value: M}\n"
                 "      - {row: 2, column: 30, value: M}\n")
    with pytest.raises(InputErrors) as e:
        load_ruleset(ROOT / "rulesets/panzer-grenadier", (str(o),))
    assert "shows columns 7 and 11 side by side on table 'direct_fire_table'; there is no column '9'" in errors_of(e.value)
    # the unnamed column between 5 and 12 takes the heading 8; 30 goes at the end
    o.write_text(o.read_text().replace("  - table: direct_fire_table\n    set_cells:\n      - {row: 2, column: 9, value: M}\n", ""))
    t = load_ruleset(ROOT / "rulesets/panzer-grenadier", (str(o),)).tables["bombardment_table"]
    assert t.columns.headings == [5, 8, 12, 30] and t.columns.open


def test_a_mistyped_result_code_gets_did_you_mean(tmp_path):
    o = overlay(tmp_path, "  - table: fire\n    set_cells:\n      - {row: 2, column: 1, value: 1KAI}\n")
    with pytest.raises(InputErrors) as e:
        load_ruleset(FIXTURE, (str(o),))
    text = errors_of(e.value)
    assert "'1KAI' matches none of table 'fire''s result codes" in text and "did you mean '1KIA'" in text
    assert f"{o}:6:" in text


# ---- templates a person can fill: grids in card order, YAML and CSV ------------------------------

def _cells(table):
    from interpreter.model.values import show
    return {(table.rows.label(ri), table.columns.label(ci) if table.columns else None): show(v)
            for ri, row in enumerate(table.cells) for ci, v in enumerate(row) if v is not __import__(
                "interpreter.model.tables", fromlist=["UNKNOWN"]).UNKNOWN}


@pytest.mark.parametrize("fmt", ["yaml", "csv"])
def test_a_template_filled_in_and_read_back_gives_the_same_cells(cli, tmp_path, fmt):
    from conftest import ROOT
    pg = ROOT / "rulesets/panzer-grenadier"
    code, out, err = cli("charts", pg, "--template", "direct_fire_table", "terrain_effects", "--format", fmt)
    assert code == 0, err
    book = load_ruleset(pg)
    # unchanged, the template is a valid chart overlay that changes no cell
    blank = tmp_path / f"blank.{fmt}"
    blank.write_text(out)
    same = load_ruleset(pg, (str(blank),))
    for name in ("direct_fire_table", "terrain_effects"):
        assert _cells(same.tables[name]) == _cells(book.tables[name])
    assert same.tables["direct_fire_table"].columns.open          # the empty slots left it open
    # filled with TEST FIXTURE values: two new columns (1 and 28) and some cells
    if fmt == "yaml":
        filled = out.replace("columns: [~, 4, 7, 11, 16, 22, ~]", "columns: [1, 4, 7, 11, 16, 22, 28]")
        filled = filled.replace("      2: [~, ~, ~, ~, ~, ~, ~]", "      2: [X, ~, ~, ~, ~, ~, 4X]")
        filled = filled.replace('"road": [~, ~, ~, ~, "1/2", ~]', '"road": [0, ~, ~, ~, "1/2", ~]')
    else:
        lines = out.splitlines()
        head = next(i for i, l in enumerate(lines) if l.startswith("2d6 roll"))
        assert lines[head] == "2d6 roll \\ total fire strength,,4,7,11,16,22,"
        lines[head] = "2d6 roll \\ total fire strength,1,4,7,11,16,22,28"
        assert lines[head + 1] == "2,,,,,,,"
        lines[head + 1] = "2,X,,,,,,4X"
        road = lines.index("road,,,,,1/2,")
        lines[road] = "road,0,,,,1/2,"
        filled = "\n".join(lines) + "\n"
    mine = tmp_path / f"mine.{fmt}"
    mine.write_text(filled)
    r = load_ruleset(pg, (str(mine),))
    fire = r.tables["direct_fire_table"]
    assert fire.columns.headings == [1, 4, 7, 11, 16, 22, 28] and not fire.columns.open
    want = {**_cells(book.tables["direct_fire_table"]), ("2", "1"): "X", ("2", "28"): "4X"}
    assert _cells(fire) == want
    assert _cells(r.tables["terrain_effects"]) == {**_cells(book.tables["terrain_effects"]), ("road", "df_shift"): "0"}


def test_a_csv_chart_gives_positioned_errors_with_did_you_mean(cli, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("# TEST FIXTURE chart\nextends,mini\ntable,partial\nroll \\ letter,A,B\n\"4-6\",4,\n")
    code, out, err = cli("check", FIXTURE, "--with", bad)
    assert code == 2 and "Traceback" not in err
    assert f"{bad}:5:7: error: table 'partial' row 4-6, column A: your chart says 4, but the rulebook reveals 5" in err
    bad.write_text("extends,mini\ntable,fire\nfinal DR \\ FP,1,2,4,8\n2,1MC,1KAI,1KIA,2KIA\n")
    code, out, err = cli("check", FIXTURE, "--with", bad)
    assert code == 2 and f"{bad}:4:7: error: '1KAI' matches none" in err and "did you mean '1KIA'" in err
    bad.write_text("extends,mini\ntabel,fire\n")
    code, out, err = cli("check", FIXTURE, "--with", bad)
    assert code == 2 and f"{bad}:2:1:" in err and "did you mean 'table'" in err
    bad.write_text("table,fire\n")
    code, out, err = cli("check", FIXTURE, "--with", bad)
    assert code == 2 and "extends,RULESET" in err and "Traceback" not in err
