"""Every ruleset's own test cases (the rulebooks' worked examples), one pytest item per case."""

import pytest

from interpreter.tools.testing import collect, run_case

from conftest import FIXTURE, RULESETS


def _cases():
    for root in RULESETS + [FIXTURE]:
        for case in collect(root):
            yield pytest.param(case, id=f"{root.name}::{case.id}")


@pytest.mark.parametrize("case", list(_cases()))
def test_case(case):
    result = run_case(case)
    if not result.passed:
        lines = [f"{case.id} ({case.source or 'no source'}) at {case.position}:"] + [f"  {p}" for p in result.problems]
        pytest.fail("\n".join(lines), pytrace=False)


@pytest.mark.parametrize("root", RULESETS, ids=[r.name for r in RULESETS])
def test_umpire_test_passes_every_case_untraced(root, cli):
    # `umpire test` runs cases untraced (test_case above runs them traced): both must end alike
    code, out, err = cli("test", root)
    assert code == 0, out + err
    assert f"{len(collect(root))} passed, 0 failed" in out, out


@pytest.mark.parametrize("root", RULESETS, ids=[r.name for r in RULESETS])
def test_ruleset_checks_clean(root, cli):
    code, out, err = cli("check", root)
    assert code == 0, err
    assert f"{root.name}: ok" in out or ": ok" in out


@pytest.mark.parametrize("root", RULESETS, ids=[r.name for r in RULESETS])
def test_every_situation_resolves(root, cli):
    situations = sorted((root / "situations").glob("*.yaml"))
    assert situations, f"{root.name} ships no situations"
    for s in situations:
        code, out, err = cli("resolve", s, "--seed", "1")
        assert code in (0, 1), err  # 1 only for an honest "needs chart" stop
        if code == 1:
            assert "needs chart" in out or "needs chart" in err, out + err
        assert "result:" in out or "refused:" in out or "needs chart" in out


@pytest.mark.parametrize("root", RULESETS, ids=[r.name for r in RULESETS])
def test_ruleset_has_book_examples(root):
    cases = collect(root)
    assert len(cases) >= 3
    assert any(c.source for c in cases), "cases should cite the rulebook example they encode"


def test_a_result_is_compared_as_the_data_it_thaws_to():
    from fractions import Fraction

    from interpreter.model.values import DEAD, Record, Roll, thaw
    from interpreter.tools.testing import compare
    result = Record({"fp": Fraction(7, 2), "roll": Roll((3, 4), ("white", "red")), "gone": DEAD,
                     "units": (Record({"id": "A", "state": "broken", "fp": Fraction(4)}),), "hexes": (("A1", 2),)})
    expectations = [{"fp": "7/2", "roll": {"final": 7}, "units": [{"id": "A", "fp": 4}]},           # as it is: no differences
                    {"fp": 3.5, "roll": {"original": 7, "dice": [3, 4]}, "gone": None, "hexes": [["A1", 2]]},
                    {"fp": 3, "roll": {"final": 8}, "units": [{"state": "ok", "more": 1}], "units.x": 1,
                     "hexes": [["A1"]], "gone": {"a": 1}, "nothere": 1, "fp.a": 1}]
    found = [compare(e, result) for e in expectations]
    assert found == [compare(e, thaw(result)) for e in expectations]
    assert found[0] == found[1] == [] and len(found[2]) == 9     # each wrong expectation found
