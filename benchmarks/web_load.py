"""A bounded load test of `umpire serve` on loopback.

    python benchmarks/web_load.py                       # 8 clients, 600 requests, at most 120 s
    python benchmarks/web_load.py --clients 16 --requests 2000 --seconds 300

Starts `umpire serve` on 127.0.0.1 (a free port) with the shipped rulesets, then runs
concurrent clients that resolve shipped situations (fixed seed) and compute their exact odds,
with malformed requests mixed in (one in five): broken JSON, an unknown ruleset, a situation
with a YAML error, a field no outcome has, a body over the size limit, a simulation too large.
Every good answer is checked against the same computation done in this process through
interpreter.api; every malformed one must be refused with the right status and a message.

Prints requests per second, latency percentiles (all, and by kind) and the correctness count;
exits 1 if any answer was wrong. Traffic goes to 127.0.0.1 only; the request count and the
wall time are both bounded, and the server is stopped at the end.
"""

from __future__ import annotations

import argparse
import http.client
import json
import random
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from interpreter import api  # noqa: E402
from interpreter.tools import reports  # noqa: E402

RULESETS = sorted(p.parent for p in (ROOT / "rulesets").glob("*/ruleset.yaml"))
SEED = 20240611
ODDS_SECONDS = 0.3      # situations whose exact odds take longer here are resolved but not asked for odds


def expected_answers(per_ruleset: int) -> list[dict]:
    """Good requests and their right answers, computed in this process through interpreter.api."""
    jobs = []
    for root in RULESETS:
        rid = api.load_ruleset(root).id
        for path in sorted((root / "situations").glob("*.yaml"))[:per_ruleset]:
            s = api.load_situation(path)
            outcome = api.run_situation(s, seed=SEED)
            body = {"ruleset": rid, "situation": {"shipped": path.name}, "seed": SEED}
            jobs.append({"kind": "resolve", "path": "/api/resolve", "body": body, "status": 200,
                         "check": {"status": outcome.status, "result": api.outcome_json(s, outcome)["result"],
                                   "dice": outcome.dice}})
            start = time.perf_counter()
            try:
                odds = reports.odds_json(api.load_situation(path), [])
            except Exception:       # too large for exact odds: not part of the odds mix
                continue
            if time.perf_counter() - start < ODDS_SECONDS:
                jobs.append({"kind": "odds", "path": "/api/odds", "status": 200,
                             "body": {"ruleset": rid, "situation": {"shipped": path.name}},
                             "check": {"outcomes": [(o["outcome"], o["fraction"]) for o in odds["outcomes"]]}})
    return jobs


def malformed() -> list[dict]:
    sit = {"shipped": sorted((RULESETS[0] / "situations").glob("*.yaml"))[0].name}
    rid = api.load_ruleset(RULESETS[0]).id
    return [
        {"kind": "bad", "path": "/api/resolve", "raw": b"{not json", "status": 400, "says": "not JSON"},
        {"kind": "bad", "path": "/api/resolve", "body": {"ruleset": "no-such-game", "situation": sit},
         "status": 400, "says": "no ruleset"},
        {"kind": "bad", "path": "/api/resolve", "status": 400, "says": "YAML syntax",
         "body": {"ruleset": rid, "situation": {"text": "ruleset: ..\nprocedure: [\n", "name": "bad.yaml"}}},
        {"kind": "bad", "path": "/api/odds", "body": {"ruleset": rid, "situation": sit, "by": ["no_such_field"]},
         "status": 400, "says": "no outcome has the field"},
        {"kind": "bad", "path": "/api/resolve", "raw": b"{" + b" " * 1_100_000 + b"}", "status": 413,
         "says": "larger than the limit"},
        {"kind": "bad", "path": "/api/simulate", "body": {"ruleset": rid, "situation": sit, "runs": 10**9},
         "status": 400, "says": "runs must be between"},
    ]


def right(job: dict, status: int, data) -> bool:
    if status != job["status"]:
        return False
    if job["kind"] == "bad":
        return isinstance(data, dict) and job["says"] in data.get("error", {}).get("text", "")
    if job["kind"] == "resolve":
        return all(data.get(k) == v for k, v in job["check"].items())
    return [(o["outcome"], o["fraction"]) for o in data["outcomes"]] == job["check"]["outcomes"]


def client(port: int, queue: list, lock: threading.Lock, deadline: float, results: list) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    while time.monotonic() < deadline:
        with lock:
            if not queue:
                return
            job = queue.pop()
        payload = job["raw"] if "raw" in job else json.dumps(job["body"]).encode()
        start = time.perf_counter()
        try:
            conn.request("POST", job["path"], payload, {"Content-Type": "application/json"})
            resp = conn.getresponse()
            raw = resp.read()
            status = resp.status
            if resp.getheader("connection", "").lower() == "close":
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        except (OSError, http.client.HTTPException) as e:
            status, raw = 0, str(e).encode()
            conn.close()
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        elapsed = time.perf_counter() - start
        try:
            data = json.loads(raw)
        except ValueError:
            data = None
        results.append((job["kind"], elapsed, right(job, status, data), status))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pct(values: list, q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q / 100 * (len(values) - 1))))] * 1000


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--requests", type=int, default=600)
    ap.add_argument("--seconds", type=float, default=120, help="stop sending after this long")
    ap.add_argument("--workers", type=int, default=2, help="the server's worker processes")
    ap.add_argument("--per-ruleset", type=int, default=4, help="shipped situations used from each ruleset")
    args = ap.parse_args()

    good = expected_answers(args.per_ruleset)
    bad = malformed()
    rng = random.Random(1)
    queue = [rng.choice(bad) if i % 5 == 4 else rng.choice(good) for i in range(args.requests)]

    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "interpreter", "serve", "--port", str(port),
                               "--workers", str(args.workers)] + [str(r) for r in RULESETS],
                              cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = server.stdout.readline()
        if "http://127.0.0.1:" not in line:
            print("the server did not start:", line, server.stderr.read(), file=sys.stderr)
            return 1
        results: list = []
        lock = threading.Lock()
        start = time.perf_counter()
        deadline = time.monotonic() + args.seconds
        threads = [threading.Thread(target=client, args=(port, queue, lock, deadline, results))
                   for _ in range(args.clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.perf_counter() - start
    finally:
        server.terminate()
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()

    print(f"umpire serve load test: {len(results)} requests from {args.clients} concurrent clients on 127.0.0.1, "
          f"{args.workers} workers, {wall:.1f} s")
    print(f"  throughput: {len(results) / wall:.1f} requests/s")
    latencies = [r[1] for r in results]
    print(f"  latency (ms): p50 {pct(latencies, 50):.0f}  p95 {pct(latencies, 95):.0f}  p99 {pct(latencies, 99):.0f}"
          f"  max {max(latencies) * 1000:.0f}")
    for kind in ("resolve", "odds", "bad"):
        rs = [r for r in results if r[0] == kind]
        if rs:
            lat = [r[1] for r in rs]
            print(f"    {kind:<8} {len(rs):>5} requests  p50 {pct(lat, 50):6.0f}  p95 {pct(lat, 95):6.0f}  "
                  f"p99 {pct(lat, 99):6.0f} ms   right: {sum(r[2] for r in rs)}/{len(rs)}")
    wrong = [r for r in results if not r[2]]
    good_n = sum(1 for r in results if r[0] != "bad")
    print(f"  good requests answered right: {good_n - sum(1 for r in wrong if r[0] != 'bad')}/{good_n}; "
          f"malformed refused right: {sum(1 for r in results if r[0] == 'bad') - sum(1 for r in wrong if r[0] == 'bad')}"
          f"/{sum(1 for r in results if r[0] == 'bad')}")
    if len(results) < args.requests:
        print(f"  stopped at the time bound: {args.requests - len(results)} requests not sent")
    if wrong:
        print(f"  WRONG: {len(wrong)} answers, statuses {sorted({r[3] for r in wrong})}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
