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


def _attack(tmp_path, files, procedure, targets, victim=False):
    """A situation of the test fixture's ``procedure`` (in ``files``) on these targets (each a flow mapping's
    fields), with or without the random victim."""
    body = f"ruleset: ..\nprocedure: {procedure}\ninputs:\n" + ("  victim: true\n" if victim else "") + "  targets:\n" \
        + "".join(f"    - {{{t}}}\n" for t in targets)
    root = write_ruleset(tmp_path, dict(files, **{"situations/a.yaml": body}))
    return load_situation(root / "situations/a.yaml")


def _situation(tmp_path, n, victim=False):
    return _attack(tmp_path, HELD, "held_attack", [f"id: U{i}, counter: rifle" for i in range(n)], victim)


GROUPINGS = [
    ['count(u for u in units if u.state == "broken")'],
    ["malfunction", "high"],
    ['count(u for u in units if u.state == "broken")', "malfunction"],
    ["units.U0.state", "units.U2.state", "high"],
    [],
]


def _same_with_and_without_holding(s, by):
    """The shares with holding on and off are the path shares."""
    expected = _paths(s, by)
    for hold in (True, False):
        report = exact_odds(s, by, quick_paths=0, hold=hold)
        assert _shares(report) == expected, (by, hold)
        assert report.total == 1


def _shares(report):
    return {label: p for label, p, _ in report.rows}


def _paths(s, by):
    dist = Enumerator(s.ruleset, s.choices, 200_000).distribution(s.procedure, s.args, s.dice)
    return dict(group(dist, by_keys(by, s.ruleset)))


@pytest.mark.parametrize("victim", [False, True], ids=["independent", "random victim"])
@pytest.mark.parametrize("by", GROUPINGS, ids=["count", "late reads", "count and a late read", "items", "whole result"])
def test_holding_gives_the_path_shares(tmp_path, victim, by):
    s = _situation(tmp_path, 3, victim)
    _same_with_and_without_holding(s, by)


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


# ---- emitted values held, and held factors opened only where they are read -------------------------------

LEAD = {
    "procedures/lead.ump":
        # the rounds are NOT independent: a leader (morale 9 here) who stays unbroken helps the later checks (as
        # a leader's DRM does); the units' states are emitted, then a late roll reads the attack's dice again
        "procedure lead_check(unit: unit, drm: int):\n"
        "    roll d = d6\n"
        "    if d + drm >= 5:\n"
        "        return unit with {broken: true}\n"
        "    return unit\n\n"
        "procedure lead_attack(targets: list[unit], victim: bool = false):\n"
        "    roll dr = 2d6\n"
        "    let drm = 1 if dr.original >= 8 else 0\n"
        "    let out = []\n"
        "    for each u in targets:\n"
        "        let help = -1 if any(o.morale >= 9 and not o.broken for o in out) else 0\n"
        "        let r = call lead_check(unit: u, drm: drm + help)\n"
        "        set out = out + [r]\n"
        "    if victim:\n"
        "        roll pick = d(len(out))\n"
        "        let who = out[pick - 1].id\n"
        "        set out = list((u with {broken: true} if u.id == who else u) for u in out)\n"
        "    emit units = list({id: u.id, state: \"broken\" if u.broken else \"ok\"} for u in out)\n"
        "    emit first = out[0].broken\n"
        "    roll late = d6\n"
        "    emit malfunction = dr.doubles and late == 6\n"
        "    emit high = dr.original >= 10 and late > 3\n",
}


def _lead_situation(tmp_path, n, victim=False, leader=True):
    """The first target a morale-9 leader (unless ``leader`` is false), the others morale 7."""
    return _attack(tmp_path, LEAD, "lead_attack",
                   [f"id: U{i}, counter: rifle, morale: {9 if leader and i == 0 else 7}" for i in range(n)], victim)


@pytest.mark.parametrize("victim", [False, True], ids=["leader helps", "leader helps, random victim"])
@pytest.mark.parametrize("by", [*GROUPINGS[:1], GROUPINGS[2], GROUPINGS[3], ["first", "high", "malfunction"], []],
                         ids=["count", "count and a late read", "items", "emits read late", "whole result"])
def test_emits_held_across_a_late_read_give_the_path_shares(tmp_path, victim, by):
    """The units' states are emitted before the late roll and the reading of the attack's dice: a merge holds
    them, the late read opens the dice alone (the emits stay held, given the dice), and the result opens them.
    The rounds depend on each other (the leader's help), so nothing is factored."""
    s = _lead_situation(tmp_path, 3, victim)
    _same_with_and_without_holding(s, by)


def test_emits_held_keep_fewer_states_at_the_late_roll(tmp_path):
    """Four targets by how many break: with holding, the states at the late roll are not one per combination
    of the emitted unit states (16 of them, times the dice classes) but fewer, and the answer is the same."""
    s = _lead_situation(tmp_path, 4)
    by = ['count(u for u in units if u.state == "broken")', "high"]
    held = exact_odds(s, by, quick_paths=0)
    plain = exact_odds(s, by, quick_paths=0, hold=False)
    assert _shares(held) == _shares(plain) == _paths(s, by)
    assert held.states < plain.states


def test_opening_a_held_factor_at_one_place_keeps_the_others_held(tmp_path):
    """A roll and a total taken from it are held together; reading the total alone opens it by the total,
    the roll staying held given the total (its doubles read last): the shares are the path shares."""
    files = {"procedures/part.ump":
             "procedure part_open(flag: bool):\n"
             "    roll dr = 2d6\n"
             "    let total = dr.original\n"
             "    roll a = d6\n"
             "    let x = a + (1 if total >= 7 else 0)\n"
             "    roll b = d6\n"
             "    emit early = x + b\n"
             "    roll c = d3\n"
             "    emit mid = total + c >= 9\n"
             "    roll d = d3\n"
             "    emit late = dr.doubles and d == 3\n"}
    root = write_ruleset(tmp_path, dict(files, **{"situations/p.yaml": "ruleset: ..\nprocedure: part_open\n"
                                                                           "inputs:\n  flag: true\n"}))
    s = load_situation(root / "situations/p.yaml")
    for by in (["early", "late"], ["mid", "late"], ["late"], []):
        expected = _paths(s, by)
        assert _shares(exact_odds(s, by, quick_paths=0)) == expected, by
        assert _shares(exact_odds(s, by, quick_paths=0, hold=False)) == expected, by


def test_the_shipped_aslsk_fire_attack_on_three_targets_gives_the_path_shares():
    """The shipped ASLSK fire_attack (rulesets/aslsk) on three 4-6-7 targets, every die free, with the benchmark
    fixture chart (benchmarks/fixtures/ift-fixture.yaml: made-up cells, so no die stops on an unknown one):
    morale_checks' rounds read the earlier ones, the hit units' states are emitted before the firers' checks
    read the attack's dice again (held emits, opened by the dice alone). Against the path enumeration (about
    31,000 paths), by count, by each unit's state and the whole result."""
    from conftest import ROOT
    s = load_situation(ROOT / "rulesets/aslsk/situations/prep_fire_fg_pbf.yaml",
                       (str(ROOT / "benchmarks/fixtures/ift-fixture.yaml"),))
    s.dice, s.dice_positions = [], []
    base = s.args["targets"][0]
    s.args = dict(s.args, targets=tuple(base.updated({"id": f"G{i + 1}"}) for i in range(3)))
    enumerator = Enumerator(s.ruleset, s.choices, 200_000)
    enumerator.work_limit = 10 ** 9
    dist = enumerator.distribution(s.procedure, s.args, s.dice)
    for by in (['count(u for u in units if u.state == "broken")'], ["units.G1.state", "units.G2.state",
                                                                     "units.G3.state"], []):
        expected = dict(group(dist, by_keys(by, s.ruleset)))
        report = exact_odds(s, by)
        assert _shares(report) == expected, by
        assert report.total == 1
