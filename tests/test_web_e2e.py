"""End to end: `umpire serve` in a real headless Chromium (the system's, driven by Playwright).

Skipped, with how to install it, where Chromium is missing (`.ci/run` installs it).
"""

import json
import os
import shutil
import socket
import subprocess
import sys

import pytest

from conftest import ROOT, RULESETS


def _chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


CHROMIUM = _chromium()
try:
    from playwright.sync_api import expect, sync_playwright
    # an assertion waits as long as a page action may (playwright's own 5 s default for expect() timed out
    # answers that take 5-10 s on a heavily loaded machine); what each test asserts is unchanged
    expect.set_options(timeout=20_000)
except ImportError:      # pragma: no cover - the [test] extra installs it
    sync_playwright = None

MISSING = [what for what, found in (("no Chromium on PATH (sudo apt-get install -y chromium)", CHROMIUM),
                                    ("no playwright (pip install -e '.[test]')", sync_playwright)) if found is None]
"""What this browser test lacks here, with how to install it (pyproject's addopts -rs prints it for each skip)."""

pytestmark = pytest.mark.skipif(bool(MISSING), reason="browser test: " + "; ".join(MISSING))

# one shipped situation of each game (ASLSK's: the README tour's book example, which the tests read closely)
SHIPPED = {r.name: sorted(p.name for p in (r / "situations").glob("*.yaml"))[0] for r in RULESETS}
SHIPPED["aslsk"] = "prep_fire_fg_pbf.yaml"


@pytest.fixture(scope="module")
def server():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "interpreter", "serve", "--port", str(port)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    if "http://127.0.0.1:" not in line:
        proc.kill()
        pytest.fail(f"umpire serve did not print its URL: {line!r} {proc.stderr.read()}")
    yield line.split()[2]
    proc.terminate()
    proc.wait(10)


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-dev-shm-usage"])
        yield b
        b.close()


@pytest.fixture
def page(browser, server):
    pg = browser.new_page(viewport={"width": 1280, "height": 900})
    errors = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.set_default_timeout(20_000)
    pg.base = server
    yield pg
    pg.close()
    assert not errors, errors


def open_ruleset(page, rid):
    page.goto(page.base + f"#ruleset={rid}")
    expect(page.locator("#situation option").first).to_be_attached()


def cli_json(*args):
    from interpreter.cli.main import main
    import contextlib
    import io
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main([str(a) for a in args])
    return json.loads(out.getvalue())


@pytest.mark.parametrize("rid", sorted(SHIPPED))
def test_resolving_a_shipped_situation_shows_what_the_cli_gives(page, rid):
    open_ruleset(page, rid)
    page.select_option("#situation", SHIPPED[rid])
    page.click("#btn-resolve")
    expect(page.get_by_test_id("status")).to_be_visible()
    expected = cli_json("resolve", ROOT / "rulesets" / rid / "situations" / SHIPPED[rid], "--json")
    shown = json.loads(page.get_by_test_id("result-json").text_content())
    assert shown == expected["result"]
    assert page.get_by_test_id("status").text_content() == {"ok": "result"}.get(expected["status"], expected["status"])
    trace = page.get_by_test_id("trace")
    assert trace.locator(".cite").count() > 0                 # each step with its rule citation
    def scalars(v):
        if isinstance(v, dict):
            return [x for y in v.values() for x in scalars(y)]
        if isinstance(v, list):
            return [x for y in v for x in scalars(y)]
        return [v] if isinstance(v, (int, str)) and not isinstance(v, bool) else []
    shown_text = page.get_by_test_id("result").text_content()
    assert all(str(v) in shown_text for v in scalars(expected["result"])[:5])     # the values are on the page


def test_a_resolved_attack_shows_what_changed_per_unit_with_every_field_one_click_away(page):
    open_ruleset(page, "aslsk")
    page.select_option("#situation", "prep_fire_fg_pbf.yaml")
    page.click("#btn-resolve")
    expect(page.get_by_test_id("status")).to_have_text("result")
    expected = cli_json("resolve", ROOT / "rulesets/aslsk/situations/prep_fire_fg_pbf.yaml", "--json")["changes"]
    tables = page.get_by_test_id("changes")
    expect(tables.first).to_be_visible()
    rows = [[c.strip() for c in r.split("\t")] for t in range(tables.count())
            for r in tables.nth(t).locator("tbody tr").evaluate_all(
                "rows => rows.map(r => [...r.cells].map(c => c.textContent).join('\\t'))")]
    shown, unit = [], None
    for r in rows:                      # the unit's id is written on its first row only, as in the CLI
        unit = r[0] or unit
        shown.append((unit, r[1], r[2], r[4]))
    def text(v):                        # how the page writes a value
        return "—" if v is None else json.dumps(v) if isinstance(v, bool) else str(v)
    want = [(c["id"], f["field"], text(f["before"]), text(f["after"])) for c in expected for f in c["changed"]] + \
        [(c["id"], f["field"], "", text(f["value"])) for c in expected for f in c["added"]]
    assert sorted(shown) == sorted(want)
    assert ("G1", "broken", "false", "true") in shown         # the book's result: G1 breaks, G2 is pinned
    assert ("G2", "pinned", "false", "true") in shown
    # the fields nothing changed stay out of sight until asked for
    full = page.locator("details.full-records").first
    expect(full.locator("table")).to_be_hidden()
    full.locator("summary").click()
    expect(full.locator("table")).to_be_visible()


def test_odds_are_drawn_as_a_chart_with_unknown_cells_set_apart(page):
    open_ruleset(page, "aslsk")
    page.select_option("#situation", SHIPPED["aslsk"])
    page.fill("#by", "units.G1.state")
    page.check("#all-dice")
    page.click("#btn-odds")
    chart = page.get_by_test_id("odds-chart")
    expect(chart).to_be_visible()
    expected = cli_json("odds", ROOT / "rulesets/aslsk/situations" / SHIPPED["aslsk"], "--all-dice",
                        "--by", "units.G1.state", "--json")
    results = [o for o in expected["outcomes"] if not o["stop"]]
    labels = chart.locator(".bar-row .label").all_text_contents()
    assert labels == [o["outcome"] for o in results]
    stops = page.get_by_test_id("odds-stops")
    expect(stops).to_contain_text("needs chart: ift row")
    assert stops.locator(".bar-row").count() == len(expected["outcomes"]) - len(results)


def test_monte_carlo_shows_progress_and_an_estimate(page):
    open_ruleset(page, "aslsk")
    page.select_option("#situation", "rally_self.yaml")
    page.fill("#runs", "6000")
    page.fill("#sim-seed", "5")
    page.click("#btn-simulate")
    expect(page.locator("#out-odds h2")).to_have_text("Monte Carlo estimate")
    expect(page.locator("#out-odds")).to_contain_text("6,000 runs from seed 5")


def test_a_house_rule_shows_its_changes_and_the_shares_before_and_after(page):
    open_ruleset(page, "aslsk")
    page.select_option("#situation", "rally_leader_dm.yaml")
    page.fill("#by", "rallied")
    page.click(".tabs button[data-tab=house]")
    page.get_by_test_id("overlay-field-rally.yaml").check()
    page.click("#btn-diff")
    table = page.get_by_test_id("diff-table")
    expect(table).to_contain_text("rallied=true")
    expect(page.locator("#out-diff")).to_contain_text("desperation_morale")
    expected = cli_json("diff", ROOT / "rulesets/aslsk", "--with", ROOT / "rulesets/aslsk/house-rules/field-rally.yaml",
                        "--situation", ROOT / "rulesets/aslsk/situations/rally_leader_dm.yaml", "--by", "rallied",
                        "--json")
    from fractions import Fraction
    for o in expected["outcomes"]:
        row = table.locator("tr", has_text=o["outcome"])
        for column, key in ((1, "before"), (2, "after")):
            share = float(Fraction(o[key]))
            expect(row.locator("td").nth(column)).to_have_text(f"{share * 100:.{1 if share >= 0.1 or share == 0 else 2}f}%")
    assert any(o["before"] != o["after"] for o in expected["outcomes"])
    page.click(".tabs button[data-tab=run]")
    expect(page.locator("#applied-overlays")).to_have_text("field-rally.yaml")


def test_an_error_is_shown_as_the_cli_gives_it_and_the_text_is_kept(page):
    open_ruleset(page, "aslsk")
    page.click("#source-tabs button[data-source=text]")
    text = "ruleset: ..\nprocedure: fire_attack\ninputs:\n  firers: [{counter: american 7-4-7}]\n  targetz: []\n"
    page.fill("#text-name", "mine.yaml")
    page.fill("#situation-text", text)
    page.click("#btn-resolve")
    err = page.locator("#run-error")
    expect(err).to_contain_text("mine.yaml:5:3")
    expect(err).to_contain_text("targetz")
    assert page.input_value("#situation-text") == text


def test_a_situation_built_in_the_form_resolves_as_the_cli_resolves_it(page, tmp_path):
    open_ruleset(page, "aslsk")
    page.click("#source-tabs button[data-source=form]")
    page.select_option("#form-procedure", "morale_check")
    page.get_by_label("counter", exact=True).fill("german 4-6-7")
    page.get_by_label("id", exact=True).fill("G1")
    page.fill("#form-dice", "7")
    page.click("#btn-resolve")
    expect(page.get_by_test_id("status")).to_have_text("result")
    shown = json.loads(page.get_by_test_id("result-json").text_content())
    situation = tmp_path / "mc.yaml"
    situation.write_text(f"ruleset: {ROOT / 'rulesets/aslsk'}\nprocedure: morale_check\n"
                         "inputs: {unit: {counter: german 4-6-7, id: G1}}\ndice: [7]\n")
    assert shown == cli_json("resolve", situation, "--json")["result"]
    assert shown["outcome"] == "pinned"             # DR 7 equal to morale 7 pins (3.2.3)


def test_a_situation_on_a_map_shows_its_board_and_line_of_sight(page):
    open_ruleset(page, "panzer-grenadier")
    page.select_option("#situation", "direct_fire_on_map.yaml")
    page.click("#btn-resolve")
    board = page.get_by_test_id("board")
    expect(board).to_be_visible()
    assert board.locator("svg polygon.hex").count() == 48        # every hex of maps/fire_demo.yaml
    assert board.locator("svg line.los").count() == 1           # the line of sight the rules traced (a level line:
    expect(board.locator("svg line.los")).to_be_attached()      # no height, so not "visible" to playwright)
    assert board.locator('svg polygon[data-hex="0303"]').count() == 1
    board.locator('svg polygon[data-hex="0302"]').click()
    expect(board.locator("p")).to_contain_text("0302: heavy_woods")


# ---- the chart editor -----------------------------------------------------------------------------

IFT_FIXTURE = ROOT / "tests" / "fixtures" / "charts" / "test-fixture-aslsk.csv"
"""TEST FIXTURE charts (made-up values, labelled as such in the file): never a ruleset's value."""


def _fixture_block(path, table):
    """One table's grid of a TEST FIXTURE chart CSV as a spreadsheet copies it: tab-separated values, one
    line per row, without the headings."""
    import csv
    rows, inside = [], False
    for fields in csv.reader(line for line in open(path, encoding="utf-8") if not line.startswith("#")):
        if fields[:1] == ["table"]:
            inside, heading = fields[1] == table, True
            continue
        if inside:
            if heading:
                heading = False
                continue
            rows.append("\t".join(fields[1:]))
    return "\n".join(rows) + "\n"


def _paste(locator, text):
    locator.evaluate("(el, text) => { const dt = new DataTransfer(); dt.setData('text/plain', text); "
                     "el.dispatchEvent(new ClipboardEvent('paste', {clipboardData: dt, bubbles: true, "
                     "cancelable: true})); }", text)


def test_a_pasted_test_fixture_ift_takes_the_needs_chart_share_out_of_the_tour_odds(page):
    open_ruleset(page, "aslsk")
    page.click(".tabs button[data-tab=house]")
    page.select_option("#chart-table", "ift")
    counts = page.locator("#chart-counts")
    expect(counts).to_contain_text("16 from the rulebook, 0 filled by you, 218 unknown")
    known = page.get_by_label("row 10 column 16", exact=True)
    assert known.get_attribute("readonly") is not None                     # the rulebook's cell is locked
    assert "3.2.2" in known.get_attribute("title")                         # hover: its source
    # the whole TEST FIXTURE IFT block (made-up values), pasted from a spreadsheet into the first cell
    first = page.get_by_label("row -5 column 1", exact=True)
    first.focus()
    _paste(first, _fixture_block(IFT_FIXTURE, "ift"))
    expect(counts).to_contain_text("16 from the rulebook, 218 filled by you, 0 unknown")
    expect(page.locator("#chart-status")).to_contain_text("checked against the rulebook: ok")
    page.click("#btn-charts-use")
    expect(page.locator("#chart-status")).to_contain_text("applied to this page's runs")
    page.click(".tabs button[data-tab=run]")
    expect(page.locator("#applied-overlays")).to_have_text("aslsk-charts.yaml")
    page.select_option("#situation", SHIPPED["aslsk"])
    page.fill("#by", "units.G1.state, units.G2.state")           # the README tour's odds
    page.check("#all-dice")
    page.click("#btn-odds")
    chart = page.get_by_test_id("odds-chart")
    expect(chart).to_be_visible()
    expected = cli_json("odds", ROOT / "rulesets/aslsk/situations" / SHIPPED["aslsk"], "--all-dice",
                        "--by", "units.G1.state", "--by", "units.G2.state",
                        "--with", IFT_FIXTURE, "--no-charts", "--json")
    assert expected["needs_chart"]["share"] == 0
    assert chart.locator(".bar-row .label").all_text_contents() == [o["outcome"] for o in expected["outcomes"]]
    expect(page.get_by_test_id("odds-stops")).to_have_count(0)          # no needs-chart share any more


def test_a_chart_value_the_rulebook_contradicts_is_refused_on_its_cell(page):
    open_ruleset(page, "aslsk")
    page.click(".tabs button[data-tab=house]")
    page.select_option("#chart-table", "ift")
    # a pasted block whose second value lands on the rulebook's row 10, column 16 (NMC, 3.2.2)
    cell = page.get_by_label("row 10 column 12", exact=True)
    cell.focus()
    _paste(cell, "PTC\tPTC\n")
    refused = page.locator("td.refused input")
    expect(refused).to_have_count(1)
    assert refused.get_attribute("aria-label") == "row 10 column 16"
    expect(page.get_by_test_id("chart-problems")).to_contain_text("the rulebook reveals NMC")
    expect(page.get_by_test_id("chart-problems")).to_contain_text("3.2.2")
    # a mistyped result code: did you mean
    page.get_by_label("row 10 column 16", exact=True).fill("NMC")
    page.get_by_label("row 10 column 16", exact=True).dispatch_event("change")
    page.get_by_label("row 11 column 16", exact=True).fill("PCT")
    page.get_by_label("row 11 column 16", exact=True).dispatch_event("change")
    expect(page.get_by_test_id("chart-problems")).to_contain_text("did you mean 'PTC'")
    page.get_by_label("row 11 column 16", exact=True).fill("PTC")
    page.get_by_label("row 11 column 16", exact=True).dispatch_event("change")
    expect(page.locator("#chart-status")).to_contain_text("checked against the rulebook: ok")
    with page.expect_download() as download:
        page.click("#btn-charts")
    text = open(download.value.path(), encoding="utf-8").read()
    assert "  - table: ift\n    grid:\n" in text and '"11": [~, ~, ~, ~, ~, ~, "PTC", ~, ~]' in text
