"""Exact odds and simulation, checked against hand computation and against each other."""

from fractions import Fraction

import pytest

from interpreter.errors import LimitError

from interpreter.api import load_situation
from interpreter.odds.exact import exact_odds
from interpreter.odds.simulation import simulate

from conftest import FIXTURE, ROOT, write_ruleset


def situation(path, drop_dice=True):
    s = load_situation(path)
    if drop_dice:
        s.dice, s.dice_positions = [], []
    return s


def shares(report):
    return {label: p for label, p, _ in report.rows}


def test_morale_check_against_morale_7_passes_21_in_36(tmp_path):
    root = write_ruleset(tmp_path, {"situations/mc.yaml":
                                    "ruleset: ..\nprocedure: morale_check\ninputs: {unit: {id: X, counter: rifle}}\n"})
    report = exact_odds(situation(root / "situations/mc.yaml"), ["state"])
    got = shares(report)
    assert got["state=ok"] + got["state=pinned"] == Fraction(21, 36)
    assert got["state=pinned"] == Fraction(6, 36)
    assert got["state=broken"] == Fraction(15, 36)
    assert report.total == 1


def test_given_dice_stay_fixed(tmp_path):
    root = write_ruleset(tmp_path, {})
    s = load_situation(root / "situations/attack.yaml")
    s.dice = s.dice[:1]   # the attack roll is fixed; the morale check is enumerated
    got = shares(exact_odds(s, ["states"]))
    assert got == {"states=[{id: X, state: broken}]": Fraction(15, 36),
                   "states=[{id: X, state: ok}]": Fraction(15, 36),
                   "states=[{id: X, state: pinned}]": Fraction(6, 36)}


def test_unknown_cells_get_their_own_line_never_a_guess(tmp_path):
    root = write_ruleset(tmp_path, {"situations/p.yaml":
                                    "ruleset: ..\nprocedure: partial_read\ninputs: {roll: 5, letter: B}\n"})
    report = exact_odds(situation(root / "situations/p.yaml"), [])
    assert [r[0] for r in report.rows] == ["needs chart: partial row 4-6, column B"]


def test_every_distribution_sums_to_exactly_one():
    paths = [FIXTURE / "situations/attack.yaml"] + sorted((ROOT / "rulesets").glob("*/situations/*.yaml"))
    for path in paths:
        report = exact_odds(situation(path), [], budget=500_000)
        assert report.total == 1, path


def test_sub_procedures_are_shared_not_rerun(tmp_path):
    root = write_ruleset(tmp_path, {"situations/a.yaml":
                                    "ruleset: ..\nprocedure: attack\ninputs:\n"
                                    "  firers: [{id: A, counter: rifle}, {id: B, counter: rifle}]\n"
                                    "  target: [{id: X, counter: rifle}, {id: Y, counter: green}]\n  range: 1\n"})
    report = exact_odds(situation(root / "situations/a.yaml"), [])
    assert report.total == 1
    assert report.paths < 36 * 36 * 36 // 10   # far fewer than full re-runs
    assert report.memo_hits > 0


def test_path_budget_refuses_and_suggests_simulate(tmp_path):
    from interpreter.errors import LimitError
    root = write_ruleset(tmp_path, {})
    with pytest.raises(LimitError, match="simulate"):
        exact_odds(situation(root / "situations/attack.yaml"), [], budget=10)


AGREEMENT = [
    (FIXTURE / "situations/attack.yaml", ["result"]),
    (ROOT / "rulesets/aslsk/situations/morale_check_boxcars_elr.yaml", ["outcome"]),
    (ROOT / "rulesets/aslsk/situations/prep_fire_inexperienced_cower.yaml", []),
    (ROOT / "rulesets/panzer-grenadier/situations/morale_demoralized_unit.yaml", []),
    (ROOT / "rulesets/last-hundred-yards/situations/cohesion_check_section.yaml", []),
    (ROOT / "rulesets/last-hundred-yards/situations/at_resolution_two_markers.yaml", []),
    (ROOT / "rulesets/valor-and-victory/situations/close_assault_building.yaml", []),
]


@pytest.mark.parametrize("path,by", AGREEMENT, ids=[f"{p.parent.parent.name}/{p.stem}" for p, _ in AGREEMENT])
def test_simulation_agrees_with_exact_odds_within_four_standard_errors(path, by):
    s = situation(path)
    exact = shares(exact_odds(s, by))
    sim = simulate(s, 4000, seed=12345, by=by)
    seen = {label for label, _, _ in sim.rows}
    assert seen <= set(exact), f"simulation produced outcomes exact odds never gave: {seen - set(exact)}"
    for label, p in exact.items():
        est = shares(sim).get(label, Fraction(0))
        se = max((float(p) * (1 - float(p)) / 4000) ** 0.5, 1e-9)
        assert abs(float(est) - float(p)) <= 4 * se + 1e-12, (label, float(p), float(est))


def test_cli_odds_json_and_text(cli, tmp_path):
    root = write_ruleset(tmp_path, {"situations/mc.yaml":
                                    "ruleset: ..\nprocedure: morale_check\ninputs: {unit: {id: X, counter: rifle}}\n"})
    code, out, err = cli("odds", root / "situations/mc.yaml", "--by", "state")
    assert code == 0 and "5/12" in out and "41.67%" in out
    code, out, err = cli("odds", root / "situations/mc.yaml", "--by", "state", "--json")
    import json
    data = json.loads(out)
    assert sum(Fraction(o["fraction"]) for o in data["outcomes"]) == 1
    code, out, err = cli("simulate", root / "situations/mc.yaml", "-n", "500", "--seed", "3", "--by", "state")
    assert code == 0 and "500 runs, seed 3" in out


def _situations():
    paths = [FIXTURE / "situations/attack.yaml"] + sorted((ROOT / "rulesets").glob("*/situations/*.yaml"))
    return [pytest.param(p, id=f"{p.parent.parent.name}/{p.stem}") for p in paths]


@pytest.mark.parametrize("path", _situations())
def test_merging_unneeded_fields_never_changes_the_odds(path):
    """For every result field as the grouping (and for the whole result), the shares are identical."""
    s = situation(path)
    fields = set()
    from interpreter.odds.paths import Enumerator
    values = Enumerator(s.ruleset, s.choices, 500_000).distribution(s.procedure, s.args, s.dice)
    for v in values:
        if hasattr(v, "keys"):
            fields |= set(v.keys())
    for f in sorted(fields)[:3] + [None]:       # the whole result and three fields: CI's time on two cores
        by = [f] if f else []
        try:
            unmerged = shares(exact_odds(s, by, budget=20_000, merge_unneeded=False))
        except LimitError:
            continue                                 # too big to check without merging; covered elsewhere
        assert shares(exact_odds(s, by, budget=500_000)) == unmerged, f


def test_an_expression_over_a_list_result_reads_the_whole_result(tmp_path):
    """`value` names a result that is not a record: grouping by it must not merge its items away."""
    root = write_ruleset(tmp_path, {
        "procedures/checks.ump": "procedure checks(stack: list[unit]):\n    let out = []\n"
                                 "    for each u in stack:\n        set out = out + [call morale_check(unit: u)]\n"
                                 "    return out\n",
        "situations/two.yaml": "ruleset: ..\nprocedure: checks\n"
                               "inputs: {stack: [{id: X, counter: rifle}, {id: Y, counter: rifle}]}\n"})
    s = situation(root / "situations/two.yaml")
    by = ['count(c for c in value if c.state == "broken")']
    got = shares(exact_odds(s, by))
    broken, holds = Fraction(15, 36), Fraction(21, 36)     # 2d6 above morale 7, each unit on its own
    assert got == {f"{by[0]}=0": holds * holds, f"{by[0]}=1": 2 * broken * holds, f"{by[0]}=2": broken * broken}
    assert got == shares(exact_odds(s, by, merge_unneeded=False))


def test_a_with_over_a_result_keeps_its_independent_checks_apart(tmp_path):
    """`r with {...}` passes r's other fields on: twelve units' checks stay twelve small distributions, not the
    3**12 combinations of their states, and the count comes out as the binomial of one unit's chance."""
    from math import comb
    root = write_ruleset(tmp_path, {
        "procedures/checks.ump": "procedure all_checks(stack: list[unit]):\n    let out = []\n"
                                 "    for each u in stack:\n        set out = out + [call morale_check(unit: u)]\n"
                                 "    return {results: out}\n\n"
                                 "procedure tagged(stack: list[unit]):\n    let r = call all_checks(stack: stack)\n"
                                 "    return r with {tag: 1}\n",
        "situations/twelve.yaml": "ruleset: ..\nprocedure: tagged\ninputs: {stack: ["
                                  + ", ".join(f"{{id: U{i}, counter: rifle}}" for i in range(12)) + "]}\n"})
    by = ['count(c for c in results if c.state == "broken")']
    report = exact_odds(situation(root / "situations/twelve.yaml"), by)
    broken = Fraction(15, 36)
    assert shares(report) == {f"{by[0]}={k}": comb(12, k) * broken ** k * (1 - broken) ** (12 - k) for k in range(13)}
    assert report.states < 100


def test_unordered_dice_only_when_the_procedure_cannot_tell_them_apart(tmp_path):
    root = write_ruleset(tmp_path, {"procedures/extra.ump":
                                    "procedure colored_low():\n    roll dr = DR\n    return dr.colored <= 2\n\n"
                                    "procedure total_low():\n    roll dr = DR\n    return dr.original <= 4\n",
                                    "situations/c.yaml": "ruleset: ..\nprocedure: colored_low\n",
                                    "situations/t.yaml": "ruleset: ..\nprocedure: total_low\n"})
    c = exact_odds(situation(root / "situations/c.yaml"), [], quick_paths=0)
    t = exact_odds(situation(root / "situations/t.yaml"), [], quick_paths=0)
    assert shares(c)["true"] == Fraction(1, 3) and c.states == 36     # live states after the roll
    assert shares(t)["true"] == Fraction(6, 36) and t.states == 11     # read only by its total: 2..12
    c = exact_odds(situation(root / "situations/c.yaml"), [], merge_states=False)
    t = exact_odds(situation(root / "situations/t.yaml"), [], merge_states=False)
    assert shares(c)["true"] == Fraction(1, 3) and c.paths == 36       # paths through the dice
    assert shares(t)["true"] == Fraction(6, 36) and t.paths == 21


def test_plot_writes_a_png(cli, tmp_path):
    pytest.importorskip("matplotlib")
    root = write_ruleset(tmp_path, {"situations/mc.yaml":
                                    "ruleset: ..\nprocedure: morale_check\ninputs: {unit: {id: X, counter: rifle}}\n"})
    out_png = tmp_path / "odds.png"
    code, out, err = cli("odds", root / "situations/mc.yaml", "--by", "state", "--plot", out_png)
    assert code == 0 and out_png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_without_matplotlib_is_a_clear_error(cli, tmp_path, monkeypatch):
    import sys
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    root = write_ruleset(tmp_path, {"situations/mc.yaml":
                                    "ruleset: ..\nprocedure: morale_check\ninputs: {unit: {id: X, counter: rifle}}\n"})
    code, out, err = cli("odds", root / "situations/mc.yaml", "--plot", tmp_path / "x.png")
    assert code == 2 and "needs matplotlib" in err and "Traceback" not in err


def test_a_misspelt_by_field_is_an_input_error_with_did_you_mean(cli, tmp_path):
    root = write_ruleset(tmp_path, {"situations/mc.yaml":
                                    "ruleset: ..\nprocedure: morale_check\ninputs: {unit: {id: X, counter: rifle}}\n"})
    for command in ("odds", "simulate"):
        code, out, err = cli(command, root / "situations/mc.yaml", "--by", "stat")
        assert code == 2 and "no outcome has the field 'stat'" in err and "did you mean 'state'" in err


def test_schema_command_prints_the_derived_inputs_schema(cli):
    code, out, err = cli("schema", FIXTURE, "attack")
    assert code == 0
    import json
    schema = json.loads(out)
    assert schema["required"] == ["firers", "target", "range"]
    assert schema["properties"]["range"] == {"type": "integer"}
    assert schema["properties"]["firers"]["items"]["properties"]["terrain"] == {"enum": ["open", "woods", "building"],
                                                                                "default": "open"}


def test_a_call_whose_result_nobody_needs_still_gets_real_arguments(tmp_path):
    # 'left' is not asked for, yet check() runs and branches on a field of an earlier result:
    # that field must not be merged away
    root = write_ruleset(tmp_path, {"procedures/extra.ump":
                                    "procedure part():\n    roll d = DR\n    return {keep: d.original > 6, spare: d.original}\n\n"
                                    "procedure check(n: int):\n    if n > 9:\n        return 1\n    return 0\n\n"
                                    "procedure top():\n    let p = call part()\n    let unused = call check(n: p.spare)\n"
                                    "    emit left = unused\n    return {keep: p.keep}\n",
                                    "situations/top.yaml": "ruleset: ..\nprocedure: top\n"})
    s = situation(root / "situations/top.yaml")
    for by in (["keep"], []):
        got = shares(exact_odds(s, by))
        assert not any(label.startswith("error") for label in got), got
        assert got == shares(exact_odds(s, by, merge_unneeded=False))


def test_needs_chart_mass_has_its_own_subtotal(cli, tmp_path):
    root = write_ruleset(tmp_path, {"situations/p.yaml":
                                    "ruleset: ..\nprocedure: partial_read\ninputs: {roll: 5, letter: B}\n"})
    code, out, err = cli("odds", root / "situations/p.yaml")
    assert code == 0 and "needs an unknown chart cell: 100.00% (1)" in out and "real outcomes: 0.00% (0)" in out
    code, out, err = cli("odds", root / "situations/p.yaml", "--json")
    import json
    data = json.loads(out)
    assert data["needs_chart"]["fraction"] == "1" and data["real_outcomes"]["fraction"] == "0"


def test_simulate_all_dice_rolls_the_dice_a_situation_fixes(cli, tmp_path):
    root = write_ruleset(tmp_path, {})
    code, fixed, err = cli("simulate", root / "situations/attack.yaml", "-n", "300", "--seed", "2", "--by", "result")
    code2, free, err2 = cli("simulate", root / "situations/attack.yaml", "-n", "300", "--seed", "2", "--by", "result",
                            "--all-dice")
    assert code == code2 == 0
    outcomes = lambda text: [line for line in text.splitlines() if line.strip().startswith("result=")]
    assert len(outcomes(fixed)) == 1 and len(outcomes(free)) > 1


def test_simulate_in_processes_gives_the_same_counts_for_the_same_seed_whatever_the_number(tmp_path):
    root = write_ruleset(tmp_path, {})
    s = situation(root / "situations/attack.yaml")
    counts = lambda report: {label: p * report.runs for label, p, _ in report.rows}
    one = simulate(s, 2500, seed=11, by=["result"])               # three blocks of runs
    assert counts(simulate(s, 2500, seed=11, by=["result"], jobs=2)) == counts(one)
    assert counts(simulate(s, 2500, seed=11, by=["result"], jobs=3)) == counts(one)
    assert counts(simulate(s, 2500, seed=12, by=["result"], jobs=2)) != counts(one)
    assert sum(counts(one).values()) == 2500 and len(one.rows) > 1


def test_simulate_jobs_on_the_command_line(cli, tmp_path):
    import json
    root = write_ruleset(tmp_path, {})
    path = root / "situations/attack.yaml"
    code, out, err = cli("simulate", path, "--all-dice", "-n", "1500", "--seed", "5", "-j", "2", "--by", "result",
                         "--json")
    data = json.loads(out)
    assert code == 0 and data["jobs"] == 2 and data["seed"] == 5 and sum(o["count"] for o in data["outcomes"]) == 1500
    code, text, err = cli("simulate", path, "--all-dice", "-n", "1500", "--seed", "5", "-j", "2", "--by", "result")
    assert code == 0 and "1,500 runs, seed 5, 2 processes" in text
    code1, out1, err1 = cli("simulate", path, "--all-dice", "-n", "1500", "--seed", "5", "--by", "result", "--json")
    assert [(o["outcome"], o["count"]) for o in json.loads(out1)["outcomes"]] == \
        [(o["outcome"], o["count"]) for o in data["outcomes"]]
    code, out, err = cli("simulate", path, "-n", "10", "-j", "0")
    assert code == 2 and "-j must be between 1 and 64" in err and "Traceback" not in err


def test_an_error_in_a_simulation_process_is_reported_like_one_in_a_single_process(cli, tmp_path):
    # a call loop on one roll in 216: the first runs pass, a later block (in a worker with -j) hits it
    root = write_ruleset(tmp_path, {"procedures/deep.ump": "procedure deep(n: int = 0):\n"
                                                           "    roll d = 3d6\n"
                                                           "    if d == 18 or n > 0:\n"
                                                           "        return call deep(n: n + 1)\n"
                                                           "    return d\n",
                                    "situations/deep.yaml": "ruleset: ..\nprocedure: deep\n"})
    code1, out1, err1 = cli("simulate", root / "situations/deep.yaml", "-n", "2000", "--seed", "1")
    code2, out2, err2 = cli("simulate", root / "situations/deep.yaml", "-n", "2000", "--seed", "1", "-j", "2")
    assert code1 == code2 != 0 and err1 == err2 and "deep" in err2 and "Traceback" not in err2


@pytest.mark.parametrize("where", ["mini", "benchmark", "shipped"])
@pytest.mark.parametrize("how", [{"by": False}, {"by": True}, {"by": False, "quick_paths": 0},
                                 {"by": True, "merge_states": False, "merge_unneeded": False}],
                         ids=["paths", "states", "states-whole", "paths-only"])
def test_exact_odds_leave_nothing_for_the_garbage_collector(where, how):
    """exact_odds pauses the cyclic collector (runtime.memory.gc_paused): that is only safe while it leaves no cyclic
    garbage (a runtime and its call hook refer to each other until the hook is taken off)."""
    import gc
    from interpreter.odds.exact import result_fields
    if where == "mini":
        s = situation(FIXTURE / "situations/attack.yaml")
    elif where == "shipped":       # a ruleset whose rolls may sit inside records and lists (the memo keys them so)
        s = load_situation(ROOT / "rulesets/aslsk/situations/prep_fire_fg_pbf.yaml",
                           (str(ROOT / "benchmarks/fixtures/ift-fixture.yaml"),))
        s.dice, s.dice_positions = [], []
        s.args = dict(s.args, targets=s.args["targets"][:1])
        assert s.ruleset.rolls_may_hide
    else:
        bench = ROOT / "benchmarks/fixtures"
        s = load_situation(bench / "ift-attack.yaml", (str(bench / "ift-fixture.yaml"),))
        s.dice, s.dice_positions = [], []
    how = dict(how)
    by = [sorted(result_fields(s))[0]] if how.pop("by") else []
    exact_odds(s, by, **how)         # first use: compiles, fills caches
    frozen = gc.get_freeze_count()   # (conftest.py freezes what survives each full collection: left so)
    gc.collect()
    gc.freeze()      # what was there before is set aside, so the check walks only what the second call made
    gc.disable()
    try:
        exact_odds(s, by, **how)
        assert gc.collect() == 0
    finally:
        gc.enable()
        if not frozen:
            gc.unfreeze()


def test_exact_odds_give_the_collector_back_as_they_found_it(tmp_path):
    import gc
    s = situation(FIXTURE / "situations/attack.yaml")
    assert gc.isenabled()
    exact_odds(s, [])
    assert gc.isenabled()
    with pytest.raises(LimitError):
        exact_odds(s, [], budget=5, quick_paths=0)      # stopped by the state budget
    assert gc.isenabled()
    gc.disable()
    try:
        exact_odds(s, [])
        assert not gc.isenabled()       # a caller's own pause is left as it was
    finally:
        gc.enable()


def test_a_whole_result_is_grouped_by_what_it_changes_in_the_units_given():
    """No --by: each outcome is labelled by the changed fields of the units it restates (not by its dice or the
    checks made), so outcomes that leave the units alike are one group; the shares are exactly those of
    asking --by for those fields, and a field the others decide (broken, where state says it) is left out."""
    s = load_situation(ROOT / "rulesets/aslsk/situations/prep_fire_fg_pbf.yaml")
    s.dice, s.dice_positions = [], []
    default = exact_odds(s, [], by_change=True)
    labels = [label for label, _, _ in default.rows if not label.startswith("needs chart")]
    assert labels and all(part.split("=")[0].startswith("units.") for label in labels for part in label.split(", "))
    assert not any(".broken=" in label or "original_dr" in label or "checks." in label for label in labels)
    fields = sorted({part.split("=")[0] for label in labels for part in label.split(", ")})
    assert "units.G1.state" in fields and "units.G2.state" in fields
    explicit = exact_odds(s, fields)
    assert sorted(p for _, p, _ in default.rows) == sorted(p for _, p, _ in explicit.rows)
    assert default.total == explicit.total == 1
    assert default.grouping == "what changed in the units given" and explicit.grouping == ""
    assert exact_odds(s, []).grouping == "whole result"        # what the parity tests compare: every outcome


def test_calls_memoised_under_lists_of_answers_give_the_distribution_of_running_each_inline():
    """Where a situation answers a choice with a list (one answer each time it comes up), exact odds memoise a
    call by how many answers it starts from, and go on from how many it used: the same distribution as running
    every call inline on every path (V&V's AP Combat example, every die free, casualties chosen by list)."""
    from interpreter.odds.paths import Enumerator
    from interpreter.tools.testing import _case_situation, collect

    case = next(c for c in collect(ROOT / "rulesets" / "valor-and-victory") if c.id == "VV-EX-05")
    s = _case_situation(case)
    assert any(isinstance(v, (list, tuple)) for v in s.choices.values())   # (what this test is about)
    s.dice, s.dice_positions = [], []

    class Inline(Enumerator):
        def _hook(self, rt):
            return lambda procedure, args, pos: rt.invoke(procedure, args)

    memoised = Enumerator(s.ruleset, s.choices)
    got = memoised.distribution(s.procedure, s.args, s.dice)
    inline = Inline(s.ruleset, s.choices)
    expected = inline.distribution(s.procedure, s.args, s.dice)
    assert got == expected and sum(got.values()) == 1
    assert memoised.memo_hits > 0 and memoised.paths < inline.paths
