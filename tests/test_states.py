"""Exact odds by live states (states.py), factored independent lists (independent.py), shared distributions
(passed_on.py) and --by expressions.

Every distribution is compared with the path enumeration (every path through the dice run
on its own), which shares nothing but memoised sub-procedure results: on every shipped situation
(whole result and each field, free and given dice) and every test case (free and given dice).
"""

from fractions import Fraction
from functools import cache
from math import comb
from pathlib import Path

import pytest

from interpreter.api import load_situation
from interpreter.errors import InputError, LimitError, UmpireError
from interpreter.odds.exact import exact_odds

from conftest import FIXTURE, PARITY_SKIPPED, ROOT, RULESETS, write_ruleset
from parity_reference import reference


def shares(report):
    return {label: p for label, p, _ in report.rows}


def _situations():
    paths = [FIXTURE / "situations/attack.yaml"] + sorted((ROOT / "rulesets").glob("*/situations/*.yaml"))
    return [pytest.param(p, id=f"{p.parent.parent.name}/{p.stem}") for p in paths]


def _fields(s):
    from interpreter.odds.exact import result_fields
    return sorted(result_fields(s))


# ---- parity: states against paths, on every shipped situation and every test case ---------------------------
#
# The reference runs every path through the dice on its own, with nothing merged (no live states, no demand
# analysis, no factored lists, no shared distributions): correct by construction, it shares only memoised
# sub-procedure results (tests/parity_reference.py: memoised under lists of answers too, and kept for the
# process). A comparison whose reference would run more than REFERENCE_PATHS paths is skipped and listed at the
# end of the run (conftest.py prints the list); every other comparison must agree exactly.

REFERENCE_PATHS = 20_000
STATE_BUDGET = 200_000

def _reference(s):
    """Every outcome's exact weight, each path run on its own (None when over REFERENCE_PATHS paths)."""
    return reference(s, REFERENCE_PATHS)


def _grouped(dist, s, by):
    from interpreter.odds.grouping import by_keys, group
    return dict(group(dist, by_keys(by, s.ruleset)))


def _same_every_way(s, by, variants=True, what="", reference=None) -> bool:
    """States (by default, and with factoring, sharing or demand merging off) against the path reference;
    False (and listed) when the reference would be too long to run."""
    done = _MADE.get(_comparison_key(s, by, variants)) if reference is None else None
    if done is not None and done[0] is s.ruleset:
        made = done[1]          # this very comparison, made by another case (or found too long) already
    else:
        made = _compare(s, by, variants, reference)
        if reference is None:
            _MADE[_comparison_key(s, by, variants)] = (s.ruleset, made)
    if not made:
        PARITY_SKIPPED.append(f"{what} by {', '.join(by) or 'the whole result'}: more than {REFERENCE_PATHS:,} paths")
    return made


def _compare(s, by, variants, reference) -> bool:
    dist = reference if reference is not None else _reference(s)
    if dist is None:
        return False
    expected = _grouped(dist, s, by)
    options = [{}] + ([{"factor": False}, {"share": False}, {"merge_unneeded": False}] if variants else [])
    for o in options:
        assert shares(exact_odds(s, by, budget=STATE_BUDGET, quick_paths=0, **o)) == expected, (by, o)
    return True


_MADE: dict = {}
"""Comparisons made (True) or found too long to make (False) in this process, by what they compare: cases that
differ only in what the comparison does not see (a title, an expectation, dice dropped for the free-dice
comparison) make the same comparison, which is made once (it is the same exact_odds and reference on the same
question: a failing one fails again in each, as it is not kept). The ruleset is kept beside the answer, so the
key's id() of it stays that ruleset's."""


def _comparison_key(s, by, variants):
    """What a comparison depends on: the ruleset and procedure (the objects), the arguments (by the enumerators'
    own memo key), the choices, the given dice, the grouping and the variants compared."""
    from interpreter.odds.paths import outcome_key
    return (id(s.ruleset), id(s.procedure), outcome_key(s.args), repr(sorted(s.choices.items())), repr(list(s.dice)),
            tuple(by), variants)


@pytest.mark.parametrize("path", _situations())
@pytest.mark.parametrize("dice", ["free", "given"])
def test_states_give_the_path_distributions_on_every_shipped_situation(path, dice):
    """The whole result (every way) and each of its fields as the grouping."""
    s = load_situation(path)
    if dice == "given" and not s.dice:
        # with no dice given, every die is free: the "free" item makes this very comparison
        pytest.skip("the situation gives no dice: its free-dice item makes the same comparison")
    if dice == "free":
        s.dice, s.dice_positions = [], []
    what = f"{path.parent.parent.name}/{path.stem} ({dice} dice)"
    reference = _reference(s)
    if reference is None:
        PARITY_SKIPPED.append(f"{what}: more than {REFERENCE_PATHS:,} paths")
        pytest.skip(f"the path reference would run more than {REFERENCE_PATHS:,} paths")
    for f in [None] + _fields(s):
        try:
            _same_every_way(s, [f] if f else [], variants=f is None, what=what, reference=reference)
        except InputError:
            assert f is not None      # a field emitted only on paths this situation never takes


def _cases():
    from interpreter.tools.testing import collect
    return [pytest.param(case, id=f"{root.name}/{case.id}") for root in RULESETS + [FIXTURE] for case in collect(root)]


@cache
def _shipped_paths() -> frozenset:
    return frozenset(p.values[0].resolve() for p in _situations())


def _shipped_situation_of(case, s):
    """The shipped situation (a test_states_give_the_path_distributions_on_every_shipped_situation item) that
    this case's situation is, unchanged: the same ruleset and procedure (the very objects), equal arguments
    (by the enumerators' own memo key) and equal choices; None when the case changes anything or names a
    situation that is not shipped."""
    name = case.data.get("situation")
    if name is None:
        return None
    path = (Path(case.file).parent / name).resolve()
    if path not in _shipped_paths():
        return None
    from interpreter.odds.paths import outcome_key
    shipped = load_situation(path)
    same = (shipped.ruleset is s.ruleset and shipped.procedure is s.procedure and shipped.choices == s.choices
            and outcome_key(shipped.args) == outcome_key(s.args))
    return shipped if same else None


@pytest.mark.parametrize("case", _cases())
def test_states_give_the_path_distributions_on_every_test_case(case):
    """The whole result, with the case's dice and with every die free.

    A comparison that a shipped situation's item makes (the case runs that situation unchanged, with the same
    dice or with every die free) is that item's, not made again here: it compares the same distributions, and
    more (each field, and every way of enumerating)."""
    from interpreter.tools.testing import _case_situation
    try:
        s = _case_situation(case)
    except UmpireError:
        pytest.skip("a case about invalid input: there is no distribution")
    shipped = _shipped_situation_of(case, s)
    compared = over = made_there = False       # (over: a comparison left out, as the reference is too long)
    if s.dice:
        if shipped is not None and list(shipped.dice) == list(s.dice):
            made_there = True
        else:
            compared = _same_every_way(s, [], variants=False, what=f"{case.id} (given dice)")
            over = not compared
        s.dice, s.dice_positions = [], []
    # (a case giving no dice leaves every die free: its given-dice comparison is the free-dice one)
    if shipped is not None:
        made_there = True
    elif _same_every_way(s, [], variants=False, what=f"{case.id} (free dice)"):
        compared = True
    else:
        over = True
    if not compared:
        pytest.skip(" and ".join(
            ["its shipped situation's items make its comparisons"] * made_there
            + [f"the path reference would run more than {REFERENCE_PATHS:,} paths"] * over))


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
    return _on_targets(tmp_path, INDEPENDENT, "volley", n)


def _on_targets(tmp_path, files, procedure, n):
    """A situation of ``procedure`` on n rifle targets U0, U1... in the fixture ruleset with ``files``."""
    body = f"ruleset: ..\nprocedure: {procedure}\ninputs:\n  targets:\n" + "".join(
        f"    - {{id: U{i}, counter: rifle}}\n" for i in range(n))
    root = write_ruleset(tmp_path, dict(files, **{"situations/s.yaml": body}))
    return load_situation(root / "situations/s.yaml")


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


JOINED = dict(INDEPENDENT, **{
    "procedures/joined.ump":
        "procedure joined(targets: list[unit], more: list[unit]):\n"
        "    let a = []\n"
        "    for each u in targets:\n"
        "        let r = call check(unit: u)\n"
        "        set a = a + [r]\n"
        "    let b = []\n"
        "    for each u in more:\n"
        "        let r = call check(unit: u)\n"
        "        set b = b + [r]\n"
        "    let all_ = [] + a\n"
        "    set all_ = all_ + b\n"
        "    set all_ = all_ + [{id: \"X\", broken: false}]\n"
        "    emit units = list({id: u.id, state: \"broken\" if u.broken else \"ok\"} for u in all_)\n"
        "    emit front = a\n"
        "    emit marks = list({id: u.id, broken: u.broken} for u in a)\n"
        "    emit both = a + a\n"
        "    # reading one part afterwards: the joined list must get the very same items\n"
        "    if any(u.broken for u in b):\n"
        "        emit some = true\n"
        "    else:\n"
        "        emit some = false\n",
})


def _joined(tmp_path, n, m):
    body = "ruleset: ..\nprocedure: joined\ninputs:\n  targets:\n" + "".join(
        f"    - {{id: U{i}, counter: rifle}}\n" for i in range(n)) + "  more:\n" + "".join(
        f"    - {{id: M{i}, counter: rifle}}\n" for i in range(m))
    root = write_ruleset(tmp_path, dict(JOINED, **{"situations/j.yaml": body}))
    return load_situation(root / "situations/j.yaml")


def test_lists_joined_by_plus_stay_factored_and_count_exactly(tmp_path):
    """``a + b`` of two factored lists (and of a written-out list) keeps each item's own distribution:
    8 + 8 independent 1-in-3 checks grouped by how many break are a binomial, from a few live states."""
    s = _joined(tmp_path, 8, 8)
    by = 'count(u for u in units if u.state == "broken")'
    report = exact_odds(s, [by], quick_paths=0)
    got = shares(report)
    for k in range(17):
        assert got[f"{by}={k}"] == comb(16, k) * Fraction(1, 3) ** k * Fraction(2, 3) ** (16 - k)
    assert report.states < 50


def test_a_joined_list_and_its_parts_expand_to_the_same_items(tmp_path):
    """A joined or mapped list shares its random items with its parts (``a + a`` holds each item twice): reading
    a part later, or asking for the lists together, gives every place the same concrete items."""
    s = _joined(tmp_path, 2, 2)
    for by in (["units"], ["units", "front"], ["both"], ["both", "units"], ["some", "units"], ["marks", "front"],
               ["marks.U0.broken", "front.U0.broken"], ['count(u for u in both if u.broken)'],
               ['count(u for u in marks if u.broken)', "front.U1.broken"],
               ["some", "units.M0.state"], ['count(u for u in units if u.state == "broken")', "some"]):
        assert _same_every_way(s, by)


DRAWN = dict(INDEPENDENT, **{
    "procedures/drawn.ump":
        "procedure second(unit: any, hard: bool):\n"
        "    if unit.broken:\n"
        "        return {id: unit.id, broken: true, pinned: false}\n"
        "    roll d = d6\n"
        "    return {id: unit.id, broken: false, pinned: d == 6 or (hard and d == 5)}\n\n"
        "procedure first_one(unit: any):\n"
        "    return unit.id == \"U0\"\n\n"
        "procedure backwards(items: list[any]):\n"
        "    let out = []\n"
        "    for each x in items:\n"
        "        set out = [x] + out\n"
        "    return out\n\n"
        "procedure aftershock(targets: list[unit], shared: bool = false, ordered: bool = true):\n"
        "    let out = []\n"
        "    for each u in targets:\n"
        "        let r = call check(unit: u)\n"
        "        set out = out + [r]\n"
        "    # the same image whatever each check gave: a plain list, read without expanding anything\n"
        "    let marks = list(call first_one(unit: u) for u in out)\n"
        "    let hard = any(m for m in marks)\n"
        "    if shared:\n"
        "        emit first = list({id: u.id, broken: u.broken} for u in out)\n"
        "    let after = []\n"
        "    for each u in out:\n"
        "        let r = call second(unit: u, hard: hard)\n"
        "        set after = after + [r]\n"
        "    if not ordered:\n"
        "        set after = call backwards(items: after)\n"
        "    emit units = list({id: u.id, state: \"broken\" if u.broken else (\"pinned\" if u.pinned else \"ok\")} for u in after)\n",
})


def _aftershock(tmp_path, n, later=False, **inputs):
    body = "ruleset: ..\nprocedure: aftershock\ninputs:\n" + "".join(f"  {k}: {str(v).lower()}\n" for k, v in inputs.items()) \
        + "  targets:\n" + "".join(f"    - {{id: U{i}, counter: rifle}}\n" for i in range(n))
    files = dict(DRAWN, **{"situations/a.yaml": body})
    if later:       # the list looped over is read again after the loop
        files["procedures/drawn.ump"] += "    emit checked = count(u for u in out if u.broken)\n"
    root = write_ruleset(tmp_path, files)
    return load_situation(root / "situations/a.yaml")


def test_a_loop_over_a_factored_list_draws_its_items_one_round_at_a_time(tmp_path):
    """Each unit's second check reads only its own first check (and a flag the same whatever the checks gave):
    looping over the factored list draws one item per round and the result stays factored, so 12 units
    grouped by how many are pinned are a binomial (2/3 unbroken, then 1 in 3 pinned), from a few live states."""
    s = _aftershock(tmp_path, 12)
    by = 'count(u for u in units if u.state == "pinned")'
    report = exact_odds(s, [by], quick_paths=0)
    got = shares(report)
    p = Fraction(2, 9)
    for k in range(13):
        assert got[f"{by}={k}"] == comb(12, k) * p ** k * (1 - p) ** (12 - k)
    assert report.total == 1
    assert report.states < 50


def test_a_drawn_loop_gives_the_path_distributions_however_its_list_is_shared(tmp_path):
    """The list looped over also emitted (its random items live on elsewhere), read after the loop, or the
    loop's list reordered by an if that reads it in a branch only: every grouping equals the path enumeration."""
    for i, inputs in enumerate(({}, {"shared": True}, {"later": True}, {"ordered": False},
                                {"shared": True, "ordered": False, "later": True})):
        s = _aftershock(tmp_path / str(i), 3, **inputs)
        if i == 0:      # (each round drawn: a handful of states)
            assert exact_odds(s, ["units"], quick_paths=0).states < 30
        for by in ([], ["units"], ["units.U0.state", "units.U2.state"],
                   ['count(u for u in units if u.state == "pinned")'], ["first", "units"], ["checked", "units"],
                   ['count(u for u in units if u.state == "ok")', "first.U1.broken"]):
            if ("first" in " ".join(by) and not inputs.get("shared")) or ("checked" in by and not inputs.get("later")):
                continue
            assert _same_every_way(s, by), (inputs, by)


SHARED = dict(INDEPENDENT, **{
    "procedures/shared.ump":
        "procedure copied(targets: list[unit]):\n"
        "    let flags = []\n"
        "    for each u in targets:\n"
        "        let r = call check(unit: u)\n"
        "        set flags = flags + [r.broken]\n"
        "    emit flags = flags\n"
        "    emit broken = count(x for x in flags if x)\n\n"
        "procedure shout(unit: unit):\n"
        "    roll d = d6\n"
        "    if d == 6:\n"
        "        fail \"{unit}\"\n"
        "    return unit\n",
})


def test_a_random_list_and_its_emitted_copy_expand_to_the_same_items(tmp_path):
    """`emit flags = flags` keeps the list factored; reading it afterwards must give the copy the same items
    (it once double-counted: each concrete list kept the whole factored copy)."""
    body = "ruleset: ..\nprocedure: copied\ninputs:\n  targets:\n" + "".join(
        f"    - {{id: U{i}, counter: rifle}}\n" for i in range(3))
    root = write_ruleset(tmp_path, dict(SHARED, **{"situations/c.yaml": body}))
    s = load_situation(root / "situations/c.yaml")
    got = shares(exact_odds(s, []))
    assert sum(got.values()) == 1 and len(got) == 8          # each of the 2^3 lists once, with its count
    for by in ([], ["flags"], ["broken"], ["flags", "broken"]):
        assert _same_every_way(s, by)


def test_calls_differing_only_in_passed_on_fields_share_one_distribution(tmp_path):
    from interpreter.odds.passed_on import Hole, Observed, passed_on
    s = _volley(tmp_path, 4)
    check = s.ruleset.procedures["check"]
    read = passed_on(s.ruleset, check)["unit"]
    assert "id" not in read and "counter" not in read          # the check copies the unit, reads neither
    root = write_ruleset(tmp_path / "b", SHARED)
    from interpreter.api import load_ruleset
    assert passed_on(load_ruleset(root), load_ruleset(root).procedures["shout"]) == {}   # prints the unit
    by = ['count(u for u in units if u.state == "broken")', "units.U2.state"]
    shared, alone = exact_odds(s, by), exact_odds(s, by, share=False)
    assert shares(shared) == shares(alone) and shared.memo_hits > alone.memo_hits
    assert _same_every_way(s, by)
    hole = Hole(("check", "unit", "id"))
    assert hole == hole
    with pytest.raises(Observed):
        hole == "U1"
    with pytest.raises(Observed):
        str(hole)



def test_a_question_with_one_record_of_a_kind_makes_no_distribution_with_holes(tmp_path):
    """One squad: every check gets that squad (or copies differing in fields read), so no call would use a
    shared distribution twice; its calls are worked out on their own arguments, with the same odds."""
    from interpreter.odds.passed_on import Hole, may_share, passed_on, record_lists
    from interpreter.model.values import Record
    by = ['count(u for u in units if u.state == "broken")', "units.U0.state"]
    one = _volley(tmp_path, 1)
    alone = exact_odds(one, by, share=False)
    got = exact_odds(one, by)
    assert shares(got) == shares(alone) and got.memo_hits == alone.memo_hits
    two = _volley(tmp_path / "two", 2)
    check = two.ruleset.procedures["check"]
    spec = passed_on(two.ruleset, check)
    lists = record_lists(two.args)
    u0, u1 = lists[0]
    assert may_share("check", {"unit": u1}, spec, lists)                    # U0 beside it differs in its id
    assert not may_share("check", {"unit": u0}, spec, record_lists(one.args))
    made = u0.updated({"id": "U9"})                                         # a record the rules made
    assert may_share("check", {"unit": made}, spec, record_lists(one.args))
    assert may_share("check", {"unit": u0.updated({"id": Hole(("x", "unit", "id"))})}, spec, lists)
    deep = u0.updated({"counter": Record({"x": Hole(("x", "unit", "x"))})})        # a caller's hole inside
    assert may_share("check", {"unit": deep}, spec, [(u0.updated({"counter": Record({"x": 1})}),)])


REUSED = {
    "procedures/reused.ump":
        "procedure heavy(n: int):\n"
        "    let total = 0\n"
        "    for each i in [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]:\n"
        "        set total = total + i * n\n"
        "    return total\n\n"
        "procedure reused(n: int):\n"
        "    roll d = d6\n"
        "    if d >= 4:\n"
        "        for each i in [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]:\n"
        "            let x = i\n"
        "            let y = x + 1\n"
        "            let z = y + n\n"
        "    let m = call heavy(n: n)\n"
        "    return {d: d, m: m}\n",
    "situations/r.yaml": "ruleset: ..\nprocedure: reused\ninputs:\n  n: 2\n",
}


@pytest.mark.parametrize("steps", [40, 46, 48, 5000])
def test_a_value_worked_out_once_for_every_state_still_spends_each_states_steps(tmp_path, steps):
    """`let m = call heavy(n: n)` reads only an argument never assigned: it is worked out once and reused
    in every state, but each state pays its steps, so the step limit stops the odds where running every
    path on its own stops them (some states run out inside `heavy`, others do not)."""
    import re
    root = write_ruleset(tmp_path, REUSED)
    y = root / "ruleset.yaml"
    y.write_text(re.sub(r"steps: \d+", f"steps: {steps}", y.read_text()))
    s = load_situation(root / "situations/r.yaml")
    got = []
    for o in ({}, {"merge_states": False, "merge_unneeded": False}):
        try:
            got.append(shares(exact_odds(s, [], quick_paths=0, **o)))
        except LimitError as e:
            got.append(e.message)
    assert got[0] == got[1]
    assert isinstance(got[0], dict) == (steps >= 48)


def test_a_roll_into_a_variable_nobody_asks_about_is_still_rolled(tmp_path):
    """Grouped by the first die alone, the second roll's value reaches no asked field: it is set aside as
    unused, but still rolled (not skipped as a value that cannot fail), and the shares are the first die's."""
    root = write_ruleset(tmp_path, {"procedures/two.ump": "procedure two(flag: bool):\n"
                                                          "    roll a = d6\n"
                                                          "    roll b = d6\n"
                                                          "    emit first = a\n"
                                                          "    emit second = b\n",
                                    "situations/t.yaml": "ruleset: ..\nprocedure: two\ninputs:\n  flag: true\n"})
    s = load_situation(root / "situations/t.yaml")
    assert shares(exact_odds(s, ["first"], quick_paths=0)) == {f"first={i}": Fraction(1, 6) for i in range(1, 7)}


GRADED = dict(INDEPENDENT, **{
    "procedures/graded.ump":
        "procedure grade(unit: unit):\n"
        "    roll d = d6\n"
        "    return {id: unit.id, broken: d >= 5, pinned: d >= 3, score: 2 if d >= 5 else (1 if d >= 3 else 0)}\n\n"
        "procedure graded(targets: list[unit]):\n"
        "    let out = []\n"
        "    for each u in targets:\n"
        "        let r = call grade(unit: u)\n"
        "        set out = out + [r]\n"
        "    emit units = out\n"
        "    emit marks = list({id: u.id, hit: u.pinned} for u in out)\n",
})


def _graded(tmp_path, n):
    return _on_targets(tmp_path, GRADED, "graded", n)


THIRD = Fraction(1, 3)


def test_two_fields_of_one_random_item_are_grouped_jointly(tmp_path):
    """A d6 per unit: broken on 5-6, pinned on 3-6, so a broken unit is always pinned. Grouped by both fields of
    U0 (and a field of another unit), the rows are the joint distribution, never the product of the two
    fields' own shares (which would give 'broken, not pinned' a ninth)."""
    s = _graded(tmp_path, 3)
    by = ["units.U0.broken", "units.U0.pinned", "units.U2.broken"]
    got = shares(exact_odds(s, by, quick_paths=0))
    expected = {}
    for (b0, p0), q in (((True, True), THIRD), ((False, True), THIRD), ((False, False), THIRD)):
        for b2, r in ((True, THIRD), (False, 1 - THIRD)):
            expected[f"units.U0.broken={str(b0).lower()}, units.U0.pinned={str(p0).lower()}, "
                     f"units.U2.broken={str(b2).lower()}"] = q * r
    assert got == expected
    assert _same_every_way(s, by)


def test_a_count_and_a_field_of_a_counted_item_are_grouped_jointly(tmp_path):
    """How many are broken, beside whether U0 is pinned: U0's check is in both, so they are read together.
    20 units: expanding the list would list 3^20 cases (refused); read cell by cell it is answered exactly."""
    s = _graded(tmp_path, 20)
    count = "count(u for u in units if u.broken)"
    got = shares(exact_odds(s, [count, "units.U0.pinned"], quick_paths=0))
    expected = {}
    for k in range(21):
        rest = lambda j: comb(19, j) * THIRD ** j * (1 - THIRD) ** (19 - j) if 0 <= j <= 19 else 0  # noqa: E731
        pinned = THIRD * rest(k - 1) + THIRD * rest(k)        # broken (always pinned), or pinned only
        unpinned = THIRD * rest(k)
        for flag, p in (("true", pinned), ("false", unpinned)):
            if p:
                expected[f"{count}={k}, units.U0.pinned={flag}"] = p
    assert got == expected
    small = _graded(tmp_path / "small", 3)
    for by in ([count, "units.U0.pinned"], ["units.U1.score", count, "units.U1.broken"],
               ["marks.U0.hit", "units.U0.broken"], ["sum(u.score for u in units)", "marks.U2.hit"]):
        assert _same_every_way(small, by), by


def test_first_min_max_and_highest_over_a_factored_list_read_only_the_items_they_tell_apart(tmp_path):
    """first/min/max/highest/lowest/list over a factored list are read item by item: one --by per unit's score, each
    reading only its own unit's check, for 10 units (3^10 rows: at 14 units the 3^14 rows' labels took gigabytes),
    and each equals the path enumeration on a small stack."""
    s = _graded(tmp_path, 10)
    by = [f'first(u.score for u in units if u.id == "U{i}")' for i in range(10)]
    report = exact_odds(s, by, quick_paths=0)
    assert len(report.rows) == 3 ** 10 and report.total == 1
    assert all(p == THIRD ** 10 for _, p, _ in report.rows)
    small = _graded(tmp_path / "small", 3)
    got = shares(exact_odds(small, ["max(u.score for u in units)"], quick_paths=0))
    # the highest of three scores, each 0, 1 or 2 with a third
    assert got == {"max(u.score for u in units)=2": 1 - (2 * THIRD) ** 3,
                   "max(u.score for u in units)=1": (2 * THIRD) ** 3 - THIRD ** 3,
                   "max(u.score for u in units)=0": THIRD ** 3}
    for by in (['first(u.id for u in units if u.broken)'], ['min(u.score for u in units if u.id != "U1")'],
               ['highest(u.id for u in units by u.score)', 'lowest(u.id for u in units by u.score)'],
               ['first(u.score for u in units if u.pinned)', "units.U1.pinned"],
               ['all(u.pinned for u in units)', 'any(u.broken for u in units if u.id == "U2")', "marks.U2.hit"],
               ['list(u.id for u in units if u.broken)', "units.U0.score"]):
        assert _same_every_way(small, by), by


NARROW_SITE = {
    "procedures/many.ump":
        "procedure check(unit: unit):\n"
        "    roll d = d6\n"
        "    if d.original >= 5:\n"
        "        return {id: unit.id, dr: d.original, result: \"broken\"}\n"
        "    return {id: unit.id, dr: d.original, result: \"ok\"}\n\n"
        "procedure volley(targets: list[unit]):\n"
        "    let first = call check(unit: targets[0])\n"
        "    if first.dr == 6:\n"
        "        emit lucky = true\n"
        "    let results = []\n"
        "    for each u in targets:\n"
        "        let c = call check(unit: u)\n"
        "        set results = results + [{id: u.id, result: c.result}]\n"
        "    emit results = results\n",
}


def test_a_call_site_reading_less_of_a_result_than_another_branches_only_on_what_it_reads(tmp_path):
    """One call of ``check`` reads its die, the loop's read only its result: the loop's calls branch into the
    2 results, not the 6 faces (before: 12 live states at most, the die kept in every round); the distribution
    is the binomial."""
    s = _on_targets(tmp_path, NARROW_SITE, "volley", 8)
    by = 'count(r for r in results if r.result == "broken")'
    report = exact_odds(s, [by], quick_paths=0)
    got = shares(report)
    assert got == {f"{by}={k}": comb(8, k) * Fraction(1, 3) ** k * Fraction(2, 3) ** (8 - k) for k in range(9)}
    assert report.states <= 6


SPENDING = {
    "procedures/spend.ump":
        "procedure spend(points: int, elite: bool):\n"
        "    if points == 0:\n"
        "        fail \"nothing to spend\"\n"
        "    let left = points\n"
        "    let used = 0\n"
        "    for each i in [1, 2, 3, 4]:\n"
        "        if left >= 2:\n"
        "            set left = left - 2\n"
        "            set used = used + 1\n"
        "    choose plan from [\"all\", \"half\"] default \"all\"\n"
        "    if plan == \"half\":\n"
        "        set used = used / 2\n"
        "    if elite:\n"
        "        roll d = d6\n"
        "        if d.original >= 4:\n"
        "            return {used: used, bonus: 1}\n"
        "    return {used: used, bonus: 0}\n\n"
        "procedure spree(targets: list[unit]):\n"
        "    let total = 0\n"
        "    for each u in targets:\n"
        "        let c = call spend(points: u.morale, elite: u.broken)\n"
        "        set total = total + c.used + c.bonus\n"
        "    emit total = total\n",
}


def _spree(tmp_path, morales):
    """``spree`` over rifles of the given morales (the 4th and 7th elite: their ``spend`` rolls)."""
    body = "ruleset: ..\nprocedure: spree\ninputs:\n  targets:\n" + "".join(
        f"    - {{id: U{i}, counter: rifle, morale: {m}, broken: {'true' if i in (3, 6) else 'false'}}}\n"
        for i, m in enumerate(morales))
    root = write_ruleset(tmp_path, dict(SPENDING, **{"situations/s.yaml": body}))
    return load_situation(root / "situations/s.yaml")


def _counting_distributions(monkeypatch) -> list:
    """The procedures whose calls the state enumerator works out as distributions, in order."""
    from interpreter.odds.states import StateEnumerator
    made: list = []
    enumerate_one = StateEnumerator.distribution

    def counted(self, proc, args, given=None, depth=0):
        made.append(proc.name)
        return enumerate_one(self, proc, args, given, depth)

    monkeypatch.setattr(StateEnumerator, "distribution", counted)
    return made


def test_a_call_that_rolls_nothing_on_its_arguments_is_run_once_not_enumerated(tmp_path, monkeypatch):
    """``spend`` may roll (an elite unit's bonus) but on a rifle's arguments it only counts and chooses by
    its default: each such call is one plain run, not a distribution of live states; the elite calls, which
    do roll, are enumerated. The odds are the path enumeration's either way."""
    s = _spree(tmp_path, range(1, 9))
    made = _counting_distributions(monkeypatch)
    got = shares(exact_odds(s, ["total"], quick_paths=0))
    # two points a use, at most four: the rifles (morale 1, 2, 3, 5, 6, 8) use 0 + 1 + 1 + 2 + 3 + 4, the elite
    # U3 (4) and U6 (7) use 2 and 3, and each adds 1 on a 4-6
    assert got == {"total=16": Fraction(1, 4), "total=17": Fraction(1, 2), "total=18": Fraction(1, 4)}
    assert made.count("spend") == 2         # the two elite calls; the six rifles' were one run each
    monkeypatch.undo()
    assert _same_every_way(s, ["total"])


def test_a_call_that_stops_before_it_rolls_has_that_stop_as_its_one_outcome(tmp_path, monkeypatch):
    """A rifle with no points: its ``spend`` fails before anything rolls, so the one run that tries the call
    ends in that stop, which is the call's one outcome (no distribution made for it); the elite calls
    after it are never reached, and the odds are the path enumeration's."""
    s = _spree(tmp_path, [1, 0, 3, 4, 5, 6, 7, 8])
    made = _counting_distributions(monkeypatch)
    got = shares(exact_odds(s, ["total"], quick_paths=0))
    assert got == {"error: nothing to spend": 1}
    assert made == ["spree"]
    monkeypatch.undo()
    assert _same_every_way(s, ["total"])


def test_a_call_tried_as_one_run_does_not_expand_the_independent_lists_of_what_it_calls(tmp_path, monkeypatch):
    """``wrapper`` rolls nothing itself, so ``outer``'s call of it is first tried as one plain run; the
    volley it calls has factored independent checks (12 of them): that try gives up on them instead of
    expanding them into every concrete list (2^12 of them, with their weights); the odds are the binomial."""
    from interpreter.odds import states
    files = dict(INDEPENDENT)
    files["procedures/wrapper.ump"] = ("procedure wrapper(targets: list[unit]):\n"
                                       "    let r = call volley(targets: targets)\n"
                                       "    return r\n\n"
                                       "procedure outer(targets: list[unit]):\n"
                                       "    let w = call wrapper(targets: targets)\n"
                                       "    emit units = w.units\n")
    s = _on_targets(tmp_path, files, "outer", 12)
    expanded: list = []
    expand_all = states._plain
    monkeypatch.setattr(states, "_plain", lambda dist, budget: expanded.append(len(dist)) or expand_all(dist, budget))
    by = 'count(u for u in units if u.state == "broken")'
    got = shares(exact_odds(s, [by], quick_paths=0))
    for k in range(13):
        p = Fraction(5, 6) * comb(12, k) * Fraction(1, 3) ** k * Fraction(2, 3) ** (12 - k)
        assert got[f"{by}={k}"] == p + (Fraction(1, 6) if k == 0 else 0)
    assert expanded == []
