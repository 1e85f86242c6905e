"""Each cell of a sweep as a pure task of plain data, its content key, and the function that answers it.

A task is a dict of strings, numbers, lists and dicts only: the ruleset folder, the overlay files, the
situation's data (the spec's base with the cell's axis values put in, after the spec was checked), the
question and the cell's seed. ``run_cell`` answers it in whatever process it lands in (this one, a local
worker, a Dask worker) and returns plain data too; the same task gives the same answer everywhere.

The key of a task is a SHA-256 of the content of every ruleset and overlay file (as the load cache keys a
ruleset, loading/cache.py: Umpire's own code and version included), the situation's data and the
question: any edit to a rule, a chart, the spec or Umpire gives new keys, so a stored result is never
stale. Results are stored under the key in the ``sweep`` folder of the load cache's folder, one small
JSON file each (header line with the key and the body's SHA-256, as load cache entries), so a stopped
sweep resumes from the cells already done; ``umpire cache --clear`` leaves them, deleting the folder is
always safe.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from fractions import Fraction
from pathlib import Path

from ..errors import InputError, LimitError, UmpireError

STORE = "sweep"


def canonical(value) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def ruleset_key(root, overlays: tuple) -> str:
    """The load cache's key for this ruleset and overlays (their files' contents and Umpire's)."""
    from ..loading import cache as load_cache
    from ..loading.loader import ruleset_files
    from ..reading.source import read_text
    sources = [(str(p), read_text(p)) for p in ruleset_files(root)] + [(o, read_text(o)) for o in overlays]
    return load_cache.ruleset_key(Path(root), sources, tuple(overlays))


def cell_seed(seed: int, data: dict) -> int:
    """A simulated cell's seed: from the spec's seed and the cell's situation, the same for every overlay set
    (so a house rule's change is measured on the same dice streams)."""
    return int(hashlib.sha256(f"{seed}\n{canonical(data)}".encode()).hexdigest()[:15], 16)


def make_task(rkey: str, root, overlays: tuple, situation_file: str, data: dict, question: dict) -> dict:
    from ..loading.cache import content_key
    if "simulate" in question:
        question = {"simulate": dict(question["simulate"], seed=cell_seed(question["simulate"]["seed"], data))}
    key = content_key("sweep-cell", [("ruleset", rkey), ("file", situation_file), ("situation", canonical(data)),
                                     ("question", canonical(question))])
    return {"key": key, "ruleset": str(root), "overlays": list(overlays), "file": situation_file,
            "data": data, "question": question}


def run_cell(task: dict) -> dict:
    """Answer one task: each outcome's share (exact fractions for odds), or the reason the cell could not be
    answered. Pure: depends on the task's content only."""
    from ..api import load_ruleset, situation_from
    from ..reading.source import Document
    from ..tools.reports import odds_json, simulate_json
    q = task["question"]
    try:
        ruleset = load_ruleset(task["ruleset"], tuple(task["overlays"]))
        data = task["data"]
        s = situation_from(Document(task["file"], data), (), data, ruleset)
        if "odds" in q:
            o = q["odds"]
            report = odds_json(s, o["by"], o["all_dice"], o["budget"])
        else:
            o = q["simulate"]
            if o["all_dice"]:
                s.dice, s.dice_positions = [], []
            report = simulate_json(s, o["runs"], o["seed"], o["by"])
    except LimitError as e:
        return {"status": "limit", "reason": e.message}
    except InputError as e:
        if e.position is None:      # not about the situation (its errors name its file): about the question
            return {"status": "invalid", "reason": e.message, "question": True, "hint": e.hint}
        return {"status": "invalid", "reason": str(e).split("\n")[0]}
    except UmpireError as e:
        return {"status": "error", "reason": e.message}
    except Exception as e:  # a bug in Umpire: reported as such, never stored
        return {"status": "internal error", "reason": f"{type(e).__name__}: {e}"}
    outcomes = {row["outcome"]: row.get("fraction", row["share"]) for row in report["outcomes"]}
    stops = {row["outcome"]: row["stop"] for row in report["outcomes"]}
    out: dict = {"status": "ok", "reason": None, "outcomes": outcomes,
                 "needs_chart": report["needs_chart"].get("fraction", report["needs_chart"]["share"])}
    kinds = {k for k in stops.values()}
    if outcomes and None not in kinds and len(kinds) == 1:     # nothing but stops of one kind: the cell's status
        out["status"] = kinds.pop()
        out["reason"] = "; ".join(label.split(": ", 1)[1] if ": " in label else label for label in outcomes)
    if "simulate" in q:
        out["runs"] = q["simulate"]["runs"]
    return out


def share(value) -> float:
    """A stored share as a number: an exact fraction's text, or a float (a simulation's estimate)."""
    return float(Fraction(value)) if isinstance(value, str) else float(value)


def exact(value) -> Fraction:
    return Fraction(value) if isinstance(value, str) else Fraction(value).limit_denominator(10**9)


# ---- the results store --------------------------------------------------------------------------------

def store_folder() -> Path | None:
    from ..loading import cache as load_cache
    base = load_cache.folder()
    return None if base is None else base / STORE


def stored(key: str) -> dict | None:
    base = store_folder()
    if base is None:
        return None
    try:
        raw = (base / key[:2] / f"{key}.json").read_bytes()
        head, sep, body = raw.partition(b"\n")
        header = json.loads(head)
        if not sep or header.get("key") != key or header.get("sha256") != hashlib.sha256(body).hexdigest():
            return None
        result = json.loads(body)
        return result if isinstance(result, dict) and isinstance(result.get("status"), str) else None
    except (OSError, ValueError, UnicodeDecodeError):
        return None


def store(key: str, result: dict) -> bool:
    """Keep a result (atomically: a temporary file renamed into place); internal errors are never kept."""
    base = store_folder()
    if base is None or result.get("status") == "internal error":
        return False
    import tempfile
    tmp = None
    try:
        folder = base / key[:2]
        folder.mkdir(parents=True, exist_ok=True)
        body = canonical(result).encode("utf-8", "surrogatepass")
        header = canonical({"key": key, "sha256": hashlib.sha256(body).hexdigest()}).encode()
        fd, tmp = tempfile.mkstemp(prefix=".cell-", suffix=".tmp", dir=folder)
        with os.fdopen(fd, "wb") as f:
            f.write(header + b"\n" + body)
        os.replace(tmp, folder / f"{key}.json")
        return True
    except (OSError, ValueError, UnicodeError):
        with contextlib.suppress(OSError):
            if tmp is not None:
                os.unlink(tmp)
        return False
