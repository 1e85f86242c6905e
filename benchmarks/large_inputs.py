"""Large inputs: refused fast, or read in time proportional to their size and in bounded memory.

For YAML catalogues and procedure files of growing size (up to 50 MB), this measures
``umpire check`` on a copy of the test fixture ruleset holding the large file: the
wall time, the peak memory Python allocated (tracemalloc) and the outcome. Files over
the 2 MB file-size limit are refused before they are read; below it, time per MB
should stay about constant (linear parsing), which the last column shows.

    python benchmarks/large_inputs.py            # 0.25, 0.5, 1, 10 and 50 MB
    python benchmarks/large_inputs.py --quick    # 0.25 and 10 MB only
"""

from __future__ import annotations

import argparse
import contextlib
import io
import shutil
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
FIXTURE = ROOT / "tests" / "fixtures" / "mini"

MB = 1_000_000


def yaml_catalogue(size: int) -> str:
    """A catalogue of about ``size`` bytes: one entry per line, three values each."""
    head = "catalogues:\n  big:\n    entries:\n"
    line = "      k{}: {{fp: 1, morale: 7, note: some text}}\n"
    n = max(1, (size - len(head)) // len(line.format(100000)))
    return head + "".join(line.format(i) for i in range(n))


def procedure_file(size: int) -> str:
    """A procedure file of about ``size`` bytes: several procedures of straight-line statements."""
    out, total, p = [], 0, 0
    while total < size:
        lines = [f"procedure big{p}(x: int):\n"] + [f"    let v{i} = x + {i} * 2\n" for i in range(200)] + \
                ["    return v199\n\n"]
        chunk = "".join(lines)
        out.append(chunk)
        total += len(chunk)
        p += 1
    return "".join(out)


def measure(kind: str, size: int) -> dict:
    from interpreter.api import clear_cache
    from interpreter.cli import main
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "mini"
        shutil.copytree(FIXTURE, root)
        if kind == "yaml":
            (root / "catalogues" / "big.yaml").write_text(yaml_catalogue(size), encoding="utf-8")
        else:
            (root / "procedures" / "big.ump").write_text(procedure_file(size), encoding="utf-8")
        actual = sum(f.stat().st_size for f in (root / ("catalogues" if kind == "yaml" else "procedures")).glob("big.*"))
        clear_cache()
        err = io.StringIO()
        tracemalloc.start()
        start = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            code = main(["check", str(root)])
        seconds = time.perf_counter() - start
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        clear_cache()
    message = err.getvalue().strip().splitlines()[0] if err.getvalue().strip() else "ok"
    return {"kind": kind, "bytes": actual, "exit": code, "seconds": seconds, "peak_mb": peak / MB,
            "s_per_mb": seconds / (actual / MB), "outcome": message.split(": ", 1)[-1][:70]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="only 0.25 and 10 MB")
    args = ap.parse_args()
    sizes = [MB // 4, 10 * MB] if args.quick else [MB // 4, MB // 2, MB, 10 * MB, 50 * MB]
    print(f"{'input':<10} {'size':>10} {'exit':>4} {'seconds':>8} {'peak MB':>8} {'s per MB':>8}  outcome")
    for kind in ("yaml", "procedures"):
        for size in sizes:
            r = measure(kind, size)
            print(f"{r['kind']:<10} {r['bytes'] / MB:>8.2f}MB {r['exit']:>4} {r['seconds']:>8.2f} {r['peak_mb']:>8.1f} "
                  f"{r['s_per_mb']:>8.2f}  {r['outcome']}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
