"""Charts applied once: a player registers their chart overlay per ruleset (or keeps it in a charts/ folder
beside their situations) and every command uses it without --with; --no-charts leaves it out.

Every chart value here is a TEST FIXTURE value, made up for these tests (the fixture ruleset's 'partial'
table is itself a made-up table)."""

import json
import os
import shutil
from pathlib import Path

import pytest
from conftest import FIXTURE, ROOT

CHART = """# TEST FIXTURE chart overlay: made-up values for the fixture ruleset, not any game's chart
overlay: test-fixture-charts
extends: mini
kind: charts
changes:
  - table: partial
    grid:
      "≤3": [~, 9]
      "4-6": [5, ~]
      "≥7": [~, ~]
"""


@pytest.fixture
def mine(tmp_path, monkeypatch):
    """A copy of the fixture ruleset with a situation that reads the 'partial' table's row ≤3, column B
    (unknown in the book), a test case that expects it, and a TEST FIXTURE chart that fills it."""
    monkeypatch.setenv("UMPIRE_CONFIG_DIR", str(tmp_path / "config"))
    root = tmp_path / "mini"
    shutil.copytree(FIXTURE, root)
    (root / "procedures" / "read.ump").write_text(
        "# TEST FIXTURE procedure\nprocedure read_chart(roll: int, letter: text):\n"
        "    return {value: lookup(partial, row: roll, column: letter)}\n")
    (root / "situations" / "partial.yaml").write_text(
        "ruleset: ..\nprocedure: read_chart\ntitle: reads an unknown cell (test fixture)\n"
        "inputs: {roll: 2, letter: B}\n")
    (root / "tests" / "partial.yaml").write_text(
        "ruleset: ..\ncases:\n  - id: FIX-CHART\n    situation: ../situations/partial.yaml\n"
        "    expect: {value: 9}\n")
    chart = tmp_path / "test-fixture-charts.yaml"
    chart.write_text(CHART)
    return root, chart


def test_registered_charts_reach_resolve_odds_and_test_and_no_charts_leaves_them_out(cli, mine):
    root, chart = mine
    situation = root / "situations" / "partial.yaml"
    code, out, err = cli("resolve", situation)
    assert code == 1 and "needs chart" in out + err
    code, out, err = cli("charts", root, "--use", chart)
    assert code == 0, err
    assert f"your charts are {chart}" in out and "1 cells filled" in out
    record = (root.parent / "config" / "charts.yaml").read_text()
    assert f'mini: "{chart}"' in record
    # resolve: the result, and the trace header and --json name the charts
    code, out, err = cli("resolve", situation, "--explain")
    assert code == 0, err
    assert f"charts: {chart}" in out and "result:\n  value: 9" in out
    code, out, err = cli("resolve", situation, "--json")
    assert code == 0 and json.loads(out)["charts"] == [str(chart)] and json.loads(out)["result"] == {"value": 9}
    code, out, err = cli("odds", situation, "--json")
    data = json.loads(out)
    assert code == 0 and data["charts"] == [str(chart)] and data["needs_chart"]["share"] == 0
    code, out, err = cli("test", root, "-k", "FIX-CHART")
    assert code == 0 and "1 passed" in out
    # --no-charts: the book alone again
    code, out, err = cli("resolve", situation, "--no-charts", "--json")
    assert code == 1 and json.loads(out)["charts"] == [] and "needs_chart" in json.loads(out)
    code, out, err = cli("odds", situation, "--no-charts", "--json")
    assert json.loads(out)["needs_chart"]["share"] == 1
    code, out, err = cli("test", root, "-k", "FIX-CHART", "--no-charts")
    assert code == 1 and "1 failed" in out
    assert "UMPIRE_CHARTS" not in os.environ          # --no-charts lasted one command
    # the same file given with --with as well is applied once (no conflict with itself)
    code, out, err = cli("resolve", situation, "--with", chart)
    assert code == 0, err
    # --forget: the record loses that line only
    (root.parent / "config" / "charts.yaml").write_text(record + "# my own note\n")
    code, out, err = cli("charts", root, "--forget")
    assert code == 0 and "forgot your charts" in out
    assert (root.parent / "config" / "charts.yaml").read_text() == record.replace(f'mini: "{chart}"\n', "") \
        + "# my own note\n"
    code, out, err = cli("resolve", situation)
    assert code == 1


def test_charts_are_checked_before_they_are_recorded(cli, mine):
    root, chart = mine
    chart.write_text(CHART.replace('"4-6": [5, ~]', '"4-6": [4, ~]'))      # the book reveals 5
    code, out, err = cli("charts", root, "--use", chart)
    assert code == 2 and "Traceback" not in err
    assert "your chart says 4, but the rulebook reveals 5" in err and f"{chart}:9:15:" in err
    assert not (root.parent / "config" / "charts.yaml").exists()
    code, out, err = cli("charts", root, "--use", root.parent / "nowhere.yaml")
    assert code == 2 and "no such chart overlay" in err


def test_a_charts_folder_beside_the_situations_is_applied(cli, mine, tmp_path):
    root, chart = mine
    games = tmp_path / "my-games"
    (games / "charts").mkdir(parents=True)
    shutil.copy(chart, games / "charts" / "mini.yaml")
    (games / "read.yaml").write_text(f"ruleset: {root}\nprocedure: read_chart\ninputs: {{roll: 1, letter: B}}\n")
    code, out, err = cli("resolve", games / "read.yaml")
    assert code == 0 and f"charts: {games / 'charts' / 'mini.yaml'}" in out and "9" in out
    code, out, err = cli("resolve", games / "read.yaml", "--no-charts")
    assert code == 1


def test_a_broken_record_is_reported_at_its_line(cli, mine):
    root, chart = mine
    config = root.parent / "config"
    config.mkdir()
    (config / "charts.yaml").write_text("# mine\nmini = somewhere\n")
    code, out, err = cli("resolve", root / "situations" / "partial.yaml")
    assert code == 2 and f"{config / 'charts.yaml'}:2:1: error:" in err and "RULESET-ID: FILE" in err
    (config / "charts.yaml").write_text(f"mini: {root.parent / 'gone.yaml'}\n")
    code, out, err = cli("resolve", root / "situations" / "partial.yaml")
    assert code == 2 and "are not there any more" in err and "--no-charts" in err


def test_charts_report_counts_filled_cells_and_situations_that_still_stop(cli, mine):
    root, chart = mine
    code, out, err = cli("charts", root, "--with", chart, "--table", "partial")
    assert code == 0, err
    assert "2 of 6 cells known (1 filled by your charts), 4 unknown" in out
    assert "0 of 2 still stop" in out or "still stop" in out
    # a chart that leaves the cell blank: the situation still stops, and the report says on which cell
    blank = chart.with_name("blank.yaml")
    blank.write_text(CHART.replace('"≤3": [~, 9]', '"≤3": [~, ~]'))
    code, out, err = cli("charts", root, "--with", blank, "--json")
    data = json.loads(out)
    stops = {os.path.basename(s["situation"]): s for s in data["situations"]}
    assert stops["partial.yaml"]["needs_chart"] == 1
    assert stops["partial.yaml"]["cells"][0]["table"] == "partial"
    assert [t for t in data["tables"] if t["table"] == "partial"][0]["filled"] == 0
    code, out, err = cli("charts", root, "--with", blank)
    assert "partial.yaml: 100.0% of outcomes stop on partial (1 cell, e.g. partial" in out


def test_serve_applies_the_registered_charts(mine):
    from starlette.testclient import TestClient

    from interpreter.loading.applied import record
    from interpreter.web.app import create_app
    root, chart = mine
    record("mini", chart)
    app = create_app([str(root)], workers=1, time_limit=60)
    with TestClient(app, base_url="http://127.0.0.1") as c:   # the name the workbench answers to
        r = c.post("/api/resolve", json={"ruleset": "mini", "situation": {"shipped": "partial.yaml"}})
        assert r.status_code == 200, r.text
        assert r.json()["result"] == {"value": 9} and r.json()["charts"] == [str(chart)]


def test_a_template_with_fraction_headings_reads_back(cli, tmp_path):
    # the ASLSK Close Combat Table's odds rows print as 1/4, 1/2, 1, 1 1/2 ...; the value is a TEST FIXTURE value
    code, out, err = cli("charts", ROOT / "rulesets/aslsk", "--template", "cct")
    assert code == 0 and "\n      1 1/2: 6   # from the rulebook" in out and "\n      1/4: ~\n" in out
    filled = tmp_path / "test-fixture-cct.yaml"
    filled.write_text("# TEST FIXTURE chart (made-up value)\n" + out.replace("\n      1/4: ~\n", "\n      1/4: 3\n"))
    code, out, err = cli("charts", ROOT / "rulesets/aslsk", "--with", filled, "--table", "cct", "--json")
    assert code == 0, err
    cct = json.loads(out)["tables"][0]
    assert cct["filled"] == 1 and cct["unknown"] == 2


@pytest.mark.parametrize("xdg, home", [(None, "/home/ann"), ("/tmp/xdg", "/home/ann"), ("/tmp/xdg/", None),
                                       (None, "/home/ann/"), ("", "/home/ann"), ("relative", "/home/ann"),
                                       (None, "relative"), ("  ", "/home/ann")])
def test_the_charts_record_is_where_platformdirs_puts_the_config_folder(xdg, home, monkeypatch):
    """Found without importing platformdirs in the plain cases, the same folder it gives in every case."""
    import platformdirs
    from interpreter.loading import applied
    monkeypatch.delenv("UMPIRE_CONFIG_DIR", raising=False)
    for name, value in (("XDG_CONFIG_HOME", xdg), ("HOME", home)):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    try:
        expected = Path(platformdirs.user_config_dir("umpire", appauthor=False))
    except RuntimeError:       # a platformdirs that refuses a HOME it cannot resolve
        return
    assert applied.config_dir() == expected
