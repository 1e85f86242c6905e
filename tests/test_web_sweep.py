"""The workbench's sweep page (/sweep): its API through Starlette's test client, and the page in Chromium."""

import re
import shutil
import socket
import subprocess
import sys

import pytest
from starlette.testclient import TestClient      # needs httpx2 (the [test] extra)

from conftest import ROOT

from interpreter.web.app import create_app

ASLSK = ROOT / "rulesets" / "aslsk"
SMALL = (ASLSK / "sweeps" / "field-rally-8-1.yaml").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def client():
    app = create_app([ASLSK], workers=1, time_limit=120, max_body=200_000)
    with TestClient(app, base_url="http://127.0.0.1") as c:     # the workbench answers only to loopback names
        yield c


def test_the_page_lists_the_shipped_specs(client):
    page = client.get("/sweep")
    assert page.status_code == 200 and "/static/sweep.js" in page.text
    assert client.get("/static/sweep.js").status_code == 200
    specs = client.post("/api/sweep_specs", json={}).json()
    assert {"field-rally.yaml", "field-rally-8-1.yaml"} <= set(specs["specs"]["aslsk"])


def test_a_small_sweep_runs_with_rows_for_its_heat_map(client):
    data = client.post("/api/sweep", json={"ruleset": "aslsk", "text": SMALL, "name": "field-rally-8-1.yaml"}).json()
    assert data["cells"] == 120 and data["tasks"] == 240 and data["statuses"] == {"ok": 240}
    assert data["heatmap"]["outcome"] == "rallied=true" and data["csv"].startswith("cell,overlay,terrain")
    brush_dm = [r for r in data["rows"] if r["axes"] == {"terrain": "brush", "broken morale": 7, "dm": "true"}]
    assert [r["overlay"] for r in brush_dm] == ["none", "field-rally"]
    assert brush_dm[1]["change"]["rallied=true"] > 0.3          # cover and a smaller DM penalty
    again = client.post("/api/sweep", json={"ruleset": "aslsk", "text": SMALL, "name": "field-rally-8-1.yaml"}).json()
    assert again["reused"] == 240 and again["rows"] == data["rows"]


@pytest.mark.parametrize("change, expected", [
    (("overlays: [none, ../house-rules/field-rally.yaml]", "overlays: [none, ../../../pyproject.toml]"),
     "outside the open rulesets"),
    (("ruleset: ..", "situation: /etc/hostname"), "outside the open rulesets"),
    (("  - name: dm", "  - nmae: dm"), "unknown key 'nmae'"),
])
def test_a_bad_spec_is_refused_with_its_position(client, change, expected):
    text = SMALL.replace(*change)
    if "situation:" in change[1]:
        text = text.replace("procedure: rally\n", "").split("inputs:")[0] + "axes:" + text.split("axes:")[1]
    resp = client.post("/api/sweep", json={"ruleset": "aslsk", "text": text, "name": "mine.yaml"})
    assert resp.status_code == 400, resp.text
    error = resp.json()["error"]
    assert expected in error["text"] and error["text"].startswith("mine.yaml:"), error["text"]


def test_a_sweep_too_large_for_the_workbench_is_refused(client):
    text = SMALL.replace("range: {from: 5, to: 9}", "range: {from: 1, to: 30}")
    error = client.post("/api/sweep", json={"ruleset": "aslsk", "text": text}).json()["error"]
    assert "the workbench runs at most 1,000" in error["text"]


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
try:
    from playwright.sync_api import expect, sync_playwright
except ImportError:      # pragma: no cover - the [test] extra installs it
    sync_playwright = None


@pytest.mark.skipif(CHROMIUM is None or sync_playwright is None,
                    reason="browser test: needs Chromium on PATH (sudo apt-get install -y chromium) and playwright")
def test_the_page_runs_a_sweep_and_draws_its_heat_maps(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "interpreter", "serve", str(ASLSK), "--port", str(port),
                             "--time-limit", "120"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert "http://127.0.0.1:" in line, proc.stderr.read()
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-dev-shm-usage"])
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            errors = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.set_default_timeout(120_000)
            page.goto(line.split()[2] + "sweep")
            # the shipped spec loaded into the editor (a locator wait: the page's CSP refuses the string
            # predicates wait_for_function evaluates, whenever it has to poll)
            expect(page.locator("#spec-text")).to_have_value(re.compile("field-rally"), timeout=120_000)
            page.evaluate("t => { const e = document.getElementById('spec-text'); e.value = e.value.replace(t, "
                          "'range: {from: 6, to: 7}') }", "range: {from: 5, to: 9}")   # 48 cells: quicker
            page.click("#run")
            page.wait_for_selector("table.sweep-map")
            captions = page.locator("table.sweep-map caption").all_inner_texts()
            assert captions == ["none: P(rallied=true)", "field-rally: P(rallied=true)", "change: field-rally − none"]
            assert page.locator("table.sweep-map").first.locator("td").count() == 12 * 2
            page.select_option("#fixed select[data-axis='dm']", "true")      # the other axis's value is chosen
            assert "48 cells" in page.inner_text("#summary")
            page.screenshot(path=str(tmp_path / "sweep-page.png"), full_page=True)
            browser.close()
            assert not errors, errors
    finally:
        proc.terminate()
        proc.wait(10)
