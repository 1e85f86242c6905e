"""The DSL's behaviour, on the fixture ruleset (a made-up game with an invented chart)."""

from fractions import Fraction
from pathlib import Path

import pytest

from interpreter.api import adjudicate, find_procedure, load_ruleset
from interpreter.model.dice import GivenDice, SeededDice
from interpreter.errors import InputError, LimitError, Position
from interpreter.reading.parser import parse_expression
from interpreter.model.tables import parse_band
from interpreter.model.values import Record

from conftest import FIXTURE, write_ruleset


def run(proc_name, args, dice=(), seed=0, choices=None, root=FIXTURE):
    r = load_ruleset(root)
    proc = find_procedure(r, proc_name)
    from interpreter.loading.inputs import coerce
    from interpreter.reading.source import Document
    doc = Document("test", None)
    prepared = {p.name: coerce(r, p.type, args[p.name], doc, (p.name,)) for p in proc.params if p.name in args}
    return adjudicate(r, proc, prepared, GivenDice(list(dice), seed), choices)


def units(*specs):
    return [dict(zip(("id", "counter"), s.split(":"))) for s in specs]


def test_fractions_are_kept_exactly_until_the_column_is_picked():
    # 3 FP at long range: x1/2 -> 3/2, which reads the 1 FP column (not rounded to 2)
    out = run("attack", {"firers": units("A:green"), "target": units("X:rifle"), "range": 8}, dice=[[1, 2]])
    assert out.value["fp"] == Fraction(3, 2)
    assert out.value["column"] == 1


def test_cowering_shifts_two_columns_for_inexperienced_and_falls_off_the_table():
    # 3+4 FP at point blank = 14 -> 8 column; doubles with an inexperienced firer -> 2 left -> 2 column
    out = run("attack", {"firers": units("A:green", "B:rifle"), "target": units("X:rifle"), "range": 1},
              dice=[[1, 1], [6, 6]])
    assert out.value["shift"] == 2 and out.value["column"] == 2 and out.value["result"] == "1KIA"
    # 3 FP alone at range 3 reads the 2 column; cowering two columns falls off the left edge: no effect
    out = run("attack", {"firers": units("A:green"), "target": units("X:rifle"), "range": 3}, dice=[[2, 2]])
    assert out.value["column"] is None and out.value["result"] == "-"


def test_leadership_group_keeps_only_the_best_and_the_total_is_capped():
    r = load_ruleset(FIXTURE)
    from interpreter.model.stacks import evaluate_stack
    from interpreter.runtime.state import Runtime
    from interpreter.runtime.trace import Trace
    rt = Runtime(r, SeededDice(1), Trace())
    target = Record({"terrain": "building"})
    assert evaluate_stack(r.stacks["drm"], {"target": target, "leader_drm": -2, "smoke": 0}, rt, None) == 0
    lines = [e["text"] for e in rt.trace.events]
    assert any("commissar: not applied" in l and "beaten by leader" in l for l in lines)
    # 5 smoke markers count ceil(5/2) = 3 times: 2 + 3 = 5, capped at +3
    assert evaluate_stack(r.stacks["drm"], {"target": target, "leader_drm": 0, "smoke": 5}, rt, None) == 3
    assert any("capped from 5" in e["text"] for e in rt.trace.events)


def test_stack_total_below_the_floor_refuses_with_the_reason():
    out = run("attack", {"firers": units("A:rifle"), "target": units("X:rifle"), "range": 2, "leader_drm": -4},
              dice=[[3, 4]])
    assert out.status == "refused"
    assert "below -3" in out.reason


def test_unknown_cell_names_table_row_and_column():
    out = run("partial_read", {"roll": 2, "letter": "A"})
    assert out.status == "error"
    assert "partial" in out.reason and "row ≤3" in out.reason and "column A" in out.reason
    assert "overlay" in out.reason
    assert run("partial_read", {"roll": 5, "letter": "A"}).value == 5


def test_open_axis_value_outside_the_known_headings_needs_the_chart():
    out = run("partial_read", {"roll": 5, "letter": "Z"})
    assert out.status == "error" and "needs chart" in out.reason and "only A, B" in out.reason


def test_given_total_is_split_without_doubles_and_lists_control_each_die():
    out = run("morale_check", {"unit": {"id": "X", "counter": "rifle"}}, dice=[4])
    assert out.dice == [[1, 3]]
    out = run("morale_check", {"unit": {"id": "X", "counter": "rifle"}}, dice=[[2, 2]])
    assert out.dice == [[2, 2]]


def test_a_seed_replays_an_adjudication_exactly():
    args = {"firers": units("A:rifle"), "target": units("X:rifle", "Y:green"), "range": 1}
    first = [run("attack", args, seed=s).value for s in range(20)]
    again = [run("attack", args, seed=s).value for s in range(20)]
    assert first == again
    assert len({repr(v) for v in first}) > 1  # different seeds do give different rolls


def test_choices_follow_the_situation_or_the_default_policy():
    us = units("A:green", "B:rifle")
    assert run("pick", {"squad": us}).value == "B"          # default: highest morale
    assert run("pick", {"squad": us}, choices={"victim": "A"}).value == "A"
    bad = run("pick", {"squad": us}, choices={"victim": "Q"})
    assert bad.status == "error" and "not one of the options" in bad.reason


@pytest.mark.parametrize("proc,args,limit", [
    ("spin", {"n": 0}, "depth"),
    ("big_loop", {"items": list(range(60))}, "loop"),
])
def test_bounds_name_the_limit_that_was_hit(proc, args, limit):
    out = run(proc, args)
    assert out.status == "error" and f"limit '{limit}'" in out.reason


def test_step_limit(tmp_path):
    root = write_ruleset(tmp_path, {"ruleset.yaml": (FIXTURE / "ruleset.yaml").read_text().replace(
        "steps: 5000", "steps: 30")})
    out = run("big_loop", {"items": list(range(40))}, root=root)
    assert out.status == "error" and "limit 'steps'" in out.reason


def test_dice_per_roll_bound_is_checked_at_load(tmp_path):
    root = write_ruleset(tmp_path, {"procedures/extra.ump": "procedure lots():\n    roll x = 9d6\n    return x\n"})
    with pytest.raises(InputError, match="limit 'dice'") as found:   # found at load: invalid input (exit 2)
        load_ruleset(root)
    assert found.value.position.line == 2 and found.value.exit_code == 2


@pytest.mark.parametrize("text,expected", [("≤0", (float("-inf"), 0)), ("2-3", (2, 3)), (">=15", (15, float("inf"))),
                                           ("7+", (7, float("inf"))), ("5", (5, 5))])
def test_band_headings(text, expected):
    assert parse_band(text) == expected


def test_expressions_parse_with_positions_inside_yaml():
    e = parse_expression("target.terrain == \"woods\" and not broken", Position("f.yaml", 12, 15))
    assert e.pos.line == 12 and e.pos.column == 15


def _fresh(root, caching: bool):
    """A ruleset of its own (no procedure or cache shared with another load), compiled with or without prefix
    caching. Its checked model comes from the on-disk load cache, a new object on every call (tests/test_load_cache.py
    checks that it is the model built from the files), so each ruleset's files are parsed once for the suite,
    not once per mode."""
    from interpreter.api import read_checked
    from interpreter.compiling.compiler import Compiler
    from interpreter.loading.loader import find_root
    r, _ = read_checked(find_root(root))
    Compiler(r, prefix_caching=caching).compile(analysed=True)
    return r


def test_an_untraced_run_calls_procedures_that_are_not_compiled_yet():
    """A lazily compiled ruleset (the default load) runs untraced calls into procedures compiled on first use."""
    from pathlib import Path
    from interpreter.api import load_situation
    from interpreter.model.values import thaw
    situation = Path(__file__).resolve().parent.parent / "benchmarks" / "fixtures" / "ift-attack.yaml"
    fixture = situation.parent / "ift-fixture.yaml"
    results = {}
    for trace in (False, True):
        load_ruleset(situation.parent / "aslsk-ift", (str(fixture),), use_cache=False)   # a fresh, lazy load
        from interpreter.api import clear_cache
        clear_cache()
        s = load_situation(situation, (str(fixture),))
        outs = [adjudicate(s.ruleset, s.procedure, s.args, SeededDice(seed), None, trace=trace) for seed in range(30)]
        results[trace] = [(o.status, repr(thaw(o.value))) for o in outs]
    assert all(status == "ok" for status, _ in results[False])
    assert results[False] == results[True]



_BRANCHY = ("procedure branchy(n: int):\n"
            "    if n > 3:\n"
            "        let a = n * 2\n"
            "        return a\n"
            "    else:\n"
            "        let b = n + 100\n"
            "        if b > 200:\n"
            "            return 0\n"
            "        return b\n"
            "\n"
            "procedure rolled():\n"
            "    roll d = d6\n"
            "    if d > 4:\n"
            "        roll e = d6\n"
            "        if e > 3:\n"
            "            return e + 10\n"
            "        return 0\n"
            "    return 0\n")


def test_a_traced_run_compiles_an_if_branch_when_it_first_takes_it(tmp_path):
    """(compiling/lazy.py: a warm `umpire resolve` compiled every branch of every procedure it called, and ran
    fewer than half of them) A branch not taken yet is not compiled; taken later, it runs as it would have."""
    root = write_ruleset(tmp_path, {"procedures/extra.ump": _BRANCHY})
    r = load_ruleset(root, use_cache=False)
    proc = r.procedures["branchy"]
    taken, other = (b.body[0] for b in proc.syntax.body[0].branches)
    compiled = dict.keys(r.parts)           # (not ``in r.parts``: that would compile what is missing)
    out = adjudicate(r, proc, {"n": 5}, GivenDice([]), trace=True)
    assert out.value == 10
    assert id(taken) in compiled and id(other) not in compiled
    out = adjudicate(r, proc, {"n": 1}, GivenDice([]), trace=True)
    assert out.value == 101 and any(e["text"].startswith("b = 101") for e in out.trace.events)
    assert id(other) in compiled


def test_exact_odds_see_the_branches_no_run_has_taken_yet(tmp_path):
    """The state enumerator reads each statement's compiled part: one in a branch not compiled yet is compiled
    when it asks for it."""
    from interpreter.odds.exact import exact_odds
    root = write_ruleset(tmp_path, {"procedures/extra.ump": _BRANCHY})
    r = load_ruleset(root, use_cache=False)
    out = adjudicate(r, r.procedures["rolled"], {}, GivenDice([[2]]), trace=True)
    assert out.value == 0                   # the `d > 4` branch: not compiled yet

    class Asked:
        ruleset, procedure, args, dice, choices = r, r.procedures["rolled"], {}, [], {}
    report = exact_odds(Asked(), [], quick_paths=0)     # (by states, not path by path)
    # (it rolls inside: the enumerator runs that branch statement by statement, and the condition of the `if`
    # in it by its compiled part)
    assert {label: p for label, p, _ in report.rows} == {"0": Fraction(5, 6),
                                                         **{str(10 + e): Fraction(1, 18) for e in (4, 5, 6)}}

def test_the_prefix_cache_changes_no_result():
    """Reusing the deterministic start of a procedure gives the same results, run after run."""
    from pathlib import Path
    from interpreter.api import situation_from
    from interpreter.reading.source import load_yaml
    from interpreter.model.values import thaw
    root_dir = Path(__file__).resolve().parent.parent
    paths = sorted(root_dir.glob("rulesets/*/situations/*.yaml")) + [FIXTURE / "situations/attack.yaml"]
    loaded = {}  # one load per ruleset and mode: the caches are per procedure and argument set, not per situation
    for path in paths:
        doc = load_yaml(path)
        base = (path.parent / doc.data["ruleset"]).resolve()
        results = []
        for caching in (True, False):
            if (base, caching) not in loaded:
                loaded[base, caching] = _fresh(base, caching)
            r = loaded[base, caching]
            s = situation_from(doc, (), doc.data, r)
            dice = SeededDice(99)
            runs = []
            for _ in range(40):
                out = adjudicate(r, s.procedure, s.args, dice, s.choices, trace=False)
                runs.append((out.status, repr(thaw(out.value)), out.reason))
            results.append(runs)
        assert results[0] == results[1], path


def test_cached_prefix_still_charges_its_steps(tmp_path):
    root = write_ruleset(tmp_path, {
        "ruleset.yaml": (FIXTURE / "ruleset.yaml").read_text().replace("steps: 5000", "steps: 40"),
        "procedures/extra.ump": "procedure heavy(items: list[int]):\n    let n = 0\n    for each i in items:\n"
                                "        set n = n + i\n    roll d = DR\n    return n + d\n"})
    first = run("heavy", {"items": list(range(45))}, root=root)
    again = run("heavy", {"items": list(range(45))}, root=root)
    assert first.status == "error" and "limit 'steps'" in first.reason
    assert again.status == "error" and "limit 'steps'" in again.reason


def _with_steps(tmp_path, steps: int, source: str):
    """The fixture ruleset with limit 'steps' set to ``steps`` and ``source`` added as a procedure file."""
    return write_ruleset(tmp_path, {
        "ruleset.yaml": (FIXTURE / "ruleset.yaml").read_text().replace("steps: 5000", f"steps: {steps}"),
        "procedures/extra.ump": source})


def _traced_and_untraced(root, proc_name, args, dice=()):
    """Status and limit named by a traced run, then by two untraced runs (the second reuses kept work)."""
    r = load_ruleset(root)
    proc = find_procedure(r, proc_name)
    outs = [adjudicate(r, proc, dict(args), GivenDice([list(d) for d in dice]), None, trace=trace)
            for trace in (True, False, False)]
    return [(o.status, next((f"limit '{x}'" for x in ("steps", "depth") if f"limit '{x}'" in (o.reason or "")), None))
            for o in outs]


def test_steps_running_out_in_a_reused_opening_stop_where_a_traced_run_stops(tmp_path):
    # the second call of heavy reuses its opening (the loop) untraced; 40 steps run out in that loop, and the
    # error must name the loop's statement as a traced run does, not the procedure's header
    root = _with_steps(tmp_path, 40, "procedure heavy(items: list[int]):\n    let n = 0\n    for each i in items:\n"
                                     "        set n = n + i\n    roll d = d6\n    return n + d\n\n"
                                     "procedure twice(items: list[int]):\n    let a = call heavy(items: items)\n"
                                     "    let b = call heavy(items: items)\n    return a + b\n")
    r = load_ruleset(root)
    outs = [adjudicate(r, find_procedure(r, "twice"), {"items": tuple(range(20))}, GivenDice([[1], [1]]), None,
                       trace=trace) for trace in (True, False, False)]
    assert [(o.status, o.error.position.line, o.error.position.column) for o in outs] == [("error", 4, 9)] * 3
    assert all("limit 'steps'" in o.reason for o in outs)


_KEPT_CALLS = ("procedure cheap(x: int):\n" + "".join(f"    let a{i} = x\n" for i in range(10)) + "    return x\n\n"
               "procedure many(items: list[int]):\n    let t = 0\n    for each i in items:\n"
               "        set t = t + call cheap(x: 1)\n    return t\n")


def test_a_call_of_a_procedure_that_rolls_nothing_costs_its_steps_each_time_untraced_too(tmp_path):
    # untraced runs keep such a call's result, but must still charge its 11 statements on every call:
    # 3 calls fit in 40 steps, 5 do not, traced or not, the first time or again
    root = write_ruleset(tmp_path, {
        "ruleset.yaml": (FIXTURE / "ruleset.yaml").read_text().replace("steps: 5000", "steps: 40"),
        "procedures/extra.ump": _KEPT_CALLS})
    assert _traced_and_untraced(root, "many", {"items": (1, 2, 3)}) == [("ok", None)] * 3
    assert _traced_and_untraced(root, "many", {"items": (1, 2, 3, 4, 5)}) == [("error", "limit 'steps'")] * 3


def test_a_value_kept_between_rolls_costs_its_steps_each_time_untraced_too(tmp_path):
    # 'sum' reads only the arguments, so untraced runs keep it; its 12 items still cost 12 steps on every
    # run: after a low die (few steps before it) a high die must stop it as a traced run stops
    root = write_ruleset(tmp_path, {
        "ruleset.yaml": (FIXTURE / "ruleset.yaml").read_text().replace("steps: 5000", "steps: 32"),
        "procedures/extra.ump": "procedure kept_sum(items: list[int]):\n    let t = 0\n    roll d = d6\n"
                                "    for each i in items:\n        if i <= d:\n            set t = t + 1\n"
                                "    let s = sum(i for i in items)\n    roll e = d6\n    return s + t + e\n"})
    items = {"items": tuple(range(1, 13))}
    assert _traced_and_untraced(root, "kept_sum", items, [[1], [1]]) == [("ok", None)] * 3
    assert _traced_and_untraced(root, "kept_sum", items, [[6], [1]]) == [("error", "limit 'steps'")] * 3


def test_work_kept_from_a_shallow_call_is_not_reused_deeper_than_the_depth_limit_allows(tmp_path):
    # leaf (and the twig it calls) is first worked out two calls deep; reached again at the bottom of a chain
    # of calls, it must stop at limit 'depth' (8) exactly where a traced run stops
    root = write_ruleset(tmp_path, {"procedures/extra.ump":
                                    "procedure leaf(x: int):\n    return call twig(x: x) + 1\n\n"
                                    "procedure twig(x: int):\n    return x * 2\n\n"
                                    "procedure down(k: int):\n    roll r = d6\n    if k == 0:\n"
                                    "        return call leaf(x: 1)\n    return call down(k: k - 1)\n\n"
                                    "procedure deep(k: int):\n    let a = call leaf(x: 1)\n"
                                    "    let b = call down(k: k)\n    return a + b\n"})
    dice = [[1]] * 8
    assert _traced_and_untraced(root, "deep", {"k": 4}, dice) == [("ok", None)] * 3
    assert _traced_and_untraced(root, "deep", {"k": 5}, dice) == [("error", "limit 'depth'")] * 3


def test_caches_tell_rolls_apart_by_their_dice_even_inside_records(tmp_path):
    # the suffix reads the colored die of a roll kept in a record: equal totals must not share a result
    root = write_ruleset(tmp_path, {"procedures/extra.ump":
                                    "procedure colored_of_record():\n    roll dr = DR\n    let r = {roll: dr}\n"
                                    "    emit colored = r.roll.colored\n    return r.roll.colored\n"})
    for dice, colored in (([1, 6], 1), ([6, 1], 6), ([2, 5], 2), ([5, 2], 5)):
        assert run("colored_of_record", {}, dice=[dice], root=root).value["colored"] == colored


def test_values_kept_per_prefix_state_respect_shadowing(tmp_path):
    # 'n' is an argument, but the loop rebinds it: a value read inside the loop must not be reused
    root = write_ruleset(tmp_path, {"procedures/extra.ump":
                                    "procedure shadow(n: int, items: list[int]):\n    let base = n * 10\n"
                                    "    roll d = DR\n    let total = 0\n    for each n in items:\n"
                                    "        set total = total + n * 2\n    return total + base\n"})
    assert run("shadow", {"n": 1, "items": [1, 2, 3]}, root=root).value == 22
    assert run("shadow", {"n": 1, "items": [4, 5]}, root=root).value == 28


_SEGMENT = ("procedure bonus(x: int):\n    return x * 10\n\n"
            "procedure segment(x: int, items: list[int]):\n    roll d = d6\n    let b = call bonus(x: d)\n"
            "    let s = sum(i for i in items if i <= d)\n    emit seen = d\n    if d == 6:\n"
            "        roll e = d6\n        set b = b + e\n        emit extra = e.original\n    emit b = b\n"
            "    return b + s + x\n")


def _runs(root, proc_name, args, dice, trace):
    """Each run's (status, value, reason), one after another on one load (so later runs reuse kept work)."""
    from interpreter.model.values import thaw
    r = load_ruleset(root)
    proc = find_procedure(r, proc_name)
    outs = [adjudicate(r, proc, dict(args), GivenDice([list(d) for d in rolls]), None, trace=trace) for rolls in dice]
    return [(o.status, thaw(o.value), o.reason) for o in outs]


def test_statements_kept_between_rolls_give_what_running_them_gives(tmp_path):
    # from the roll to the end nothing rolls unless d is 6: untraced runs keep that stretch's effect per
    # die; a 6 takes the branch that rolls, whose second die must be rolled again each time, not replayed
    root = write_ruleset(tmp_path, {"procedures/extra.ump": _SEGMENT})
    dice = [[[3]], [[3]], [[6], [1]], [[6], [5]], [[1]], [[6], [2]], [[3]]]     # each run's rolls
    args = {"x": 1, "items": (1, 2, 3, 4, 5, 6)}
    traced = _runs(root, "segment", args, dice, True)
    assert [(v["b"], v.get("extra"), v["value"]) for _, v, _ in traced] == [
        (30, None, 37), (30, None, 37), (61, 1, 83), (65, 5, 87), (10, None, 12), (62, 2, 84), (30, None, 37)]
    untraced = _runs(root, "segment", args, dice, False)
    assert untraced == traced
    assert [list(v) for _, v, _ in untraced] == [list(v) for _, v, _ in traced]     # the fields in the same order


def test_statements_kept_between_rolls_still_cost_their_steps(tmp_path):
    # between the second roll and the third nothing rolls: untraced runs keep that stretch per die, but its
    # call and the sum's items still cost their steps on every run. A first die of 1 leaves room for them in
    # 36 steps; a 6 (more steps in the loop) must stop, traced or not, though the second die is the same and
    # its stretch kept
    root = _with_steps(tmp_path, 36, "procedure bonus(x: int):\n    return x * 10\n\n"
                                     "procedure late(items: list[int]):\n    let t = 0\n    roll a = d6\n"
                                     "    for each i in items:\n        if i <= a:\n            set t = t + 1\n"
                                     "    roll d = d6\n    let b = call bonus(x: d)\n"
                                     "    let s = sum(i for i in items if i <= d)\n    emit b = b\n    roll z = d6\n"
                                     "    return b + s + t + z\n")
    r = load_ruleset(root)
    proc = find_procedure(r, "late")
    for first, status in ((1, "ok"), (1, "ok"), (6, "error"), (1, "ok"), (6, "error")):
        for trace in (True, False, False):
            out = adjudicate(r, proc, {"items": tuple(range(1, 13))}, GivenDice([[first], [1], [1]]), None,
                             trace=trace)
            assert out.status == status, (first, trace, out.reason)
            assert status == "ok" or "limit 'steps'" in out.reason


_PICK = ("procedure pick_one(items: list[text]):\n    roll r = d(len(items)) cite \"random pick\"\n"
         "    emit picked = items[r - 1]\n    return items[r - 1]\n")


def test_a_die_sized_by_an_expression_picks_at_random(tmp_path):
    root = write_ruleset(tmp_path, {"procedures/extra.ump": _PICK})
    assert run("pick_one", {"items": ["a", "b", "c"]}, dice=[2], root=root).value["picked"] == "b"
    assert run("pick_one", {"items": ["a", "b", "c"]}, dice=[3], root=root).value["picked"] == "c"
    # a given die beyond the size is an input error naming the size
    from interpreter.errors import InputError
    with pytest.raises(InputError, match="d3 shows 1 to 3"):
        run("pick_one", {"items": ["a", "b", "c"]}, dice=[4], root=root)
    # seeded rolls stay inside the list
    seen = {run("pick_one", {"items": ["a", "b"]}, seed=s, root=root).value["picked"] for s in range(30)}
    assert seen == {"a", "b"}


def test_a_die_sized_by_an_expression_needs_at_least_one_side(tmp_path):
    root = write_ruleset(tmp_path, {"procedures/extra.ump": _PICK})
    out = run("pick_one", {"items": []}, root=root)
    assert out.status == "error" and "d(len(items)) needs a whole number of sides" in str(out.error)


def test_a_sized_die_is_written_d_and_its_expression_is_checked(tmp_path):
    from interpreter.errors import InputError
    root = write_ruleset(tmp_path, {"procedures/extra.ump":
                                    "procedure bad(items: list[text]):\n    roll r = die(len(itms))\n    return r\n"})
    with pytest.raises(InputError) as e:
        load_ruleset(root)
    text = str(e.value)
    assert "written d(EXPR)" in text and "itms" in text


def test_exact_odds_of_a_sized_die_are_uniform(tmp_path):
    from interpreter.api import load_situation
    from interpreter.odds.exact import exact_odds
    root = write_ruleset(tmp_path, {"procedures/extra.ump": _PICK, "situations/pick.yaml":
                                    "ruleset: ..\nprocedure: pick_one\ninputs: {items: [a, b, c, d]}\n"})
    report = exact_odds(load_situation(root / "situations/pick.yaml"), ["picked"])
    assert {label: p for label, p, _ in report.rows} == {f"picked={x}": Fraction(1, 4) for x in "abcd"}


# ---- hex_distance ------------------------------------------------------------------

HEX_PROC = """procedure hexes(a: any, b: any, layout: text = "axial"):
    return {d: hex_distance(a, b, layout)}

procedure hexes_default(a: any, b: any):
    return {d: hex_distance(a, b)}
"""


@pytest.mark.parametrize("layout,a,b,expected", [
    ("axial", [0, 0], [0, 0], 0),
    ("axial", [0, 0], [2, -1], 2),
    ("axial", [0, 0], [3, -3], 3),
    ("axial", [0, 0], [-2, 4], 4),
    # flat-topped columns, odd columns half a hex lower: (1, 1) touches (0, 1), (0, 2), (2, 1), (2, 2)
    ("odd-q", [1, 1], [0, 2], 1), ("odd-q", [1, 1], [2, 2], 1), ("odd-q", [1, 1], [0, 0], 2),
    ("odd-q", [0, 0], [4, 0], 4), ("odd-q", [0, 0], [3, 3], 5), ("odd-q", [1, 1], [6, 4], 5), ("odd-q", [1, 1], [7, 4], 6),
    # even columns lower: (2, 2) touches (1, 2) and (1, 3); (1, 2) touches (0, 1) and (0, 2)
    ("even-q", [2, 2], [1, 3], 1), ("even-q", [1, 2], [0, 1], 1), ("even-q", [1, 2], [0, 3], 2),
    # pointy-topped rows, odd rows half a hex right: (1, 1) touches (1, 0), (2, 0), (1, 2), (2, 2)
    ("odd-r", [1, 1], [2, 0], 1), ("odd-r", [1, 1], [0, 0], 2), ("odd-r", [1, 1], [2, 2], 1),
    ("even-r", [1, 2], [2, 1], 1), ("even-r", [1, 2], [0, 1], 2),
])
def test_hex_distance_in_each_layout(tmp_path, layout, a, b, expected):
    root = write_ruleset(tmp_path, {"procedures/hexes.ump": HEX_PROC})
    out = run("hexes", {"a": a, "b": b, "layout": layout}, root=root)
    assert out.status == "ok", out.reason
    assert out.value["d"] == expected
    back = run("hexes", {"a": b, "b": a, "layout": layout}, root=root)
    assert back.value["d"] == expected   # symmetric


def test_hex_distance_agrees_between_offset_and_cube_coordinates(tmp_path):
    from interpreter.model.hexgrid import hex_distance, to_cube
    from itertools import product
    cells = list(product(range(-3, 5), range(-3, 5)))
    for layout in ("odd-q", "even-q", "odd-r", "even-r"):
        cubes = {c: to_cube(c, layout) for c in cells}
        assert len(set(cubes.values())) == len(cells)   # one hex per label
        for c in product(range(-2, 4), range(-2, 4)):   # six neighbours at distance 1 in every layout
            assert sum(1 for d in cells if hex_distance(c, d, layout) == 1) == 6
        for c, d in product(cells[:12], cells):
            assert hex_distance(c, d, layout) == hex_distance(cubes[c], cubes[d], "cube")


def test_hex_distance_takes_records_and_defaults_by_length(tmp_path):
    root = write_ruleset(tmp_path, {"procedures/hexes.ump": HEX_PROC})
    out = run("hexes", {"a": {"col": 1, "row": 1}, "b": {"col": 0, "row": 0}, "layout": "odd-q"}, root=root)
    assert out.value["d"] == 2
    assert run("hexes_default", {"a": [0, 0, 0], "b": [2, -1, -1]}, root=root).value["d"] == 2
    assert run("hexes_default", {"a": {"q": 0, "r": 0}, "b": {"q": -1, "r": 3}}, root=root).value["d"] == 3


@pytest.mark.parametrize("a,b,layout,message", [
    ([0, 0], [1, 1], "hexagonal", "unknown hex layout 'hexagonal'"),
    ([0, 0], [1, 1, -2], "odd-q", "three coordinates are cube"),
    ([0, 0, 1], [1, 1, -2], "cube", "add up to 0"),
    ([0, "a"], [1, 1], "axial", "whole numbers"),
    ({"x": 1}, [1, 1], "axial", "needs fields col and row"),
])
def test_hex_distance_bad_input_is_a_positioned_error(tmp_path, a, b, layout, message):
    root = write_ruleset(tmp_path, {"procedures/hexes.ump": HEX_PROC})
    out = run("hexes", {"a": a, "b": b, "layout": layout}, root=root)
    assert out.status == "error" and message in out.reason and "hex_distance()" in out.reason
    assert out.error.position.line == 2


# ---- range and index_of -------------------------------------------------------------

LIST_PROC = """procedure steps_before(path: list[any], target: any):
    let at = index_of(path, target)
    if at == null:
        return {found: false}
    let before = list(path[i] for i in range(at))
    return {found: true, at: at, before: before, from_two: range(2, len(path)), empty: range(3, 1)}

procedure numbers(n: any):
    return {xs: range(n)}

procedure position(xs: any, x: any):
    return {at: index_of(xs, x)}
"""


def test_range_and_index_of_walk_a_path_by_position(tmp_path):
    root = write_ruleset(tmp_path, {"procedures/lists.ump": LIST_PROC})
    out = run("steps_before", {"path": ["a1", "b2", "c3", "d4"], "target": "c3"}, root=root)
    assert out.status == "ok", out.reason
    assert out.value["at"] == 2 and out.value["before"] == ("a1", "b2")
    assert out.value["from_two"] == (2, 3) and out.value["empty"] == ()
    missing = run("steps_before", {"path": ["a1"], "target": "z9"}, root=root)
    assert missing.value == {"found": False}
    first = run("position", {"xs": [{"id": "A"}, {"id": "B"}, {"id": "A"}], "x": {"id": "A"}}, root=root)
    assert first.value["at"] == 0      # the first equal item


def test_range_too_long_is_refused_before_it_is_built(tmp_path):
    root = write_ruleset(tmp_path, {"procedures/lists.ump": LIST_PROC})
    out = run("numbers", {"n": 10 ** 12}, root=root)
    assert out.status == "error"
    assert isinstance(out.error, LimitError) and "limit 'list'" in out.reason and "range()" in out.reason


@pytest.mark.parametrize("proc,args,message,line", [
    ("numbers", {"n": "three"}, "range(): its end must be a whole number, not text three", 9),
    ("numbers", {"n": Fraction(5, 2)}, "range(): its end must be a whole number, not number 2 1/2", 9),
    ("position", {"xs": "abc", "x": "a"}, "index_of(): its first argument must be a list", 12),
])
def test_range_and_index_of_bad_arguments_are_positioned_errors(tmp_path, proc, args, message, line):
    root = write_ruleset(tmp_path, {"procedures/lists.ump": LIST_PROC})
    out = run(proc, args, root=root)
    assert out.status == "error" and message in out.reason, out.reason
    assert out.error.position.line == line


# ---- `with` a computed record ------------------------------------------------------

MERGE_PROC = """procedure entry(hex: any):
    roll d = d6
    return {mine: d <= 3, roll: d.original}

procedure move(unit: any, hex: any):
    let attack = call entry(hex: hex)
    return unit with attack

procedure move_paren(unit: any):
    return unit with ({moved: true} with {hexes: 2})

procedure bad_merge(unit: any, other: any):
    return unit with other
"""


def test_with_merges_a_record_computed_at_run_time(tmp_path):
    from interpreter.api import load_situation
    from interpreter.odds.exact import exact_odds
    root = write_ruleset(tmp_path, {"procedures/merge.ump": MERGE_PROC, "situations/move.yaml":
                                    "ruleset: ..\nprocedure: move\ninputs: {unit: {id: A, roll: 0}, hex: h1}\n"})
    for trace in (True, False):
        r = load_ruleset(root)
        out = adjudicate(r, find_procedure(r, "move"), {"unit": Record({"id": "A", "roll": 0}), "hex": "h1"},
                         GivenDice([2]), None, trace=trace)
        assert out.status == "ok", out.reason
        assert dict(out.value) == {"id": "A", "roll": 2, "mine": True}    # replaced, kept and added fields
    assert run("move_paren", {"unit": {"id": "B"}}, root=root).value == {"id": "B", "moved": True, "hexes": 2}
    report = exact_odds(load_situation(root / "situations/move.yaml"), ["mine"])
    assert {label: p for label, p, _ in report.rows} == {"mine=true": Fraction(1, 2), "mine=false": Fraction(1, 2)}


def test_with_a_value_that_is_not_a_record_is_a_positioned_error(tmp_path):
    root = write_ruleset(tmp_path, {"procedures/merge.ump": MERGE_PROC})
    out = run("bad_merge", {"unit": {"id": "A"}, "other": [1, 2]}, root=root)
    assert out.status == "error" and "'with' takes the fields of a record, not list" in out.reason, out.reason
    assert out.error.position.line == 13
    out = run("bad_merge", {"unit": 3, "other": {"a": 1}}, root=root)
    assert out.status == "error" and "'with' updates a record, not number 3" in out.reason, out.reason


# ---- a parameter's record default is completed like an input ---------------------------

DEFAULT_PROC = """procedure shoot(target: unit = {id: "T", counter: "green"}, others: list[unit] = [{id: "O", counter: "rifle"}]):
    return {morale: target.morale, broken: target.broken, terrain: target.terrain, other_fp: others[0].fp}
"""


def test_a_record_default_is_completed_from_its_catalogue_entry_and_field_defaults(tmp_path):
    root = write_ruleset(tmp_path, {"procedures/shoot.ump": DEFAULT_PROC})
    for trace in (True, False):
        r = load_ruleset(root)
        out = adjudicate(r, find_procedure(r, "shoot"), {}, GivenDice([]), None, trace=trace)
        assert out.status == "ok", out.reason
        assert out.value == {"morale": 6, "broken": False, "terrain": "open", "other_fp": 4}


def test_exact_odds_of_a_procedure_with_a_one_of_parameter(tmp_path):
    # the odds engine's analyses read parameter types: an enumeration (not a record type) is text to them
    from interpreter.api import load_situation
    from interpreter.odds.exact import exact_odds
    root = write_ruleset(tmp_path, {"procedures/ammo.ump": (
        'procedure shot(ammo: one_of["he", "ap"], target: unit):\n'
        '    roll d = d6\n'
        '    return {hit: d <= (4 if ammo == "he" else 2), who: target.id}\n\n'
        'procedure volley(ammo: one_of["he", "ap"], targets: list[unit]):\n'
        '    return {hits: count(r for r in list(call shot(ammo: ammo, target: t) for t in targets) if r.hit)}\n'),
        "situations/volley.yaml": "ruleset: ..\nprocedure: volley\n"
                                  "inputs: {ammo: he, targets: [{id: X, counter: rifle}, {id: Y, counter: rifle}]}\n"})
    report = exact_odds(load_situation(root / "situations/volley.yaml"), ["hits"])
    assert {label: p for label, p, _ in report.rows} == {"hits=2": Fraction(4, 9), "hits=1": Fraction(4, 9),
                                                         "hits=0": Fraction(1, 9)}


# ---- decimals written in YAML are exact ---------------------------------------------

DECIMAL_TABLE = """tables:
  mp_cost:
    title: Test fixture MP costs (invented values)
    player_aid: none (test fixture)
    rows: {title: terrain, match: exact, headings: [clear, river]}
    source: test fixture
    grid:
      clear: [1]
      river: [1.5]
"""

DECIMAL_PROC = """procedure path_cost(hexes: list[text], extra: number = 0):
    return {cost: sum(lookup(mp_cost, row: h) for h in hexes) + extra}
"""


def test_a_decimal_table_cell_is_an_exact_fraction(tmp_path):
    # 1.5 + 1.5 + 1 is exactly 4 (a float cell would give 4.0); 0.1 given as an input is exactly 1/10
    root = write_ruleset(tmp_path, {"tables/costs.yaml": DECIMAL_TABLE, "procedures/cost.ump": DECIMAL_PROC})
    out = run("path_cost", {"hexes": ["river", "river", "clear"]}, root=root)
    assert out.status == "ok", out.reason
    assert out.value["cost"] == 4 and type(out.value["cost"]) is int
    out = run("path_cost", {"hexes": ["river"], "extra": 0.1}, root=root)
    assert out.value["cost"] == Fraction(8, 5)


def test_uncapped_reads_a_capped_stack_total_before_its_caps(tmp_path):
    # smoke 5 counts 3 times: +3 on its own; with a building's +2 the raw total is 5, capped at +3
    root = write_ruleset(tmp_path, {"procedures/raw.ump": (
        "procedure raw_total(t: text, smoke: int):\n"
        "    let u = {terrain: t}\n"
        "    return {capped: apply(drm, target: u, leader_drm: 0, smoke: smoke),"
        " raw: uncapped(drm, target: u, leader_drm: 0, smoke: smoke)}\n")})
    out = run("raw_total", {"t": "building", "smoke": 5}, root=root)
    r = load_ruleset(root)
    tem = r.catalogues["terrain"].entries["building"]["tem"] if hasattr(r.catalogues["terrain"], "entries") else None
    assert out.status == "ok", out.reason
    assert out.value["capped"] == 3 and out.value["raw"] > 3
    if tem is not None:
        assert out.value["raw"] == tem + 3
    # below the cap the two agree
    out = run("raw_total", {"t": "open", "smoke": 2}, root=root)
    assert out.value["capped"] == out.value["raw"] == 1


def test_uncapped_is_a_reserved_word_and_still_refuses_out_of_range_totals(tmp_path):
    from interpreter.reading.parser import KEYWORDS
    assert "uncapped" in KEYWORDS
    root = write_ruleset(tmp_path, {"procedures/raw.ump": (
        "procedure raw_low(d: int):\n"
        "    return uncapped(drm, target: {terrain: \"open\"}, leader_drm: d, smoke: 0)\n")})
    out = run("raw_low", {"d": -4}, root=root)
    assert out.status == "refused" and "below -3" in out.reason


def test_a_record_typed_field_default_gets_that_records_own_defaults(tmp_path):
    text = (FIXTURE / "ruleset.yaml").read_text().replace("limits:", """  place:
    fields:
      where: {type: unit, default: {id: nobody, counter: rifle}}
limits:""", 1)
    root = write_ruleset(tmp_path, {"ruleset.yaml": text,
                                    "procedures/place.ump": "procedure where_broken(p: place):\n"
                                                            "    return p.where.broken\n"})
    assert run("where_broken", {"p": {}}, root=root).value is False


def test_null_heading_is_a_column_the_rulebook_does_not_name(tmp_path):
    # headings 5, ?, 12: a shift of +2 from 5 reads 12; +1 lands on the unnamed column (needs chart);
    # a value between 5 and 12 may read the unnamed column, so it needs the chart too
    root = write_ruleset(tmp_path, {
        "tables/gap.yaml": (
            "tables:\n  gap:\n    title: Gap table\n    rows: {match: exact, headings: [2, 3]}\n"
            "    columns: {match: at_most, headings: [5, null, 12], below: off}\n"
            "    cells:\n      - {row: 2, column: 12, value: 7, source: \"1.1\"}\n"),
        "procedures/gap.ump": (
            "procedure gap_read(v: int, s: int):\n"
            "    return {column: locate(gap, column: v, shift: s).column, cell: lookup(gap, row: 2, column: v, shift: s)}\n"
            "procedure gap_where(v: int, s: int):\n"
            "    return locate(gap, column: v, shift: s).column\n")})
    out = run("gap_read", {"v": 5, "s": 2}, root=root)
    assert out.status == "ok", out.reason
    assert out.value["column"] == 12 and out.value["cell"] == 7
    assert run("gap_where", {"v": 13, "s": 0}, root=root).value == 12
    assert run("gap_where", {"v": 4, "s": 0}, root=root).value is None      # below the first: off the table
    for v, s in ((5, 1), (7, 0), (7, 1)):
        out = run("gap_where", {"v": v, "s": s}, root=root)
        assert out.status == "error" and "needs chart" in out.reason, (v, s, out.reason)
    r = load_ruleset(root)
    assert r.tables["gap"].columns.label(1) == "?"


def test_null_heading_only_on_at_most_axes(tmp_path):
    from interpreter.errors import InputError
    root = write_ruleset(tmp_path, {"tables/gap.yaml": (
        "tables:\n  gap:\n    title: Gap table\n    rows: {match: exact, headings: [2, null]}\n")})
    with pytest.raises(InputError, match="null"):
        load_ruleset(root)


@pytest.mark.parametrize("expr, verb", [('"2/3" / 1', "divide"), ('"2d6" // 2', "divide"),
                                        ('"%d" % 3', "take the remainder of"), ("true / 2", "divide")])
def test_division_and_remainder_take_numbers_only(tmp_path, expr, verb):
    """Text that reads as a fraction ('2/3') is still text: dividing it is a positioned error, not a number
    (nor Python's text formatting for %)."""
    root = write_ruleset(tmp_path, {"procedures/extra.ump": f"procedure quotient(x: int):\n    let q = {expr}\n    return q\n"})
    out = run("quotient", {"x": 1}, root=root)
    assert out.status == "error" and f"extra.ump:2:13: cannot adjudicate: cannot {verb} " in out.reason


def test_a_note_cannot_roll_because_untraced_runs_skip_it(tmp_path):
    # a note only writes the trace: a roll in it would make a seed replay differently with a trace
    root = write_ruleset(tmp_path, {"procedures/extra.ump":
                                    "procedure d6():\n    roll x = DR\n    return x\n"
                                    "procedure noisy():\n    roll a = DR\n    note \"then {call d6()}\"\n    return a\n"})
    with pytest.raises(InputError, match="a note cannot call 'd6'") as found:
        load_ruleset(root)
    assert found.value.position.line == 6 and found.value.exit_code == 2


_NOTE_FAILS = ("procedure count(items: list[int]):\n    let n = 0\n    for each i in items:\n        set n = n + i\n"
               "    return n\n"
               "procedure odd_note(d: int, items: list[int]):\n    roll r = DR\n"
               "    note \"per die {r.final // d}, sum {call count(items: items)}\"\n"
               "    emit total = r.final + len(items)\n    return\n")


def test_a_note_whose_text_fails_is_written_as_such_and_changes_no_result(tmp_path):
    # the traced run meets a division by zero in the note's text; the untraced run never works it
    # out: both give the same result, and the trace says why the note is missing
    root = write_ruleset(tmp_path, {"procedures/extra.ump": _NOTE_FAILS})
    args = {"d": 0, "items": [1, 2]}
    traced = run("odd_note", args, dice=[[3, 4]], root=root)
    ruleset = load_ruleset(root)
    untraced = adjudicate(ruleset, find_procedure(ruleset, "odd_note"), args, GivenDice([[3, 4]]), None, trace=False)
    assert traced.status == untraced.status == "ok"
    assert traced.value == untraced.value == Record({"total": 9})
    notes = [e["text"] for e in traced.trace.events if e["kind"] == "note"]
    assert notes == ["(this note could not be written: division by zero)"]


def test_a_note_costs_no_steps_so_a_trace_changes_no_limit(tmp_path):
    # the note sums 40 items (about 80 statements): with 30 steps left that would stop a traced run,
    # which an untraced run, skipping the note, would not
    root = write_ruleset(tmp_path, {
        "ruleset.yaml": (FIXTURE / "ruleset.yaml").read_text().replace("steps: 5000", "steps: 30"),
        "procedures/extra.ump": _NOTE_FAILS})
    out = run("odd_note", {"d": 1, "items": list(range(40))}, dice=[[1, 1]], root=root)
    assert out.status == "ok" and out.value["total"] == 42
    notes = [e["text"] for e in out.trace.events if e["kind"] == "note"]
    assert len(notes) == 1 and "limit 'steps'" in notes[0]


_GROW = ("procedure grow(items: list[int]):\n    let out = []\n    let words = \"\"\n    for each i in items:\n"
         "        set out = out + [i, i]\n        set words = words + \"ab\"\n    emit said = \"{words}!\"\n"
         "    return len(out)\n")


@pytest.mark.parametrize("limit,message", [("list: 5", "limit 'list' is 5"), ("text: 5", "limit 'text' is 5")])
def test_a_low_size_limit_stops_what_grows_past_it_traced_or_not(tmp_path, limit, message):
    # short lists and texts skip the size check for speed: a ruleset's own low limit must still hold
    root = write_ruleset(tmp_path, {
        "ruleset.yaml": (FIXTURE / "ruleset.yaml").read_text().replace("dice: 6}", f"dice: 6, {limit}}}"),
        "procedures/extra.ump": _GROW})
    traced = run("grow", {"items": [1, 2, 3]}, root=root)
    ruleset = load_ruleset(root)
    untraced = adjudicate(ruleset, find_procedure(ruleset, "grow"), {"items": (1, 2, 3)}, GivenDice([]), None,
                          trace=False)
    for out in (traced, untraced):
        assert out.status == "error" and message in out.reason
    assert run("grow", {"items": [1, 2]}, root=root).status == "ok"


@pytest.mark.parametrize("part", ["start", "middle", "ending"])
@pytest.mark.parametrize("deep", [False, True])
def test_a_result_of_emits_is_bounded_alike_traced_and_untraced(tmp_path, part, deep):
    # the untraced run bounds a result of emits from the depths its cached start and end keep, and looks
    # only at what the middle emitted: an emit one level too deep, wherever it is, stops it as traced
    lists = {p: "[1]" for p in ("start", "middle", "ending")}
    lists[part] = "[[[[1]]]]" if deep else "[[[1]]]"      # limit 'nesting' 4: the result nests 5 or 4 deep
    root = write_ruleset(tmp_path, {
        "ruleset.yaml": (FIXTURE / "ruleset.yaml").read_text().replace("dice: 6}", "dice: 6, nesting: 4}"),
        "procedures/extra.ump": "procedure wrap(x: any):\n    return [x]\n\n"
                                f"procedure emits(n: int):\n    emit start = {lists['start']}\n    roll d = DR\n"
                                f"    emit middle = {lists['middle']}\n    roll e = DR\n"
                                f"    let w = call wrap(x: d + e)\n    emit ending = {lists['ending']}\n    return\n"})
    r = load_ruleset(root)
    proc = find_procedure(r, "emits")
    for trace in (False, True):
        for _ in range(3):      # the second and third runs reuse the cached start and end
            out = adjudicate(r, proc, {"n": 1}, GivenDice([[3, 4], [1, 2]]), None, trace=trace)
            if deep:
                assert out.status == "error" and "limit 'nesting'" in out.reason, (trace, out.reason)
            else:
                assert out.status == "ok" and out.value[part] == (((1,),),), (trace, out.reason)


NESTING_BOUNDS = {             # what docs/language.md says the nesting limit (200 tree levels) allows
    "parentheses": (98, lambda n: "(" * n + "1" + ")" * n),
    "lists": (65, lambda n: "[" * n + "1" + "]" * n),
    "records": (49, lambda n: "{a: " * n + "1" + "}" * n),
    "function calls": (39, lambda n: "f(" * n + "1" + ")" * n),
    "chain of terms": (197, lambda n: " + ".join(["1"] * n)),
}


@pytest.mark.parametrize("what", sorted(NESTING_BOUNDS))
def test_the_nesting_limit_allows_what_the_documentation_says_and_one_more_is_refused(what):
    from interpreter.errors import InputError, Position
    from interpreter.reading.parser import parse_expression
    bound, make = NESTING_BOUNDS[what]
    parse_expression(make(bound), Position("x.yaml", 1, 1))
    with pytest.raises(InputError) as e:
        parse_expression(make(bound + 1), Position("x.yaml", 1, 1))
    assert "nested more than 200 deep" in e.value.message and e.value.position.file == "x.yaml"
    doc = (Path(__file__).resolve().parents[1] / "docs" / "language.md").read_text()
    assert f"{bound} nested {what}" in doc or f"chain of {bound} terms" in doc


def test_nested_if_blocks_are_bounded_as_documented():
    from interpreter.errors import InputError
    from interpreter.reading.parser import parse_module

    def blocks(n):
        lines = ["procedure p():"] + ["    " * (i + 1) + "if true:" for i in range(n)] + ["    " * (n + 1) + "return 1"]
        return "\n".join(lines) + "\n"
    parse_module(blocks(96), "x.ump")
    with pytest.raises(InputError) as e:
        parse_module(blocks(97), "x.ump")
    assert "nested more than 200 deep" in e.value.message
    assert "96 nested `if` blocks" in (Path(__file__).resolve().parents[1] / "docs" / "language.md").read_text()


_RECORD_FORMS = {
    # a record of a local and a literal (read in place), of a conditional (a closure per field), of a call's
    # result: each level of the loop nests the record one deeper, whichever closure builds it
    "direct": "{inner: x, k: 1}",
    "closures": "{inner: x if i > 0 else x, k: i - 1}",
    "call": "{inner: call same(x: x), k: \"at {i}\"}",
}


@pytest.mark.parametrize("form", sorted(_RECORD_FORMS))
@pytest.mark.parametrize("levels,refused", [(4, False), (5, True)])
def test_a_record_expression_is_refused_one_level_past_the_nesting_limit_traced_or_not(tmp_path, form, levels,
                                                                                        refused):
    root = write_ruleset(tmp_path, {
        "ruleset.yaml": (FIXTURE / "ruleset.yaml").read_text().replace("dice: 6}", "dice: 6, nesting: 4}"),
        "procedures/extra.ump": "procedure same(x: any):\n    return x\n\n"
                                "procedure nest(items: list[int]):\n    let x = 0\n    for each i in items:\n"
                                f"        set x = {_RECORD_FORMS[form]}\n    return {{depth: len(items), top: x.k}}\n"})
    r = load_ruleset(root)
    proc = find_procedure(r, "nest")
    for trace in (False, True):
        out = adjudicate(r, proc, {"items": tuple(range(levels))}, GivenDice([]), None, trace=trace)
        if refused:
            assert out.status == "error" and "nested 5 deep" in out.reason and "limit 'nesting'" in out.reason
            assert out.error.position is not None and (out.error.position.line, out.error.position.column) == (7, 17), (form, trace, out.error.position)
        else:
            assert out.status == "ok", (form, trace, out.reason)


@pytest.mark.parametrize("wraps,refused", [(2, False), (3, True)])
def test_a_record_of_plain_values_is_one_level_deep_in_what_holds_it(tmp_path, wraps, refused):
    # fields that are texts, comparisons and differences are known not to nest: the record counts one level, so
    # the result (a record holding lists around it) nests 2 + wraps deep, and limit 4 refuses wraps 3
    record = "{t: \"n{n}\", big: n > 2, less: n - 1, either: n if n > 0 else 0}"
    root = write_ruleset(tmp_path, {
        "ruleset.yaml": (FIXTURE / "ruleset.yaml").read_text().replace("dice: 6}", "dice: 6, nesting: 4}"),
        "procedures/extra.ump": f"procedure wrapped(n: int):\n    return {{x: {'[' * wraps}{record}{']' * wraps}}}\n"})
    r = load_ruleset(root)
    for trace in (False, True):
        out = adjudicate(r, find_procedure(r, "wrapped"), {"n": 3}, GivenDice([]), None, trace=trace)
        if refused:
            assert out.status == "error" and "limit 'nesting'" in out.reason, (trace, out.reason)
        else:
            assert out.status == "ok", (trace, out.reason)
            inner = out.value["x"]
            for _ in range(wraps):
                inner = inner[0]
            assert dict(inner) == {"t": "n3", "big": True, "less": 2, "either": 3}


def test_a_result_record_cannot_be_changed_in_place_by_python_code():
    # untraced runs hand the same result record to every run with the same dice (kept results): a caller
    # changing one in place would change every later result, so every in-place change is refused
    r = Record({"a": 1})
    for change in (lambda: r.__setitem__("a", 2), lambda: r.update({"a": 2}), lambda: r.__ior__({"a": 2}),
                   lambda: r.pop("a"), lambda: r.setdefault("b", 1), lambda: r.clear()):
        with pytest.raises(TypeError):
            change()
    with pytest.raises(TypeError):
        r |= {"a": 2}
    assert r == {"a": 1}


def test_a_kept_stretch_after_an_emit_that_changes_between_runs_gives_each_run_its_own_result(tmp_path):
    # the stretch after the second roll (up to the `if` that may return) reads only d: untraced runs keep what it
    # does per die (and, when nothing before it emits, the whole result it returns); here `first` is emitted before
    # it from another die, so two runs with the same d must still give their own `first`
    root = write_ruleset(tmp_path, {"procedures/extra.ump":
                                    "procedure bonus(x: int):\n    return x * 10\n\n"
                                    "procedure after_emit():\n    roll a = d6\n    emit first = a.original\n"
                                    "    roll d = d6\n    let b = call bonus(x: d)\n    emit b = b\n"
                                    "    if d < 4:\n        return b\n    roll e = d6\n    return b + e.original\n"})
    dice = [[[1], [3]], [[2], [3]], [[1], [3]], [[5], [3]], [[5], [6], [2]], [[1], [6], [2]]]
    traced = _runs(root, "after_emit", {}, dice, True)
    assert [(v["first"], v["value"]) for _, v, _ in traced] == [(1, 30), (2, 30), (1, 30), (5, 30), (5, 62), (1, 62)]
    assert _runs(root, "after_emit", {}, dice, False) == traced


def test_a_run_kept_by_its_dice_stops_and_draws_as_a_traced_run_does(tmp_path):
    # untraced runs keep whole runs of kept_run by its arguments and the dice it drew. Called again with the
    # same dice but fewer steps left (the caller's loop spent them), it must stop at limit 'steps' in its own
    # loop, before its second roll, having drawn one die, as a traced run does; with dice seen before and steps
    # enough, it gives the kept result
    root = _with_steps(tmp_path, 40, "procedure kept_run(items: list[int]):\n    roll d = d6\n    let t = 0\n"
                                     "    for each i in items:\n        if i <= d:\n            set t = t + i\n"
                                     "    roll e = d6\n    return t + e\n\n"
                                     "procedure outer(pre: list[int], items: list[int]):\n    for each p in pre:\n"
                                     "        let q = p\n    return call kept_run(items: items)\n")
    items = tuple(range(1, 13))
    runs_made = [((), [[6], [3]]), ((), [[1], [2]]), (tuple(range(16)), [[6], [3]]), ((), [[6], [3]]),
                 (tuple(range(16)), [[1], [2]]), (tuple(range(16)), [[6], [4]])]

    def runs(trace):
        r = load_ruleset(root)
        proc = find_procedure(r, "outer")
        outs = [adjudicate(r, proc, {"pre": pre, "items": items}, GivenDice(dice), None, trace=trace)
                for pre, dice in runs_made]
        return [(o.status, o.value, o.dice, (o.error.position.line if o.error else None)) for o in outs]
    traced = runs(True)
    assert [(status, value, len(drawn)) for status, value, drawn, _ in traced] == [
        ("ok", 24, 2), ("ok", 3, 2), ("error", None, 1), ("ok", 24, 2), ("ok", 3, 2), ("error", None, 1)]
    assert runs(False) == traced
