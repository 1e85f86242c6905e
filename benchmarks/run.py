"""Umpire benchmarks: every figure against a baseline doing the same work, timed in interleaved rounds.

    python benchmarks/run.py            # everything
    python benchmarks/run.py --quick    # fewer rounds

Each figure times the interpreter and its baseline alternately, round after round, and reports the
medians of their times and the median of the per-round ratios, then a verdict against its target:

  1. cold start: `umpire resolve` of a shipped situation in a fresh process with a warm on-disk cache,
     against `python -c pass` (from an editable install, whose finder runs at every start of its Python on
     both sides, the verdict is on a Python that starts as a wheel install's: the same packages, no finder);
     `umpire test rulesets/aslsk`, per case; a cold cache against no cache (UMPIRE_CACHE=off);
  2. untraced adjudication of the ASLSK IFT attack with a morale check per target, against a hand-written
     function that, like the interpreter, computes the attack's input-only part (FP, DRM, column) once;
     the figure with no reuse on either side is printed beside it. The interpreter also keeps whole runs
     by their arguments and the dice they drew (analysis/caching.dice_path_runner), so a hand version
     keeping whole results by their dice (the attack's per DR when it rolls no more, each morale check's
     per unit, MC and DR) is timed too, and the faster of the two hand versions is the baseline (the other
     figure printed beside it). Each round draws new dice (seeds 7, 8, ... in turn, the same on both sides):
     the same seed every round would time kept runs on dice seen before. The interpreter also keeps each
     procedure's ending after its last roll, keyed by the values it reads (dice included); a hand version
     keeping the attack's ending the same way is timed too and printed: turning dicts into keys costs it
     more than it saves, so no baseline keeps it;
  3. simulation grouped by IFT result, against a hand loop with the same reuse drawing the same dice (the
     same seeded stream per block of runs, a new seed each round; the two counts checked equal first): the
     faster of the plain hand loop and one keeping whole results by their dice, as in 2;
  4. exact odds of the attack on 1, 2, 4 and 8 squads grouped by each squad's state, against icepool
     (pip install -e '.[bench]') and plain Python that treats each squad's check as independent
     (both checked equal to Umpire's distribution first); 16 squads grouped by how many break;
  5. exact odds of the *shipped* ASLSK fire_attack (rulesets/aslsk) on 1 to 16 targets, by count and by
     state (up to 8), and on the largest legal stack (3 squads, 2 leaders), with the same BENCHMARK FIXTURE
     chart as an overlay (the rules permit no such hex: the figure
     is whether the work follows the outcomes or the product of the targets); the largest stack also against
     a like-for-like plain-Python enumeration (benchmarks/largest_stack.py: the same rules and chart, the
     same independence, memoised; checked equal to Umpire's distribution first). The same for The Last
     Hundred Yards: its largest legal stack (18 counters, 2.3) under two SADRM markers, the shipped
     small_arms_mortar_resolution (13.1, no chart read), against benchmarks/largest_stack_lhy.py; then
     Panzer Grenadier's shipped direct_fire on its largest stack (three INF and three leaders) with a BENCHMARK FIXTURE Direct
     Fire Table, against benchmarks/largest_stack_pg.py the same way; likewise Valor & Victory's
     shipped ap_fire on its largest legal stack (6.9: four infantry units) under a full firers' hex, with its
     valor checks and sniper, against benchmarks/largest_stack_vv.py (BENCHMARK FIXTURE AP Combat Table);
  6. exact odds of every shipped situation with every die free, as `umpire odds SITUATION --all-dice` asks
     them (the whole result, its budget), in this process, each the best of its rounds: the slowest ones
     listed, the target being each one's time (start-up and loading not counted: `cold` times those).

The attack is a frozen copy of the ASLSK procedures (benchmarks/fixtures/aslsk-ift, see its README) with
a BENCHMARK FIXTURE chart (benchmarks/fixtures/ift-fixture.yaml): invented values, so that random dice
never stop on a chart cell the rulebook does not print. It is not the real chart. The machine may be
shared: compare ratios, not seconds.

Clock: by default every figure is CPU time (this process's, plus that of the child processes it waited
for), so another program's load on a shared machine does not land on one side of a ratio more than on
the other (a short round is preempted less often than a long one in wall time). `--clock wall` times
elapsed time instead; on a quiet machine the two agree.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import statistics
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from interpreter.api import adjudicate, load_ruleset, load_situation  # noqa: E402
from interpreter.model.dice import SeededDice  # noqa: E402
from interpreter.odds.exact import exact_odds  # noqa: E402
from interpreter.odds.simulation import BLOCK_RUNS, block_seed, simulate  # noqa: E402
from interpreter.model.tables import UNKNOWN  # noqa: E402
from interpreter.model.values import thaw  # noqa: E402

FIXTURE = ROOT / "benchmarks" / "fixtures" / "ift-fixture.yaml"
FIXTURE_RULESET = ROOT / "benchmarks" / "fixtures" / "aslsk-ift"   # a frozen copy (see its README)
SITUATION = ROOT / "benchmarks" / "fixtures" / "ift-attack.yaml"


# ---- the hand-written baseline ------------------------------------------------------------
# The same procedure as rulesets/aslsk/procedures/{fire,morale}.ump, written directly in Python:
# FP multipliers and fire group, leader direction, DRM, cowering (one or two columns), column,
# IFT cell, and each result applied to each target (morale check with pin, break + DM, original
# 12 casualty reduction, ELR replacement; PTC; K/#; #KIA). It returns the same result record as
# the ruleset's fire_attack, field for field; the benchmark checks that on 200 seeds first.

def hand_fire_attack(firers, targets, leaders, terrain, hindrances, other_drm, area_fire, elr,
                     units, tem, hindrance_of, grid, columns, rows, roll):
    """The whole attack, every part computed on each call (the no-reuse baseline)."""
    fixed = hand_fixed(firers, leaders, terrain, hindrances, other_drm, area_fire, tem, hindrance_of, columns)
    return hand_rolled(fixed, targets, elr, units, grid, columns, rows, roll)


def hand_fixed(firers, leaders, terrain, hindrances, other_drm, area_fire, tem, hindrance_of, columns):
    """The part of the attack that depends on the inputs alone: FP, DRM, column, cowering class."""
    fp = Fraction(0)
    for f in firers:
        if f["range_to_target"] > 2 * f["range"]:
            return {"refused": True}
        mult = Fraction(1)
        if f["range_to_target"] == 0:
            mult *= 3
        if f["range_to_target"] == 1:
            mult *= 2
        if f["range_to_target"] > f["range"]:
            mult *= Fraction(1, 2)
        if f["pinned"]:
            mult *= Fraction(1, 2)
        if area_fire > 0:
            mult *= Fraction(1, 2) ** area_fire
        fp += f["fp"] * mult
    fp = int(fp) if fp.denominator == 1 else fp
    hindrance = sum(hindrance_of[h] for h in hindrances)
    drm = tem[terrain] + hindrance + other_drm
    if leaders:
        drm += max(l["leadership"] + (1 if l["wounded"] else 0) for l in leaders)
    mmc = any(f["kind"] != "leader" for f in firers)
    inexperienced = any(f["inexperienced"] or f["class"] == "conscript"
                        or (f["class"] == "green" and not f["with_good_order_leader"]) for f in firers)
    col = -1
    for i, h in enumerate(columns):
        if h <= fp:
            col = i
    cower = 0 if not mmc or leaders else 2 if inexperienced else 1
    return {"fp": fp, "drm": drm, "col": col, "cower": cower}


def hand_cell(fixed, c, w, grid, columns, rows):
    """The IFT cell and column for the dice (c, w): (code, n, text), column heading, shift."""
    final = c + w + fixed["drm"]
    shift = fixed["cower"] if c == w else 0
    col = fixed["col"]
    if col >= 0:
        col -= shift
    row = min(max(final, rows[0]), rows[-1]) - rows[0]
    cell = grid[row][col] if col >= 0 else ("none", 0, "-")
    return cell, columns[col] if col >= 0 else None, shift


def hand_rolled(fixed, targets, elr, units, grid, columns, rows, roll):
    """The part of the attack that depends on the dice."""
    if fixed.get("refused"):
        return fixed
    c, w = roll(), roll()
    (code, n, text), column, shift = hand_cell(fixed, c, w, grid, columns, rows)
    out, checks = hand_apply_result(code, n, targets, elr, units, roll)
    return {"fp": fixed["fp"], "drm": fixed["drm"], "original_dr": c + w, "final_dr": c + w + fixed["drm"],
            "cowered": shift > 0, "shift": shift, "column": column, "result": text,
            "units": [{"id": u["id"], "counter": u["counter"], "state": hand_state(u), "broken": u["broken"],
                       "dm": u["dm"], "pinned": u["pinned"], "wounded": u["wounded"], "eliminated": u["eliminated"]}
                      for u in out], "checks": checks}


def hand_rolled_keeping_endings(fixed, targets, elr, units, grid, columns, rows, roll, endings: dict):
    """``hand_rolled``, keeping the attack's ending (each unit's state and the result's lists, built from the
    units after the result and the checks) per value of what it reads, as the interpreter keeps a procedure's
    ending after its last roll (caching.py, "suffix"). Hand-written dicts must be turned into keys first,
    which costs more than building the ending: this variant is printed beside the baseline, not used as it."""
    if fixed.get("refused"):
        return fixed
    c, w = roll(), roll()
    (code, n, text), column, shift = hand_cell(fixed, c, w, grid, columns, rows)
    out, checks = hand_apply_result(code, n, targets, elr, units, roll)
    key = (tuple(tuple(u.values()) for u in out), tuple(tuple(x.values()) for x in checks))
    ending = endings.get(key)
    if ending is None:
        ending = endings[key] = [{"id": u["id"], "counter": u["counter"], "state": hand_state(u),
                                  "broken": u["broken"], "dm": u["dm"], "pinned": u["pinned"],
                                  "wounded": u["wounded"], "eliminated": u["eliminated"]} for u in out]
    return {"fp": fixed["fp"], "drm": fixed["drm"], "original_dr": c + w, "final_dr": c + w + fixed["drm"],
            "cowered": shift > 0, "shift": shift, "column": column, "result": text, "units": ending,
            "checks": checks}


def hand_rolled_keeping_runs(fixed, targets, elr, units, grid, columns, rows, roll, kept: dict, checks_kept: dict):
    """``hand_rolled``, keeping whole results by the dice they drew, as the interpreter keeps whole runs
    (analysis/caching.dice_path_runner): the attack's result per DR (faces sorted: only their total and doubles
    are read) when its IFT result rolls no more dice; each morale check's per unit, MC, ELR and DR (faces sorted)
    when it rolls no more. (Keeping the whole result after morale checks too, per DR and the checks' kept
    results, made it slower: 2.6 against 2.1 µs.) Printed beside the plain baseline; the faster of the two is
    the baseline."""
    if fixed.get("refused"):
        return fixed
    c, w = roll(), roll()
    key = (c, w) if c <= w else (w, c)
    found = kept.get(key)
    if found is not None:
        return found
    (code, n, text), column, shift = hand_cell(fixed, c, w, grid, columns, rows)
    if code in ("nmc", "mc"):
        out, checks = [], []
        for u in targets:
            if u["eliminated"]:
                out.append(u)
                continue
            new, outcome, original, final = hand_morale_check_kept(u, n, elr, units, roll, checks_kept)
            out.append(new)
            checks.append({"id": u["id"], "original_dr": original, "final_dr": final, "outcome": outcome})
    else:
        out, checks = hand_apply_result(code, n, targets, elr, units, roll)
    result = {"fp": fixed["fp"], "drm": fixed["drm"], "original_dr": c + w, "final_dr": c + w + fixed["drm"],
              "cowered": shift > 0, "shift": shift, "column": column, "result": text,
              "units": [{"id": u["id"], "counter": u["counter"], "state": hand_state(u), "broken": u["broken"],
                         "dm": u["dm"], "pinned": u["pinned"], "wounded": u["wounded"],
                         "eliminated": u["eliminated"]} for u in out], "checks": checks}
    if code == "none":
        kept[key] = result
    return result


def hand_morale_check_kept(u, mc, elr, units, roll, kept: dict):
    """``hand_morale_check`` kept per unit (by identity), MC, ELR and DR (faces sorted), when it rolls no more."""
    c, w = roll(), roll()
    key = (id(u), mc, elr, c, w) if c <= w else (id(u), mc, elr, w, c)
    found = kept.get(key)
    if found is not None:
        return found
    given = [w, c]
    more = []

    def again():
        if given:
            return given.pop()
        more.append(1)
        return roll()
    found = hand_morale_check(u, mc, elr, units, again)
    if not more:
        kept[key] = found
    return found


def hand_state(u):
    return "eliminated" if u["eliminated"] else "broken" if u["broken"] else "pinned" if u["pinned"] else "good order"


def hand_apply_result(code, n, targets, elr, units, roll):
    if code == "none":
        return list(targets), []
    if code in ("nmc", "mc"):
        return hand_morale_checks(targets, n, elr, (), units, roll)
    if code == "ptc":
        out, checks = [], []
        for u in targets:
            if u["eliminated"] or u["broken"] or u["pinned"]:
                out.append(u)
                continue
            original = roll() + roll()
            morale = u["morale"] - 1 if u["wounded"] else u["morale"]
            passed = original <= morale
            out.append(u if passed else dict(u, pinned=True))
            checks.append({"id": u["id"], "original_dr": original, "final_dr": original,
                           "outcome": "passed" if passed else "pinned"})
        return out, checks
    if code == "k":
        victim, after, skip = targets[0]["id"], [], []
        for u in targets:
            if u["id"] == victim:
                reduced, outcome = hand_casualty(u, units, roll)
                after.append(reduced)
                if outcome != "reduced":
                    skip.append(u["id"])
            else:
                after.append(u)
        return hand_morale_checks(after, n, elr, skip, units, roll)
    out = []
    for i, u in enumerate(targets):   # kia
        if i < n:
            out.append(dict(u, eliminated=True))
        elif u["broken"]:
            out.append(hand_casualty(u, units, roll)[0])
        else:
            out.append(dict(u, broken=True, dm=True, pinned=False, cx=False))
    return out, []


def hand_morale_checks(targets, mc, elr, skip, units, roll):
    out, checks = [], []
    for u in targets:
        if u["eliminated"] or u["id"] in skip:
            out.append(u)
            continue
        new, outcome, original, final = hand_morale_check(u, mc, elr, units, roll)
        out.append(new)
        checks.append({"id": u["id"], "original_dr": original, "final_dr": final, "outcome": outcome})
    return out, checks


def hand_become(u, counter, units):
    c = units[counter]
    return dict(u, counter=counter, kind=c["kind"], fp=c.get("fp", 0), range=c.get("range", 0), morale=c["morale"],
                reduces_to=c.get("reduces_to"), replaced_by=c.get("replaced_by"))


def hand_casualty(u, units, roll):
    if u["kind"] in ("half_squad", "crew"):
        return dict(u, eliminated=True), "eliminated"
    if u["kind"] == "squad":
        return hand_become(u, u["reduces_to"], units), "reduced"
    severity = roll() + (1 if u["wounded"] else 0)
    if severity >= 5:
        return dict(u, eliminated=True), "eliminated"
    return dict(u, wounded=True), "wounded"


def hand_morale_check(u, mc, elr, units, roll):
    original = roll() + roll()
    final = original + mc
    if u["broken"]:
        if original == 12:
            return dict(u, eliminated=True), "eliminated", original, final
        if final <= u["broken_morale"]:
            return u, "passed", original, final
        reduced, outcome = hand_casualty(u, units, roll)
        return reduced, outcome, original, final
    morale = u["morale"] - 1 if u["wounded"] else u["morale"]
    if final < morale and original != 12:
        return u, "passed", original, final
    if final == morale and original != 12:
        return dict(u, pinned=True), "pinned", original, final
    outcome = "broken"
    if original == 12:
        u, outcome = hand_casualty(u, units, roll)
        if u["eliminated"]:
            return u, "eliminated", original, final
    u = dict(u, broken=True, dm=True, pinned=False, cx=False)
    if elr is not None and final > morale + elr and u["kind"] not in ("crew", "leader") \
            and not u["underlined_morale"] and u["replaced_by"] is not None:
        u = dict(hand_become(u, u["replaced_by"], units), broken=True, dm=True)
        outcome = "replaced"
    return u, outcome, original, final


# ---- exact odds baselines: n units under one attack -------------------------------------------

STATES = ("good order", "pinned", "broken", "eliminated")


def unit_state_after(code, n, index, u, elr, units, a, b):
    """One target's state after the IFT result, the dice of its own check being (a, b)."""
    dice = iter((a, b, 1))
    roll = dice.__next__
    if code == "none":
        return hand_state(u)
    if code in ("nmc", "mc"):
        return hand_state(hand_morale_check(u, n, elr, units, roll)[0])
    if code == "ptc":
        if u["eliminated"] or u["broken"] or u["pinned"]:
            return hand_state(u)
        return "good order" if a + b <= (u["morale"] - 1 if u["wounded"] else u["morale"]) else "pinned"
    if code == "k":
        if index == 0:     # the default pick: the first target is casualty-reduced
            u, outcome = hand_casualty(u, units, roll)
            if outcome != "reduced":
                return hand_state(u)
            dice = iter((a, b, 1))
            roll = dice.__next__
        return hand_state(hand_morale_check(u, n, elr, units, roll)[0])
    if index < n:        # kia
        return "eliminated"
    return hand_state(hand_casualty(u, units, roll)[0] if u["broken"] else dict(u, broken=True))


def plain_odds(fixed, targets, elr, units, grid, columns, rows):
    """Plain Python that treats each target's check as independent: the joint of unit states."""
    from itertools import product
    cells: dict = {}
    for c in range(1, 7):
        for w in range(1, 7):
            cell = hand_cell(fixed, c, w, grid, columns, rows)[0]
            cells[cell[:2]] = cells.get(cell[:2], 0) + 1
    joint: dict = {}
    for (code, n), count in cells.items():
        marginals = []
        for i, u in enumerate(targets):
            m: dict = {}
            for a in range(1, 7):
                for b in range(1, 7):
                    st = unit_state_after(code, n, i, u, elr, units, a, b)
                    m[st] = m.get(st, 0) + 1
            marginals.append(list(m.items()))
        for combo in product(*marginals):
            weight = count
            for _, q in combo:
                weight *= q
            key = tuple(st for st, _ in combo)
            joint[key] = joint.get(key, 0) + weight
    den = 36 ** (len(targets) + 1)
    return {k: Fraction(v, den) for k, v in joint.items()}


def icepool_odds(icepool, fixed, targets, elr, units, grid, columns, rows):
    """The same joint distribution with icepool: a die of IFT results mapped to the product of unit dice."""
    d6 = icepool.d6
    cell = icepool.map(lambda c, w: hand_cell(fixed, c, w, grid, columns, rows)[0][:2], d6, d6)

    def hex_after(code, n):
        return icepool.tupleize(*[icepool.map(lambda a, b, i=i, u=u: unit_state_after(code, n, i, u, elr, units,
                                                                                       a, b), d6, d6)
                                  for i, u in enumerate(targets)])
    return cell.map(lambda result: hex_after(*result))


# ---- timing: interleaved rounds, medians of per-round ratios -----------------------------------

VERDICTS: list = []


def cpu_clock() -> float:
    """CPU seconds used by this process and by the children it has waited for."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


clock = cpu_clock
"""The clock every figure is timed with (``--clock``)."""


def interleaved(a, b, rounds: int) -> tuple[float, float, float]:
    """Time a and b alternately; the medians of a's times, b's times and the per-round ratios a/b."""
    a()      # warm-up, not timed (first-call caches, lazily built tables)
    b()
    ta, tb, ratios = [], [], []
    for i in range(rounds):
        first, second = (a, b) if i % 2 == 0 else (b, a)
        t0 = clock()
        first()
        t1 = clock()
        second()
        t2 = clock()
        x, y = (t1 - t0, t2 - t1) if i % 2 == 0 else (t2 - t1, t1 - t0)
        ta.append(x)
        tb.append(y)
        ratios.append(x / y)
    return statistics.median(ta), statistics.median(tb), statistics.median(ratios)


def verdict(name: str, value: float, target: float, unit: str = "x") -> None:
    ok = value <= target
    VERDICTS.append((name, value, target, unit, ok))
    print(f"   -> {name}: {value:.2f}{unit} (target <= {target:g}{unit}): {'MET' if ok else 'NOT MET'}")


def umpire_command() -> list[str]:
    import shutil
    found = shutil.which("umpire", path=str(Path(sys.executable).parent))
    return [found] if found else [sys.executable, "-m", "interpreter"]


def _python_without_editable_finder() -> str | None:
    """When this Python has an editable install (``pip install -e``, the README's), a Python that starts as a
    wheel install's would: a virtual environment of its own, without pip, whose one path file lists the checkout
    and this environment's site-packages (their own path files, the editable finder among them, are not run).
    None when there is no editable install here."""
    import glob
    import site
    import tempfile
    packages = site.getsitepackages()
    if not any(glob.glob(os.path.join(p, "__editable__*.pth")) for p in packages):
        return None
    folder = Path(tempfile.mkdtemp(prefix="umpire-bench-python-"))
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True, capture_output=True)
    python = folder / "bin" / "python"
    found = subprocess.run([str(python), "-c", "import site; print(site.getsitepackages()[0])"], check=True,
                           capture_output=True, text=True).stdout.strip()
    Path(found, "umpire-bench.pth").write_text("\n".join([str(ROOT), *packages]) + "\n")
    return str(python)


def bench_cold_start(rounds: int) -> None:
    print(f"1. cold start: fresh processes, interleaved rounds (median of {rounds})")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    umpire = umpire_command()
    situation = ROOT / "rulesets" / "aslsk" / "situations" / "prep_fire_fg_pbf.yaml"
    import tempfile
    cache = tempfile.mkdtemp(prefix="umpire-bench-cache-")
    warm_env = dict(env, UMPIRE_CACHE_DIR=cache)

    def run(cmd, e):
        subprocess.run(cmd, cwd=ROOT, env=e, check=True, capture_output=True)
    resolve = umpire + ["resolve", str(situation), "--seed", "1"]
    run(resolve, warm_env)      # fills the cache (and the bytecode cache)
    # the baseline is Python starting and doing nothing: a warm-cache resolve imports neither lark nor
    # ruamel.yaml (tests/test_load_cache.py checks that), so importing them would be work it does not do
    python = [sys.executable, "-c", "pass"]
    t_u, t_i, ratio = interleaved(lambda: run(resolve, warm_env), lambda: run(python, env), rounds)
    print(f"   python -c pass                         : {t_i * 1000:7.0f} ms")
    print(f"   umpire resolve (shipped, warm cache)   : {t_u * 1000:7.0f} ms   ratio {ratio:.2f}x")
    bare = _python_without_editable_finder()
    if bare is None:
        verdict("umpire resolve, warm cache / python -c pass", ratio, 3.0)
    else:
        # an editable install (the README's) runs its finder at every start of this Python, `python -c pass` too:
        # the same work on both sides, which flatters the ratio; the verdict is on a start as a wheel install's
        print("   (this Python starts an editable install's finder, which imports pathlib, re and urllib.parse on "
              "both sides: without it, as a wheel install starts)")
        resolve_bare = [bare, "-m", "interpreter", "resolve", str(situation), "--seed", "1"]
        run(resolve_bare, warm_env)
        t_u, t_i, ratio = interleaved(lambda: run(resolve_bare, warm_env), lambda: run([bare, "-c", "pass"], env),
                                      rounds)
        print(f"   python -c pass, no finder              : {t_i * 1000:7.0f} ms")
        print(f"   umpire resolve, no finder (warm cache) : {t_u * 1000:7.0f} ms   ratio {ratio:.2f}x")
        verdict("umpire resolve, warm cache / python -c pass (no editable finder)", ratio, 3.0)
        import shutil
        shutil.rmtree(Path(bare).parent.parent, ignore_errors=True)
    test = umpire + ["test", str(ROOT / "rulesets" / "aslsk")]
    subprocess.run(test, cwd=ROOT, env=warm_env, capture_output=True)
    times = []
    for _ in range(max(3, rounds // 2)):
        t0 = clock()
        subprocess.run(test, cwd=ROOT, env=warm_env, capture_output=True)
        times.append(clock() - t0)
    from interpreter.tools.testing import collect
    per_case = statistics.median(times) / len(collect(ROOT / "rulesets" / "aslsk"))
    print(f"   umpire test rulesets/aslsk (warm cache): {statistics.median(times) * 1000:7.0f} ms "
          f"({per_case * 1000:.2f} ms a case, start-up included)")
    verdict("umpire test rulesets/aslsk, warm cache, per case (ms)", per_case * 1000, 1.0, " ms")
    import shutil

    def cold():
        shutil.rmtree(cache, ignore_errors=True)
        run(resolve, warm_env)
    off_env = dict(env, UMPIRE_CACHE="off")
    t_c, t_o, ratio = interleaved(cold, lambda: run(resolve, off_env), max(3, rounds // 2))
    print(f"   umpire resolve, no cache (as before)   : {t_o * 1000:7.0f} ms")
    print(f"   umpire resolve, cold cache (written)   : {t_c * 1000:7.0f} ms   ratio {ratio:.2f}x")
    verdict("umpire resolve, cold cache / no cache", ratio, 1.10)
    shutil.rmtree(cache, ignore_errors=True)


def setup():
    s = load_situation(SITUATION, (str(FIXTURE),))
    r = s.ruleset
    ift = r.tables["ift"]
    grid = [[(v["code"], v["n"] or 0, v["text"]) if v is not UNKNOWN else None for v in row] for row in ift.cells]
    units = {k: dict(v) for k, v in r.catalogues["units"].entries.items()}
    terrain = r.catalogues["terrain"].entries
    tem = {k: v.get("tem") for k, v in terrain.items()}
    hind = {k: v.get("hindrance", 0) for k, v in terrain.items()}
    a = s.args
    firers = [dict(f) for f in a["firers"]]
    targets = [dict(t) for t in a["targets"]]
    leaders = [dict(l) for l in a.get("leaders", ())]
    hand = {"firers": firers, "targets": targets, "leaders": leaders,
            "terrain": a.get("target_terrain", "open ground"), "hindrances": list(a.get("hindrance_hexes", ())),
            "other_drm": a.get("other_drm", 0), "area_fire": a.get("area_fire", 0), "elr": a.get("elr"),
            "units": units, "tem": tem, "hindrance_of": hind, "grid": grid,
            "columns": list(ift.columns.headings), "rows": list(ift.rows.headings)}
    return s, hand


def _full_args(h):
    return (h["firers"], h["targets"], h["leaders"], h["terrain"], h["hindrances"], h["other_drm"], h["area_fire"],
            h["elr"], h["units"], h["tem"], h["hindrance_of"], h["grid"], h["columns"], h["rows"])


def _fixed(h):
    return hand_fixed(h["firers"], h["leaders"], h["terrain"], h["hindrances"], h["other_drm"], h["area_fire"],
                      h["tem"], h["hindrance_of"], h["columns"])


def bench_adjudication(s, h, n: int, rounds: int) -> None:
    print(f"\n2. untraced adjudication: the ASLSK IFT attack + a morale check per target ({n:,} per round, "
          f"median of {rounds} interleaved rounds)")
    check_runs: dict = {}
    check_checks: dict = {}
    for seed in range(200):      # the two must agree on the same dice before their speed means anything
        rng = random.Random(seed)
        hand = hand_fire_attack(*_full_args(h), roll=die_of(rng))
        out = adjudicate(s.ruleset, s.procedure, s.args, SeededDice(seed), None, trace=False)
        assert thaw(out.value) == thaw(hand), (seed, thaw(out.value), hand)
        rng = random.Random(seed)
        kept = hand_rolled_keeping_endings(_fixed(h), h["targets"], h["elr"], h["units"], h["grid"], h["columns"],
                                           h["rows"], die_of(rng), {})
        assert kept == hand, (seed, kept, hand)
        rng = random.Random(seed)
        kept = hand_rolled_keeping_runs(_fixed(h), h["targets"], h["elr"], h["units"], h["grid"], h["columns"],
                                        h["rows"], die_of(rng), check_runs, check_checks)
        assert kept == hand, (seed, kept, hand)
    plain = load_ruleset(FIXTURE_RULESET, (str(FIXTURE),), prefix_caching=False)
    # every round of each side draws new dice: seeds 7, 8, 9, ... in turn, the same on both sides. (The interpreter
    # keeps whole runs by the dice they drew, analysis/caching.py: the same seed every round would replay dice it
    # has seen, and time that, not the adjudications a player's new dice make.)
    seeds = {}

    def next_seed(side: str) -> int:
        seeds[side] = seeds.get(side, 6) + 1
        return seeds[side]

    def interp():
        dice = SeededDice(next_seed("interp"))
        for _ in range(n):
            adjudicate(s.ruleset, s.procedure, s.args, dice, None, trace=False)

    def interp_no_reuse():
        dice = SeededDice(next_seed("interp_no_reuse"))
        proc = plain.procedures["fire_attack"]
        for _ in range(n):
            plain.procedures["fire_attack"].memo.clear()
            adjudicate(plain, proc, s.args, dice, None, trace=False)

    def hand_like_for_like():
        # the interpreter reuses the attack's input-only part across runs: so does this baseline
        rng = random.Random(next_seed("hand"))
        roll = die_of(rng)
        fixed = _fixed(h)
        for _ in range(n):
            hand_rolled(fixed, h["targets"], h["elr"], h["units"], h["grid"], h["columns"], h["rows"], roll)

    def hand_no_reuse():
        rng = random.Random(next_seed("hand_no_reuse"))
        roll = die_of(rng)
        for _ in range(n):
            hand_fire_attack(*_full_args(h), roll=roll)
    def hand_keeping_endings():
        # the interpreter also keeps each procedure's ending after its last roll, keyed by what it reads
        rng = random.Random(next_seed("hand_keeping_endings"))
        roll = die_of(rng)
        fixed, endings = _fixed(h), {}
        for _ in range(n):
            hand_rolled_keeping_endings(fixed, h["targets"], h["elr"], h["units"], h["grid"], h["columns"],
                                        h["rows"], roll, endings)
    def hand_keeping_runs():
        # the interpreter keeps whole runs by the dice they drew: so does this variant (hand_rolled_keeping_runs)
        rng = random.Random(next_seed("hand_keeping_runs"))
        roll = die_of(rng)
        fixed = _fixed(h)
        for _ in range(n):
            hand_rolled_keeping_runs(fixed, h["targets"], h["elr"], h["units"], h["grid"], h["columns"], h["rows"],
                                     roll, kept_runs, kept_checks)
    kept_runs: dict = {}
    kept_checks: dict = {}
    t_k, t_p, ratio_k = interleaved(hand_keeping_runs, hand_like_for_like, rounds)
    keeping_faster = ratio_k < 1
    which = 'FASTER, so it is the baseline' if keeping_faster else 'slower, so the plain one is the baseline'
    print(f"   hand-written, also keeping whole results by their dice as the interpreter does: {t_k / n * 1e6:6.1f} µs "
          f"({ratio_k:.2f}x the plain hand function: {which})")
    baseline = hand_keeping_runs if keeping_faster else hand_like_for_like
    t_i, t_h, ratio = interleaved(interp, baseline, rounds)
    print(f"   hand-written baseline ({'keeping runs' if keeping_faster else 'input-only part once'}): "
          f"{n / t_h:10,.0f} /s  ({t_h / n * 1e6:6.1f} µs each)")
    print(f"   interpreter (reuse on)             : {n / t_i:10,.0f} /s  ({t_i / n * 1e6:6.1f} µs each)   "
          f"ratio {ratio:.2f}x")
    verdict("untraced adjudication / like-for-like hand function", ratio, 3.0)
    if keeping_faster:
        t_i2, t_h2, ratio_plain = interleaved(interp, hand_like_for_like, rounds)
        print(f"   (against the plain hand function, {t_h2 / n * 1e6:6.1f} µs, which keeps only the input-only part: "
              f"{ratio_plain:.2f}x; no target)")
    t_e, t_f, ratio3 = interleaved(hand_keeping_endings, hand_like_for_like, rounds)
    print(f"   hand-written, also keeping the attack's ending as the interpreter does: {t_e / n * 1e6:6.1f} µs "
          f"({ratio3:.2f}x the plain hand function: "
          f"{'slower, so no baseline keeps it' if ratio3 >= 1 else 'FASTER: it should be the baseline'})")
    t_p, t_q, ratio2 = interleaved(interp_no_reuse, hand_no_reuse, rounds)
    print(f"   no reuse on either side: hand {t_q / n * 1e6:6.1f} µs, interpreter {t_p / n * 1e6:6.1f} µs   "
          f"ratio {ratio2:.2f}x   (beside the figure above; no target)")


def die_of(rng: random.Random):
    """The hand-written side's d6, drawn exactly as the interpreter's seeded dice draw each die
    (model/dice.SeededDice: ``int(random() * sides) + 1``, one call of ``random()`` per die): the same dice
    in the same order from the same seed, and the same work per die (``randrange`` costs about twice as much)."""
    rand = rng.random
    return lambda: int(rand() * 6) + 1


def bench_simulation(s, h, n: int, rounds: int) -> None:
    print(f"\n3. simulation of the attack grouped by IFT result ({n:,} runs per round, median of {rounds} "
          "interleaved rounds)")

    def umpire_sim(seed: int):
        return simulate(s, n, seed, ["result"])

    def hand_sim(seed: int, keeping: tuple | None = None):
        # the same dice as simulate: its blocks of BLOCK_RUNS runs, each drawn from its own seeded stream
        # (odds/simulation.block_seed), one random() per die, as die_of draws them. ``keeping``: the dicts
        # hand_rolled_keeping_runs keeps whole results in (as the interpreter keeps whole runs by their dice)
        fixed = _fixed(h)      # like the interpreter, the input-only part once
        counts: dict = {}
        for block in range(-(-n // BLOCK_RUNS)):
            roll = die_of(random.Random(block_seed(seed, block)))
            for _ in range(min(BLOCK_RUNS, n - block * BLOCK_RUNS)):
                if keeping is None:
                    r = hand_rolled(fixed, h["targets"], h["elr"], h["units"], h["grid"], h["columns"], h["rows"],
                                    roll)["result"]
                else:
                    r = hand_rolled_keeping_runs(fixed, h["targets"], h["elr"], h["units"], h["grid"], h["columns"],
                                                 h["rows"], roll, *keeping)["result"]
                counts[r] = counts.get(r, 0) + 1
        return counts
    # the two must count the same outcomes from the same dice before their speed means anything
    umpire_counts = {label: p * n for label, p, _ in umpire_sim(11).rows}
    assert umpire_counts == {f"result={r}": c for r, c in hand_sim(11).items()}, (umpire_counts, hand_sim(11))
    keeping: tuple = ({}, {})
    assert hand_sim(11, keeping) == hand_sim(11)
    # each round a new seed (12, 13, ...), the same on both sides: new dice, as for the adjudications above
    seeds = {"umpire": 11, "hand": 11, "keeping": 11}

    def umpire_round():
        seeds["umpire"] += 1
        return umpire_sim(seeds["umpire"])

    def hand_plain_round():
        seeds["hand"] += 1
        return hand_sim(seeds["hand"])

    def hand_keeping_round():
        seeds["keeping"] += 1
        return hand_sim(seeds["keeping"], keeping)
    t_k, t_p, ratio_k = interleaved(hand_keeping_round, hand_plain_round, rounds)
    print(f"   hand loop keeping whole results by their dice: {ratio_k:.2f}x the plain hand loop "
          f"({'FASTER, so it is the baseline' if ratio_k < 1 else 'slower, so the plain one is the baseline'})")
    hand_round = hand_keeping_round if ratio_k < 1 else hand_plain_round
    t_u, t_h, ratio = interleaved(umpire_round, hand_round, rounds)
    print(f"   hand-written loop : {n / t_h:10,.0f} runs/s")
    print(f"   umpire simulate   : {n / t_u:10,.0f} runs/s   ratio {ratio:.2f}x")
    verdict("simulation / like-for-like hand loop", ratio, 3.0)


def _n_units(n: int):
    s = load_situation(SITUATION, (str(FIXTURE),))
    t = s.args["targets"][0]
    s.args = dict(s.args, targets=tuple(t.updated({"id": f"G{i + 1}"}) for i in range(n)))
    return s


def bench_odds(h, rounds: int) -> None:
    print(f"\n4. exact odds: the attack on n 4-6-7 squads, every die free, grouped by each squad's state "
          f"(median of {rounds} interleaved rounds)")
    try:
        import icepool
    except ImportError:
        icepool = None
        print("   icepool is not installed (pip install -e '.[bench]'): its baselines are skipped")
    print(f"   {'n':>3} {'outcomes':>9} {'umpire':>10} {'plain Python':>13} {'icepool':>10} {'umpire/icepool':>15}")
    fixed = _fixed(h)
    for n in (1, 2, 4, 8):
        s = _n_units(n)
        targets = [dict(t) for t in s.args["targets"]]
        by = [f"units.G{i + 1}.state" for i in range(n)]
        ours = {tuple(part.split("=", 1)[1] for part in label.split(", ")): p
                for label, p, _ in exact_odds(s, by).rows}
        args = (fixed, targets, h["elr"], h["units"], h["grid"], h["columns"], h["rows"])
        plain = plain_odds(*args)
        assert ours == plain, f"{n} units: umpire and the plain-Python baseline disagree"
        umpire_run = lambda: exact_odds(s, by)
        t_u, t_p, _ = interleaved(umpire_run, lambda: plain_odds(*args), rounds)
        line = f"   {n:>3} {len(ours):>9,} {t_u * 1000:8.1f} ms {t_p * 1000:10.1f} ms"
        if icepool is not None:
            die = icepool_odds(icepool, *args)
            theirs = {k: Fraction(q, die.denominator()) for k, q in die.items()}
            assert ours == theirs, f"{n} units: umpire and icepool disagree"
            t_u2, t_i, ratio = interleaved(umpire_run, lambda: icepool_odds(icepool, *args), rounds)
            print(line + f" {t_i * 1000:8.1f} ms {ratio:13.2f}x")
            verdict(f"odds, {n} unit(s) / icepool", ratio, 2.0)
        else:
            print(line)
    s = _n_units(16)
    by = ['count(u for u in units if u.state == "broken")']
    times = []
    for _ in range(rounds):
        t0 = clock()
        report = exact_odds(s, by)
        times.append(clock() - t0)
    print(f"   16 units grouped by how many break: {statistics.median(times) * 1000:.1f} ms, "
          f"{len(report.rows)} outcomes, total {report.total}")
    verdict("odds, 16 units by count (seconds)", statistics.median(times), 1.0, " s")


SHIPPED_SITUATION = ROOT / "rulesets" / "aslsk" / "situations" / "prep_fire_fg_pbf.yaml"


def bench_shipped_odds(rounds: int) -> None:
    """The shipped ASLSK fire_attack (rulesets/aslsk, not the frozen copy) on n copies of the README tour's
    4-6-7 target, every die free, grouped by how many break and by each unit's state, with the BENCHMARK
    FIXTURE chart (benchmarks/fixtures/ift-fixture.yaml: made-up cells, so no die stops on an unknown one).
    Larger n are asked with a smaller state budget, so a refusal comes in seconds rather than minutes."""
    print("\n5. exact odds on the shipped ASLSK fire_attack (BENCHMARK FIXTURE chart overlay), every die free")
    from interpreter.errors import LimitError
    base = None
    for n, budget in ((1, None), (2, None), (4, None), (8, 20_000), (16, 20_000)):
        s = load_situation(SHIPPED_SITUATION, (str(FIXTURE),))
        s.dice, s.dice_positions = [], []
        base = base or s.args["targets"][0]
        s.args = dict(s.args, targets=tuple(base.updated({"id": f"G{i + 1}"}) for i in range(n)))
        for what, by in (("by count", ['count(u for u in units if u.state == "broken")']),
                         ("by state", [f"units.G{i + 1}.state" for i in range(n)])):
            if what == "by state" and n > 8:
                continue
            times, report, refused = [], None, None
            for _ in range(rounds if n <= 2 else 1):
                t0 = clock()
                try:
                    report = exact_odds(s, by, **({"budget": budget} if budget else {}))
                except LimitError as e:
                    refused = e.message
                times.append(clock() - t0)
            t = statistics.median(times)
            if refused:
                print(f"   {n:>3} targets {what}: refused after {t:.2f} s ({refused[:70]}...)")
            else:
                print(f"   {n:>3} targets {what}: {t * 1000:8.1f} ms, {len(report.rows)} outcomes, "
                      f"{report.states:,} live states at most")
            if n >= 4:
                verdict(f"odds, shipped fire_attack, {n} targets {what} (seconds)", float("inf") if refused else t,
                        1.0, " s")
    bench_largest_stack(rounds)
    bench_largest_stack_lhy(rounds)
    bench_largest_stack_pg(rounds)
    bench_largest_stack_vv(rounds)


LARGEST_STACK = """ruleset: {root}
procedure: fire_attack
inputs:
  wreck_hexes: 0
  smoke: []
  firer_in_smoke: false
  firers:
    - {{id: A-N5, counter: american 7-4-7, range_to_target: 2, los: true, elevation: 0}}
    - {{id: A-O6, counter: american 6-6-6, range_to_target: 1, los: true, elevation: 0}}
  targets:
    - {{id: G1, counter: german 4-6-7, terrain: stone building, elevation: 0}}
    - {{id: G2, counter: german 4-6-7, terrain: stone building, elevation: 0}}
    - {{id: G3, counter: german 4-6-7, terrain: stone building, elevation: 0}}
    - {{id: L1, counter: german 9-1, terrain: stone building, elevation: 0}}
    - {{id: L2, counter: german 8-1, terrain: stone building, elevation: 0}}
  hindrance_hexes: [orchard]
  elr: 3
"""


def _largest_stack_against_plain(s, what: str, by: list, plain, key, rounds: int, *, title: str, game: str,
                                 procedure: str) -> None:
    """One largest-stack question: timed once as a fresh question (verdict <= 1 s), its rows read as the
    plain Python's outcomes by ``key(label)`` and checked equal to ``plain()``, then the two timed in
    interleaved rounds (verdict <= 2x). ``game`` prefixes the verdicts' names ("" for ASLSK, "LHY ", ...)."""
    t0 = clock()
    report = exact_odds(s, by)
    t = clock() - t0
    print(f"   {title} {what}: {t * 1000:8.1f} ms, {len(report.rows)} outcomes, "
          f"{report.states:,} live states at most (first run)")
    verdict(f"odds, shipped {game}{procedure}, largest stack {what} (seconds)", t, 1.0, " s")
    ours: dict = {}
    for label, p, _ in report.rows:
        k = key(label)
        ours[k] = ours.get(k, 0) + p
    theirs = {k: p for k, p in plain().items() if p}
    assert ours == theirs, f"{game}largest stack {what}: umpire and the plain-Python enumeration disagree"
    t_u, t_h, ratio = interleaved(lambda: exact_odds(s, by), plain, rounds)
    print(f"      umpire {t_u * 1000:8.1f} ms, plain Python {t_h * 1000:8.1f} ms, ratio {ratio:.2f}x")
    verdict(f"odds, shipped {game}largest stack {what} / like-for-like plain Python", ratio, 2.0)


def bench_largest_stack(rounds: int) -> None:
    """The largest legal stack (three 4-6-7s, a 9-1 and an 8-1 in a stone building) under the README tour's
    Fire Group, every die free, with the BENCHMARK FIXTURE chart: the leaders' checks depend on one another
    and the squads' checks on the leaders' outcomes, and the Leader Loss checks after the attack on which
    leaders were lost (the dependence the rules impose). Timed once as a fresh question (the procedures
    compiled and planned before: the smaller figures above did that), then against the like-for-like plain
    Python of benchmarks/largest_stack.py, checked equal first, in interleaved rounds."""
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "largest-stack.yaml"
        path.write_text(LARGEST_STACK.format(root=ROOT / "rulesets" / "aslsk"))
        s = load_situation(path, (str(FIXTURE),))
    import largest_stack as hand
    for what, by, plain in (("by count", ['count(u for u in units if u.state == "broken")'], hand.by_count),
                            ("by state", [f"units.{i}.state" for i in hand.ORDER], hand.odds)):
        # the like-for-like plain Python (benchmarks/largest_stack.py: the same rules, chart and independence,
        # memoised): a label read as its count, or as each unit's state
        def key(label, what=what):
            if label.startswith("error: "):
                return label
            if what == "by count":
                return int(label.rsplit("=", 1)[1])
            return tuple(part.split("=", 1)[1] for part in label.split(", "))
        _largest_stack_against_plain(s, what, by, plain, key, rounds, title="largest stack (3 squads, 2 leaders)",
                                     game="", procedure="fire_attack")


LARGEST_STACK_LHY = """ruleset: {root}
procedure: small_arms_mortar_resolution
inputs:
  markers:
    - {{id: SA-1, kind: sadrm, value: 1}}
    - {{id: SA-2, kind: sadrm, value: -1}}
  units:
{units}
"""


def bench_largest_stack_lhy(rounds: int) -> None:
    """The Last Hundred Yards: the largest stack 2.3 allows (six sections, two MG sections, two vehicles, a Towed
    Gun, an FP, two leaders, two LATWs, two FTs; 15 with a Cohesion) under the two SADRM markers of the shipped
    resolution_hex_under_fire situation, resolved by the shipped small_arms_mortar_resolution (13.1), every
    die free: the highest marker result decides the unit compared and its result, and the other units'
    Cohesion Checks depend on it (no chart is read, so no overlay). Timed once as a fresh question, then
    against the like-for-like plain Python of benchmarks/largest_stack_lhy.py, checked equal first, in
    interleaved rounds."""
    import tempfile

    import largest_stack_lhy as hand
    units = "\n".join(
        "    - {" + ", ".join([f"id: {i}", f"kind: {kind}", "nationality: german"]
                          + ([f"cohesion: {c}", f"assault_value: {av}"] if c is not None else [])
                          + ([f"sav: {sav}"] if sav is not None else [])
                          + ([f'platoon: "{pl}"'] if pl else [])
                          + (["disrupted: true"] if dis else []) + (["concealed: true"] if con else [])) + "}"
        for i, kind, c, av, sav, pl, dis, con in hand.UNITS)
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "largest-stack-lhy.yaml"
        path.write_text(LARGEST_STACK_LHY.format(root=ROOT / "rulesets" / "last-hundred-yards", units=units))
        s = load_situation(path)
    n = len(hand.UNITS)
    # each unit's state: the result's ``results`` lists the unit compared first (Sec 1a, the first in the hex),
    # then, when it was hit, every other unit in the hex's order; a unit missing took no check ("no effect")
    by_state = [f"results.{k}.result" for k in range(len(hand.ORDER))]
    for what, by, plain in (("by count", ['count(r for r in results if r.result != "no effect")'], hand.by_count),
                            ("by state", by_state, hand.odds)):
        # the like-for-like plain Python (benchmarks/largest_stack_lhy.py: the same rules and independence,
        # memoised): a label read as its count, or as each unit's result
        def key(label, what=what, by=by):
            parts = [part[len(b) + 1:] for b, part in zip(by, label.split(", "))]
            return int(parts[0]) if what == "by count" else \
                tuple("no effect" if v.startswith("(no ") else v for v in parts)
        _largest_stack_against_plain(s, what, by, plain, key, rounds, title=f"LHY largest stack ({n} counters)",
                                     game="LHY ", procedure="small_arms_mortar_resolution")


PG_FIXTURE = ROOT / "benchmarks" / "fixtures" / "pg-dft-fixture.yaml"

LARGEST_STACK_PG = """ruleset: {root}
procedure: direct_fire
inputs:
  firers_in_assault_hex: false
  hex: {{terrain: clear, elevation: 0, friendly_units: false}}
  firers:
    - {{id: SS-HMG, activated: true, kind: hmg, hex_terrain: clear, nationality: waffen_ss, df: 11, df_range: 5,
       range_to_target: 2, los: true, fire_line: [], elevation: 0}}
  targets:
    - {{id: INF1, kind: infantry, nationality: soviet, morale: 7, reduced_morale: 6, steps: 2}}
    - {{id: INF2, kind: infantry, nationality: soviet, morale: 7, reduced_morale: 6, steps: 2}}
    - {{id: INF3, kind: infantry, nationality: soviet, morale: 7, reduced_morale: 6, steps: 2}}
    - {{id: MAJ, kind: leader, nationality: soviet, rank: MAJ, morale: 9, morale_modifier: 2, combat_modifier: 1}}
    - {{id: CPT, kind: leader, nationality: soviet, rank: CPT, morale: 8, morale_modifier: 1, combat_modifier: 1}}
    - {{id: LT, kind: leader, nationality: soviet, rank: LT, morale: 8, morale_modifier: 1, combat_modifier: 1}}
  side:
    leaders: [{{id: COL, kind: leader, nationality: soviet, rank: COL, morale: 8, morale_modifier: 1}}]
"""


def bench_largest_stack_pg(rounds: int) -> None:
    """Panzer Grenadier: the shipped direct_fire (rulesets/panzer-grenadier) of the 7.52 example's SS HMG on the
    largest stack of benchmarks/largest_stack_pg.py (three INF, a major, a captain and a lieutenant in a clear
    hex), every die free, with the BENCHMARK FIXTURE Direct Fire Table (benchmarks/fixtures/pg-dft-fixture.yaml:
    made-up cells; the book prints no fire chart). The leaders' checks depend on one another (by seniority),
    the platoons' on the leaders' outcomes, the leaders' casualty checks on the step losses. Timed once as a
    fresh question, then against the like-for-like plain Python of benchmarks/largest_stack_pg.py, checked
    equal first, in interleaved rounds."""
    import tempfile
    print("\n   Panzer Grenadier direct_fire (BENCHMARK FIXTURE Direct Fire Table overlay), every die free")
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "largest-stack-pg.yaml"
        path.write_text(LARGEST_STACK_PG.format(root=ROOT / "rulesets" / "panzer-grenadier"))
        s = load_situation(path, (str(PG_FIXTURE),))
    import largest_stack_pg as hand

    count = 'count(o for o in outcomes if o.status == "eliminated" or o.state == "demoralized")'
    for what, by, plain in (("by count", [count], hand.by_count),
                            ("by state", [f"outcomes.{i}.{f}" for i in hand.ORDER for f in ("status", "state")],
                             hand.odds)):
        # the like-for-like plain Python (benchmarks/largest_stack_pg.py): by state, each unit's status and
        # state read as the plain Python's label, e.g. "disrupted reduced"
        def key(label, what=what):
            if label.startswith("error: "):
                return label
            values = [part.rsplit("=", 1)[1] for part in label.split(", ")]
            return int(values[0]) if what == "by count" else tuple(
                "eliminated" if status == "eliminated" else state + (" reduced" if status == "reduced" else "")
                for status, state in zip(values[::2], values[1::2]))
        _largest_stack_against_plain(s, what, by, plain, key, rounds, title="largest stack (3 INF, 3 leaders)",
                                     game="PG ", procedure="direct_fire")


LARGEST_STACK_VV = """ruleset: {root}
procedure: ap_fire
inputs:
  phase: fire
  firers:
    - {{id: G-1, kind: squad, apfp: 4, cr: 5}}
    - {{id: G-2, kind: squad, apfp: 4, cr: 5, sw: LMG}}
    - {{id: G-3, kind: squad, apfp: 4, cr: 5}}
    - {{id: Hermes, counter: Hermes}}
  firer_hex: {{id: A1, level: 0, terrain: open_ground, infantry_fired_at: []}}
  line:
    - {{feature: hedge, firer_adjacent: true, along: false}}
  range: 2
  target:
    id: B3
    level: 0
    terrain: building
    units:
      - {{id: US-A, counter: 4-6-4 Rifle squad}}
      - {{id: US-B, counter: 4-6-4 Rifle squad, sw: LMG}}
      - {{id: US-C, counter: 4-6-4 Rifle squad}}
      - {{id: Coleman, counter: Coleman}}
  sniper:
    hex: {{id: S, terrain: woods}}
    range: 4
    line: []
"""
AP_FIXTURE = ROOT / "benchmarks" / "fixtures" / "ap-combat-fixture.yaml"


def bench_largest_stack_vv(rounds: int) -> None:
    """Valor & Victory: the largest legal stack (6.9: four infantry units; three 4-6-4 Rifle squads and
    Coleman in a building) under the AP Combat example's German stack 1 filled to four units (APFP 16), every
    die free, with the BENCHMARK FIXTURE AP Combat Table: the defender's Casualty Points (default policy),
    then the valor checks of every firer on a natural 2 and the sniper's attack and elimination check on a
    natural 12. By each unit's state it asks the result's own fields (the target hex's eliminated, reduced and
    pinned lists; each valor check; the sniper's casualties and fate), read here as each unit's state. Timed
    once as a fresh question, then against the like-for-like plain Python of benchmarks/largest_stack_vv.py,
    checked equal first, in interleaved rounds."""
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "largest-stack-vv.yaml"
        path.write_text(LARGEST_STACK_VV.format(root=ROOT / "rulesets" / "valor-and-victory"))
        s = load_situation(path, (str(AP_FIXTURE),))
    import largest_stack_vv as hand
    n_firers = len(hand.FIRERS)
    sniper = ["triggered.sniper.eliminated", "triggered.sniper.reduced", "triggered.sniper.pinned"]
    by_state = (["eliminated", "reduced", "pinned"] + [f"triggered.valor_checks.{i}.valorous" for i in range(n_firers)]
                + sniper + ["triggered.sniper.sniper_eliminated"])

    def parts(label):
        """A by-state label's values, one per --by ("(no ...)" for a field the outcome lacks: None)."""
        out, rest = [], label
        for i, text in enumerate(by_state):
            rest = rest[len(text) + 1:]
            end = rest.index(f", {by_state[i + 1]}=") if i + 1 < len(by_state) else len(rest)
            value, rest = rest[:end], rest[end + 2:]
            out.append(None if value.startswith("(no ") else value)
        return out

    def ids(shown):
        return [] if shown in (None, "[]") else shown[1:-1].split(", ")

    def states(label):
        """Each unit's state, as largest_stack_vv.odds() names it, from a by-state label."""
        v = parts(label)
        out = [hand.hit_state(t, (ids(v[0]), ids(v[1]), ids(v[2]), None)) for t, _ in hand.TARGETS]
        hit = [ids(x) for x in v[3 + n_firers:6 + n_firers]]
        for i, (f, _, _) in enumerate(hand.FIRERS):
            out.append("valorous" if v[3 + i] == "true" else hand.hit_state(f, (*hit, None)))
        fate = v[-1]
        out.append("not activated" if fate is None else "eliminated" if fate == "true" else "on board")
        return tuple(out)
    for what, by, plain in (("by count", ["len(pinned) + len(eliminated) if cp > 0 else 0"], hand.by_count),
                            ("by state", by_state, hand.odds)):
        # the like-for-like plain Python (benchmarks/largest_stack_vv.py: the same rules, chart and independence,
        # memoised): a label read as its count, or as each unit's state
        def key(label, what=what):
            if label.startswith("error: "):
                return label
            return int(label.rsplit("=", 1)[1]) if what == "by count" else states(label)
        _largest_stack_against_plain(s, what, by, plain, key, rounds, title="V&V largest stack (4 infantry units)",
                                     game="V&V ", procedure="ap_fire")


def bench_shipped_situations(rounds: int) -> None:
    """Every shipped situation, all dice free, the whole result (``umpire odds --all-dice``): CPU time of the
    odds alone. The first round is what a fresh ``umpire odds`` pays (each procedure compiled and planned on
    first use); the best of ``rounds`` is the enumeration alone (a shared machine only ever adds time)."""
    import gc

    from interpreter.errors import UmpireError
    from interpreter.odds.exact import budgeted_odds
    print(f"\n6. exact odds of every shipped situation, every die free, whole result (first round; best of {rounds})")
    times = []
    for path in sorted((ROOT / "rulesets").glob("*/situations/*.yaml")):
        # as in a fresh `umpire odds`: what the earlier situations left (the other rulesets, compiled, with their
        # memos: 1.3M objects) is set aside from the collector, whose full collections of it took 0.4-1.1 s and
        # fell inside whichever question the allocation count happened to reach (gc callbacks measured them)
        gc.freeze()
        s = load_situation(path)
        s.dice, s.dice_positions = [], []
        rounds_, note = [], ""
        for _ in range(rounds):
            t0 = clock()
            try:
                report = budgeted_odds(s, [])
                note = f"{len(report.rows):,} outcomes, {report.states:,} live states at most"
            except UmpireError as e:
                note = f"refused: {e.message[:60]}"
            rounds_.append(clock() - t0)
        times.append((rounds_[0], min(rounds_), f"{path.parent.parent.name}/{path.stem}", note))
    times.sort(reverse=True)
    for first, best, name, note in times[:8]:
        print(f"   {first * 1000:8.1f} ms; {best * 1000:8.1f} ms  {name} ({note})")
    print(f"   ... {len(times)} situations, {sum(t[0] for t in times):.1f} s in all (first rounds)")
    verdict("odds --all-dice, slowest shipped situation, first round (seconds)", times[0][0], 1.0, " s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds")
    parser.add_argument("--clock", choices=("cpu", "wall"), default="cpu",
                        help="time CPU use (default: steady on a shared machine) or elapsed wall time")
    parser.add_argument("--only", action="append",
                        choices=("cold", "adjudication", "simulation", "odds", "shipped", "situations"),
                        help="run only these parts (repeatable; default: all)")
    args = parser.parse_args()
    parts = set(args.only or ("cold", "adjudication", "simulation", "odds", "shipped", "situations"))
    global clock
    clock = cpu_clock if args.clock == "cpu" else time.perf_counter
    rounds = 5 if args.quick else 11
    n = 1000 if args.quick else 5000
    load = os.getloadavg()[0]
    print(f"Umpire benchmarks (python {sys.version.split()[0]}, {os.cpu_count()} cores, load {load:.1f}, "
          f"{args.clock} time); medians of interleaved rounds, ratios are medians of per-round ratios\n")
    if "cold" in parts:
        bench_cold_start(rounds)
    s, h = setup()
    if "adjudication" in parts:
        bench_adjudication(s, h, n, rounds)
    if "simulation" in parts:
        bench_simulation(s, h, n, rounds)
    if "odds" in parts:
        bench_odds(h, rounds)
    if "shipped" in parts:
        bench_shipped_odds(rounds)
    if "situations" in parts:
        bench_shipped_situations(3 if args.quick else 5)
    print("\nverdicts:")
    for name, value, target, unit, ok in VERDICTS:
        print(f"   {'MET    ' if ok else 'NOT MET'}  {name}: {value:.2f}{unit} (target <= {target:g}{unit})")


if __name__ == "__main__":
    main()
