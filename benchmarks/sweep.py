"""Time `umpire sweep` on one machine (-j 1, -j 2) and on a local Dask cluster of two worker processes.

    python benchmarks/sweep.py [SPEC]      (default: rulesets/aslsk/sweeps/field-rally.yaml)

Each run starts with an empty results store (a fresh cache folder whose load cache is warmed first), so
every cell is worked out; it prints the cell count, the wall time of the run (after the spec is read)
and checks that the three runs give the same rows. Needs `distributed` for the Dask run
(pip install -e '.[sweep]'); wall times on a shared machine vary with its load.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def timed(spec_path: str, jobs: int = 1, dask: str | None = None) -> tuple[float, str, int]:
    from interpreter.api import clear_cache
    from interpreter.sweep import output
    from interpreter.sweep.run import run_sweep
    from interpreter.sweep.spec import load_spec
    os.environ["UMPIRE_CACHE_DIR"] = tempfile.mkdtemp(prefix="umpire-sweep-bench-")
    clear_cache()
    spec = load_spec(spec_path)            # loads (and so caches) every overlay set's ruleset
    start = time.perf_counter()
    rows, reused, _ = run_sweep(spec, jobs, dask)
    seconds = time.perf_counter() - start
    assert reused == 0
    return seconds, output.as_csv(spec, rows), spec.tasks


def main() -> None:
    spec = sys.argv[1] if len(sys.argv) > 1 else str(ROOT / "rulesets/aslsk/sweeps/field-rally.yaml")
    results = {}
    for jobs in (1, 2):
        results[f"-j {jobs}"] = timed(spec, jobs)
    try:
        from distributed import LocalCluster
    except ImportError:
        print("distributed is not installed: no Dask run", file=sys.stderr)
    else:
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
            timed(spec, dask=cluster.scheduler_address)       # the workers' first run loads the rulesets
            results["dask, 2 workers"] = timed(spec, dask=cluster.scheduler_address)
    tasks = next(iter(results.values()))[2]
    print(f"{spec}: {tasks:,} tasks (cells x overlay sets), {os.cpu_count()} CPUs")
    for name, (seconds, _, _) in results.items():
        print(f"  {name:>16}: {seconds:6.1f} s  ({tasks / seconds:,.0f} tasks/s)")
    csvs = {csv for _, csv, _ in results.values()}
    print("  rows identical across runs:", len(csvs) == 1)


if __name__ == "__main__":
    main()
