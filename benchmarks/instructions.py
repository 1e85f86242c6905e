"""Instructions, not seconds: the engine at two commits, counted by callgrind on the same work.

    python benchmarks/instructions.py --base 2d465c2            # this checkout against that commit
    python benchmarks/instructions.py --base HEAD~3 --runs 20

For a change whose effect is a few percent (a fast path kept or removed, a closure fused or split), CPU time
on a shared machine is too noisy to decide. valgrind's callgrind counts the instructions a process runs:
the same count for the same binary, inputs and environment, whatever else the machine is doing. This
script runs, for each side, every shipped situation untraced (as ``simulate`` and ``odds`` run them), once
to warm the load cache, then under callgrind twice: start-up only and start-up plus ``--runs`` rounds of
every situation; the difference is the work. Both sides run the *base* commit's rulesets (the same data),
with ``PYTHONHASHSEED=0``, each with a load cache of its own.

Verdict: a difference under 1% is "the same"; the figure is a ratio, so compare it, not the counts.
About 1-2 minutes per side and round count on a quiet machine (callgrind is ~50x slower than Python).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

DRIVER = """
import glob, sys
sys.path.insert(0, sys.argv[1])
import interpreter
assert interpreter.__file__.startswith(sys.argv[1]), interpreter.__file__
from interpreter.api import load_situation, run_situation
situations = []
for f in sorted(glob.glob(sys.argv[2] + "/rulesets/*/situations/*.yaml")):
    try:
        s = load_situation(f)
        run_situation(s, seed=1, trace=False)
        situations.append(s)
    except Exception:          # a situation this side cannot run is left out of both (checked below)
        pass
for seed in range(int(sys.argv[3])):
    for s in situations:
        try:
            run_situation(s, seed=seed, trace=False)
        except Exception:
            pass
print("SITUATIONS", len(situations))
"""


def _export(rev: str | None, into: Path, parts: tuple[str, ...]) -> None:
    """The tree at ``rev`` (None: this checkout as it is) of ``parts``, copied into ``into``."""
    into.mkdir(parents=True)
    if rev is None:
        for p in parts:
            src = ROOT / p
            (shutil.copytree if src.is_dir() else shutil.copy)(src, into / p)
        return
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, *parts], check=True, capture_output=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)


def _count(python: str, tree: Path, data: Path, runs: int, cache: Path, driver: Path) -> tuple[int, int]:
    """(instructions, situations) of one run of the driver under callgrind."""
    env = dict(os.environ, PYTHONHASHSEED="0", UMPIRE_CACHE_DIR=str(cache))
    env.pop("UMPIRE_CACHE", None)
    out = Path(tempfile.mkstemp(suffix=".callgrind")[1])
    try:
        done = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", python, str(driver),
                               str(tree), str(data), str(runs)], env=env, capture_output=True, text=True)
    finally:
        out.unlink(missing_ok=True)
    found = re.search(r"Collected : (\d+)", done.stderr)
    situations = re.search(r"SITUATIONS (\d+)", done.stdout)
    if done.returncode != 0 or not found or not situations:
        sys.exit(f"callgrind run failed:\n{done.stderr[-2000:]}")
    return int(found.group(1)), int(situations.group(1))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", required=True, help="the commit to compare this checkout with (its rulesets are used)")
    ap.add_argument("--runs", type=int, default=20, help="rounds of every shipped situation (default 20)")
    args = ap.parse_args(argv)
    if shutil.which("valgrind") is None:
        print("valgrind is not installed (apt-get install -y valgrind): nothing to count")
        return 2
    python = os.path.realpath(sys.executable)      # the interpreter itself, not a launcher script
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        driver = work / "drive.py"
        driver.write_text(DRIVER)
        code = ("interpreter", "grammar", "schemas", "pyproject.toml")
        _export(args.base, work / "base", code)
        _export(None, work / "now", code)
        _export(args.base, work / "data", ("rulesets",))
        figures = {}
        for side in ("base", "now"):
            cache = work / f"cache-{side}"
            subprocess.run([python, str(driver), str(work / side), str(work / "data"), "0"], check=True,
                           capture_output=True, env=dict(os.environ, UMPIRE_CACHE_DIR=str(cache)))   # warm
            start, n0 = _count(python, work / side, work / "data", 0, cache, driver)
            total, n1 = _count(python, work / side, work / "data", args.runs, cache, driver)
            figures[side] = (total - start, n1)
            print(f"{side:>4}: {total - start:>15,} instructions for {args.runs} rounds of {n1} situations "
                  f"(start-up {start:,})")
    (base, nb), (now, nn) = figures["base"], figures["now"]
    if nb != nn:
        print(f"the sides ran different situations ({nb} against {nn}): not like for like")
        return 1
    ratio = now / base
    verdict = "the same (under 1%)" if abs(ratio - 1) < 0.01 else ("fewer" if ratio < 1 else "more")
    print(f"now / base = {ratio:.4f}: {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
