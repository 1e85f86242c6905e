"""Large inputs: refused fast, or read in time proportional to their size and in bounded memory.

For YAML catalogues and procedure files of growing size (up to 50 MB), this measures
``umpire check`` (load cache off) on a copy of the test fixture ruleset holding the large
file, each in a fresh process: its CPU time, its peak memory (maximum resident set) and
the outcome. Files over the 2 MB file-size limit are refused before they are read, and
procedure text over 250,000 characters before it is parsed; below the limits, the time per
MB should stay about constant (linear parsing), which the last column shows.

    python benchmarks/large_inputs.py            # 0.1, 0.2, 1, 10 and 50 MB
    python benchmarks/large_inputs.py --quick    # 0.2 and 10 MB only
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
FIXTURE = ROOT / "tests" / "fixtures" / "mini"

MB = 1_000_000


def yaml_catalogue(size: int):
    """A catalogue of about ``size`` bytes, in pieces: one entry per line, three values each."""
    head = "catalogues:\n  big:\n    entries:\n"
    line = "      k{}: {{fp: 1, morale: 7, note: some text}}\n"
    yield head
    for i in range(max(1, (size - len(head)) // len(line.format(100000)))):
        yield line.format(i)


def procedure_file(size: int):
    """A procedure file of about ``size`` bytes, in pieces: procedures of straight-line statements."""
    total, p = 0, 0
    while total < size:
        lines = [f"procedure big{p}(x: int):\n"] + [f"    let v{i} = x + {i} * 2\n" for i in range(200)] + \
                ["    return v199\n\n"]
        chunk = "".join(lines)
        yield chunk
        total += len(chunk)
        p += 1


CHILD = """
import sys
sys.path.insert(0, {root!r})
from interpreter.cli.main import main
sys.exit(main(["check", {ruleset!r}]))
"""


def measure(kind: str, size: int) -> dict:
    """``umpire check`` in a fresh process on the fixture holding one large file: CPU seconds, peak RSS, outcome."""
    import os
    import subprocess
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "mini"
        shutil.copytree(FIXTURE, root)
        big = root / ("catalogues/big.yaml" if kind == "yaml" else "procedures/big.ump")
        with big.open("w", encoding="utf-8") as f:     # written piece by piece: the parent stays small
            f.writelines(yaml_catalogue(size) if kind == "yaml" else procedure_file(size))
        actual = big.stat().st_size
        env = dict(os.environ, UMPIRE_CACHE="off")
        child = subprocess.Popen([sys.executable, "-c", CHILD.format(root=str(ROOT), ruleset=str(root))],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, text=True)
        err = child.stderr.read()
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
    seconds = usage.ru_utime + usage.ru_stime
    message = err.strip().splitlines()[0] if err.strip() else "ok"
    return {"kind": kind, "bytes": actual, "exit": child.returncode, "seconds": seconds,
            "peak_mb": usage.ru_maxrss / 1024, "s_per_mb": seconds / (actual / MB),
            "outcome": message.split(": ", 1)[-1][:70]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="only 0.2 and 10 MB")
    args = ap.parse_args()
    sizes = [MB // 5, 10 * MB] if args.quick else [MB // 10, MB // 5, MB, 10 * MB, 50 * MB]
    print(f"{'input':<10} {'size':>10} {'exit':>4} {'CPU s':>8} {'peak MB':>8} {'s per MB':>8}  outcome")
    for kind in ("yaml", "procedures"):
        for size in sizes:
            r = measure(kind, size)
            print(f"{r['kind']:<10} {r['bytes'] / MB:>8.2f}MB {r['exit']:>4} {r['seconds']:>8.2f} {r['peak_mb']:>8.1f} "
                  f"{r['s_per_mb']:>8.2f}  {r['outcome']}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
