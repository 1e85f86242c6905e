"""Umpire benchmarks: every figure is a ratio against a baseline measured in the same process.

    python benchmarks/run.py            # everything
    python benchmarks/run.py --quick    # fewer repetitions

What is measured:
  1. ruleset load: cold (a fresh process, imports and grammar included; and in-process with the
     parser already built) and cached (the per-process cache);
  2. the ASLSK IFT attack followed by a morale check for each of two target units:
     adjudications per second through the interpreter, against a hand-written plain-Python
     function of the same procedure (below), both with the same seeded dice;
  3. exact odds of that attack (every roll enumerated);
  4. the exact distribution of one IFT cell with cowering, against the same computation written
     with icepool (if icepool is installed in this environment: pip install icepool);
  5. simulation rate against a hand-written loop of the same procedure.

The IFT used here is a BENCHMARK FIXTURE (benchmarks/fixtures/ift-fixture.yaml): invented values,
so that random dice never stop on a chart cell the rulebook does not print. It is not the real chart.
Medians of several repetitions are quoted; the machine is shared, so compare ratios, not seconds.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from interpreter.api import adjudicate, clear_cache, load_ruleset, load_situation  # noqa: E402
from interpreter.dice import SeededDice  # noqa: E402
from interpreter.odds import exact_odds, simulate  # noqa: E402
from interpreter.tables import UNKNOWN  # noqa: E402
from interpreter.values import thaw  # noqa: E402

FIXTURE = ROOT / "benchmarks" / "fixtures" / "ift-fixture.yaml"
SITUATION = ROOT / "benchmarks" / "fixtures" / "ift-attack.yaml"


def median_time(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


# ---- the hand-written baseline ------------------------------------------------------------
# The same procedure as rulesets/aslsk/procedures/{fire,morale}.ump, written directly in Python:
# FP multipliers and fire group, leader direction, DRM, cowering (one or two columns), column,
# IFT cell, and each result applied to each target (morale check with pin, break + DM, original
# 12 casualty reduction, ELR replacement; PTC; K/#; #KIA). It returns the same result record as
# the ruleset's fire_attack, field for field; the benchmark checks that on 200 seeds first.

def hand_fire_attack(firers, targets, leaders, terrain, hindrances, other_drm, area_fire, elr,
                     units, tem, hindrance_of, grid, columns, rows, roll):
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
    c, w = roll(), roll()
    original = c + w
    final = original + drm
    shift = 0
    mmc = any(f["kind"] != "leader" for f in firers)
    if c == w and mmc and not leaders:
        inexperienced = any(f["inexperienced"] or f["class"] == "conscript"
                            or (f["class"] == "green" and not f["with_good_order_leader"]) for f in firers)
        shift = 2 if inexperienced else 1
    col = -1
    for i, h in enumerate(columns):
        if h <= fp:
            col = i
    if col >= 0:
        col -= shift
    row = min(max(final, rows[0]), rows[-1]) - rows[0]
    code, n, text = grid[row][col] if col >= 0 else ("none", 0, "-")
    out, checks = hand_apply_result(code, n, targets, elr, units, roll)
    return {"fp": fp, "drm": drm, "original_dr": original, "final_dr": final, "cowered": shift > 0, "shift": shift,
            "column": columns[col] if col >= 0 else None, "result": text,
            "units": [{"id": u["id"], "counter": u["counter"], "state": hand_state(u), "broken": u["broken"],
                       "dm": u["dm"], "pinned": u["pinned"], "wounded": u["wounded"], "eliminated": u["eliminated"]}
                      for u in out], "checks": checks}


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


# ---- benchmarks -----------------------------------------------------------------------------

def bench_load(repeat: int) -> None:
    print("1. ruleset load (median of %d)" % repeat)
    print("   cold process: a fresh Python process imports Umpire and loads the ruleset (bytecode caching on,")
    print("   as in a normal install); cold in-process: parser already built; cached: the per-process cache")
    print(f"   {'ruleset':<22} {'cold process':>13} {'cold in-process':>16} {'cached':>10}")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([sys.executable, "-c", "import interpreter.api, interpreter.cli"], cwd=ROOT, env=env, check=True)
    for root in sorted((ROOT / "rulesets").iterdir()):
        if not (root / "ruleset.yaml").is_file():
            continue
        code = ("import time; t=time.perf_counter(); from interpreter.api import load_ruleset; "
                f"load_ruleset({str(root)!r}); print(time.perf_counter()-t)")
        procs = [float(subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                                      env=env, check=True).stdout) for _ in range(max(3, repeat // 2))]

        def cold():
            clear_cache()
            load_ruleset(root)
        cold_t = median_time(cold, repeat)
        load_ruleset(root)
        cached_t = median_time(lambda: load_ruleset(root), repeat)
        print(f"   {root.name:<22} {statistics.median(procs) * 1000:10.1f} ms {cold_t * 1000:13.1f} ms "
              f"{cached_t * 1000:7.2f} ms")
    print("   target: a full ruleset loads cold in under 300 ms")


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
    hand_args = (firers, targets, leaders, a.get("target_terrain", "open ground"), list(a.get("hindrance_hexes", ())),
                 a.get("other_drm", 0), a.get("area_fire", 0), a.get("elr"), units, tem, hind, grid,
                 list(ift.columns.headings), list(ift.rows.headings))
    return s, hand_args


def bench_adjudication(s, hand_args, n: int, repeat: int) -> None:
    print(f"\n2. ASLSK IFT attack + a morale check for each of 2 units ({n:,} adjudications, median of {repeat})")
    # the two must agree on the same dice before their speed means anything
    for seed in range(200):
        rng = random.Random(seed)
        hand = hand_fire_attack(*hand_args, roll=lambda: rng.randrange(6) + 1)
        out = adjudicate(s.ruleset, s.procedure, s.args, _Dice(seed), None, trace=False)
        assert thaw(out.value) == thaw(hand), (seed, thaw(out.value), hand)

    def interp():
        dice = SeededDice(7)
        for _ in range(n):
            adjudicate(s.ruleset, s.procedure, s.args, dice, None, trace=False)

    def interp_traced():
        dice = SeededDice(7)
        for _ in range(n // 4):
            adjudicate(s.ruleset, s.procedure, s.args, dice, None, trace=True)

    def hand():
        rng = random.Random(7)
        roll = lambda: rng.randrange(6) + 1
        for _ in range(n):
            hand_fire_attack(*hand_args, roll=roll)
    plain = load_ruleset(ROOT / "rulesets" / "aslsk", (str(FIXTURE),), prefix_caching=False)

    def interp_no_prefix_cache():
        dice = SeededDice(7)
        proc = plain.procedures["fire_attack"]
        for _ in range(n):
            adjudicate(plain, proc, s.args, dice, None, trace=False)

    t_i, t_h, t_t = median_time(interp, repeat), median_time(hand, repeat), median_time(interp_traced, repeat) * 4
    t_p = median_time(interp_no_prefix_cache, repeat)
    print(f"   hand-written Python : {n / t_h:10,.0f} /s  ({t_h / n * 1e6:6.1f} µs each)")
    print(f"   interpreter         : {n / t_i:10,.0f} /s  ({t_i / n * 1e6:6.1f} µs each)   ratio {t_i / t_h:.2f}x"
          "   (target: within 3x)")
    print(f"   ... caches off      : {n / t_p:10,.0f} /s  ({t_p / n * 1e6:6.1f} µs each)   ratio {t_p / t_h:.2f}x"
          "   (no reuse of procedures' deterministic starts, ends and values)")
    print(f"   interpreter + trace : {n / t_t:10,.0f} /s  ({t_t / n * 1e6:6.1f} µs each)   ratio {t_t / t_h:.2f}x")


class _Dice(SeededDice):
    """The interpreter's dice drawing exactly like the hand-written function's roll()."""

    def roll(self, kind, label, pos):
        return tuple(self.rng.randrange(kind.sides) + 1 for _ in range(kind.count))

    def __init__(self, seed):
        self.seed = seed
        self.rng = random.Random(seed)


def bench_exact(s, repeat: int) -> None:
    print(f"\n3. exact odds of that attack with both morale checks (median of {repeat})")
    s2 = load_situation(SITUATION, (str(FIXTURE),))
    report = exact_odds(s2, ["units"])
    t = median_time(lambda: exact_odds(load_situation(SITUATION, (str(FIXTURE),)), ["units"]), repeat)
    print(f"   {t * 1000:.1f} ms, {report.paths:,} paths, {len(report.rows)} outcomes, total {report.total}"
          "   (target: under 50 ms)")


def bench_icepool(repeat: int) -> None:
    print("\n4. exact distribution of one IFT cell with cowering (8 FP column, +0 DRM, non-leader MMC)")
    try:
        import icepool
    except ImportError:
        print("   icepool is not installed here (pip install icepool): skipped")
        return
    s = load_situation(ROOT / "benchmarks" / "fixtures" / "ift-cell.yaml", (str(FIXTURE),))
    r = s.ruleset
    ift = r.tables["ift"]
    col8 = ift.columns.headings.index(8)

    def cell_text(dr, shift):
        c = col8 - shift
        if c < 0:
            return "-"
        row = min(max(dr, ift.rows.headings[0]), ift.rows.headings[-1]) - ift.rows.headings[0]
        return ift.cells[row][c]["text"]

    def with_icepool():
        d = icepool.d6
        return icepool.map(lambda a, b: cell_text(a + b, 1 if a == b else 0), d, d)

    def with_umpire():
        return exact_odds(s, [])

    ours = {label: p for label, p, _ in with_umpire().rows}
    theirs = {k: Fraction(v, with_icepool().denominator()) for k, v in with_icepool().items()}
    assert ours == theirs, (ours, theirs)
    t_u, t_p = median_time(with_umpire, repeat), median_time(with_icepool, repeat)
    print(f"   icepool : {t_p * 1000:7.2f} ms")
    print(f"   umpire  : {t_u * 1000:7.2f} ms   ratio {t_u / t_p:.2f}x   (target: at least as fast, ratio <= 1)")
    print("   (both give the same distribution; checked)")


def bench_simulation(s, hand_args, n: int, repeat: int) -> None:
    print(f"\n5. simulation rate of the IFT attack ({n:,} runs, median of {repeat})")

    def umpire_sim():
        simulate(s, n, 11, ["result"])

    def hand_sim():
        rng = random.Random(11)
        roll = lambda: rng.randrange(6) + 1
        counts = {}
        for _ in range(n):
            r = hand_fire_attack(*hand_args, roll=roll)["result"]
            counts[r] = counts.get(r, 0) + 1
    t_u, t_h = median_time(umpire_sim, repeat), median_time(hand_sim, repeat)
    print(f"   hand-written loop : {n / t_h:10,.0f} runs/s")
    print(f"   umpire simulate   : {n / t_u:10,.0f} runs/s   ratio {t_u / t_h:.2f}x   (target: within 3x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    args = parser.parse_args()
    repeat = 3 if args.quick else 7
    n = 1000 if args.quick else 5000
    print(f"Umpire benchmarks (python {sys.version.split()[0]}); medians, ratios against in-process baselines\n")
    bench_load(repeat)
    s, hand_args = setup()
    bench_adjudication(s, hand_args, n, repeat)
    bench_exact(s, repeat)
    bench_icepool(repeat)
    bench_simulation(s, hand_args, n, repeat)


if __name__ == "__main__":
    main()
