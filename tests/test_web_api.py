"""The web workbench's JSON API, through Starlette's test client: every endpoint, good and bad input."""

import json

import pytest
from starlette.testclient import TestClient      # needs httpx2 (the [test] extra)

from conftest import ROOT, RULESETS

from interpreter.web.app import create_app

# one shipped situation of each game (ASLSK's: the README tour's book example, which the tests read closely)
SHIPPED = {r.name: sorted(p.name for p in (r / "situations").glob("*.yaml"))[0] for r in RULESETS}
SHIPPED["aslsk"] = "prep_fire_fg_pbf.yaml"
JSON = {"Content-Type": "application/json"}
BASE = "http://127.0.0.1:8000"      # the name the workbench answers to (guard.py refuses other Host names)


@pytest.fixture(scope="module")
def client():
    app = create_app(RULESETS, workers=2, time_limit=60, max_body=200_000)
    with TestClient(app, base_url=BASE) as c:
        yield c


def error_of(resp, status=400):
    assert resp.status_code == status, resp.text
    return resp.json()["error"]


def test_the_page_and_its_assets_are_served(client):
    page = client.get("/")
    assert page.status_code == 200 and "Umpire" in page.text and "/static/app.js" in page.text
    for asset in ("app.js", "style.css"):
        assert client.get(f"/static/{asset}").status_code == 200
    assert client.get("/static/../app.py").status_code == 404


def test_rulesets_lists_the_open_rulesets_with_their_situations_and_house_rules(client):
    data = client.get("/api/rulesets").json()["rulesets"]
    by_id = {r["id"]: r for r in data}
    assert set(by_id) == set(SHIPPED)
    for rid, situation in SHIPPED.items():
        assert situation in by_id[rid]["situations"]
    assert "field-rally.yaml" in by_id["aslsk"]["house_rules"]


def test_describe_gives_every_table_cell_known_with_its_source_or_unknown(client):
    d = client.post("/api/describe", json={"ruleset": "aslsk"}).json()
    ift = next(t for t in d["tables"] if t["name"] == "ift")
    cells = [c for row in ift["grid"] for c in row]
    assert len(cells) == ift["cells"] and sum(c is not None for c in cells) == ift["known"] > 0
    row10 = ift["rows"]["headings"].index("10")
    col16 = ift["columns"]["headings"].index("16")
    assert ift["grid"][row10][col16]["value"] == "NMC"
    assert "3.2.2" in ift["grid"][row10][col16]["source"]        # the example that reveals it
    fire_attack = next(p for p in d["procedures"] if p["name"] == "fire_attack")
    assert fire_attack["cite"] == "ASLSK 3.2.2" and fire_attack["params"][0]["name"] == "firers"
    drm = next(s for s in d["stacks"] if s["name"] == "ift_drm")
    tem = next(m for m in drm["modifiers"] if m["id"] == "target_tem")
    assert tem["cite"] and tem["value"]
    units = next(c for c in d["catalogues"] if c["name"] == "units")
    assert units["entries"]["german 4-6-7"]["morale"] == 7


def test_describe_with_an_overlay_marks_what_it_changed(client):
    d = client.post("/api/describe", json={"ruleset": "aslsk", "overlays": [{"shipped": "field-rally.yaml"}]}).json()
    rally = next(s for s in d["stacks"] if s["name"] == "rally_drm")
    dm = next(m for m in rally["modifiers"] if m["id"] == "desperation_morale")
    assert dm["value"] == "2" and "field-rally.yaml" in dm["from"]


@pytest.mark.parametrize("body, expected", [
    ({"ruleset": "nope"}, "no ruleset 'nope' is open here"),
    ({"ruleset": "aslsk", "overlays": [{"shipped": "../ruleset.yaml"}]}, "ships no house-rules file"),
    ({"ruleset": "aslsk", "overlays": "field-rally.yaml"}, "'overlays' must be a list, not a string"),
])
def test_describe_refuses_what_is_not_open_here(client, body, expected):
    assert expected in error_of(client.post("/api/describe", json=body))["text"]


def test_schema_is_the_procedures_inputs_schema_with_catalogue_entries_offered(client):
    s = client.post("/api/schema", json={"ruleset": "aslsk", "procedure": "fire_attack"}).json()
    assert s["required"] == ["firers", "targets"]
    counter = s["properties"]["firers"]["items"]["properties"]["counter"]
    assert "german 4-6-7" in counter["examples"]
    err = error_of(client.post("/api/schema", json={"ruleset": "aslsk", "procedure": "fire_atack"}))
    assert "no procedure 'fire_atack'" in err["text"] and "fire_attack" in err["diagnostics"][0]["hint"]


def test_source_gives_shipped_files_only(client):
    src = client.post("/api/source", json={"ruleset": "aslsk", "kind": "situation", "name": SHIPPED["aslsk"]}).json()
    assert src["text"] == (ROOT / "rulesets/aslsk/situations" / SHIPPED["aslsk"]).read_text()
    for name in ("../ruleset.yaml", "/etc/passwd", None):
        error_of(client.post("/api/source", json={"ruleset": "aslsk", "kind": "situation", "name": name}))
    error_of(client.post("/api/source", json={"ruleset": "aslsk", "kind": "table", "name": "x"}))


@pytest.mark.parametrize("rid", sorted(SHIPPED))
def test_resolve_gives_what_the_cli_gives(client, cli, rid):
    code, out, err = cli("resolve", ROOT / "rulesets" / rid / "situations" / SHIPPED[rid], "--json")
    expected = json.loads(out)
    got = client.post("/api/resolve", json={"ruleset": rid, "situation": {"shipped": SHIPPED[rid]}}).json()
    for key in ("status", "result", "procedure"):
        assert got[key] == expected[key]
    if not got["seed"]:
        assert got["dice"] == expected["dice"]
    assert [e["text"] for e in got["trace"]] == [e["text"] for e in expected["trace"]]
    assert any(e["brief"] for e in got["trace"]) and any(e.get("cite") for e in got["trace"])


def test_resolve_replays_a_seed(client):
    text = "ruleset: ..\nprocedure: morale_check\ninputs:\n  unit: {id: G1, counter: german 4-6-7}\n"
    body = {"ruleset": "aslsk", "situation": {"text": text, "name": "mc.yaml"}, "seed": 1234}
    first, again = (client.post("/api/resolve", json=body).json() for _ in range(2))
    assert first["seed"] == 1234 and first["dice"] == again["dice"] and first["result"] == again["result"]


def test_a_pasted_situation_with_an_error_is_reported_at_its_line_and_column(client):
    text = "ruleset: ..\nprocedure: fire_attack\ninputs:\n  firers: [{counter: american 7-4-7}]\n  targetz: []\n"
    err = error_of(client.post("/api/resolve", json={"ruleset": "aslsk", "situation": {"text": text, "name": "mine.yaml"}}))
    d = err["diagnostics"][0]
    assert d["file"] == "mine.yaml" and d["line"] == 5 and d["column"] == 3
    assert "targetz" in d["message"] and err["text"].startswith("mine.yaml:5:3: error:")


@pytest.mark.parametrize("text, expected", [
    ("ruleset: ..\nprocedure: fire_attack\ninputs: [\n", "YAML syntax"),
    ("ruleset: /\nprocedure: x\n", "error"),
    ("ruleset: ../../last-hundred-yards\nprocedure: cohesion_check\ninputs: {}\n", "inputs is missing"),
    ("ruleset: ..\nprocedure: rally\nwith: [../../../tests/fixtures/mini/situations/attack.yaml]\ninputs: {}\n",
     "outside the open rulesets"),
    ("ruleset: ..\nprocedure: x\n!!python/object:os.system {}\n", "error"),
])
def test_bad_situation_text_is_an_input_error_never_executed(client, text, expected):
    err = error_of(client.post("/api/resolve", json={"ruleset": "aslsk", "situation": {"text": text}}))
    assert expected in err["text"] and err["diagnostics"]


def test_a_situation_may_not_name_a_ruleset_that_is_not_open(client, tmp_path):
    text = f"ruleset: {ROOT / 'tests/fixtures/mini'}\nprocedure: attack\ninputs: {{}}\n"
    err = error_of(client.post("/api/resolve", json={"ruleset": "aslsk", "situation": {"text": text}}))
    assert "not open here" in err["text"] and err["diagnostics"][0]["line"] == 1


def test_odds_group_by_a_field_and_set_unknown_cells_apart(client, cli):
    body = {"ruleset": "aslsk", "situation": {"shipped": SHIPPED["aslsk"]}, "by": ["units.G1.state"], "all_dice": True}
    got = client.post("/api/odds", json=body).json()
    code, out, _ = cli("odds", ROOT / "rulesets/aslsk/situations" / SHIPPED["aslsk"], "--all-dice",
                       "--by", "units.G1.state", "--json")
    expected = json.loads(out)
    assert [(o["outcome"], o["fraction"]) for o in got["outcomes"]] == \
        [(o["outcome"], o["fraction"]) for o in expected["outcomes"]]
    stops = [o for o in got["outcomes"] if o["stop"] == "needs chart"]
    assert stops and all(o["outcome"].startswith("needs chart: ift row") for o in stops)
    assert all(o["stop"] is None for o in got["outcomes"] if o["outcome"].startswith("units.G1.state="))


def test_odds_with_a_field_no_outcome_has_says_which_fields_there_are(client):
    err = error_of(client.post("/api/odds", json={"ruleset": "aslsk", "situation": {"shipped": SHIPPED["aslsk"]},
                                                  "by": ["unitz"]}))
    assert "no outcome has the field 'unitz'" in err["text"] and "units" in err["diagnostics"][0]["hint"]
    error_of(client.post("/api/odds", json={"ruleset": "aslsk", "situation": {"shipped": SHIPPED["aslsk"]},
                                            "by": "units"}))


def test_simulate_is_reproducible_from_its_seed_and_bounded(client):
    body = {"ruleset": "aslsk", "situation": {"shipped": "rally_self.yaml"}, "runs": 500, "seed": 7}
    a, b = (client.post("/api/simulate", json=body).json() for _ in range(2))
    assert a["outcomes"] == b["outcomes"] and a["runs"] == 500 and a["seed"] == 7
    assert sum(o["count"] for o in a["outcomes"]) == 500
    assert "between" in error_of(client.post("/api/simulate", json=dict(body, runs=10**9)))["text"]
    assert "whole number" in error_of(client.post("/api/simulate", json=dict(body, runs="many")))["text"]


def test_diff_shows_what_a_house_rule_changes_and_the_shares_before_and_after(client, cli):
    body = {"ruleset": "aslsk", "overlays": [{"shipped": "field-rally.yaml"}],
            "situation": {"shipped": "rally_leader_dm.yaml"}, "by": ["rallied"]}
    got = client.post("/api/diff", json=body).json()
    code, out, _ = cli("diff", ROOT / "rulesets/aslsk", "--with", ROOT / "rulesets/aslsk/house-rules/field-rally.yaml",
                       "--situation", ROOT / "rulesets/aslsk/situations/rally_leader_dm.yaml", "--by", "rallied",
                       "--json")
    expected = json.loads(out)
    assert [(o["outcome"], o["before"], o["after"]) for o in got["outcomes"]] == \
        [(o["outcome"], o["before"], o["after"]) for o in expected["outcomes"]]
    assert [c["name"] for c in got["changes"]["stacks"]] == ["rally_drm"]
    assert "diff compares" in error_of(client.post("/api/diff", json=dict(body, overlays=[])))["text"]


def test_a_users_overlay_file_is_applied_and_its_errors_are_positioned_in_it(client):
    good = ("overlay: mine\nextends: aslsk\nkind: house rule\nchanges:\n"
            "  - stack: rally_drm\n    modify: desperation_morale\n    set: {value: 3}\n")
    body = {"ruleset": "aslsk", "overlays": [{"text": good, "name": "mine.yaml"}],
            "situation": {"shipped": "rally_leader_dm.yaml"}}
    got = client.post("/api/diff", json=body).json()
    assert "mine.yaml" in got["changes"]["stacks"][0]["from"]
    bad = good.replace("desperation_morale", "desperate_morale")
    err = error_of(client.post("/api/diff", json=dict(body, overlays=[{"text": bad, "name": "mine.yaml"}])))
    d = err["diagnostics"][0]
    assert d["file"] == "mine.yaml" and d["line"] == 6 and "desperation_morale" in d["hint"]


def test_charts_writes_the_filled_cells_as_an_overlay_and_refuses_a_contradiction(client):
    d = client.post("/api/describe", json={"ruleset": "aslsk"}).json()
    ift = next(t for t in d["tables"] if t["name"] == "ift")
    row11, col16 = ift["rows"]["headings"].index("11"), ift["columns"]["headings"].index("16")
    assert ift["grid"][row11][col16] is None
    got = client.post("/api/charts", json={"ruleset": "aslsk", "cells": [
        {"table": "ift", "row": row11, "column": col16, "value": "PTC"}]}).json()
    assert got["filled"] == 1 and '  - table: ift\n    grid:\n      "11": [~, ~, ~, ~, ~, ~, "PTC", ~, ~]\n' in got["text"]
    used = client.post("/api/resolve", json={"ruleset": "aslsk", "situation": {"shipped": SHIPPED["aslsk"]},
                                             "overlays": [{"text": got["text"], "name": got["name"]}]}).json()
    assert used["status"] == "ok"
    row10 = ift["rows"]["headings"].index("10")
    err = error_of(client.post("/api/charts", json={"ruleset": "aslsk", "cells": [
        {"table": "ift", "row": row10, "column": col16, "value": "PTC"}]}))
    assert "your chart says PTC, but the rulebook reveals NMC" in err["text"] and "3.2.2" in err["text"]
    err = error_of(client.post("/api/charts", json={"ruleset": "aslsk", "cells": [
        {"table": "ift", "row": row11, "column": col16, "value": "XYZ"}]}))
    assert "matches none of table 'ift''s result codes" in err["text"]
    error_of(client.post("/api/charts", json={"ruleset": "aslsk", "cells": [{"table": "nope", "row": 0, "value": "1"}]}))


def test_the_chart_editor_checks_each_cell_and_builds_a_grid_overlay(client):
    d = client.post("/api/describe", json={"ruleset": "aslsk"}).json()
    ift = next(t for t in d["tables"] if t["name"] == "ift")
    rows, cols = ift["rows"]["headings"], ift["columns"]["headings"]
    values = [[None] * len(cols) for _ in rows]
    values[rows.index("11")][cols.index("16")] = "PCT"          # a mistyped code
    values[rows.index("10")][cols.index("16")] = "PTC"          # the rulebook reveals NMC (3.2.2)
    body = {"ruleset": "aslsk", "tables": [{"table": "ift", "rows": rows, "columns": cols, "values": values}]}
    got = client.post("/api/chart_check", json=body).json()
    assert not got["ok"]
    where = {(p["row"], p["column"]): p for p in got["problems"]}
    typo = where[(rows.index("11"), cols.index("16"))]
    assert "matches none of the table's result codes" in typo["message"] and "did you mean 'PTC'" in typo["hint"]
    clash = where[(rows.index("10"), cols.index("16"))]
    assert "your chart says PTC, but the rulebook reveals NMC" in clash["message"] and "3.2.2" in clash["message"]
    values[rows.index("11")][cols.index("16")] = "PTC"
    values[rows.index("10")][cols.index("16")] = None
    got = client.post("/api/chart_check", json=body).json()
    assert got["ok"] and got["counts"]["ift"]["filled"] == 1 and got["counts"]["ift"]["unknown"] == 217
    assert '"11": [~, ~, ~, ~, ~, ~, "PTC", ~, ~]' in got["text"]
    # an open axis: a new To Hit range row typed on the card (TEST FIXTURE value), and a value under a heading
    # the editor left empty
    th = next(t for t in d["tables"] if t["name"] == "to_hit")
    rows = th["rows"]["headings"] + ["8", None]
    values = [[None] * 5 for _ in rows]
    values[-2][0] = "5"
    values[-1][0] = "4"
    got = client.post("/api/chart_check", json={"ruleset": "aslsk", "tables": [
        {"table": "to_hit", "rows": rows, "columns": th["columns"]["headings"], "values": values}]}).json()
    assert [(p["row"], p["column"]) for p in got["problems"]] == [(len(rows) - 1, 0)]
    assert "no heading" in got["problems"][0]["message"]
    values[-1][0] = None
    got = client.post("/api/chart_check", json={"ruleset": "aslsk", "tables": [
        {"table": "to_hit", "rows": rows, "columns": th["columns"]["headings"], "values": values}]}).json()
    assert got["ok"] and got["counts"]["to_hit"]["cells"] == 45, got
    assert "no table 'nope'" in error_of(client.post("/api/chart_check", json={"ruleset": "aslsk", "tables": [
        {"table": "nope"}]}))["text"]


def test_bad_requests_are_refused_with_a_message(client):
    assert "not JSON" in error_of(client.post("/api/resolve", content=b"{nope", headers=JSON))["text"]
    assert "JSON object" in error_of(client.post("/api/resolve", json=[1, 2]))["text"]
    assert "say which situation" in error_of(client.post("/api/resolve", json={"ruleset": "aslsk"}))["text"]
    assert client.get("/api/resolve").status_code == 405
    assert client.post("/api/nothing", json={}).status_code == 404


def test_a_body_over_the_size_limit_is_refused_before_it_is_read(client):
    big = json.dumps({"ruleset": "aslsk", "situation": {"text": "x" * 300_000}})
    assert "larger than the limit" in error_of(client.post("/api/resolve", content=big, headers=JSON), 413)["text"]

    def chunks():                      # no Content-Length: counted as it arrives
        for _ in range(30):
            yield b"x" * 10_000
    assert client.post("/api/resolve", content=chunks(), headers=JSON).status_code == 413


SLOW = {
    "ruleset.yaml": "ruleset: slow\ntitle: Test fixture (made-up, slow on purpose)\ncite_prefix: S\n"
                    "dice:\n  d6: {dice: [die], sides: 6}\nlimits: {steps: 100000000, loop: 1000}\n",
    "procedures/slow.ump": (
        "procedure spin() cite \"1\":\n"
        "    let xs = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n"
        "    let t = 0\n"
        "    for each a in xs:\n        for each b in xs:\n            for each c in xs:\n"
        "                for each d in xs:\n                    for each e in xs:\n"
        "                        for each f in xs:\n                            set t = t + 1\n"
        "    return t\n\n"
        "procedure quick() cite \"2\":\n    roll r = d6\n    return r.final\n"),
    "situations/spin.yaml": "ruleset: ..\nprocedure: spin\n",
    "situations/quick.yaml": "ruleset: ..\nprocedure: quick\n",
}


def test_a_request_past_the_time_limit_is_stopped_and_the_server_keeps_answering(tmp_path):
    root = tmp_path / "slow"
    for name, text in SLOW.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    app = create_app([root], workers=1, time_limit=1.0)
    with TestClient(app, base_url=BASE) as c:
        c.post("/api/resolve", json={"ruleset": "slow", "situation": {"shipped": "quick.yaml"}})
        worker = app.state.pool.workers[0].process.pid
        slow = c.post("/api/resolve", json={"ruleset": "slow", "situation": {"shipped": "spin.yaml"}})
        text = error_of(slow, 504)["text"]
        assert "took longer than the time limit (1 s)" in text and "--time-limit" in text
        quick = c.post("/api/odds", json={"ruleset": "slow", "situation": {"shipped": "quick.yaml"}})
        assert quick.status_code == 200 and len(quick.json()["outcomes"]) == 6
        # the job was stopped inside its worker, which stayed warm: the same process answered
        assert app.state.pool.workers[0].process.pid == worker


def test_serving_beyond_loopback_needs_an_explicit_flag(cli):
    code, out, err = cli("serve", ROOT / "rulesets/aslsk", "--host", "0.0.0.0")
    assert code == 2 and "--allow-remote" in err
    code, out, err = cli("serve", ROOT / "rulesets/aslsk", "--port", "0")
    assert code == 2 and "--port" in err
    code, out, err = cli("serve", ROOT / "tests/fixtures/nothing-here")
    assert code == 2 and "error" in err


def test_serving_on_a_port_in_use_says_so(cli):
    import socket
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        code, out, err = cli("serve", ROOT / "rulesets/aslsk", "--port", busy.getsockname()[1])
    assert code == 2 and "cannot listen on 127.0.0.1 port" in err and "--port" in err
