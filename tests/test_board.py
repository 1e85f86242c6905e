"""Maps and geometry: map files, placements, the map builtins, ``derive``; lines checked against a brute force.

The fixture ruleset tests/fixtures/board is a made-up game (a test fixture, no rulebook's values).
"""

from __future__ import annotations

import math
from fractions import Fraction
from pathlib import Path

import pytest

from interpreter.api import load_situation, run_situation
from interpreter.errors import InputError
from interpreter.model.hexgrid import DIRECTIONS, LAYOUTS, cube_distance, hex_distance, to_cube
from interpreter.model.hexline import line
from interpreter.model.hexmap import build_map, place
from interpreter.runtime import board as B

ROOT = Path(__file__).resolve().parent / "fixtures" / "board"


def small_map(layout="odd-q", columns=6, rows=6, **extra):
    data = {"layout": layout, "boards": [{"columns": columns, "rows": rows, "terrain": "open_ground"}], **extra}
    return build_map(data, lambda p: None)


# ---- the brute-force reference: sample the segment at exact fractions, nearest centres by squared distance ----

def _reference(a, b):
    """The line's pieces from samples: at t = k/N every point's nearest hex centres, by squared Euclidean distance
    in cube space (where the grid is regular), in whole numbers. N puts four samples in every gap between the
    places where the line can meet a hexside, so a run along a hexside is several tied samples and a crossing one."""
    deltas = [abs((b[i] - b[j]) - (a[i] - a[j])) for i, j in ((0, 1), (1, 2), (2, 0))]
    n = 4 * math.lcm(*[d for d in deltas if d] or [1])
    samples = []
    for k in range(n + 1):
        p = tuple(n * a[i] + k * (b[i] - a[i]) for i in range(3))          # the point, times n
        q, r = round(Fraction(p[0], n)), round(Fraction(p[1], n))
        cands = _around((q, r, -q - r), 2)
        dist = {c: sum((p[i] - n * c[i]) ** 2 for i in range(3)) for c in cands}
        best = min(dist.values())
        samples.append(tuple(sorted(c for c, d in dist.items() if d == best)))
    runs = []
    for s in samples:
        if runs and runs[-1][0] == s:
            runs[-1][1] += 1
        else:
            runs.append([s, 1])
    out = []
    for i, (cells, count) in enumerate(runs):
        if len(cells) == 1:
            out.append(("hex", cells[0]))
        elif len(cells) == 3:
            out.append(("vertex",) + cells)
        elif count > 1:
            out.append(("along",) + cells)
        else:
            before = runs[i - 1][0][0]
            out.append(("hexside", before, cells[1] if cells[0] == before else cells[0]))
    return out


def _around(c, r):
    return [(c[0] + dq, c[1] + dr, c[2] - dq - dr) for dq in range(-r, r + 1) for dr in range(-r, r + 1)
            if abs(dq + dr) <= r]


@pytest.mark.parametrize("radius", [1, 2, 3, 4, 5])
def test_lines_match_the_sampled_reference_for_every_hex_around(radius):
    a = (0, 0, 0)
    for b in _around(a, radius):
        if cube_distance(a, b) == radius:
            assert line(a, b) == _reference(a, b), b


def test_a_line_along_a_hexside_passes_two_vertices_and_enters_neither_hex_beside_it():
    # from a hex to the one two hexes away through a corner: the spine runs along the side the two between share
    pieces = line((0, 0, 0), (2, -1, -1))
    assert pieces == [("hex", (0, 0, 0)), ("vertex", (0, 0, 0), (1, -1, 0), (1, 0, -1)),
                      ("along", (1, -1, 0), (1, 0, -1)), ("vertex", (1, -1, 0), (1, 0, -1), (2, -1, -1)),
                      ("hex", (2, -1, -1))]


def test_a_straight_line_of_hexes_crosses_one_hexside_between_each():
    pieces = line((0, 0, 0), (3, -3, 0))
    assert [p[0] for p in pieces] == ["hex", "hexside"] * 3 + ["hex"]


def test_a_line_and_its_reverse_meet_the_same_things_in_the_opposite_order():
    a = (0, 0, 0)
    for b in _around(a, 4):
        if b == a:
            continue
        back = []
        for p in reversed(line(b, a)):
            back.append(("hexside", p[2], p[1]) if p[0] == "hexside" else p)
        assert line(a, b) == back, b


# ---- distance, adjacency, directions on every layout ----------------------------------------------

_CENTRES = {
    # where each layout draws hex (col, row): x right, y down, for unit hexes (independent of cube coordinates)
    "odd-q": lambda c, r: (1.5 * c, math.sqrt(3) * (r + 0.5 * (c & 1))),
    "even-q": lambda c, r: (1.5 * c, math.sqrt(3) * (r - 0.5 * (c & 1))),
    "odd-r": lambda c, r: (math.sqrt(3) * (c + 0.5 * (r & 1)), 1.5 * r),
    "even-r": lambda c, r: (math.sqrt(3) * (c - 0.5 * (r & 1)), 1.5 * r),
    "axial": lambda q, r: (1.5 * q, math.sqrt(3) * (r + q / 2)),
}


@pytest.mark.parametrize("layout", [x for x in LAYOUTS if x != "cube"])
def test_neighbours_are_the_hexes_drawn_next_to_it_and_directions_go_clockwise_from_the_top(layout):
    m = small_map(layout)
    hexes = m["hexes"]
    centre = _CENTRES[layout]
    for label, h in hexes.items():
        x, y = centre(h["col"], h["row"])
        drawn = {o for o, k in hexes.items() if o != label
                 and abs(math.dist((x, y), centre(k["col"], k["row"])) - math.sqrt(3)) < 1e-9}
        assert set(B.map_neighbours(m, label)) == drawn
        for o in drawn:
            assert B.map_adjacent(m, label, o) and B.map_distance(m, label, o) == 1
            d = B.map_direction(m, label, o)
            ox, oy = centre(hexes[o]["col"], hexes[o]["row"])
            angle = math.degrees(math.atan2(ox - x, y - oy)) % 360     # clockwise from straight up
            first = 0 if layout.endswith("-q") or layout == "axial" else 30
            assert abs(angle - (first + 60 * (d - 1))) < 1e-6
            assert B.map_toward(m, label, d) == o
            assert B.map_hexside(m, label, o)["direction"] == d
        for o, k in hexes.items():
            assert B.map_distance(m, label, o) == hex_distance((h["col"], h["row"]), (k["col"], k["row"]), layout)


@pytest.mark.parametrize("layout", ["odd-q", "even-r"])
def test_bearing_is_the_sector_the_drawn_angle_falls_in_and_both_on_a_spine(layout):
    m = small_map(layout, 9, 9)
    centre, first = _CENTRES[layout], (0 if layout.endswith("-q") else 30)
    x, y = centre(5, 5)
    for label, h in m["hexes"].items():
        if label == "0505":
            assert B.map_bearing(m, "0505", label) == ()
            continue
        ox, oy = centre(h["col"], h["row"])
        angle = (math.degrees(math.atan2(ox - x, y - oy)) - first) % 360     # from direction 1, clockwise
        k, rest = divmod(angle + 30, 60)
        expected = {int(k) % 6 + 1}
        if abs(rest) < 1e-6 or abs(rest - 60) < 1e-6:                       # on a spine through a corner
            expected = {int(round((angle + 30) / 60)) % 6, int(round((angle + 30) / 60)) % 6 + 1}
            expected = {6 if d == 0 else d for d in expected}
        assert set(B.map_bearing(m, "0505", label)) == expected, label


def test_arcs_tell_a_hex_inside_from_one_on_the_edge():
    m = small_map("odd-q", 9, 9)
    assert B.map_arc(m, "0505", "0503", (6, 1, 2)) == "inside"
    assert B.map_arc(m, "0505", "0507", (6, 1, 2)) == "outside"
    spine = [lab for lab in m["hexes"] if B.map_bearing(m, "0505", lab) == (2, 3)]
    assert spine and all(B.map_arc(m, "0505", s, (6, 1, 2)) == "edge" for s in spine)
    assert B.map_arc(m, "0505", "0505", (1,)) == "same hex"


def test_within_and_nearer():
    m = small_map("odd-q")
    near = B.map_within(m, "0303", 1)
    assert near[0] == "0303" and set(near[1:]) == set(B.map_neighbours(m, "0303"))
    assert len(B.map_within(m, "0303", 10)) == 36
    assert B.map_nearer(m, "0302", "0101", "0303") and not B.map_nearer(m, "0101", "0302", "0303")
    assert B.map_nearer(m, "0101", "0303", ("0606", "0101")) and not B.map_nearer(m, "0606", "0101", ("0606", "0101"))


def test_the_edges_of_a_map_and_a_distance_to_one():
    m = small_map("odd-q", 4, 3)
    assert B.map_edge(m, "top") == ("0101", "0201", "0301", "0401")
    assert B.map_edge(m, "right") == ("0401", "0402", "0403")
    assert min(B.map_distance(m, "0201", e) for e in B.map_edge(m, "bottom")) == 2
    with pytest.raises(ValueError, match="an edge is"):
        B.map_edge(m, "north")


def test_joined_boards_are_one_grid():
    m = build_map({"layout": "odd-q", "boards": [
        {"id": "a", "prefix": "a", "labels": "letters", "columns": 10, "rows": 10, "terrain": "open_ground"},
        {"id": "b", "prefix": "b", "labels": "letters", "columns": 10, "rows": 10, "at": [10, 0],
         "terrain": "woods"}]}, lambda p: None)
    assert B.map_adjacent(m, "aJ5", "bA5") and B.map_adjacent(m, "aJ5", "bA4")
    assert B.map_distance(m, "aA1", "bJ1") == 19
    crossing = B.map_line(m, "aH5", "bC5")
    assert {B.map_hex(m, h)["board"] for h in crossing["hexes"]} == {"a", "b"}
    assert B.map_hex(m, "bC5")["terrain"] == "woods"


def _butted(second: dict) -> dict:
    return {"layout": "odd-q", "boards": [
        {"id": "a", "prefix": "a", "labels": "letters", "columns": 11, "rows": 10, "terrain": "open_ground"},
        {"id": "b", "prefix": "b", "labels": "letters", "columns": 11, "rows": 10, "terrain": "woods", **second}]}


def test_boards_butted_edge_to_edge_make_one_hex_of_each_pair_of_half_hexes():
    """Where two boards' edge half hexes meet (the rulebooks' boards butted end to end or side to side) they are
    one hex with both labels: a distance across the join counts it once, and either label names it."""
    m = build_map(_butted({"at": [10, 0], "shared_edge": True}), lambda p: None)
    assert len(m["hexes"]) == 21 * 10                       # 11 + 11 columns, one of them shared
    assert B.map_hex(m, "bA5")["label"] == "aK5" and B.map_hex(m, "aK5")["also"] == ("bA5",)
    assert B.map_distance(m, "aK5", "bA5") == 0 and B.map_hex(m, "bA5")["terrain"] == "open_ground"
    assert B.map_distance(m, "aA1", "bK1") == hex_distance((1, 1), (21, 1), "odd-q") == 20
    assert B.map_adjacent(m, "bB5", "aJ5") is False and B.map_distance(m, "bB5", "aJ5") == 2
    # long edge to long edge: the second board below the first, its row 1 on the first's row 10
    tall = build_map(_butted({"at": [0, 9], "shared_edge": True}), lambda p: None)
    assert B.map_hex(tall, "bC1")["label"] == "aC10" and B.map_distance(tall, "aA1", "bA10") == 18
    assert B.map_line(tall, "aC8", "bC3")["hexes"] == ("aC8", "aC9", "aC10", "bC2", "bC3")


def test_boards_that_overlap_anywhere_but_their_shared_edge_are_an_error():
    with pytest.raises(InputError, match=r"puts its hex bA1 where the map already has aK1.*shared_edge: true"):
        build_map(_butted({"at": [10, 0]}), lambda p: None)            # butted, but not said to share the edge
    with pytest.raises(InputError, match=r"puts its hex bA1 where the map already has aJ1") as e:
        build_map(_butted({"at": [9, 0], "shared_edge": True}), lambda p: None)   # b's column A on a's column J
    assert "move the board" in (e.value.hint or "")


def test_a_shared_hex_is_listed_and_placed_by_either_label(tmp_path):
    text = ("layout: odd-q\ncatalogues: {terrain: terrain}\nboards:\n"
            "  - {id: a, prefix: a, labels: letters, columns: 3, rows: 3, terrain: open_ground}\n"
            "  - {id: b, prefix: b, labels: letters, columns: 3, rows: 3, at: [2, 0], shared_edge: true,"
            " terrain: open_ground}\n")
    (tmp_path / "m.yaml").write_text(text + "hexes:\n  bA2: {terrain: woods}\n")
    s = _situation(tmp_path, 'inputs: {firer: "aA1", target: "bC2"}\nmap: m.yaml\n'
                             "units:\n  - {id: A, hex: bA1}\n")
    assert B.map_hex(s.board, "aC2")["terrain"] == "woods"
    assert B.map_unit(s.board, "A")["hex"] == "aC1" and [u["id"] for u in B.map_units(s.board, "bA1")] == ["A"]
    msg = _map_error(tmp_path, text + "hexes:\n  bA2: {terrain: woods}\n  aC2: {terrain: woods}\n")
    assert "m.yaml:8:" in msg and "listed twice (also as bA2)" in msg


def test_hex_lookups_and_what_stands_there():
    s = load_situation(ROOT / "situations" / "sight.yaml")
    m = s.board
    assert B.map_hex(m, "0403")["elevation"] == 1 and B.map_hex(m, "0403")["terrain"] == "hill"
    assert B.map_hexside(m, "0403", "0303")["features"] == ("wall",)
    assert B.map_hexside(m, "0302", "0303")["features"] == ()
    assert [u["id"] for u in B.map_units(m, "0101")] == ["A"]
    assert B.map_unit(m, "A")["facing"] == 3
    assert [k["kind"] for k in B.map_markers(m, "0403")] == ["smoke"]
    with pytest.raises(ValueError, match="not on map 'field' .did you mean .*'0403'"):
        B.map_hex(m, "0430")
    with pytest.raises(ValueError, match="no unit 'Z'"):
        B.map_unit(m, "Z")
    from interpreter.model.values import Record
    fake = Record({"layout": "odd-q", "hexes": 1, "hexsides": (), "units": (), "markers": ()})
    with pytest.raises(ValueError, match="not a map"):
        B.map_distance(fake, "0101", "0102")


# ---- derive: from the map, else the stated fact, else a missing fact -----------------------------

def _situation(tmp_path, text):
    f = tmp_path / "s.yaml"
    f.write_text(f"ruleset: {ROOT}\nprocedure: sight\n" + text)
    return load_situation(f)


def test_derive_takes_the_map_and_says_so():
    out = run_situation(load_situation(ROOT / "situations" / "sight.yaml"))
    assert out.value == {"range": 3, "los": False}
    notes = [e["text"] for e in out.trace.events if e["kind"] == "note"]
    assert "range = 3: derived from the map" in notes


def test_derive_without_a_map_takes_the_stated_fact_and_says_it_was_given(tmp_path):
    out = run_situation(_situation(tmp_path, 'inputs: {firer: "0101", target: "0303", range_to_target: 4, '
                                             'clear: true}\n'))
    assert out.value == {"range": 4, "los": True}
    notes = [e["text"] for e in out.trace.events if e["kind"] == "note"]
    assert "range = 4: given, not derived (range_to_target)" in notes


def test_a_fact_neither_stated_nor_derivable_is_a_missing_fact_naming_it(tmp_path, cli):
    out = run_situation(_situation(tmp_path, 'inputs: {firer: "0101", target: "0303"}\n'))
    assert out.status == "error" and out.error.exit_code == 2
    assert "states no 'range_to_target'" in out.reason and "map" in out.error.hint
    assert "s.yaml:3:" in out.reason          # the situation's inputs are named too
    code, out, err = cli("resolve", str(tmp_path / "s.yaml"))
    assert code == 2 and "missing fact" in out + err


def test_a_unit_the_situation_does_not_place_on_its_map_is_a_missing_fact(tmp_path, cli):
    (tmp_path / "m.yaml").write_text(BOARD)
    f = tmp_path / "p.yaml"
    f.write_text(f"ruleset: {ROOT}\nprocedure: placed\ninputs: {{unit: B}}\nmap: m.yaml\n"
                 "units:\n  - {id: A, hex: '0101'}\n")
    code, out, err = cli("resolve", str(f))
    assert code == 2 and "no unit 'B' is placed on the map" in out + err and "units:" in out + err


def test_a_fact_the_given_map_cannot_give_is_missing_without_hinting_at_a_map():
    from interpreter.errors import MissingFact
    from interpreter.runtime.functions import BUILTINS
    missing, lo, hi = BUILTINS["missing_fact"]
    assert (lo, hi) == (1, 3)
    m = load_situation(ROOT / "situations" / "sight.yaml").board
    with pytest.raises(MissingFact) as e:
        missing("season", "whether orchards are in season", m)
    assert "states no 'season' (for whether orchards are in season) and its map does not give it" in str(e.value)
    assert e.value.hint == "state season in the situation's inputs"
    with pytest.raises(MissingFact) as e:
        missing("season", "whether orchards are in season", None)
    assert "gives no map to derive it from" in str(e.value) and "give the situation a map" in e.value.hint


def test_the_stated_fact_beside_a_map_is_noted_when_it_differs(tmp_path):
    s = _situation(tmp_path, f'inputs: {{firer: "0101", target: "0303", range_to_target: 5}}\n'
                             f'map: {ROOT}/maps/field.yaml\n')
    notes = [e["text"] for e in run_situation(s).trace.events if e["kind"] == "note"]
    assert any("range = 3: derived from the map (the situation also states range_to_target = 5" in n for n in notes)


# ---- bad maps and placements: positioned input errors ---------------------------------------------

def _map_error(tmp_path, map_text, situation_extra=""):
    (tmp_path / "m.yaml").write_text(map_text)
    with pytest.raises(InputError) as e:
        _situation(tmp_path, 'inputs: {firer: "0101", target: "0202"}\nmap: m.yaml\n' + situation_extra)
    return str(e.value)


BOARD = "layout: odd-q\ncatalogues: {terrain: terrain}\nboards: [{columns: 4, rows: 4, terrain: open_ground}]\n"


def test_unknown_terrain_is_an_error_at_its_line_with_did_you_mean(tmp_path):
    msg = _map_error(tmp_path, BOARD + "hexes:\n  \"0202\": {terrain: wods}\n")
    assert "m.yaml:5:" in msg and "'wods' is not an entry of catalogue 'terrain'" in msg and "'woods'" in msg


def test_a_hex_listed_twice_is_an_error(tmp_path):
    msg = _map_error(tmp_path, BOARD + "hexes:\n  \"0202\": {terrain: woods}\n  \"0202\": {terrain: hill}\n")
    assert "m.yaml:6:" in msg and "0202" in msg
    msg = _map_error(tmp_path, BOARD + "hexsides:\n  - {hexes: ['0202', '0203'], features: [wall]}\n"
                                       "  - {hexes: ['0203', '0202'], features: [hedge]}\n")
    assert "m.yaml:6:" in msg and "listed twice" in msg


def test_a_label_not_on_the_map_is_an_error_with_the_nearest_label(tmp_path):
    msg = _map_error(tmp_path, BOARD + "hexes:\n  \"0205\": {terrain: woods}\n")
    assert "m.yaml:5:" in msg and "'0205' is not on this map" in msg and "did you mean" in msg
    msg = _map_error(tmp_path, BOARD + "hexsides:\n  - {hexes: ['0202', '0204'], features: [wall]}\n")
    assert "not next to each other" in msg


def test_a_unit_placed_off_the_map_is_an_error_at_its_hex(tmp_path):
    msg = _map_error(tmp_path, BOARD, "units:\n  - {id: A, hex: '0909'}\n")
    assert "s.yaml:6:" in msg and "'0909' is not on the map" in msg
    msg = _map_error(tmp_path, BOARD, "units:\n  - {id: A, hex: '0101'}\n  - {id: A, hex: '0102'}\n")
    assert "placed twice" in msg


def test_a_map_in_the_situation_is_read_with_positions_too(tmp_path):
    with pytest.raises(InputError) as e:
        _situation(tmp_path, 'inputs: {firer: "0101", target: "0202"}\nmap:\n  boards: [{columns: 3}]\n')
    assert "s.yaml:5:" in str(e.value) and "rows" in str(e.value)
    with pytest.raises(InputError) as e:
        _situation(tmp_path, 'inputs: {firer: "0101", target: "0202", board: {}}\n')
    assert "comes from the situation's `map:`" in str(e.value)
    with pytest.raises(InputError) as e:
        _situation(tmp_path, 'inputs: {firer: "0101", target: "0202"}\nunits: [{id: A, hex: "0101"}]\n')
    assert "gives no `map:`" in str(e.value)



def test_a_map_written_in_a_test_case_is_checked_on_every_run_warm_or_cold(tmp_path, cli):
    """The load cache keeps only documents whose written maps passed: a bad one is reported each time, at its line."""
    folder = tmp_path / "t"
    folder.mkdir()
    (folder / "bad.yaml").write_text(f"ruleset: {ROOT}\ncases:\n  - id: X\n    procedure: sight\n"
                                     "    inputs: {firer: '0101', target: '0202'}\n"
                                     "    map:\n      boards: [{columns: 3}]\n    expect: {range: 1, los: true}\n")
    for _ in range(2):
        code, out, err = cli("test", str(folder / "bad.yaml"))
        assert code == 2 and "bad.yaml:7:" in out + err and "rows" in out + err

# ---- pictures -------------------------------------------------------------------------------------

def test_the_map_picture_draws_every_hex_the_units_and_the_line_of_sight(tmp_path, cli):
    out = tmp_path / "board.svg"
    code, text, err = cli("map", ROOT / "situations" / "sight.yaml", "--svg", out)
    assert code == 0, err
    assert "line 0101 -> 0303 (3 hexes): through 0202, 0203" in text
    svg = out.read_text()
    assert svg.count('class="hex"') == 30 and 'data-hex="0403"' in svg
    assert svg.count('class="los"') == 1                            # the line the adjudication drew
    assert "unit A in 0101, facing 3" in svg and "smoke in 0403" in svg and "0303|0403: wall" in svg
    assert svg.count('fill="#d62728" fill-opacity="0.28"') == 2      # the two hexes it crossed


def test_an_asked_for_line_is_drawn_without_running_the_rules(tmp_path, cli):
    out = tmp_path / "board.svg"
    code, text, _ = cli("map", ROOT / "situations" / "sight.yaml", "--svg", out, "--no-adjudicate",
                        "--line", "0101", "0104")
    assert code == 0 and "line 0101 -> 0104" in text and "0303" not in text
    code, _, err = cli("map", ROOT / "situations" / "sight.yaml", "--svg", out, "--line", "0101", "0909")
    assert code == 2 and "0909" in err


def test_a_png_needs_matplotlib_and_says_so(tmp_path, cli, monkeypatch):
    import sys
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    code, _, err = cli("map", ROOT / "situations" / "sight.yaml", "--png", tmp_path / "b.png")
    assert code == 2 and "--png needs matplotlib" in err and not (tmp_path / "b.png").exists()


def test_a_png_is_drawn(tmp_path, cli):
    pytest.importorskip("matplotlib")
    out = tmp_path / "b.png"
    code, _, err = cli("map", ROOT / "situations" / "sight.yaml", "--png", out)
    assert code == 0, err
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 5000


def test_a_situation_without_a_map_has_nothing_to_draw(cli):
    code, _, err = cli("map", ROOT.parent / "mini" / "situations" / next(
        p.name for p in (ROOT.parent / "mini" / "situations").glob("*.yaml")))
    assert code == 2 and "gives no map" in err
