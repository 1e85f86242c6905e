"""The workbench's sweep page (/sweep): a small sweep run in a worker, its rows and a heat map.

``sweep_specs`` lists each open ruleset's shipped specs (its ``sweeps/`` folder) with their text;
``sweep`` runs a spec's text as if it were a file in that ruleset's ``sweeps/`` folder, so its relative
names (``ruleset: ..``, ``../house-rules/...``) work, and every file it names must be inside the open
rulesets. A web sweep is capped at MAX_TASKS and runs in the request's worker process under the
workbench's time limit; every finished cell is kept in the results cache, so a sweep cut off by the
limit goes on from where it stopped when it is run again (the page says so).
"""

from __future__ import annotations

from ..errors import InputError

MAX_TASKS = 1_000
"""Most tasks (cells x overlay sets) one workbench sweep may have."""


def _file_name(name) -> str:
    """The spec's name as a plain file name in ``sweeps/`` (its relative names are read from there)."""
    import os
    import re
    base = re.sub(r"[^A-Za-z0-9._-]+", "-", os.path.basename(str(name or ""))).strip(".-")[:60] or "sweep"
    return base if base.endswith((".yaml", ".yml")) else base + ".yaml"


def job_sweep_specs(ws, params: dict) -> dict:
    out = {}
    for rid, root in ws.roots.items():
        out[rid] = {p.name: p.read_text(encoding="utf-8") for p in sorted((root / "sweeps").glob("*.y*ml"))}
    return {"specs": out, "max_tasks": MAX_TASKS}


def job_sweep(ws, params: dict) -> dict:
    from ..sweep import output
    from ..sweep.run import run_sweep
    from ..sweep.spec import load_spec
    rid = ws.ruleset_id(params)
    root = ws.root(rid)
    text = params.get("text")
    if not isinstance(text, str) or not text.strip():
        raise InputError("the sweep spec's text is missing")
    path = root / "sweeps" / _file_name(params.get("name"))
    ws.display[str(path)] = path.name
    spec = load_spec(path, text=text, max_cells=None, roots=list(ws.roots.values()))
    if spec.tasks > MAX_TASKS:
        raise InputError(f"this sweep has {spec.tasks:,} tasks (cells x overlay sets); the workbench runs at most "
                         f"{MAX_TASKS:,}", spec.doc.at(("axes",)), "vary fewer values, or run it with umpire sweep")
    rows, reused, _ = run_sweep(spec, 1, None, True, None)
    data = output.as_json(spec, rows)
    data["spec"] = ws.display.get(spec.file, spec.file)
    data["reused"] = reused
    data["heatmap"] = spec.heatmap
    data["csv"] = output.as_csv(spec, rows)
    for r in data["rows"]:
        r.pop("key", None)
    return data
