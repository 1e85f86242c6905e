"""Exact odds by live states (states.py), factored independent lists (independent.py) and --by expressions.

Every distribution is compared with the path enumeration (every path through the dice run
on its own), which shares nothing but memoised sub-procedure results.
"""

from fractions import Fraction
from math import comb

import pytest

from interpreter.api import load_situation
from interpreter.errors import InputError, LimitError, UmpireError
from interpreter.odds import exact_odds

from conftest import FIXTURE, ROOT, RULESETS, write_ruleset


def shares(report):
    return {label: p for label, p, _ in report.rows}


def _situations():
    paths = [FIXTURE / "situations/attack.yaml"] + sorted((ROOT / "rulesets").glob("*/situations/*.yaml"))
    return [pytest.param(p, id=f"{p.parent.parent.name}/{p.stem}") for p in paths]


FIELD_BY_FIELD = {"prep_fire_fg_pbf", "morale_check_boxcars_elr", "ptc_illustration", "k_result_illustration"}


def _fields(s):
    from interpreter.odds import result_fields
    return sorted(result_fields(s))


def _same_every_way(s, by, variants=True):
    """States with and without factoring (and, for the whole result, without demand merging), against paths.

    Where running every path would take too long, the reference is the state enumeration with
    factoring and demand merging off; where even that is too big, the question is skipped.
    """
    options = [{}, {"factor": False}] + ([{"merge_unneeded": False}] if not by else []) if variants else [{}]
    try:
        reference = shares(exact_odds(s, by, budget=REFERENCE_PATHS, merge_states=False))
    except LimitError:
        try:
            reference = shares(exact_odds(s, by, budget=REFERENCE_PATHS, quick_paths=0, factor=False, merge_unneeded=False))
        except LimitError:
            pytest.skip("too many paths and states for a reference enumeration")
        options = [{}]
    for o in options:
        try:
            got = shares(exact_odds(s, by, budget=200_000, quick_paths=0, **o))
        except LimitError:
            if o:
                continue     # the slower variants may exceed the budget; the default must not
            raise
        assert got == reference, (by, o)


# The reference runs every path on its own: above this many it is skipped, so the suite stays within
# CI's time on two cores (the closed-form and small-ruleset tests below cover large questions).
REFERENCE_PATHS = 500


@pytest.mark.slow
@pytest.mark.parametrize("path", _situations())
@pytest.mark.parametrize("dice", ["free", "given"])
def test_states_give_the_path_distributions_on_every_shipped_situation(path, dice):
    s = load_situation(path)
    if dice == "free":
        s.dice, s.dice_positions = [], []
    fields = _fields(s)
    for f in [None] + (fields if "fixtures" in str(path) or path.stem in FIELD_BY_FIELD else fields[:1]):
        try:
            _same_every_way(s, [f] if f else [])
        except InputError:
            assert f is not None      # a field emitted only on paths this situation never takes



def _cases():
    from interpreter.testing import collect
    out = []
    for root in RULESETS + [FIXTURE]:
        # every third case of a shipped ruleset (all of the fixture's): the whole set takes too long for CI
        for i, case in enumerate(collect(root)):
            if root == FIXTURE or i % 3 == 0:
                out.append(pytest.param(case, id=f"{root.name}/{case.id}"))
    return out


@pytest.mark.slow
@pytest.mark.parametrize("case", _cases())
def test_states_give_the_path_distributions_on_every_test_case(case):
    from interpreter.testing import _case_situation
    try:
        s = _case_situation(case)
    except UmpireError:
        pytest.skip("a case about invalid input: there is no distribution")
    _same_every_way(s, [], variants=False)
    s.dice, s.dice_positions = [], []
    _same_every_way(s, [], variants=False)


INDEPENDENT = {
    "procedures/many.ump":
        "procedure check(unit: unit):\n"
        "    roll d = d6\n"
        "    if d >= 5:\n"
        "        return unit with {broken: true}\n"
        "    return unit\n\n"
        "procedure volley(targets: list[unit]):\n"
        "    roll hit = d6\n"
        "    if hit == 1:\n"
        "        emit units = list({id: u.id, state: \"ok\"} for u in targets)\n"
        "        return\n"
        "    let out = []\n"
        "    let rolls = []\n"
        "    for each u in targets:\n"
        "        let r = call check(unit: u)\n"
        "        set out = out + [r]\n"
        "        set rolls = rolls + [r.broken]\n"
        "    emit units = list({id: u.id, state: \"broken\" if u.broken else \"ok\"} for u in out)\n"
        "    emit flags = rolls\n",
}


def _volley(tmp_path, n):
    body = "ruleset: ..\nprocedure: volley\ninputs:\n  targets:\n" + "".join(
        f"    - {{id: U{i}, counter: rifle}}\n" for i in range(n))
    root = write_ruleset(tmp_path, dict(INDEPENDENT, **{"situations/v.yaml": body}))
    return load_situation(root / "situations/v.yaml")


def test_independent_checks_are_kept_factored_and_counted_exactly(tmp_path):
    """12 independent 1-in-3 checks: a binomial, with a handful of live states instead of 3^12."""
    s = _volley(tmp_path, 12)
    by = 'count(u for u in units if u.state == "broken")'
    report = exact_odds(s, [by], quick_paths=0)
    got = shares(report)
    for k in range(13):
        p = Fraction(5, 6) * comb(12, k) * Fraction(1, 3) ** k * Fraction(2, 3) ** (12 - k)
        if k == 0:
            p += Fraction(1, 6)     # no hit: nobody breaks
        assert got[f"{by}={k}"] == p
    assert report.total == 1
    assert report.states < 50


def test_factored_lists_give_the_expanded_shares_for_fields_counts_and_whole_lists(tmp_path):
    s = _volley(tmp_path, 4)
    for by in (["units.U0.state", "units.U3.state"], ["units"], [], ["units.U1"], ["flags"],
               ['count(u for u in units if u.state == "broken")', "units.U2.state"],
               ['sum(1 for u in units if u.state == "ok")'], ["any(u.state == \"broken\" for u in units)"]):
        _same_every_way(s, by)


def test_a_by_expression_reads_the_result_fields_and_labels_with_its_text(tmp_path, cli):
    s = _volley(tmp_path, 2)
    got = shares(exact_odds(s, ["len(units)"]))
    assert got == {"len(units)=2": 1}
    code, out, err = cli("odds", s.file, "--by", 'count(u for u in units if u.state == "broken")')
    assert code == 0 and 'count(u for u in units if u.state == "broken")=1' in out
    code, out, err = cli("simulate", s.file, "-n", "200", "--seed", "4", "--by", "len(units)")
    assert code == 0 and "len(units)=2" in out


def test_a_bad_by_expression_is_an_input_error(tmp_path, cli):
    s = _volley(tmp_path, 2)
    with pytest.raises(InputError):
        exact_odds(s, ["count(u for u in"])
    code, out, err = cli("odds", s.file, "--by", "nosuch + 1")
    assert code == 2 and "--by" in err and "Traceback" not in err


def test_the_state_budget_names_the_state_count_and_the_fields_to_group_by(tmp_path):
    root = write_ruleset(tmp_path, {})
    s = load_situation(root / "situations/attack.yaml")
    s.dice = []
    with pytest.raises(LimitError) as e:
        exact_odds(s, [], budget=5)
    text = str(e.value)
    assert "live states" in text and "--by" in text and "states" in e.value.hint
