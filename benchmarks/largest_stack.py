"""A like-for-like plain-Python enumeration of the shipped ASLSK fire_attack on the largest legal stack.

The README tour's Fire Group (a 7-4-7 at range 2 and a 6-6-6 adjacent: 19 FP, the 16 column) attacks three
German 4-6-7s, a 9-1 and an 8-1 in a stone building (+3 TEM, +1 orchard Hindrance), ELR 3, every die free,
with the BENCHMARK FIXTURE chart (benchmarks/fixtures/ift-fixture.yaml). Written directly from the rules
as rulesets/aslsk encodes them (3.2.3: the leaders check first, best first, and lend their DRM to the later
checks; a K/# result's random victim; #KIA victims picked at random; ELR replacement; Leader Loss checks
after the attack), using the same independence the exact odds use: given the IFT result and the leaders'
outcomes, each squad's checks (its MC, then its Leader Loss check) are its own distribution, worked out
once per squad state and memoised; the squads are combined only at the end. The outcome of a run that
stops (a counter value the rulebook does not print) is its message, as ``umpire odds`` labels it: the
first stop in the order the rules roll in (the leaders' MCs, the squads' MCs, then the Leader Loss checks
unit by unit in the targets' order).

``odds()`` returns {(state of G1, G2, G3, L1, L2) or "error: message": Fraction}, ``by_count()`` the same
grouped by how many units are broken; benchmarks/run.py checks each equal to Umpire's before timing the two.
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from itertools import product

ONE = Fraction(1)
DR = tuple((a, b) for a in range(1, 7) for b in range(1, 7))
P36 = Fraction(1, 36)
P6 = Fraction(1, 6)
ELR = 3

# counter -> (kind, morale, leadership, reduces_to, replaced_by)
COUNTERS = {
    "german 4-6-7": ("squad", 7, 0, "german 2-4-7", "german 4-4-7"),
    "german 2-4-7": ("half_squad", 7, 0, None, "german 2-3-7"),
    "german 4-4-7": ("squad", 7, 0, "german 2-3-7", None),
    "german 2-3-7": ("half_squad", 7, 0, None, None),
    "german 9-1": ("leader", 9, -1, None, None),
    "german 8-1": ("leader", 8, -1, None, None),
}
ORDER = ("G1", "G2", "G3", "L1", "L2")


class Stop(Exception):
    """A run that stops: its outcome is the message."""


# A unit: (id, counter, broken, pinned, wounded, eliminated) -- what the rules read of it here.
def unit(uid, counter):
    return (uid, counter, False, False, False, False)


def kind(u):
    return COUNTERS[u[1]][0]


def ratings(u):
    """current_ratings: a wounded SMC loses one from morale and leadership."""
    _, m, ld, _, _ = COUNTERS[u[1]]
    return (m - 1, ld + 1) if u[4] else (m, ld)


def current_morale(u):
    if u[2]:
        raise Stop(f"needs counter data: the broken-side morale of {u[1]} is not in the rulebook "
                   "(give broken_morale in the inputs)")
    return ratings(u)[0]


def state(u):
    return "eliminated" if u[5] else "broken" if u[2] else "pinned" if u[3] else "good order"


def mix(pairs):
    out: dict = {}
    for v, p in pairs:
        out[v] = out.get(v, 0) + p
    return out


def casualty(u):
    """casualty_reduction: [(unit, outcome, p)]."""
    k = kind(u)
    if k in ("half_squad", "crew"):
        return [((u[0], u[1], u[2], u[3], u[4], True), "eliminated", ONE)]
    if k == "squad":
        return [((u[0], COUNTERS[u[1]][3], u[2], u[3], u[4], u[5]), "reduced", ONE)]
    out = []
    for d in range(1, 7):       # wound severity dr, +1 if already wounded: 5+ eliminates
        if d + (1 if u[4] else 0) >= 5:
            out.append(((u[0], u[1], u[2], u[3], u[4], True), "eliminated", P6))
        else:
            out.append(((u[0], u[1], u[2], u[3], True, u[5]), "wounded", P6))
    return out


@lru_cache(maxsize=None)
def morale_check(u, drm):
    """One MC with this DRM: {(unit, outcome) or Stop message: p}."""
    acc: dict = {}
    for a, b in DR:
        original = a + b
        for v, p in _morale_result(u, original, original + drm):
            acc[v] = acc.get(v, 0) + p * P36
    return acc


def _morale_result(u, original, final):
    try:
        morale = current_morale(u)
    except Stop as e:
        return [(("stop", str(e)), ONE)]
    if u[2]:
        if original == 12:
            return [(((u[0], u[1], u[2], u[3], u[4], True), "eliminated"), ONE)]
        if final <= morale:
            return [((u, "passed"), ONE)]
        return [((v, o), p) for v, o, p in casualty(u)]
    if final < morale and original != 12:
        return [((u, "passed"), ONE)]
    if final == morale and original != 12:
        return [(((u[0], u[1], u[2], True, u[4], u[5]), "pinned"), ONE)]
    outs = [(u, "broken", ONE)]
    if original == 12:
        outs = casualty(u)
    res = []
    for v, outcome, p in outs:
        if v[5]:
            res.append(((v, "eliminated"), p))
            continue
        v = (v[0], v[1], True, False, v[4], v[5])
        if final > morale + ELR and kind(v) != "crew":
            repl = COUNTERS[v[1]][4]
            if repl is None:
                res.append((("stop", f"needs counter data: {v[1]} failed by more than ELR {ELR} and is replaced by "
                             "the unit one step lower in quality on the Nationality Chart, which the rulebook does "
                             "not print (give replaced_by, or lowest_quality: true when the chart has no lower "
                             "unit)"), p))
                continue
            v, outcome = (v[0], repl, True, False, v[4], v[5]), "replaced"
        res.append(((v, outcome), p))
    return res


@lru_cache(maxsize=None)
def pin_check(u, drm):
    """One PTC (or LLTC) with this DRM: {(unit, outcome) or stop: p}."""
    acc: dict = {}
    for a, b in DR:
        try:
            morale = current_morale(u)
        except Stop as e:
            v = ("stop", str(e))
        else:
            v = (u, "passed") if a + b + drm <= morale else ((u[0], u[1], u[2], True, u[4], u[5]), "pinned")
        acc[v] = acc.get(v, 0) + P36
    return acc


def helps(u, location):
    """leader_help: the best unpinned Good Order leader among the others, to a leader only of higher morale."""
    m = ratings(u)[0]
    ls = [ratings(ld)[1] for ld in location if kind(ld) == "leader" and ld[0] != u[0] and not ld[5] and not ld[2]
          and not ld[3] and (kind(u) != "leader" or ratings(ld)[0] > m)]
    return min(ls) if ls else 0


def leaders_then(targets, check, skip=()):
    """The leaders' checks, best first (each reads the leaders checked before him): [(leaders after, helping,
    p)] or stops; ``check(u, drm)`` is the check's distribution."""
    leaders = sorted([t for t in targets if kind(t) == "leader"],
                     key=lambda ld: -(ratings(ld)[0] * 10 - ratings(ld)[1]))
    ways = [((), tuple(skip), ONE)]     # (leaders checked so far, harmed ids, p)
    stops: dict = {}
    for u in leaders:
        nxt = []
        for done, harmed, p in ways:
            if u[5] or u[0] in skip:
                nxt.append((done + (u,), harmed, p))
                continue
            ids = [o[0] for o in done]
            others = [next(o for o in done if o[0] == t[0]) if t[0] in ids else t
                      for t in targets if kind(t) == "leader" and t[0] != u[0] and t[0] not in harmed]
            for v, q in check(u, helps(u, others)).items():
                if v[0] == "stop":
                    stops[v[1]] = stops.get(v[1], 0) + p * q
                    continue
                nxt.append((done + (v[0],), harmed + ((u[0],) if v[1] != "passed" else ()), p * q))
        ways = nxt
    return [(done, tuple(ld for ld in done if ld[0] not in harmed), p) for done, harmed, p in ways], stops


def after_result(code, n, targets):
    """The units after the IFT result: [(units in the targets' order, p)] and {stop: p}.

    Squads come back as distributions of their own ({unit: p}), independent of one another given the rest."""
    if code == "none":
        return [(tuple({t: ONE} for t in targets), ONE)], {}
    if code in ("nmc", "mc"):
        return _checks(targets, n, ())
    if code == "ptc":
        def ptc(u, drm):
            return {(u, "passed"): ONE} if u[2] or u[3] or u[5] else pin_check(u, drm)
        ways, stops = leaders_then(targets, ptc)
        def squad(t, helping):
            return mix((v[0], q) for v, q in ptc(t, helps(t, helping)).items())
        return [(_after_leaders(targets, done, helping, squad), p) for done, helping, p in ways], stops
    if code == "k":
        out, stops = [], {}
        for victim in targets:
            for v, outcome, p in casualty(victim):
                after = tuple(v if t[0] == victim[0] else t for t in targets)
                ways, st = _checks(after, n, () if outcome == "reduced" else (victim[0],))
                for units, q in ways:
                    out.append((units, q * p / len(targets)))
                for m, q in st.items():
                    stops[m] = stops.get(m, 0) + q * p / len(targets)
        return out, stops
    # #KIA: n victims picked at random, one by one; the others break (none is broken before)
    out = []
    ways = [((), [t[0] for t in targets], ONE)]
    for _ in range(n):
        nxt = []
        for killed, pool, p in ways:
            if not pool:
                nxt.append((killed, pool, p))
                continue
            for who in pool:
                nxt.append((killed + (who,), [x for x in pool if x != who], p / len(pool)))
        ways = nxt
    for killed, _, p in ways:
        out.append((tuple({(t[0], t[1], t[2], t[3], t[4], True) if t[0] in killed
                           else (t[0], t[1], True, False, t[4], t[5]): ONE} for t in targets), p))
    return out, {}


def _checks(targets, mc, skip):
    """morale_checks: the leaders first, then each squad with the help of the leaders who passed."""
    ways, stops = leaders_then(targets, lambda u, drm: morale_check(u, mc + drm), skip)

    def squad(t, helping):
        if t[5] or t[0] in skip:
            return {t: ONE}
        return mix((v[0], q) for v, q in morale_check(t, mc + helps(t, helping)).items())
    return [(_after_leaders(targets, done, helping, squad), p) for done, helping, p in ways], stops


def _after_leaders(targets, done, helping, squad):
    """Each target's distribution once the leaders have checked (``done``, ``helping`` those who help): a leader's
    own outcome, a squad's from ``squad(t, helping)``."""
    return tuple({next(ld for ld in done if ld[0] == t[0]): ONE} if kind(t) == "leader" else squad(t, helping)
                 for t in targets)


def leader_loss(u, lost):
    """leader_loss_check: {unit or ("stop", message): p}."""
    if u[5] or u[0] in [ld[0] for ld, _ in lost]:
        return {u: ONE}
    try:
        m = current_morale(u)
    except Stop as e:
        return {("stop", str(e)): ONE}
    killers = [ld for ld, how in lost if how == "eliminated" and ratings(ld)[0] > m]
    breakers = [ld for ld, how in lost if how == "broken" and ratings(ld)[0] > m]

    def penalty(ls):
        return max(max(0, -ratings(ld)[1]) for ld in ls)
    if killers:
        return mix((v if v[0] == "stop" else v[0], q) for v, q in morale_check(u, penalty(killers)).items())
    if breakers and not u[2] and not u[3]:
        return mix((v if v[0] == "stop" else v[0], q) for v, q in pin_check(u, penalty(breakers)).items())
    return {u: ONE}


def odds() -> dict:
    for memo in (morale_check, pin_check, _after_loss):     # each question from scratch, as Umpire's memo is
        memo.cache_clear()
    targets = tuple(unit(i, c) for i, c in (("G1", "german 4-6-7"), ("G2", "german 4-6-7"),
                                             ("G3", "german 4-6-7"), ("L1", "german 9-1"), ("L2", "german 8-1")))
    # the IFT cell of each DR: 19 FP on the 16 column, +4 DRM (stone building, orchard), doubles cower one column
    grid, rows = _fixture_grid()
    cells: dict = {}
    for a, b in DR:
        final = min(max(a + b + 4, rows[0]), rows[-1])
        text = grid[final][6 - (1 if a == b else 0)]
        cells[text] = cells.get(text, 0) + P36
    result: dict = {}

    def add(k, p):
        result[k] = result.get(k, 0) + p
    for text, pc in cells.items():
        code, n = _code(text)
        ways, stops = after_result(code, n, targets)
        for m, q in stops.items():
            add("error: " + m, pc * q)
        for units, p in ways:
            before = {t[0]: t for t in targets}
            # which leaders the attack lost: read off the leaders alone (certain here: leaders are enumerated)
            lost = []
            for t in targets:
                if kind(t) != "leader" or t[5]:
                    continue
                (a,) = units[ORDER.index(t[0])]
                if a[5]:
                    lost.append((t, "eliminated"))
                elif a[2] and not before[t[0]][2]:
                    lost.append((t, "broken"))
            if not lost:
                finals = [mix((state(u), q) for u, q in d.items()) for d in units]
                _combine(finals, pc * p, add)
                continue
            # each unit's distribution after its Leader Loss check (a stop is an outcome of its own)
            finals = []
            for d in units:
                acc: dict = {}
                for u, q in d.items():
                    for v, r in _after_loss(u, tuple(lost)).items():
                        acc[v] = acc.get(v, 0) + q * r
                finals.append(acc)
            _combine(finals, pc * p, add)
    return result


@lru_cache(maxsize=None)
def _after_loss(u, lost):
    """A unit's final state after its Leader Loss check ({state or ("stop", message): p}), once per unit state."""
    return mix((v if v[0] == "stop" else state(v), q) for v, q in leader_loss(u, lost).items())


def _combine(finals, p, add):
    """The joint of the units' independent final distributions (states, or a stop: the first in order wins)."""
    for combo in product(*[list(d.items()) for d in finals]):
        q = p
        key = []
        stop = None
        for v, r in combo:
            q *= r
            if stop is None and v.__class__ is tuple:
                stop = "error: " + v[1]
            key.append(v)
        add(stop if stop is not None else tuple(key), q)


def _code(text):
    if text == "-":
        return "none", 0
    if text == "PTC":
        return "ptc", 0
    if text == "NMC":
        return "nmc", 0
    if text.endswith("KIA"):
        return "kia", int(text[:-3])
    if text.startswith("K/"):
        return "k", int(text[2:])
    return "mc", int(text[:-2])


@lru_cache(maxsize=None)
def _fixture_grid():
    from pathlib import Path

    from ruamel.yaml import YAML
    fixture = Path(__file__).resolve().parent / "fixtures" / "ift-fixture.yaml"
    data = YAML(typ="safe").load(fixture.read_text())
    t = data["changes"][0]["replace"]
    rows = t["rows"]["headings"]
    return {int(k): v for k, v in t["grid"].items()}, rows


def by_count() -> dict:
    """``odds()`` grouped by how many units are broken (a stop stays its own outcome)."""
    out: dict = {}
    for k, p in odds().items():
        label = k if k.__class__ is str else sum(1 for st in k if st == "broken")
        out[label] = out.get(label, 0) + p
    return out
