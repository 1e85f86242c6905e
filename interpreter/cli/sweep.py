"""``umpire sweep SPEC``: one question over a grid of situations, with and without house rules."""

from __future__ import annotations

import sys

from ..errors import InputError
from .args import positive_int

OUT_FORMATS = (".csv", ".json", ".png", ".svg", ".pdf")


def out_path(text: str) -> str:
    """An argparse type for -o: rows (.csv, .json) or a heat map (an image, checked as --plot checks one)."""
    import argparse
    from pathlib import Path

    from .odds import plot_path
    if Path(text).suffix.lower() in (".csv", ".json"):
        return plot_path(str(Path(text).with_suffix(".png")))[:-4] + Path(text).suffix
    if Path(text).suffix.lower() not in OUT_FORMATS:
        raise argparse.ArgumentTypeError(f"'{text}' does not end in {', '.join(OUT_FORMATS)}: the suffix says what "
                                         "to write (rows as CSV or JSON, or the heat map as an image)")
    return plot_path(text)


def add_sweep(sub, overlay_option=None) -> None:
    s = sub.add_parser(
        "sweep", help="ask one question (odds or a simulation) of a grid of situations, with and without overlays",
        description="Run every cell of a sweep spec (schemas/sweep.schema.json): a base situation, the axes to "
                    "vary, the overlays to compare and the question. Writes one row per cell and overlay set: "
                    "the axis values, each outcome's share, the needs-chart share apart, and the change each "
                    "overlay set makes against the first. Finished cells are kept in the results cache, so a "
                    "stopped sweep resumes where it stopped.")
    s.add_argument("spec", help="a sweep spec YAML file")
    s.add_argument("-o", "--out", action="append", default=[], type=out_path, metavar="FILE",
                   help="write the rows (.csv, .json) or the heat map (.png, .svg, .pdf; needs matplotlib and "
                        "heatmap: in the spec); repeatable; without -o or --json the rows go to standard output "
                        "as CSV")
    s.add_argument("--json", action="store_true", help="print the rows as JSON on standard output")
    s.add_argument("-j", "--jobs", type=positive_int, default=1, metavar="N",
                   help="run the cells in N local worker processes (the rows are the same for any N)")
    s.add_argument("--dask", metavar="ADDRESS|FILE",
                   help="run the cells on a Dask cluster: its scheduler's address (tcp://HOST:8786) or scheduler "
                        "file (needs distributed: pip install -e '.[sweep]'); the workers need the same files at "
                        "the same paths")
    s.add_argument("--max-cells", type=positive_int, metavar="N",
                   help="run up to N tasks (cells x overlay sets; default 10,000, or the spec's max_cells)")
    s.add_argument("--no-cache", action="store_true",
                   help="neither read nor keep finished cells, nor use the load cache")
    s.add_argument("-q", "--quiet", action="store_true", help="no cell count, progress bar or summary on stderr")
    s.set_defaults(func=cmd_sweep)


def cmd_sweep(args) -> int:
    import json
    import time

    from ..sweep import output
    from ..sweep.run import Bar, run_sweep
    from ..sweep.spec import load_spec
    images = [o for o in args.out if not o.lower().endswith((".csv", ".json"))]
    if images:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            raise InputError("a heat map needs matplotlib, which is not installed (from a checkout: "
                             "pip install -e '.[plot]'; or pip install matplotlib)") from None
    if args.jobs > 1 and args.dask:
        raise InputError("-j and --dask both say where to run the cells: give one")
    spec = load_spec(args.spec, max_cells=args.max_cells)
    if images and spec.heatmap is None:
        raise InputError("a heat map needs 'heatmap: {outcome: ..., x: AXIS, y: AXIS}' in the spec", spec.doc.at(()))
    where = f"on the Dask cluster at {args.dask}" if args.dask else (
        f"in {args.jobs} local processes" if args.jobs > 1 else "in this process")
    if not args.quiet:
        print(f"sweep {spec.name}: {len(spec.cells):,} cells x {len(spec.variants)} overlay set"
              f"{'s' if len(spec.variants) != 1 else ''} ({', '.join(v.name for v in spec.variants)}) = "
              f"{spec.tasks:,} tasks, {where}", file=sys.stderr)
    start = time.perf_counter()
    bar = None if args.quiet else Bar()
    try:
        rows, reused, _ = run_sweep(spec, args.jobs, args.dask, not args.no_cache, bar)
    except KeyboardInterrupt:
        print("\ninterrupted: the finished cells are kept in the results cache; run the same command again to "
              "go on from them" if not args.no_cache else "\ninterrupted (--no-cache: nothing was kept)",
              file=sys.stderr)
        raise
    seconds = time.perf_counter() - start
    for path in args.out:
        low = path.lower()
        try:
            if low.endswith(".csv"):
                with open(path, "w", encoding="utf-8", newline="") as f:
                    f.write(output.as_csv(spec, rows))
            elif low.endswith(".json"):
                with open(path, "w", encoding="utf-8") as f:
                    json.dump(output.as_json(spec, rows), f, indent=1)
                    f.write("\n")
            else:
                output.heatmap(spec, rows, path)
        except OSError as e:
            raise InputError(f"cannot write {path}: {e.strerror or e}") from None
    if args.json:
        print(json.dumps(output.as_json(spec, rows), indent=1))
    elif not args.out:
        sys.stdout.write(output.as_csv(spec, rows))
    if not args.quiet:
        print(f"{output.summary(spec, rows)}; {reused:,} read back from the results cache; {seconds:.1f}s",
              file=sys.stderr)
    return 3 if any(r["status"] == "internal error" for r in rows) else 0
