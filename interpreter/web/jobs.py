"""What the workbench asks of the interpreter: one function per request kind, run in a worker process.

Every job takes and returns plain JSON-ready data and calls the same API as the
command line (``interpreter.api``). Files are named by the client only through
the lists a ruleset ships (situations/, house-rules/); text the user pasted or
uploaded is parsed as YAML data, never executed. Errors come back as the CLI
prints them, and as positioned diagnostics.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import time
from pathlib import Path

from .. import api
from ..errors import InputError, InputErrors, Position, UmpireError, diagnostics
from ..tools import reports
from .charts import job_chart_check, job_charts
from .sweep import job_sweep, job_sweep_specs

MAX_RUNS = 200_000
"""Most Monte Carlo runs one request may ask for (the page asks in chunks and shows progress)."""

_SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")

UPLOAD_BYTES = 16_000_000
"""Most bytes of pasted or uploaded overlay text kept on disk; the least recently used go first."""
UPLOAD_FILES = 200
"""Most distinct uploaded overlays kept on disk at once."""
IN_USE_SECONDS = 120
"""An upload used this recently is never evicted (another worker may be reading it)."""

FIELDS: dict[str, type | tuple[type, ...]] = {"ruleset": str, "procedure": str, "kind": str, "name": str, "table": str, "by": list,
          "overlays": list, "cells": list, "situation": dict, "all_dice": bool, "keep_dice": bool,
          "seed": (int, str), "runs": (int, str)}
"""The type of each request field a job reads (checked before any job runs)."""
FILE_FIELDS = {"shipped": str, "text": str, "name": str}
"""The fields of a situation or overlay ({shipped: NAME} or {text: ..., name: ...})."""


class Workspace:
    """The served rulesets (by id) and a folder for overlay text the user supplied."""

    def __init__(self, roots: list[str], upload_dir: str):
        self.roots: dict[str, Path] = {}
        for root in roots:
            r = api.load_ruleset(root)
            self.roots[r.id] = Path(r.root).resolve()
        self.upload_dir = Path(upload_dir)
        self.display: dict[str, str] = {}     # a file's real path -> the name the user knows it by

    # ---- naming things ------------------------------------------------------------------

    def ruleset_id(self, params: dict) -> str:
        """The request's ruleset: the id of one open here (else the error root gives)."""
        rid = params.get("ruleset")
        self.root(rid)
        return str(rid)

    def root(self, rid) -> Path:
        if rid not in self.roots:
            raise InputError(f"no ruleset '{rid}' is open here", hint="open: " + ", ".join(sorted(self.roots)))
        return self.roots[rid]

    def shipped(self, rid: str, folder: str) -> dict[str, Path]:
        root = self.root(rid)
        return {p.name: p for p in sorted((root / folder).glob("*.y*ml"))}

    def shipped_file(self, rid: str, folder: str, name) -> Path:
        if not isinstance(name, str):
            raise InputError(f"name the {folder} file by its file name (a string), not {_json_kind(name)}")
        files = self.shipped(rid, folder)
        if name not in files:
            from ..errors import did_you_mean
            raise InputError(f"ruleset '{rid}' ships no {folder} file '{name}'",
                             hint=did_you_mean(str(name), files) or ("it has: " + ", ".join(files)))
        return files[name]

    def situation(self, rid: str, spec, overlays: tuple):
        """A situation from {"shipped": name} or {"text": ..., "name": ...}."""
        path, text = self.situation_source(rid, spec)
        return api.load_situation(path, overlays, text, list(self.roots.values()))

    def situation_source(self, rid: str, spec) -> tuple[str, str | None]:
        if not isinstance(spec, dict):
            raise InputError("say which situation: {shipped: NAME} or {text: ..., name: ...}")
        if "shipped" in spec:
            return self.rel(self.shipped_file(rid, "situations", spec["shipped"])), None
        text = _text(spec)
        name = _name(spec, "situation.yaml")
        path = self.root(rid) / "situations" / name      # read as if it sat beside the shipped ones
        self.display[str(path)] = name
        return str(path), text

    def overlays(self, rid: str, specs) -> tuple:
        """Overlay files from [{"shipped": name} | {"text": ..., "name": ...}], in order."""
        if not isinstance(specs, list):
            raise InputError("overlays must be a list")
        out = []
        for spec in specs:
            if not isinstance(spec, dict):
                raise InputError("each overlay is {shipped: NAME} or {text: ..., name: ...}")
            if "shipped" in spec:
                out.append(self.rel(self.shipped_file(rid, "house-rules", spec["shipped"])))
                continue
            text, name = _text(spec), _name(spec, "overlay.yaml")
            folder = self.upload_dir / hashlib.sha256(text.encode()).hexdigest()[:20]
            path = folder / name
            if path.exists():
                os.utime(folder)            # recently used: kept by the eviction below
            else:
                folder.mkdir(parents=True, exist_ok=True)
                tmp = folder / f".{name}.{os.getpid()}"
                tmp.write_text(text, encoding="utf-8")
                tmp.replace(path)
                self.evict_uploads(keep=folder)
            self.display[str(path)] = name
            out.append(str(path))
        return tuple(out)

    def evict_uploads(self, keep: Path) -> None:
        """Keep the upload folder within UPLOAD_BYTES and UPLOAD_FILES, least recently used out first."""
        entries = []
        for folder in self.upload_dir.iterdir():
            try:
                used = folder.stat().st_mtime
                size = sum(f.stat().st_size for f in folder.iterdir())
            except OSError:         # another worker evicted it meanwhile
                continue
            entries.append((used, size, folder))
        entries.sort()
        total, count = sum(size for _, size, _ in entries), len(entries)
        recent = time.time() - IN_USE_SECONDS
        for used, size, folder in entries:
            if total <= UPLOAD_BYTES and count <= UPLOAD_FILES:
                break
            if folder == keep or used > recent:
                continue
            shutil.rmtree(folder, ignore_errors=True)
            total, count = total - size, count - 1

    def rel(self, path: Path) -> str:
        try:
            return os.path.relpath(path)
        except ValueError:
            return str(path)

    # ---- errors as the CLI prints them ---------------------------------------------------

    def diagnostics(self, e: UmpireError) -> dict:
        """The error as the CLI prints it and as data (errors.diagnostics), files named as the user knows them."""
        errors = e.errors if isinstance(e, InputErrors) else [e]
        for err in errors:
            err.position = self.shown(err.position)
            err.related = [(self.shown(pos) or pos, what) for pos, what in err.related]   # (shown is None only for None)
        return {"kind": "input" if isinstance(e, InputError) else "adjudication", "text": str(e),
                "diagnostics": diagnostics(e)}

    def shown(self, pos: Position | None) -> Position | None:
        if pos is not None and pos.file in self.display:
            return pos.in_file(self.display[pos.file])
        return pos


def _json_kind(value) -> str:
    kinds = {bool: "true/false", int: "a number", float: "a number", str: "a string", list: "a list",
             dict: "an object", type(None): "null"}
    return kinds.get(type(value), type(value).__name__)


def check_fields(params: dict) -> None:
    """Refuse a request field of the wrong JSON type before any job reads it (a list is not a name)."""
    for key, kind in FIELDS.items():
        value = params.get(key)
        if value is not None and not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
            wanted = " or ".join(_json_kind(k()) for k in (kind if isinstance(kind, tuple) else (kind,)))
            raise InputError(f"the request's '{key}' must be {wanted}, not {_json_kind(value)}")
    specs = ([params["situation"]] if isinstance(params.get("situation"), dict) else []) + \
        [o for o in params.get("overlays") or [] if isinstance(o, dict)]
    for spec in specs:
        for key, kind in FILE_FIELDS.items():
            if spec.get(key) is not None and not isinstance(spec[key], kind):
                raise InputError(f"a situation's or overlay's '{key}' must be a string, not {_json_kind(spec[key])}")


def _text(spec: dict) -> str:
    text = spec.get("text")
    if not isinstance(text, str):
        raise InputError("the file's text is missing")
    return text


def _name(spec: dict, default: str) -> str:
    name = _SAFE_NAME.sub("-", os.path.basename(str(spec.get("name") or default))).strip(".-") or default
    if not name.endswith((".yaml", ".yml")):
        name += ".yaml"
    return name[:80]


def _by(params: dict) -> list:
    by = params.get("by") or []
    if not isinstance(by, list) or not all(isinstance(b, str) and b.strip() for b in by):
        raise InputError("by must be a list of result fields, e.g. [\"result\"]")
    return [b.strip() for b in by]


def _int(params: dict, key: str, default=None, low=None, high=None):
    v = params.get(key, default)
    if v is None or v == "":
        return default
    if isinstance(v, bool) or not isinstance(v, int):
        try:
            v = int(str(v).strip())
        except ValueError:
            raise InputError(f"{key} must be a whole number, not '{v}'") from None
    if (low is not None and v < low) or (high is not None and v > high):
        raise InputError(f"{key} must be between {low:,} and {high:,}" if high is not None
                         else f"{key} must be at least {low:,}")
    return v


# ---- the jobs ---------------------------------------------------------------------------

def job_rulesets(ws: Workspace, params: dict) -> dict:
    out = []
    for rid, root in ws.roots.items():
        r = api.load_ruleset(root)
        situations = ws.shipped(rid, "situations")
        out.append({"id": rid, "title": r.title, "source": r.source,
                    "situations": list(situations), "situation_titles": {n: _title(p) for n, p in situations.items()},
                    "house_rules": list(ws.shipped(rid, "house-rules")),
                    "procedures": len(r.procedures), "tables": len(r.tables)})
    return {"rulesets": out}


def _title(path: Path) -> str | None:
    from ..reading.source import load_yaml
    try:
        data = load_yaml(path).data
    except UmpireError:
        return None
    title = data.get("title") if isinstance(data, dict) else None
    return str(title) if title else None


def job_describe(ws: Workspace, params: dict) -> dict:
    rid = ws.ruleset_id(params)
    r = api.load_ruleset(ws.root(rid), ws.overlays(rid, params.get("overlays") or []))
    data = api.describe_ruleset(r)
    data["situations"] = list(ws.shipped(rid, "situations"))
    data["house_rules"] = list(ws.shipped(rid, "house-rules"))
    data["overlays"] = [ws.display.get(o, o) for o in r.overlays]
    return data


def job_schema(ws: Workspace, params: dict) -> dict:
    from ..loading.inputs import procedure_schema
    rid = ws.ruleset_id(params)
    r = api.load_ruleset(ws.root(rid), ws.overlays(rid, params.get("overlays") or []))
    return procedure_schema(r, api.find_procedure(r, str(params.get("procedure"))))


def job_source(ws: Workspace, params: dict) -> dict:
    rid = ws.ruleset_id(params)
    folder = {"situation": "situations", "overlay": "house-rules"}.get(str(params.get("kind")))
    if folder is None:
        raise InputError("kind must be 'situation' or 'overlay'")
    path = ws.shipped_file(rid, folder, params.get("name"))
    return {"name": path.name, "file": ws.rel(path), "text": path.read_text(encoding="utf-8")}


def job_resolve(ws: Workspace, params: dict) -> dict:
    from ..runtime.trace import brief_events
    rid = ws.ruleset_id(params)
    s = ws.situation(rid, params.get("situation"), ws.overlays(rid, params.get("overlays") or []))
    from ..tools.board_picture import adjudicated_lines, scene, svg
    outcome, lines = adjudicated_lines(lambda: api.run_situation(s, seed=_int(params, "seed"), trace=True))
    data = api.outcome_json(s, outcome)
    if s.board is not None:     # the board, as `umpire map` draws it (our own SVG: escaped text, no script)
        data["board_svg"] = svg(scene(s.board, lines))
    data["situation"] = ws.display.get(s.file, s.file)
    data["title"], data["source"] = s.title, s.source
    data["cite"] = data.get("cite")
    data["procedure_cite"] = s.procedure.cite
    data["given_dice"] = len(s.dice)
    data["changes"] = reports.changed_fields(s.args, outcome.value) if outcome.status == "ok" else []
    brief = {id(e) for e in brief_events(outcome.trace.events)} if outcome.trace else set()
    for e, raw in zip(data["trace"], outcome.trace.events if outcome.trace else []):
        e["brief"] = id(raw) in brief
    return data


def job_odds(ws: Workspace, params: dict) -> dict:
    rid = ws.ruleset_id(params)
    s = ws.situation(rid, params.get("situation"), ws.overlays(rid, params.get("overlays") or []))
    data = reports.odds_json(s, _by(params), bool(params.get("all_dice")))
    data["situation"] = ws.display.get(s.file, s.file)
    return data


def job_simulate(ws: Workspace, params: dict) -> dict:
    rid = ws.ruleset_id(params)
    s = ws.situation(rid, params.get("situation"), ws.overlays(rid, params.get("overlays") or []))
    if params.get("all_dice"):
        s.dice, s.dice_positions = [], []
    data = reports.simulate_json(s, _int(params, "runs", 10_000, 1, MAX_RUNS), _int(params, "seed"), _by(params))
    data["situation"] = ws.display.get(s.file, s.file)
    return data


def job_diff(ws: Workspace, params: dict) -> dict:
    rid = ws.ruleset_id(params)
    overlays = ws.overlays(rid, params.get("overlays") or [])
    situation, text = (ws.situation_source(rid, params["situation"]) if params.get("situation")
                       else (None, None))
    # the situation's dice stay unless all_dice (as in umpire diff and odds); the page sends keep_dice: false for all
    all_dice = bool(params["all_dice"]) if "all_dice" in params else params.get("keep_dice", True) is False
    data = reports.overlay_diff(ws.root(rid), overlays, situation, _by(params), all_dice,
                                text, list(ws.roots.values()))
    for changes in data["changes"].values():
        for c in changes:
            file, _, rest = c["from"].partition(":")
            c["from"] = ws.display.get(file, file) + (":" + rest if rest else "")
    return data


JOBS = {"rulesets": job_rulesets, "describe": job_describe, "schema": job_schema, "source": job_source,
        "resolve": job_resolve, "odds": job_odds, "simulate": job_simulate, "diff": job_diff,
        "charts": job_charts, "chart_check": job_chart_check}
JOBS.update({"sweep_specs": job_sweep_specs, "sweep": job_sweep})   # the sweep page (sweep.py)


def run_job(ws: Workspace, name: str, params: dict) -> tuple[str, dict]:
    """("ok", data) or ("error", diagnostics); never raises for what a user can cause."""
    try:
        if not isinstance(params, dict):
            raise InputError("the request must be a JSON object")
        check_fields(params)
        return "ok", JOBS[name](ws, params)
    except UmpireError as e:
        return "error", ws.diagnostics(e)
    except RecursionError:
        return "error", {"kind": "input", "text": "error: the input is nested too deeply to process",
                         "diagnostics": []}
