"""A bounded load test of `umpire serve` on loopback.

    python benchmarks/web_load.py                       # 8 clients, 600 requests, at most 120 s
    python benchmarks/web_load.py --clients 16 --requests 2000 --seconds 300
    python benchmarks/web_load.py --clients 16 --bad-every 4 --heavy 2   # issue 27's mixed load

Starts `umpire serve` on 127.0.0.1 (a free port) with the shipped rulesets, then runs
concurrent clients that resolve shipped situations (fixed seed) and compute their exact odds,
with malformed requests mixed in (one in five by default): broken JSON, an unknown ruleset, a
situation with a YAML error, a field no outcome has, a body over the size limit, a simulation too
large, wrong-typed fields, deep nesting, a text/plain body, a rebinding Host name. With --heavy N,
N more clients send nothing but heavy exact-odds requests (every die free on the slowest shipped
situations) the whole time; the verdict is on the light requests' p95 (target under 2 s).
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
        {"kind": "bad", "path": "/api/resolve", "body": {"ruleset": [rid], "situation": sit}, "status": 400,
         "says": "must be a string"},
        {"kind": "bad", "path": "/api/odds", "body": {"ruleset": rid, "situation": {"shipped": [sit["shipped"]]}},
         "status": 400, "says": "must be a string"},
        {"kind": "bad", "path": "/api/resolve", "raw": b"[" * 100_000 + b"]" * 100_000, "status": 400,
         "says": "nested too deeply"},
        {"kind": "bad", "path": "/api/odds", "raw": json.dumps({"ruleset": rid, "situation": sit}).encode(),
         "type": "text/plain", "status": 415, "says": "JSON bodies"},
        {"kind": "bad", "path": "/api/resolve", "body": {"ruleset": rid, "situation": sit},
         "host": "attacker.example", "status": 421, "says": "answers only to"},
    ]


HEAVY = [("aslsk", "close_combat_ambush_sequential.yaml"), ("aslsk", "close_combat_simultaneous_casualty_reduction.yaml"),
         ("last-hundred-yards", "resolution_hex_under_fire.yaml")]
"""Shipped situations whose exact odds with every die free are among the slowest (issue 26 lists them)."""


def heavy_jobs() -> list[dict]:
    jobs = []
    for rid, name in HEAVY:
        root = ROOT / "rulesets" / rid
        if (root / "situations" / name).is_file():
            jobs.append({"kind": "heavy", "path": "/api/odds", "status": None,
                         "body": {"ruleset": api.load_ruleset(root).id, "situation": {"shipped": name},
                                  "all_dice": True}})
    return jobs


def right(job: dict, status: int, data) -> bool:
    if job["kind"] == "heavy":        # answered, or stopped at the time limit / told the server is busy
        return status in (200, 422, 503, 504)
    if status != job["status"]:
        return False
    if job["kind"] == "bad":
        return isinstance(data, dict) and job["says"] in data.get("error", {}).get("text", "")
    if job["kind"] == "resolve":
        return all(data.get(k) == v for k, v in job["check"].items())
    return [(o["outcome"], o["fraction"]) for o in data["outcomes"]] == job["check"]["outcomes"]


def client(port: int, queue: list, lock: threading.Lock, deadline: float, results: list,
           name: str = "", repeat: list | None = None) -> None:
    """Send jobs from ``queue`` until it is empty (or, with ``repeat``, those jobs over and over)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    turn = 0
    while time.monotonic() < deadline:
        if repeat is not None:
            if not queue:
                return              # the light clients are done: the heavy load stops with them
            job, turn = repeat[turn % len(repeat)], turn + 1
        else:
            with lock:
                if not queue:
                    return
                job = queue.pop()
        payload = job["raw"] if "raw" in job else json.dumps(job["body"]).encode()
        headers = {"Content-Type": job.get("type", "application/json"), "X-Umpire-Client": name,
                   "Host": f"{job.get('host', '127.0.0.1')}:{port}"}
        start = time.perf_counter()
        try:
            conn.request("POST", job["path"], payload, headers)
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
    ap.add_argument("--bad-every", type=int, default=5, help="one request in this many is malformed (default 5)")
    ap.add_argument("--heavy", type=int, default=0,
                    help="extra clients sending only heavy exact-odds requests, all the time (default 0)")
    args = ap.parse_args()

    good = expected_answers(args.per_ruleset)
    bad = malformed()
    heavy = heavy_jobs()
    rng = random.Random(1)
    queue = [rng.choice(bad) if i % args.bad_every == args.bad_every - 1 else rng.choice(good)
             for i in range(args.requests)]

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
        threads = [threading.Thread(target=client, args=(port, queue, lock, deadline, results, f"light-{i}"))
                   for i in range(args.clients)]
        threads += [threading.Thread(target=client, args=(port, queue, lock, deadline, results, f"heavy-{i}",
                                                          heavy[i % len(heavy):] + heavy[:i % len(heavy)]))
                    for i in range(args.heavy if heavy else 0)]
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
    for kind in ("resolve", "odds", "bad", "heavy"):
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
    light = [r[1] for r in results if r[0] in ("resolve", "bad")]
    if light:
        p95 = pct(light, 95)
        print(f"  light requests (resolve and malformed) p95: {p95:.0f} ms -> "
              f"{'PASS' if p95 < 2000 else 'MISS'} (target < 2000 ms on a quiet machine)")
    if len([r for r in results if r[0] != "heavy"]) < args.requests:
        print(f"  stopped at the time bound: {args.requests - len(results)} requests not sent")
    if wrong:
        print(f"  WRONG: {len(wrong)} answers, statuses {sorted({r[3] for r in wrong})}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
