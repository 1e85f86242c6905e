"""A like-for-like plain-Python enumeration of the shipped Panzer Grenadier Direct Fire on the largest stack.

The stack: three Soviet rifle platoons (INF, morale 7, 6 on the reduced side, two steps) with a major, a
captain and a lieutenant in a clear hex. 4.1 allows three combat units, PLUS three transports (each
possibly loaded with a combat unit), PLUS any number of leaders in a hex: the combat units are at the
limit, and the leaders are the battalion's and its companies'. The three transports are left out: with three
trucks carrying three more INF, the shipped procedures need 61,642 live states and 55 s of CPU (refused at
the default budget), as each cargo's fate is read from its carrier's check (5.65) and a forced unloading
disrupts the whole hex (5.66, 4.1). The attacker is the SS HMG
of the 7.52 example (rulesets/panzer-grenadier/situations/ex16_hmg_one_roll_three_columns.yaml: DF 11 at
two hexes, the 11 column, +1 column for three combat units in the hex, 4.4: the 16 column), every die
free, with the BENCHMARK FIXTURE Direct Fire Table (benchmarks/fixtures/pg-dft-fixture.yaml; the book
prints no fire chart). The procedure is the shipped `direct_fire` (10.2; PROC-18 of
rulesets/panzer-grenadier/procedures/fire.ump): one 2d6 read on every target's column (7.52), step losses
(7.61: X-type results on the combat units, the owner's default of the fewest hits first), then
`aftermath` (rulesets/panzer-grenadier/procedures/morale.ump): morale checks (14.1), leaders first by
seniority (14.12) with a higher-ranking leader lending his morale modifier (6.5, 6.51, 6.55), the units
after them with the best leader still able to help; the survivors of an X-type result check M2 (7.61),
leaders do not; then, when any step was lost, each leader's casualty check (6.7: 2d6 minus the hex's
step losses, 2 or less kills him) and what a lost leader sets off (6.72, 6.73: a major's catastrophic
loss; the side's colonel elsewhere on the map keeps decapitation away). Those last checks change none of
the units' outcomes, so they do not appear here.

Written directly from the rules as rulesets/panzer-grenadier encodes them, using the same independence the
exact odds use: given the roll's result and the leaders' outcomes, each platoon's morale check is its own
distribution (worked out once per morale, modifier and helper, memoised), and each leader's casualty check
its own; the units are combined only at the end. No cell of the fixture chart is unknown, so no run stops.

``odds()`` returns {(outcome of INF1, INF2, INF3, MAJ, CPT, LT): Fraction}, each outcome "eliminated" or
the unit's morale state (good_order, disrupted, demoralized), with " reduced" after a unit that lost a step;
``by_count()`` the same grouped by how many units are demoralized or eliminated. benchmarks/run.py checks
each equal to Umpire's before timing the two.
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from itertools import product

ONE = Fraction(1)
P36 = Fraction(1, 36)
MAX_MORALE = 10             # 14.5
CASUALTY_AT_MOST = 2        # 6.7
STRENGTH = 11               # the SS HMG's DF (7.52 example)
SHIFT = 1                   # three combat units in the hex (4.4); range 2, clear, day: no other shift

# id -> (leader, morale, reduced morale, steps, morale modifier, seniority (1.2 Rank))
UNITS = {
    "INF1": (False, 7, 6, 2, 0, 0),
    "INF2": (False, 7, 6, 2, 0, 0),
    "INF3": (False, 7, 6, 2, 0, 0),
    "MAJ": (True, 9, None, 1, 2, 5),
    "CPT": (True, 8, None, 1, 1, 4),
    "LT": (True, 8, None, 1, 1, 3),
}
ORDER = ("INF1", "INF2", "INF3", "MAJ", "CPT", "LT")
INFANTRY = tuple(i for i in ORDER if not UNITS[i][0])
LEADERS = tuple(i for i in ORDER if UNITS[i][0])


@lru_cache(maxsize=None)
def _totals():
    """2d6 by its total: {total: p} (the procedures read a roll by its total and whether it is a 12)."""
    out: dict = {}
    for a in range(1, 7):
        for b in range(1, 7):
            out[a + b] = out.get(a + b, 0) + P36
    return out


@lru_cache(maxsize=None)
def morale_check(morale, mc, helper_mm):
    """14.1: one good-order unit or leader checks, 2d6 + mc against its morale plus the helper's modifier (at most
    10); a natural 12 always demoralizes (14.1). {state after: p}."""
    m = min(MAX_MORALE, morale + helper_mm)
    out: dict = {}
    for total, p in _totals().items():
        margin = total + mc - m
        read = max(margin, 3) if total == 12 else margin
        state = "good_order" if read <= 0 else "disrupted" if read <= 2 else "demoralized"
        out[state] = out.get(state, 0) + p
    return out


@lru_cache(maxsize=None)
def casualty_check(losses):
    """6.7: 2d6 - the hex's step losses, 2 or less eliminates the leader. {eliminated: p}."""
    out: dict = {}
    for total, p in _totals().items():
        dead = total - losses <= CASUALTY_AT_MOST
        out[dead] = out.get(dead, 0) + p
    return out


def _best_helper(leader_states, below=None):
    """6.51, 6.54, 6.55: the best morale modifier among the leaders not demoralized (all in the hex, so a disrupted
    one helps too); to a leader only from those of higher rank. 0 when none helps."""
    mms = [UNITS[i][4] for i, st in leader_states if st != "demoralized"
           and (below is None or UNITS[i][5] > UNITS[below][5])]
    return max(mms) if mms else 0


@lru_cache(maxsize=None)
def _fixture_grid():
    from pathlib import Path

    from ruamel.yaml import YAML
    fixture = Path(__file__).resolve().parent / "fixtures" / "pg-dft-fixture.yaml"
    data = YAML(typ="safe").load(fixture.read_text())
    t = data["changes"][0]["replace"]
    return {int(k): v for k, v in t["grid"].items()}, t["columns"]["headings"]


def _cell_distribution():
    """The Direct Fire Table cell of each roll on the targets' (one) column: {text: p} (7.51, 7.52)."""
    grid, columns = _fixture_grid()
    at = max(i for i, h in enumerate(columns) if h <= STRENGTH)
    col = min(max(at + SHIFT, 0), len(columns) - 1)
    out: dict = {}
    for total, p in _totals().items():
        text = grid[total][col]
        out[text] = out.get(text, 0) + p
    return out


def _morale_ways(mc):
    """An M or M# result (7.41): every unit checks with the number added, the leaders first by seniority, each
    helped by a higher-ranking leader checked before him; then each platoon with the best leader still able to
    help. [(per-unit distributions in ORDER, p)]."""
    ways = [((), ONE)]      # (leaders' (id, state) so far, p)
    for lid in sorted(LEADERS, key=lambda i: -UNITS[i][5]):
        nxt = []
        for done, p in ways:
            helper = _best_helper(done + tuple((i, "good_order") for i in LEADERS if i not in [d[0] for d in done]
                                               and i != lid), below=lid)
            for st, q in morale_check(UNITS[lid][1], mc, helper).items():
                nxt.append((done + ((lid, st),), p * q))
        ways = nxt
    out = []
    for done, p in ways:
        helper = _best_helper(done)
        states = dict(done)
        out.append((tuple({states[i]: ONE} if UNITS[i][0] else morale_check(UNITS[i][1], mc, helper)
                          for i in ORDER), p))
    return out


def _loss_ways(n):
    """An X-type result with n step losses (7.61): the platoons take them one each, the first with the fewest hits
    first (the owner's default); a platoon that lost its last step is eliminated. Every surviving platoon checks
    M2 on its side now showing, with the best leader's modifier (the leaders check nothing on an X); then each
    leader's casualty check at minus the step losses. [(per-unit distributions in ORDER, p)]."""
    hits = dict.fromkeys(INFANTRY, 0)
    for _ in range(n):
        pool = [i for i in INFANTRY if hits[i] < UNITS[i][3] and hits[i] < 2]
        if pool:
            hits[min(pool, key=lambda i: hits[i])] += 1
    losses = sum(hits.values())
    helper = _best_helper(tuple((i, "good_order") for i in LEADERS))
    per = []
    for i in ORDER:
        leader, morale, reduced, steps, _, _ = UNITS[i]
        if leader:
            d = casualty_check(losses) if losses > 0 else {False: ONE}
            per.append({"eliminated" if dead else "good_order": q for dead, q in d.items()})
        elif hits[i] >= 2 or hits[i] >= steps:
            per.append({"eliminated": ONE})
        else:
            suffix = " reduced" if hits[i] else ""
            d = morale_check(reduced if hits[i] else morale, 2, helper)
            per.append({st + suffix: q for st, q in d.items()})
    return [(tuple(per), ONE)]


def odds() -> dict:
    for memo in (morale_check, casualty_check):      # each question from scratch, as Umpire's memo is
        memo.cache_clear()
    result: dict = {}
    for text, pc in _cell_distribution().items():
        if text == "-":
            ways = [(tuple({"good_order": ONE} for _ in ORDER), ONE)]
        elif text == "M":
            ways = _morale_ways(0)
        elif text.startswith("M"):
            ways = _morale_ways(int(text[1:]))
        elif text == "X":
            ways = _loss_ways(1)
        else:
            ways = _loss_ways(int(text[:-1]))
        for per, p in ways:
            for combo in product(*[list(d.items()) for d in per]):
                q = pc * p
                for _, r in combo:
                    q *= r
                key = tuple(v for v, _ in combo)
                result[key] = result.get(key, 0) + q
    return result


def by_count() -> dict:
    """``odds()`` grouped by how many units are demoralized or eliminated."""
    out: dict = {}
    for k, p in odds().items():
        n = sum(1 for st in k if st == "eliminated" or st.startswith("demoralized"))
        out[n] = out.get(n, 0) + p
    return out
