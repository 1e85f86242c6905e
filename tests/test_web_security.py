"""The workbench refuses what a hostile web page or request could make it do (interpreter/web/guard.py, jobs.py).

Through Starlette's test client, named as the browser would name the server (127.0.0.1:8000).
"""

import asyncio
import json

import pytest
from starlette.testclient import TestClient      # needs httpx2 (the [test] extra)

from conftest import ROOT

from interpreter.web import jobs
from interpreter.web.app import create_app
from interpreter.web.guard import CSP
from interpreter.web.work import FairGate

ASLSK = ROOT / "rulesets/aslsk"
BASE = "http://127.0.0.1:8000"
TOUR = {"ruleset": "aslsk", "situation": {"shipped": "prep_fire_fg_pbf.yaml"}}


@pytest.fixture(scope="module")
def app():
    return create_app([ASLSK], workers=2, time_limit=60, port=8000)


@pytest.fixture(scope="module")
def client(app):
    with TestClient(app, base_url=BASE) as c:
        yield c


def refused(resp, status):
    assert resp.status_code == status, resp.text
    return resp.json()["error"]["text"]


def test_a_rebinding_host_name_is_refused_and_loopback_names_answer(client):
    text = refused(client.get("/", headers={"Host": "attacker.example:8000"}), 421)
    assert "attacker.example" in text and "127.0.0.1" in text
    refused(client.post("/api/resolve", json=TOUR, headers={"Host": "attacker.example:8000"}), 421)
    refused(client.get("/api/rulesets", headers={"Host": "127.0.0.1:9999"}), 421)     # another port
    for name in ("127.0.0.1:8000", "localhost:8000", "[::1]:8000"):
        assert client.get("/api/rulesets", headers={"Host": name}).status_code == 200, name


def test_a_cross_site_post_is_refused_and_the_page_own_origin_is_not(client):
    text = refused(client.post("/api/resolve", json=TOUR, headers={"Origin": "http://evil.example"}), 403)
    assert "evil.example" in text
    refused(client.post("/api/resolve", json=TOUR, headers={"Origin": "null"}), 403)
    refused(client.post("/api/resolve", json=TOUR, headers={"Origin": "http://localhost:8000"}), 403)  # not this name
    refused(client.post("/api/resolve", json=TOUR, headers={"Sec-Fetch-Site": "cross-site"}), 403)
    assert client.post("/api/resolve", json=TOUR, headers={"Origin": BASE}).json()["status"] == "ok"
    assert client.post("/api/resolve", json=TOUR).json()["status"] == "ok"        # a tool like curl: no Origin


@pytest.mark.parametrize("kind", ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data", None])
def test_only_json_bodies_are_executed(client, kind):
    headers = {"Content-Type": kind} if kind else {}
    text = refused(client.post("/api/odds", content=json.dumps(TOUR).encode(), headers=headers), 415)
    assert "application/json" in text


def test_every_answer_carries_a_strict_policy_and_no_cors(client):
    for resp in (client.get("/"), client.get("/static/app.js"), client.post("/api/resolve", json=TOUR),
                 client.post("/api/resolve", json=TOUR, headers={"Origin": "http://evil.example"})):
        assert resp.headers["content-security-policy"] == CSP
        assert resp.headers["x-content-type-options"] == "nosniff"
        assert resp.headers["x-frame-options"] == "DENY"
        assert not any(h.lower().startswith("access-control-") for h in resp.headers)
    assert "script-src 'self'" in CSP and "'unsafe-inline'" not in CSP and "frame-ancestors 'none'" in CSP


def test_the_token_is_needed_when_one_is_set():
    app = create_app([ASLSK], workers=1, time_limit=60, port=8000, token="s3cret-token")
    with TestClient(app, base_url=BASE) as c:
        assert "token" in refused(c.get("/api/rulesets"), 401)
        refused(c.get("/?token=wrong"), 401)
        opened = c.get("/?token=s3cret-token", follow_redirects=False)
        assert opened.status_code == 303 and "umpire_token=s3cret-token" in opened.headers["set-cookie"]
        assert "SameSite=Strict" in opened.headers["set-cookie"] and "HttpOnly" in opened.headers["set-cookie"]
        c.cookies.set("umpire_token", "s3cret-token")
        assert c.get("/api/rulesets").status_code == 200
        c.cookies.clear()
        assert c.get("/api/rulesets", headers={"X-Umpire-Token": "s3cret-token"}).status_code == 200


@pytest.mark.parametrize("body, says", [
    ({"ruleset": ["aslsk"]}, "'ruleset' must be a string, not a list"),
    ({"ruleset": "aslsk", "situation": {"shipped": ["prep_fire_fg_pbf.yaml"]}}, "'shipped' must be a string"),
    ({"ruleset": "aslsk", "situation": {"text": "x", "name": ["a"]}}, "'name' must be a string"),
    ({"ruleset": "aslsk", "situation": "prep_fire_fg_pbf.yaml"}, "'situation' must be an object"),
    ({"ruleset": "aslsk", "situation": {"shipped": "prep_fire_fg_pbf.yaml"}, "seed": [1]}, "'seed' must be"),
    ({"ruleset": "aslsk", "situation": {"shipped": "prep_fire_fg_pbf.yaml"}, "all_dice": "yes"}, "'all_dice'"),
    ({"ruleset": {"id": "aslsk"}}, "'ruleset' must be a string, not an object"),
])
def test_a_wrong_typed_field_is_an_input_error_and_the_worker_lives_on(client, body, says):
    assert says in refused(client.post("/api/odds", json=body), 400)
    assert client.post("/api/resolve", json=TOUR).json()["status"] == "ok"


def test_wrong_types_in_the_other_requests(client):
    assert "'kind' must be a string" in refused(client.post("/api/source", json={"ruleset": "aslsk", "kind": ["x"]}), 400)
    cells = {"ruleset": "aslsk", "cells": [{"table": ["ift"], "row": 0, "value": "1"}]}
    assert "no table" in refused(client.post("/api/charts", json=cells), 400)
    overlays = {"ruleset": "aslsk", "overlays": [{"shipped": {"a": 1}}]}
    assert "'shipped' must be a string" in refused(client.post("/api/describe", json=overlays), 400)


def test_a_deeply_nested_body_is_refused_with_a_message(client):
    body = b"[" * 100_000 + b"]" * 100_000
    text = refused(client.post("/api/resolve", content=body, headers={"Content-Type": "application/json"}), 400)
    assert "nested too deeply" in text or "larger than the limit" in text
    deep = b'{"a":' * 5_000 + b"1" + b"}" * 5_000
    assert "nested too deeply" in refused(client.post("/api/resolve", content=deep,
                                                      headers={"Content-Type": "application/json"}), 400)


def test_a_pasted_ruleset_path_says_the_same_whether_or_not_it_exists(client, tmp_path):
    answers = set()
    for path in ("/etc", "/no/such/folder", str(tmp_path), str(ROOT / "rulesets/panzer-grenadier")):
        text = f"ruleset: {path}\nprocedure: fire_attack\n"
        err = refused(client.post("/api/resolve", json={"ruleset": "aslsk", "situation": {"text": text}}), 400)
        answers.add(err.replace(path, "PATH"))
    assert len(answers) == 1 and "not open here" in answers.pop()


def test_uploads_are_kept_within_their_bound(tmp_path, monkeypatch):
    monkeypatch.setattr(jobs, "UPLOAD_FILES", 3)
    monkeypatch.setattr(jobs, "IN_USE_SECONDS", 0)
    ws = jobs.Workspace([str(ASLSK)], str(tmp_path))
    for i in range(10):
        (path,) = ws.overlays("aslsk", [{"text": f"# overlay {i}\n", "name": f"mine-{i}.yaml"}])
    assert len(list(tmp_path.iterdir())) <= 3
    assert open(path).read() == "# overlay 9\n"           # the newest is kept


def test_heavy_work_is_let_in_round_robin_by_client():
    async def scenario():
        gate, order = FairGate(1), []

        async def job(client, n):
            await gate.enter(client)
            order.append(f"{client}{n}")
            await asyncio.sleep(0)
            gate.leave()
        await gate.enter("x")                   # a job is running: the rest queue
        tasks = [asyncio.ensure_future(job("a", n)) for n in range(3)] + [asyncio.ensure_future(job("b", 0))]
        await asyncio.sleep(0)
        gate.leave()
        await asyncio.gather(*tasks)
        return order, gate.running
    order, running = asyncio.run(scenario())
    assert order == ["a0", "b0", "a1", "a2"] and running == 0     # b is not kept waiting behind all of a's


def test_heavy_jobs_leave_a_worker_for_light_ones(app):
    assert app.state.pool.heavy.slots == len(app.state.pool.workers) - 1


def test_nesting_is_refused_past_its_bound_whatever_the_parser_allows(client):
    from interpreter.web.app import MAX_JSON_DEPTH
    ok = {"ruleset": "aslsk", "situation": {"shipped": "prep_fire_fg_pbf.yaml"}, "x": [[[]]]}
    assert client.post("/api/resolve", json=ok).json()["status"] == "ok"
    inside = b"[" * MAX_JSON_DEPTH + b"]" * MAX_JSON_DEPTH
    text = refused(client.post("/api/resolve", content=b'{"x": ' + inside + b"}",
                               headers={"Content-Type": "application/json"}), 400)
    assert f"more than {MAX_JSON_DEPTH} levels" in text
    brackets_in_text = json.dumps({"ruleset": "aslsk", "situation": {"text": "[" * 500, "name": "x.yaml"}})
    assert "nested too deeply" not in refused(client.post("/api/resolve", content=brackets_in_text,
                                                          headers={"Content-Type": "application/json"}), 400)
