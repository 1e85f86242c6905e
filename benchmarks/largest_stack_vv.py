"""A like-for-like plain-Python enumeration of the shipped Valor & Victory AP fire on the largest legal stack.

The stack: V&V 6.9 allows in one hex at most four infantry units (any type), two AFVs, vehicles or Guns,
or one AFV, vehicle or Gun and two infantry units; AP fire (14.1) affects infantry, unarmored vehicles
and Guns, so the largest stack it can hit is four infantry units. The book's American stack A (14, AP
Combat and Casualty Reduction Example: two 4-6-4 Rifle squads, one with an LMG, and Coleman in building
B3) filled to the limit with a third 4-6-4. The attacker is the same example's German stack 1 (two squads
APFP 4, CR 5, one with an LMG, and Hermes, firing over the hedge next to them at range 2) with a third
squad, so the firers' hex is full too: APFP 4 + 4 + 3 + 4 + 1 = 16, the 11-18 row, +3 building cover,
-1 Hermes (13.6), every die free, with the BENCHMARK FIXTURE chart (benchmarks/fixtures/ap-combat-fixture.yaml:
the AP Combat Table is an image the rulebook text does not carry, so all but its four revealed cells are
invented). The enemy's sniper is available, placed (if a natural 12 activates it) in a woods hex four hexes
from the firers with a clear line, the firers in the open.

The procedure is the shipped ``ap_fire`` (14.5: the AP Combat Table, 14.6), its Casualty Points applied by
the defender (14.61-14.63: ``casualties`` / ``apply_cp`` with the ruleset's default policy, the situation
giving no choices: ignore a valorous unit's first point, then pin, then reduce, then eliminate), then what
the attack roll sets off (16.2: a natural 2, every unit of the fire group checks for valor; 17.2, 17.5,
17.6: a natural 12 activates the sniper, which attacks the firers, whose unpinned units then try to
eliminate it). Written directly from the rules as rulesets/valor-and-victory encodes them (only what infantry
meets: no vehicles, Guns, passengers or positions are in either hex), using the same independence the exact
odds use: the Casualty Points on a hex are one deterministic allocation per number of points (memoised:
the defender's choices are the policy's), each firer's valor check is its own distribution worked out once
per unit (memoised), the sniper's attack and elimination check one distribution (memoised), combined only at
the end. The outcome of a run that stops (a value the rulebook does not print) is its message, as
``umpire odds`` labels it.

``odds()`` returns {(state of US-A, US-B, US-C, Coleman, G-1, G-2, G-3, Hermes, the sniper) or "error: message":
Fraction}, ``by_count()`` the same grouped by how many of the target hex's units are pinned or eliminated
(out of action: 14.7); benchmarks/run.py checks each equal to Umpire's before timing the two.
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache

from largest_stack import _combine  # the joint of independent distributions, a stop first (benchmarks/ is on the path)

ONE = Fraction(1)
DR_TOTALS = tuple((n, Fraction(6 - abs(n - 7), 36)) for n in range(2, 13))     # a dice roll read by its total
P6 = Fraction(1, 6)
INFANTRY = ("squad", "half_squad", "leader")

# counter -> (kind, apfp, cr, reduces_to, lm): what the catalogue and the situation give
COUNTERS = {
    "4-6-4 Rifle squad": ("squad", 4, 4, "2-6-2 Rifle half squad", 0),
    "2-6-2 Rifle half squad": ("half_squad", 2, 2, None, 0),
    "Coleman": ("leader", 1, None, None, -1),
    "Hermes": ("leader", 1, None, None, -1),
    "German squad": ("squad", 4, 5, None, 0),           # given inline: APFP 4, CR 5, no half squad named
}
LMG_APFP = 3
TARGETS = (("US-A", "4-6-4 Rifle squad"), ("US-B", "4-6-4 Rifle squad"), ("US-C", "4-6-4 Rifle squad"),
           ("Coleman", "Coleman"))
FIRERS = (("G-1", "German squad", False), ("G-2", "German squad", True), ("G-3", "German squad", False),
          ("Hermes", "Hermes", False))        # (id, counter, carries the LMG)
ORDER = tuple(i for i, _ in TARGETS) + tuple(i for i, _, _ in FIRERS) + ("sniper",)
TARGET_COVER = 3            # building (10.4); the hedge is next to the firers: no hindrance (10.10)
FIRERS_COVER = 0            # open ground (10.2): the sniper's target hex
SNIPER_PROTECTION = 2       # woods (10.5), a clear line back to it
PIN_COST = 1                # 14.61


class Stop(Exception):
    """A run that stops: its outcome is the message."""


# A unit in the hex: (id, kind, cr, reduces_to, status, pinned, valorous, first_ignored, was_reduced)
def unit(uid, counter, valorous=False):
    kind, _, cr, reduces_to, _ = COUNTERS[counter]
    return (uid, kind, cr, reduces_to, "ok", False, valorous, False, False)


def _room(u):
    """cp_room: the most points one unit can still take."""
    status, cr = u[4], u[2]
    if status == "done" or cr is None:
        return 0
    if status == "reduced":
        return 1
    return cr + (1 if not u[7] and u[6] else 0)


def _score_eliminate(cr, left):
    return 50 - cr if cr >= left else 10 + cr


def _options(left, units, must):
    """cp_options for infantry: (score, action, unit index, cost), in the ruleset's order."""
    open_units = [i for i, u in enumerate(units) if u[4] not in ("done", "eliminated")]
    unpinned = [i for i in open_units if not units[i][5]]
    pins_suffice = len(unpinned) >= left
    pool = unpinned if unpinned else open_units
    if must is not None:
        pool = [i for i in pool if units[i][0] == must]
    total_room = sum(_room(units[i]) for i in open_units)
    out = []
    for i in pool:
        u = units[i]
        uid, kind, cr, reduces_to, status, pinned, valorous, ignored, _ = u
        if pinned:
            if cr is not None:
                out.append((_score_eliminate(cr, left), "eliminate", i, cr))
            continue
        if not ignored and valorous and status == "ok":
            out.append((100, "ignore", i, 1))
        if pins_suffice:
            out.append((90, "pin", i, PIN_COST))
        if status == "ok":
            half = COUNTERS[reduces_to][2] if kind == "squad" and reduces_to is not None else None
            others = total_room - _room(u)
            if half is not None and cr is not None and (cr - half + PIN_COST) + others >= left:
                out.append((80, "reduce", i, cr - half))
            if cr is not None:
                out.append((_score_eliminate(cr, left), "eliminate", i, cr))
    return out


@lru_cache(maxsize=None)
def casualties(cp, units):
    """casualties / apply_cp with the default policy: (eliminated ids, reduced ids, pinned ids, units after)."""
    before = units
    must = None
    while cp > 0:
        options = _options(cp, units, must)
        if not options:
            if any(u[2] is None for u in units if u[4] not in ("done", "eliminated")):
                raise Stop("needs counter data: a unit's Casualty Rating is not given in the rulebook (give cr inline)")
            break
        best = options[0]
        for o in options[1:]:
            if o[0] > best[0]:
                best = o
        _, action, i, cost = best
        u = units[i]
        must = None
        if action == "ignore":
            must, u = u[0], u[:7] + (True, u[8])
        elif action == "pin":
            u = u[:4] + ("done", True) + u[6:]
        elif action == "reduce":
            half = u[3]
            u = (u[0], "half_squad", COUNTERS[half][2], None, "reduced") + u[5:8] + (True,)
        else:
            u = u[:4] + ("eliminated",) + u[5:]
        units = units[:i] + (u,) + units[i + 1:]
        cp -= cost
    eliminated = tuple(u[0] for u in units if u[4] == "eliminated")
    reduced = tuple(u[0] for u in units if u[8] and u[4] != "eliminated")
    pinned = tuple(u[0] for u, b in zip(units, before) if u[5] and u[4] != "eliminated" and not b[5])
    return eliminated, reduced, pinned, tuple(u for u in units if u[4] != "eliminated")


def hit_state(uid, hit):
    """A unit's state after the Casualty Points (none: ``hit`` is None)."""
    if hit is None:
        return "good order"
    eliminated, reduced, pinned, _ = hit
    if uid in eliminated:
        return "eliminated"
    if uid in reduced:
        return "reduced, pinned" if uid in pinned else "reduced"
    return "pinned" if uid in pinned else "good order"


@lru_cache(maxsize=None)
def valor_check(u):
    """16.2: a dice roll at or below the unit's Casualty Rating (a leader's: 6) makes it valorous."""
    if u[1] not in INFANTRY:
        return {"good order": ONE}
    if u[6]:
        return {"valorous": ONE}
    need = 6 if u[1] == "leader" else u[2]
    if need is None:
        return {("stop", f"needs counter data: the Casualty Rating of {u[0]} is not given in the rulebook"): ONE}
    p = sum((q for n, q in DR_TOTALS if n <= need), Fraction(0))
    return {"valorous": p, "good order": ONE - p}


@lru_cache(maxsize=None)
def sniper_strike(firers):
    """17.2, 17.5, 17.6: the sniper (placed with protection > 0, so activated) attacks the firers' hex with
    one die against its cover; the units it attacked left unpinned then roll to eliminate it.
    [(firers' states, sniper's state, p)] and {stop: p}."""
    out: dict = {}
    stops: dict = {}
    for die in range(1, 7):
        cp = max(die - FIRERS_COVER, 0)
        try:
            hit = casualties(cp, firers) if cp > 0 else None
        except Stop as e:
            stops[str(e)] = stops.get(str(e), 0) + P6
            continue
        states = tuple(hit_state(u[0], hit) for u in firers)
        after = hit[3] if hit is not None else firers
        if not any(not u[5] for u in after):
            ways = (("on board", P6),)
        else:       # elimination check: a die above the sniper's protection eliminates it
            gone = sum(1 for e in range(1, 7) if e > SNIPER_PROTECTION)
            ways = (("eliminated", P6 * Fraction(gone, 6)), ("on board", P6 * Fraction(6 - gone, 6)))
        for sniper, p in ways:
            if p:
                out[(states, sniper)] = out.get((states, sniper), 0) + p
    return [(s, sn, p) for (s, sn), p in out.items()], stops


@lru_cache(maxsize=None)
def _cell_grid():
    from pathlib import Path

    from ruamel.yaml import YAML
    fixture = Path(__file__).resolve().parent / "fixtures" / "ap-combat-fixture.yaml"
    t = YAML(typ="safe").load(fixture.read_text())["changes"][0]["replace"]
    return t["rows"]["headings"], t["columns"]["headings"], t["grid"]


def _row(apfp, headings):
    for h in headings:
        lo, _, hi = str(h).rstrip("+").partition("-")
        if int(lo) <= apfp and (str(h).endswith("+") or apfp <= int(hi)):
            return str(h)
    raise Stop(f"needs chart: ap_combat row for APFP {apfp}")


def odds() -> dict:
    for memo in (casualties, valor_check, sniper_strike):      # each question from scratch, as Umpire's memo is
        memo.cache_clear()
    targets = tuple(unit(i, c) for i, c in TARGETS)
    firers = tuple(unit(i, c) for i, c, _ in FIRERS)
    # the attack's input-only part: APFP (14.2, 12.3), the row, the DRM (13.4, 13.6)
    apfp = sum(COUNTERS[c][1] + (LMG_APFP if lmg else 0) for _, c, lmg in FIRERS)
    rows, columns, grid = _cell_grid()
    cells = grid[_row(apfp, rows)]
    drm = TARGET_COVER + min(COUNTERS[c][4] for _, c, _ in FIRERS)
    result: dict = {}

    def add(k, p):
        result[k] = result.get(k, 0) + p
    none = tuple("good order" for _ in firers)
    for natural, pn in DR_TOTALS:
        final = min(max(natural + drm, columns[0]), columns[-1])
        cell = cells[columns.index(final)]
        cp = cell if cell != "-" else 0
        try:
            hit = casualties(cp, targets) if cp > 0 else None
        except Stop as e:
            add("error: " + str(e), pn)
            continue
        hex_states = tuple(hit_state(t[0], hit) for t in targets)
        if natural == 2:
            # (a stop is ("stop", message): _combine makes it "error: message", the first in the rules' order)
            _combine([{s: ONE} for s in hex_states] + [valor_check(f) for f in firers] + [{"not activated": ONE}],
                     pn, add)
        elif natural == 12:
            ways, stops = sniper_strike(firers)
            for m, q in stops.items():
                add("error: " + m, pn * q)
            for states, sniper, q in ways:
                add(hex_states + states + (sniper,), pn * q)
        else:
            add(hex_states + none + ("not activated",), pn)
    return result


def by_count() -> dict:
    """``odds()`` grouped by how many of the target hex's units are pinned or eliminated (a stop stays its own
    outcome)."""
    out: dict = {}
    n = len(TARGETS)
    for k, p in odds().items():
        label = k if k.__class__ is str else sum(1 for st in k[:n] if st in ("pinned", "reduced, pinned", "eliminated"))
        out[label] = out.get(label, 0) + p
    return out
