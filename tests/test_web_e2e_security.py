"""In a real headless Chromium: another site's page and a DNS-rebinding name cannot use the workbench,
and the workbench's own page works under its strict Content-Security-Policy (interpreter/web/guard.py);
and what a player meets in the page: refused overlays, bad run counts, the catalogue in the Build form.

Skipped, with how to install it, where Chromium is missing (as tests/test_web_e2e.py).
"""

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

import pytest

from test_web_e2e import CHROMIUM, MISSING, browser, expect, open_ruleset, page, server  # noqa: F401

pytestmark = pytest.mark.skipif(bool(MISSING), reason="browser test: " + "; ".join(MISSING))

EVIL = b"<!doctype html><title>another site</title><p>nothing to see</p>"


@pytest.fixture(scope="module")
def other_site():
    """A page on another origin (another port of 127.0.0.1), as any site the user visits could be."""
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            self.wfile.write(EVIL)

        def log_message(self, *args):
            pass
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()


def test_another_sites_page_cannot_start_work(page, server, other_site):
    page.goto(other_site)
    api = server + "api/odds"
    body = '{"ruleset": "aslsk", "situation": {"shipped": "prep_fire_fg_pbf.yaml"}}'
    # a "simple" request (no preflight), which a page may send anywhere: the server refuses it unread.
    # The browser hides a cross-origin answer from the page, so the status is read off the wire (CDP).
    cdp = page.context.new_cdp_session(page)
    cdp.send("Network.enable")
    ours, status = set(), {}
    cdp.on("Network.requestWillBeSent", lambda e: ours.add(e["requestId"]) if e["request"]["url"] == api else None)
    cdp.on("Network.responseReceivedExtraInfo", lambda e: status.update({e["requestId"]: e.get("statusCode")}))
    page.evaluate("([url, body]) => fetch(url, {method: 'POST', mode: 'no-cors', body, "
                  "headers: {'Content-Type': 'text/plain'}}).catch(() => null)", [api, body])
    page.wait_for_timeout(500)
    assert [status.get(r) for r in ours] == [403]
    # a JSON request needs the server's consent (a CORS preflight), which it never gives
    failed = page.evaluate("([url, body]) => fetch(url, {method: 'POST', body, headers: "
                           "{'Content-Type': 'application/json'}}).then(() => 'answered', e => 'refused')",
                           [api, body])
    assert failed == "refused"


def test_a_rebinding_name_gets_no_answer(browser, server):
    port = urlsplit(server).port
    # a browser whose resolver maps attacker.example to this machine, as a rebinding DNS server would
    b = browser.browser_type.launch(executable_path=CHROMIUM, args=[
        "--no-sandbox", "--disable-dev-shm-usage", "--host-resolver-rules=MAP attacker.example 127.0.0.1"])
    try:
        pg = b.new_page()
        resp = pg.goto(f"http://attacker.example:{port}/")
        assert resp.status == 421 and "answers only to" in pg.content()
        resp = pg.goto(f"http://attacker.example:{port}/api/rulesets")
        assert resp.status == 421 and "aslsk" not in pg.content()
    finally:
        b.close()


def test_the_workbench_page_runs_under_its_policy(page):
    blocked = []
    page.on("console", lambda m: blocked.append(m.text) if "Content Security Policy" in m.text else None)
    open_ruleset(page, "aslsk")
    page.select_option("#situation", "prep_fire_fg_pbf.yaml")
    page.fill("#by", "units.G1.state")
    page.check("#all-dice")
    page.click("#btn-odds")
    chart = page.get_by_test_id("odds-chart")
    expect(chart).to_be_visible()
    width = chart.locator(".bar-row .fill").first.evaluate("e => e.style.width")
    assert width.endswith("%") and width != "0%"        # bar widths set through the DOM, not refused
    assert not blocked, blocked


def test_a_refused_overlay_is_listed_as_not_applied(page, tmp_path):
    open_ruleset(page, "aslsk")
    page.click(".tabs button[data-tab=house]")
    bad = tmp_path / "broken-house-rule.yaml"
    bad.write_text("ruleset: aslsk\nchange:\n  - stack: no_such_stack\n")
    page.set_input_files("#upload-overlay", str(bad))
    expect(page.get_by_test_id("refused-overlays")).to_contain_text("broken-house-rule.yaml")
    expect(page.locator("#diff-error")).to_be_visible()
    page.click(".tabs button[data-tab=run]")
    expect(page.locator("#applied-overlays")).to_contain_text("none")
    expect(page.locator("#applied-overlays")).to_contain_text("not applied")


def test_monte_carlo_with_a_negative_run_count_is_refused(page):
    open_ruleset(page, "aslsk")
    page.select_option("#situation", "rally_self.yaml")
    page.fill("#runs", "-5")
    page.click("#btn-simulate")
    expect(page.locator("#run-error")).to_contain_text("runs must be a whole number of at least 1")
    expect(page.locator("#out-odds")).to_be_hidden()


def test_the_build_form_offers_the_catalogue_with_each_counters_values(page):
    open_ruleset(page, "aslsk")
    page.click("#source-tabs button[data-source=form]")
    page.select_option("#form-procedure", "morale_check")
    counter = page.get_by_label("counter", exact=True)
    options = page.locator("datalist option")
    expect(options.first).to_be_attached()
    offered = dict(options.evaluate_all("os => os.map(o => [o.value, o.label])"))
    assert "morale 7" in offered["german 4-6-7"]           # each entry offered with its values
    counter.fill("german 4-6-7")
    values = page.get_by_test_id("entry-values-counter")
    expect(values).to_contain_text("morale 7")           # the counter's printed values, from the catalogue
    expect(values).to_contain_text("fp 4")
    counter.fill("german 4-6-6")
    expect(values).to_contain_text("not an entry of the catalogue")
    expect(values).to_contain_text("german 4-6-7")       # did you mean
