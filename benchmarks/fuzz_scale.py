"""The fuzz driver at scale (not in CI): mutants of every shipped file, and what they found.

Runs tests/fuzz/fuzz.py's driver (mutants of every shipped ruleset file, situation, test file and house rule,
each put through the command a user would run on it) for ``-n`` mutants (default 20,000), and prints one
record: mutants run, internal errors (exit 3 or an escaping exception), runs over the CPU limit (5 s of CPU
by default, CPU time so other work on the machine does not count), the slowest wall time, exit codes, CPU
seconds by kind of file and peak memory. Failing mutants are saved under ``--save`` to replay with ``umpire``.
``--record FILE`` appends the record (one JSON line, with the date and the commit) to FILE.

    nice -n 19 python benchmarks/fuzz_scale.py -n 20000 -j 2 --save /tmp/fuzz-failures --record fuzz.jsonl

Exit 1 if any mutant ended in an internal error or ran over the CPU limit.

Last recorded (2026-12-02, on a loaded 2-core machine, 20,000 mutants in two runs): seed 2027, 5,000 mutants
(stopped there), and seed 2028, 15,000 mutants (this script): 0 internal errors, 0 runs over 5 s of CPU;
exit codes 0/1/2 = 7,743/279/15,811 commands for the 15,000 (a mutant runs one or more commands).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "fuzz"))

import fuzz  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", "--mutants", type=int, default=20_000, help="how many mutants (default 20,000)")
    ap.add_argument("-j", "--jobs", type=int, default=1, help="worker processes (default 1)")
    ap.add_argument("--seed", type=int, default=2027, help="seed of the mutations (default 2027)")
    ap.add_argument("--timeout", type=float, default=5.0, help="CPU seconds one mutant may use (default 5)")
    ap.add_argument("--save", help="folder to save failing mutants in")
    ap.add_argument("--record", help="append the record as one JSON line to this file")
    args = ap.parse_args()
    report = fuzz.fuzz(args.mutants, args.jobs, args.seed, args.timeout, args.save, progress=True)
    try:
        commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, check=False).stdout.strip() or None
    except OSError:
        commit = None
    record = {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "commit": commit, "seed": args.seed,
              "cpu_limit_seconds": args.timeout, "mutants": report["mutants"], "internal_errors": report["internal"],
              "over_cpu_limit": report["timeouts"], "slowest_wall_seconds": report["slowest_seconds"],
              "exit_codes": report["exit_codes"], "by_kind": report["by_kind"],
              "cpu_seconds_by_kind": report["cpu_by_kind"], "peak_rss_mb": report["peak_rss_mb"],
              "wall_seconds": report["wall_seconds"], "failures": report["failures"][:20]}
    print(json.dumps(record, indent=2))
    if args.record:
        with open(args.record, "a", encoding="utf-8") as f:
            f.write(json.dumps(record) + "\n")
    return 1 if report["internal"] or report["timeouts"] else 0


if __name__ == "__main__":
    sys.exit(main())
