"""Issue 23's "done when": with TEST FIXTURE charts typed as grids (made-up values, labelled as such in each
file under tests/fixtures/charts/, never in rulesets/), every shipped situation of each game resolves
without a needs-chart stop on a table the fixture fills, every roll enumerated."""

import pytest
from conftest import ROOT

from interpreter.api import load_ruleset
from interpreter.tools.charts import situation_stops, table_counts

FIXTURES = ROOT / "tests" / "fixtures" / "charts"
FILLED = {
    "aslsk": ["ift", "to_hit", "cct"],
    "panzer-grenadier": ["direct_fire_table", "bombardment_table", "assault_table"],
    "last-hundred-yards": ["sa_range_band", "sa_drm"],
    "valor-and-victory": ["armor_elimination", "ap_combat"],
}


@pytest.mark.parametrize("rid", sorted(FILLED))
def test_fixture_charts_typed_as_grids_leave_no_needs_chart_stop_on_the_tables_they_fill(rid):
    chart = FIXTURES / f"test-fixture-{rid}.csv"
    assert chart.read_text(encoding="utf-8").startswith("# TEST FIXTURE chart: made-up values")
    book = load_ruleset(ROOT / "rulesets" / rid)
    mine = load_ruleset(ROOT / "rulesets" / rid, (str(chart),))
    for name in FILLED[rid]:
        assert table_counts(book.tables[name])["unknown"] > 0 or book.tables[name].open_axes
        counts = table_counts(mine.tables[name])
        assert counts["unknown"] == 0 and counts["filled"] > 0, (name, counts)
    stops = situation_stops(mine, (str(chart),))
    assert len(stops) == len(list((ROOT / "rulesets" / rid / "situations").glob("*.y*ml")))
    assert not [s for s in stops if "error" in s]
    left = [(s["situation"], c["cell"]) for s in stops for c in s["cells"] if c["table"] in FILLED[rid]]
    assert left == []
