"""``umpire sweep``: a grid of situations under several rule sets (issue 30).

The grid here is a small slice of rulesets/aslsk/sweeps/field-rally.yaml: rallying reads no chart, so every
answer comes from the rulebook and the shipped house rule field-rally (written for this project).
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from interpreter.errors import InputError

ROOT = Path(__file__).resolve().parent.parent
ASLSK = ROOT / "rulesets" / "aslsk"
FIELD_RALLY = ASLSK / "house-rules" / "field-rally.yaml"

SPEC = f"""\
sweep: small-rally
ruleset: {ASLSK}
procedure: rally
inputs:
  unit: {{id: B, counter: russian 4-4-7, broken: true, dm: false, terrain: open ground}}
  location: []
axes:
  - name: terrain
    path: inputs.unit.terrain
    catalogue: terrain
    entries: [open ground, orchard, woods]
  - name: dm
    path: inputs.unit.dm
    values: [false, true]
  - name: leader
    path: inputs.location
    values: [[], [{{id: L, counter: russian 8-1}}]]
    labels: [none, 8-1]
overlays: [none, {FIELD_RALLY}]
question:
  odds: {{by: [rallied]}}
heatmap: {{outcome: rallied=true, x: terrain, y: dm}}
"""


def write(tmp_path: Path, text: str = SPEC, name: str = "spec.yaml") -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def rows_of(spec_path, jobs=1, dask=None):
    from interpreter.sweep import output
    from interpreter.sweep.run import run_sweep
    from interpreter.sweep.spec import load_spec
    spec = load_spec(spec_path)
    rows, reused, _ = run_sweep(spec, jobs, dask, use_store=False)
    return spec, rows, output.as_csv(spec, rows), json.dumps(output.as_json(spec, rows), sort_keys=True)


def test_rows_equal_the_single_diff_of_each_cell(tmp_path):
    from interpreter.tools.reports import overlay_diff
    spec, rows, _, _ = rows_of(write(tmp_path))
    assert len(rows) == 3 * 2 * 2 * 2
    by_cell = {}
    for r in rows:
        by_cell.setdefault(r["cell"], {})[r["overlay"]] = r
    checked = 0
    for cell, pair in by_cell.items():
        base, house = pair["none"], pair["field-rally"]
        axes = base["axes"]
        leader = "[]" if axes["leader"] == "none" else "[{id: L, counter: russian 8-1}]"
        situation = write(tmp_path, f"ruleset: {ASLSK}\nprocedure: rally\ninputs:\n"
                                    f"  unit: {{id: B, counter: russian 4-4-7, broken: true, dm: {axes['dm']}, "
                                    f"terrain: {axes['terrain']}}}\n  location: {leader}\n", f"cell{cell}.yaml")
        if axes["leader"] == "none":          # no leader and no self-rally: refused, a row with its reason
            assert base["status"] == house["status"] == "refused"
            assert "does not self-rally" in base["reason"]
            continue
        diff = overlay_diff(ASLSK, (str(FIELD_RALLY),), situation, ["rallied"])
        before = {o["outcome"]: Fraction(o["before"]) for o in diff["outcomes"]}
        after = {o["outcome"]: Fraction(o["after"]) for o in diff["outcomes"]}
        assert {k: Fraction(v) for k, v in base["fractions"].items()} == {k: v for k, v in before.items() if v}
        assert {k: Fraction(v) for k, v in house["fractions"].items()} == {k: v for k, v in after.items() if v}
        assert house["change"]["rallied=true"] == pytest.approx(float(after["rallied=true"] - before["rallied=true"]))
        checked += 1
    assert checked == 6
    # the house rule makes an orchard rally cover and halves the DM penalty: more rallies there, none fewer
    orchard_dm = [r for r in rows if r["axes"] == {"terrain": "orchard", "dm": "true", "leader": "8-1"}]
    assert orchard_dm[1]["change"]["rallied=true"] > 0


def test_rows_are_the_same_for_one_process_two_processes_and_reruns(tmp_path):
    spec_path = write(tmp_path)
    _, _, csv1, json1 = rows_of(spec_path, jobs=1)
    _, _, csv2, json2 = rows_of(spec_path, jobs=2)
    _, _, csv3, json3 = rows_of(spec_path, jobs=2)
    assert csv1 == csv2 == csv3 and json1 == json2 == json3
    assert csv1.splitlines()[0].startswith("cell,overlay,terrain,dm,leader,status,reason,needs_chart")


def test_rows_are_the_same_on_a_dask_cluster(tmp_path):
    distributed = pytest.importorskip("distributed", reason="Dask's distributed scheduler is not installed "
                                                            "(pip install -e '.[sweep]'): --dask is not tested")
    spec_path = write(tmp_path)
    _, _, csv1, json1 = rows_of(spec_path, jobs=1)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as c:
        _, _, csv_dask, json_dask = rows_of(spec_path, dask=c.scheduler_address)
    assert csv_dask == csv1 and json_dask == json1


def test_a_simulated_sweep_gives_the_same_counts_for_any_number_of_processes(tmp_path):
    text = SPEC.replace("odds: {by: [rallied]}", "simulate: {by: [rallied], runs: 300, seed: 5}")
    spec_path = write(tmp_path, text)
    _, rows1, csv1, _ = rows_of(spec_path, jobs=1)
    _, _, csv2, _ = rows_of(spec_path, jobs=2)
    assert csv1 == csv2
    ok = [r for r in rows1 if r["status"] == "ok"]
    assert ok and all("fractions" not in r for r in ok)


def test_an_interrupted_sweep_resumes_from_the_cells_it_finished(tmp_path, monkeypatch, cli):
    monkeypatch.setenv("UMPIRE_CACHE_DIR", str(tmp_path / "cache"))
    spec_path = write(tmp_path)
    from interpreter.sweep import cells
    real, calls = cells.run_cell, []

    def stopped_after_five(task):
        if len(calls) == 5:
            raise KeyboardInterrupt
        calls.append(task["key"])
        return real(task)
    monkeypatch.setattr(cells, "run_cell", stopped_after_five)
    code, _, err = cli("sweep", spec_path, "-o", tmp_path / "first.csv")
    assert code == 130 and "finished cells are kept" in err
    assert not (tmp_path / "first.csv").exists()
    monkeypatch.setattr(cells, "run_cell", real)
    code, _, err = cli("sweep", spec_path, "-o", tmp_path / "resumed.csv")
    assert code == 0 and "5 read back from the results cache" in err
    code, _, err = cli("sweep", spec_path, "--no-cache", "-o", tmp_path / "fresh.csv")
    assert code == 0 and "0 read back" in err
    assert (tmp_path / "resumed.csv").read_text() == (tmp_path / "fresh.csv").read_text()


def test_the_cell_count_is_shown_before_work_and_capped(tmp_path, cli):
    spec_path = write(tmp_path)
    code, out, err = cli("sweep", spec_path, "--no-cache", "--max-cells", "23")
    assert code == 2 and "12 cells x 2 overlay sets = 24 tasks, more than the cap of 23" in err
    assert "--max-cells" in err and not out
    code, out, err = cli("sweep", spec_path, "--no-cache", "--max-cells", "24")
    assert code == 0 and err.startswith("sweep small-rally: 12 cells x 2 overlay sets (none, field-rally) = 24 tasks")
    assert len(out.splitlines()) == 25


@pytest.mark.parametrize("change, line, expected", [
    (("  - name: dm", "  - nme: dm"), 12, "unknown key 'nme'"),
    (("entries: [open ground, orchard, woods]", "entries: [open ground, orchard, wods]"), 11,
     "'wods' is not an entry of catalogue 'terrain'"),
    (("path: inputs.unit.terrain", "path: inputs.unit.terain"), 9, "unknown key 'terain'"),
    (("catalogue: terrain", "catalogue: terain"), 10, "has no catalogue 'terain'"),
    (("y: dm}", "y: dms}"), 22, "heatmap y 'dms' is not an axis"),
    (("values: [false, true]", "values: [false, maybe]"), 14, "axis 'dm' value 'maybe'"),
    (("by: [rallied]", "by: [ralied]"), 21, "no outcome has the field 'ralied'"),     # found by the first cell
])
def test_a_spec_typo_gets_a_positioned_error_with_a_suggestion(tmp_path, cli, change, line, expected):
    spec_path = write(tmp_path, SPEC.replace(*change))
    code, out, err = cli("sweep", spec_path)
    assert code == 2, err
    found = [e for e in err.splitlines() if expected in e]
    assert found and found[0].startswith(f"{spec_path}:{line}:"), err
    assert "Traceback" not in err
    if "maybe" not in expected:
        assert "did you mean" in err


def test_the_heat_map_is_drawn(tmp_path, cli):
    pytest.importorskip("matplotlib", reason="matplotlib is not installed (pip install -e '.[plot]')")
    from matplotlib.image import imread
    spec_path = write(tmp_path)
    png = tmp_path / "heat.png"
    code, _, err = cli("sweep", spec_path, "--no-cache", "-o", png, "-o", tmp_path / "rows.json")
    assert code == 0, err
    image = imread(png)
    assert image.shape[0] > 200 and image.shape[1] > 400
    # a diverging map: the change panel has blue (the house rule makes rallies more likely)
    blue = (image[..., 2] > image[..., 0] + 0.3).sum()
    assert blue > 100
    data = json.loads((tmp_path / "rows.json").read_text())
    assert data["cells"] == 12 and data["tasks"] == 24 and data["statuses"] == {"ok": 12, "refused": 12}


def test_a_base_situation_file_can_be_swept(tmp_path):
    from interpreter.sweep.spec import load_spec
    text = (f"situation: {ASLSK / 'situations' / 'rally_leader_dm.yaml'}\n"
            "axes:\n  - {name: terrain, path: inputs.unit.terrain, values: [building, woods]}\n"
            "question: {odds: {by: [rallied]}}\n")
    spec = load_spec(write(tmp_path, text))
    assert len(spec.cells) == 2 and spec.base["procedure"] == "rally"
    with pytest.raises(InputError, match="'procedure' goes with a base situation"):
        load_spec(write(tmp_path, text + "procedure: rally\n"))
