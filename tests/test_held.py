"""Held variables (odds/held.py): a live value the next statement does not read is carried by a merge as one
distribution instead of keeping states apart. Each case is compared with the path enumeration (every path
through the dice run on its own, nothing merged), and with holding off."""

import pytest

from interpreter.api import load_situation
from interpreter.odds.exact import exact_odds
from interpreter.odds.grouping import by_keys, group
from interpreter.odds.paths import Enumerator

from conftest import write_ruleset

HELD = {
    "procedures/held.ump":
        # the attack's dice are read again only at the end (as an attack's breakdown check reads them), with
        # a roll per target and a random victim in between; `total` is rolled with them (held together)
        "procedure held_check(unit: unit, n: int):\n"
        "    roll d = d6\n"
        "    if d + n >= 6:\n"
        "        return unit with {broken: true}\n"
        "    return unit\n\n"
        "procedure held_attack(targets: list[unit], victim: bool = false):\n"
        "    roll dr = 2d6\n"
        "    let total = dr.original\n"
        "    let n = 1 if dr.original >= 8 else 0\n"
        "    let out = []\n"
        "    for each u in targets:\n"
        "        let r = call held_check(unit: u, n: n)\n"
        "        set out = out + [r]\n"
        "    if victim:\n"
        "        roll pick = d(len(out))\n"
        "        let who = out[pick - 1].id\n"
        "        set out = list((u with {broken: true} if u.id == who else u) for u in out)\n"
        "    emit units = list({id: u.id, state: \"broken\" if u.broken else \"ok\"} for u in out)\n"
        "    roll late = d6\n"
        "    emit malfunction = dr.doubles and late == 6\n"
        "    emit high = total >= 10\n",
}


def _situation(tmp_path, n, victim=False):
    body = "ruleset: ..\nprocedure: held_attack\ninputs:\n" + (f"  victim: true\n" if victim else "") + "  targets:\n" \
        + "".join(f"    - {{id: U{i}, counter: rifle}}\n" for i in range(n))
    root = write_ruleset(tmp_path, dict(HELD, **{"situations/a.yaml": body}))
    return load_situation(root / "situations/a.yaml")


def _shares(report):
    return {label: p for label, p, _ in report.rows}


def _paths(s, by):
    dist = Enumerator(s.ruleset, s.choices, 200_000).distribution(s.procedure, s.args, s.dice)
    return dict(group(dist, by_keys(by, s.ruleset)))


@pytest.mark.parametrize("victim", [False, True], ids=["independent", "random victim"])
@pytest.mark.parametrize("by", [
    ['count(u for u in units if u.state == "broken")'],
    ["malfunction", "high"],
    ['count(u for u in units if u.state == "broken")', "malfunction"],
    ["units.U0.state", "units.U2.state", "high"],
    [],
], ids=["count", "late reads", "count and a late read", "items", "whole result"])
def test_holding_gives_the_path_shares(tmp_path, victim, by):
    s = _situation(tmp_path, 3, victim)
    expected = _paths(s, by)
    for hold in (True, False):
        report = exact_odds(s, by, quick_paths=0, hold=hold)
        assert _shares(report) == expected, (by, hold)
        assert report.total == 1


def test_holding_keeps_fewer_states_apart(tmp_path):
    """Five targets by how many break: the attack's dice are held through the checks instead of keeping one
    set of states per dice total, and the answer is the same."""
    s = _situation(tmp_path, 5)
    by = ['count(u for u in units if u.state == "broken")', "malfunction"]
    held = exact_odds(s, by, quick_paths=0)
    plain = exact_odds(s, by, quick_paths=0, hold=False)
    assert _shares(held) == _shares(plain) == _paths(s, by)
    assert held.states <= plain.states
    assert held.paths < plain.paths      # statements run on states: fewer with the dice held


def test_a_held_value_read_on_one_branch_only_is_opened_there(tmp_path):
    """A held roll read inside one branch of an `if` only: the states taking the other branch never open it."""
    files = {"procedures/branch.ump":
             "procedure held_branch(flag: bool):\n"
             "    roll a = d6\n"
             "    roll b = d6\n"
             "    let s = 0\n"
             "    if b >= 4:\n"
             "        roll c = d6\n"
             "        set s = c\n"
             "    if b == 6:\n"
             "        emit out = a + s\n"
             "    else:\n"
             "        emit out = s\n"}
    root = write_ruleset(tmp_path, dict(files, **{"situations/b.yaml": "ruleset: ..\nprocedure: held_branch\n"
                                                                           "inputs:\n  flag: true\n"}))
    s = load_situation(root / "situations/b.yaml")
    for by in (["out"], []):
        expected = _paths(s, by)
        assert _shares(exact_odds(s, by, quick_paths=0)) == expected
        assert _shares(exact_odds(s, by, quick_paths=0, hold=False)) == expected
