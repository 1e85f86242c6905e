"""A like-for-like plain-Python enumeration of the shipped The Last Hundred Yards small arms fire resolution
on the largest legal stack.

The stack is the largest 2.3 allows in one hex: three squads' worth of infantry, two MG sections, two
vehicles, one Towed Gun, one FP, two leaders, two LATWs and two FTs. Two sections count as one squad (2.3), so
the infantry is six sections (a platoon's three squads deployed, 10.3.2): more units for the fire to reach
than three squads. Eighteen counters, fifteen of them with a Cohesion (an FP has none, 2.2.4; the vehicles
are immune to SADRM markers, 13.1). A German platoon (3) with its leader, a second platoon's leader (4) and
the support units, every unit in Good Order, with illustrative counter values (the rulebook prints none).
The hex holds the two SADRM markers of the shipped situation
rulesets/last-hundred-yards/situations/resolution_hex_under_fire.yaml (+1 and -1, the values as placed:
the Target Density DRM such a hex earns, 11.3.3k, is not printed), every die free.

The procedure is the shipped ``small_arms_mortar_resolution`` (13.1), as rulesets/last-hundred-yards
encodes it: one d10 (0 reads 10) per marker plus its value, the single highest result counts (step 1); it is
compared with the best unit by the priorities of step 3 (undisrupted unconcealed combat units, then
Cohesion, Assault Value, SAV; the first listed on a tie, the ruleset's default for the book's random pick);
the Leader Effect of step 4a (-1 with an undisrupted leader of the unit's platoon whose Cohesion is higher);
step 5 (above the Cohesion disrupts, a casualty if the unit is already disrupted or the result is 10 or
more); and step 6: when the unit disrupts or takes a casualty, every other non-vehicular unit with a Cohesion
takes a Cohesion Check (13.3.1: an unmodified d10 above its Cohesion disrupts it, a casualty if already
disrupted). No chart is read (the 13.1 procedure reads none), so no overlay is needed and no run stops.

The same independence the exact odds use: the highest result decides the unit compared, its result and
whether the others check; given it, each other unit's Cohesion Check is its own distribution, worked out once
per unit state and memoised, and the units are combined only at the end. Weights are whole numbers (faces of
the dice) divided once per outcome at the end, as Umpire's are.

``odds()`` returns {(result of each unit in ORDER): Fraction} (ORDER is the hex's order; its first unit is
the one compared, as the result's ``results`` list has it; a unit that took no check has "no effect"),
``by_count()`` the same grouped by how many units the fire disrupts or costs a casualty (each unit's hit
chance convolved given the highest result, as Umpire groups a count); benchmarks/run.py checks each equal to
Umpire's before timing the two.
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from itertools import product

D10 = tuple(range(1, 11))       # d10, the printed 0 read as 10

MARKERS = (("SA-1", 1), ("SA-2", -1))

# kind -> (combat, has_cohesion) from the unit_types catalogue (2.1, 2.2)
KINDS = {
    "section": (True, True), "mg_section": (True, True), "towed_gun": (True, True), "fp": (True, False),
    "leader": (False, True), "latw": (False, True), "ft": (False, True), "afv": (True, False),
    "halftrack": (True, False),
}

# (id, kind, cohesion, assault value, sav, platoon, disrupted, concealed), in the hex's order
UNITS = (
    ("Sec 1a", "section", 7, 1, 1, "3", False, False),
    ("Sec 1b", "section", 7, 1, 1, "3", False, False),
    ("Sec 2a", "section", 7, 1, 1, "3", False, False),
    ("Sec 2b", "section", 7, 1, 1, "3", False, False),
    ("Sec 3a", "section", 7, 1, 1, "3", False, False),
    ("Sec 3b", "section", 7, 1, 1, "3", False, False),
    ("MG 1", "mg_section", 6, 1, 2, "", False, False),
    ("MG 2", "mg_section", 6, 1, 2, "", False, False),
    ("PaK", "towed_gun", 5, 0, 0, "", False, False),
    ("FP", "fp", None, 0, None, "", False, False),
    ("PL 3", "leader", 8, 0, None, "3", False, False),
    ("PL 4", "leader", 7, 0, None, "4", False, False),
    ("Schreck 1", "latw", 6, 0, None, "", False, False),
    ("Schreck 2", "latw", 6, 0, None, "", False, False),
    ("FT 1", "ft", 6, 0, None, "", False, False),
    ("FT 2", "ft", 6, 0, None, "", False, False),
    ("StuG", "afv", None, 0, None, "", False, False),
    ("SPW", "halftrack", None, 0, None, "", False, False),
)


def combat(u):
    return KINDS[u[1]][0]


# the units the fire reaches: non-vehicular, with a Cohesion (an FP and the vehicles have none)
EXPOSED = tuple(u for u in UNITS if KINDS[u[1]][1] and u[2] is not None)
ORDER = tuple(u[0] for u in EXPOSED)


def compared_unit(units):
    """13.1 step 3: the unit the result is compared with (the first listed on a tie)."""
    cats = ([u for u in units if combat(u) and not u[7] and not u[6]],
            [u for u in units if combat(u) and u[7] and not u[6]],
            [u for u in units if combat(u) and u[6]],
            [u for u in units if not combat(u)])
    cands = next(c for c in cats if c)
    best = max(u[2] for u in cands)
    cands = [u for u in cands if u[2] == best]
    best = max(u[3] for u in cands)
    cands = [u for u in cands if u[3] == best]
    best = max(-99 if u[4] is None else u[4] for u in cands)
    return [u for u in cands if (-99 if u[4] is None else u[4]) == best][0]


TARGET = compared_unit(EXPOSED)
# 13.1 step 4a: an undisrupted leader of the unit's platoon with a higher Cohesion
LEADER_EFFECT = -1 if combat(TARGET) and TARGET[5] != "" and any(
    u[1] == "leader" and not u[6] and u[5] == TARGET[5] and u[2] > TARGET[2] for u in UNITS) else 0


@lru_cache(maxsize=None)
def cohesion_check(cohesion, disrupted):
    """13.3.1, one unit's check: {result: faces of the d10}."""
    out: dict = {}
    for d in D10:
        r = ("casualty" if disrupted else "disrupted") if d > cohesion else "no effect"
        out[r] = out.get(r, 0) + 1
    return out


NO_CHECK = {"no effect": 10}    # a unit that takes no check: every face of its (unrolled) die alike


@lru_cache(maxsize=None)
def effect(final):
    """Steps 4-6 for the highest result: each unit's distribution in faces of a d10, in ORDER (independent
    given the result)."""
    final += LEADER_EFFECT
    result = "no effect"
    if final > TARGET[2]:
        result = "casualty" if TARGET[6] or final >= 10 else "disrupted"
    if result == "no effect":
        return tuple(NO_CHECK for _ in EXPOSED[1:])
    return tuple({result: 10} if u[0] == TARGET[0] else cohesion_check(u[2], u[6]) for u in EXPOSED)[1:]


def highest_results():
    """Step 1: one d10 per marker, the highest final result ({final: ways}); every combination of dice run."""
    out: dict = {}
    for dice in product(D10, repeat=len(MARKERS)):
        final = max(d + m for d, (_, m) in zip(dice, MARKERS))
        out[final] = out.get(final, 0) + 1
    return out


# Weights are whole numbers (faces of the dice), as Umpire's are; one division per outcome at the end.
# (The unit compared is EXPOSED[0]: its own entry is the result, certain given the highest result.)
DENOMINATOR = 10 ** (len(MARKERS) + len(EXPOSED) - 1)


def _compared(final):
    final += LEADER_EFFECT
    if final <= TARGET[2]:
        return "no effect"
    return "casualty" if TARGET[6] or final >= 10 else "disrupted"


def odds() -> dict:
    assert TARGET is EXPOSED[0]
    effect.cache_clear()            # each question from scratch, as Umpire's memo is
    cohesion_check.cache_clear()
    result: dict = {}
    for final, w in highest_results().items():
        first = (_compared(final),)
        for combo in product(*[list(d.items()) for d in effect(final)]):
            q = w
            for _, r in combo:
                q *= r
            key = first + tuple([v for v, _ in combo])
            result[key] = result.get(key, 0) + q
    return {k: Fraction(q, DENOMINATOR) for k, q in result.items()}


def by_count() -> dict:
    """How many units are disrupted or take a casualty: each unit's hit chance convolved, given the result."""
    effect.cache_clear()
    cohesion_check.cache_clear()
    result: dict = {}
    for final, w in highest_results().items():
        counts = {0 if _compared(final) == "no effect" else 1: w}
        for d in effect(final):
            hit = sum(q for v, q in d.items() if v != "no effect")
            nxt: dict = {}
            for n, q in counts.items():
                if hit:
                    nxt[n + 1] = nxt.get(n + 1, 0) + q * hit
                if hit != 10:
                    nxt[n] = nxt.get(n, 0) + q * (10 - hit)
            counts = nxt
        for n, q in counts.items():
            result[n] = result.get(n, 0) + q
    return {n: Fraction(q, DENOMINATOR) for n, q in result.items()}
