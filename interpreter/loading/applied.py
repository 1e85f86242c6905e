"""Charts applied once: the player's own chart overlay for a ruleset, found without ``--with``.

A player registers a chart overlay per ruleset (``umpire charts RULESET --use FILE``; ``--forget``
drops it). The record is ``charts.yaml`` in Umpire's per-user config folder: ``$UMPIRE_CONFIG_DIR`` if
set, else the platform's user config folder (platformdirs: ``~/.config/umpire`` on Linux,
``~/Library/Application Support/umpire`` on macOS, ``%LOCALAPPDATA%\\umpire`` on Windows). It holds one
line per ruleset, ``RULESET-ID: FILE`` (a relative FILE is read from the config folder).

A folder ``charts/`` beside a situation file may hold ``RULESET-ID.yaml`` (or ``.yml``, ``.csv``,
``.tsv``); for that situation it is used instead of the registered file.

Every load of that ruleset applies the file first, before the ``--with`` overlays; ``--no-charts``
(``UMPIRE_CHARTS=off`` in the environment) turns this off. ``applied_to(ruleset)`` says which
files a loaded ruleset took this way, for the trace header and ``--json``.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

from ..errors import InputError, Position

CONFIG_FILE = "charts.yaml"
FOLDER = "charts"
SUFFIXES = (".yaml", ".yml", ".csv", ".tsv")
_OFF_WORDS = {"0", "off", "no", "false"}
_LINE = re.compile(r"([A-Za-z0-9][A-Za-z0-9_.-]*)[ \t]*:[ \t]*(.*)")

_handed_out: set[str] = set()       # every file this process applied as someone's charts
_read: dict[str, tuple] = {}        # config path -> ((size, mtime), {id: path})


def disabled() -> bool:
    """Whether applied charts are off (``--no-charts`` or ``UMPIRE_CHARTS=off``)."""
    return os.environ.get("UMPIRE_CHARTS", "").strip().lower() in _OFF_WORDS


def set_disabled(off: bool) -> str | None:
    """Turn applied charts off (or back on) for this process and the worker processes it starts; returns
    the environment's previous setting, for ``restore``."""
    old = os.environ.get("UMPIRE_CHARTS")
    if off:
        os.environ["UMPIRE_CHARTS"] = "off"
    return old


def restore(old: str | None) -> None:
    if old is None:
        os.environ.pop("UMPIRE_CHARTS", None)
    else:
        os.environ["UMPIRE_CHARTS"] = old


def config_dir() -> Path:
    """Umpire's per-user config folder (it need not exist)."""
    chosen = os.environ.get("UMPIRE_CONFIG_DIR")
    if chosen:
        return Path(chosen)
    plain = _plain_xdg()
    if plain is not None:
        return plain
    try:
        import platformdirs
    except ImportError:     # the XDG convention platformdirs follows on Linux
        xdg = os.environ.get("XDG_CONFIG_HOME")
        base = Path(xdg) if xdg and os.path.isabs(xdg) else Path(os.path.expanduser("~")) / ".config"
        return base / "umpire"
    return Path(platformdirs.user_config_dir("umpire", appauthor=False))


def _plain_xdg() -> Path | None:
    """On Linux, in the case every platformdirs version answers alike (an absolute ``XDG_CONFIG_HOME``, or none
    and an absolute ``HOME``; not Android), its answer without importing it (1.6 ms of a 85 ms resolve); else None."""
    env = os.environ
    if sys.platform != "linux" or "ANDROID_DATA" in env:
        return None
    xdg = env.get("XDG_CONFIG_HOME")
    if xdg:
        return Path(xdg) / "umpire" if os.path.isabs(xdg) else None
    home = env.get("HOME")
    return Path(home) / ".config" / "umpire" if home and os.path.isabs(home) else None


def config_file() -> Path:
    return config_dir() / CONFIG_FILE


def registered() -> dict[str, Path]:
    """The charts recorded per ruleset id (an unreadable or badly written record is an error at its line)."""
    path = config_file()
    try:
        st = path.stat()
    except OSError:
        return {}
    stamp = (st.st_size, st.st_mtime_ns)
    key = str(path)
    if key in _read and _read[key][0] == stamp:
        return _read[key][1]
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"cannot read your charts record {path}: {getattr(e, 'strerror', None) or e}",
                         Position(str(path))) from None
    found = {rid: where for rid, where, _ in _entries(text, path)}
    _read[key] = (stamp, found)
    return found


def _entries(text: str, path: Path) -> list[tuple[str, Path, int]]:
    """(ruleset id, chart file, line index) for each line of the record."""
    out = []
    for n, line in enumerate(text.splitlines()):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        m = _LINE.fullmatch(line.rstrip())
        value = m.group(2).strip() if m else ""
        if m and value.startswith('"'):
            try:
                value = json.loads(value)
            except ValueError:
                m = None
        elif m:
            value = re.sub(r"\s+#.*$", "", value)
        if not m or not isinstance(value, str) or not value:
            raise InputError("this line of your charts record is not 'RULESET-ID: FILE'", Position(str(path), n + 1, 1),
                             "fix or delete the line (umpire charts RULESET --use FILE writes it; --forget removes it)")
        where = Path(os.path.expanduser(value))
        out.append((m.group(1), where if where.is_absolute() else path.parent / where, n))
    return out


def _ruleset_id(root: Path) -> str | None:
    """The id a ruleset folder's manifest declares (its ``ruleset:`` line), without reading the YAML."""
    try:
        text = (Path(root) / "ruleset.yaml").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    m = re.search(r"^ruleset[ \t]*:[ \t]*[\"']?([^\"'#\s]+)", text, re.M)
    return m.group(1) if m else None


def charts_for(root: Path, near: Path | None = None) -> tuple[str, ...]:
    """The chart overlay a load of the ruleset at ``root`` takes first: one beside the situation (``near``,
    its folder) else the registered one; none when applied charts are off."""
    if disabled():
        return ()
    beside = [] if near is None else [Path(near) / FOLDER]
    if not beside and not config_file().is_file():
        return ()
    rid = _ruleset_id(root)
    if rid is None:
        return ()
    for folder in beside:
        for suffix in SUFFIXES:
            p = folder / (rid + suffix)
            if p.is_file():
                return _hand_out(p)
    mine = registered().get(rid)
    if mine is None:
        return ()
    if not mine.is_file():
        raise InputError(f"your charts for '{rid}' ({mine}) are not there any more",
                         Position(str(config_file())),
                         "register them again (umpire charts RULESET --use FILE), drop them (--forget), "
                         "or leave them out this once (--no-charts)")
    return _hand_out(mine)


def _hand_out(p: Path) -> tuple[str, ...]:
    text = str(p)
    _handed_out.add(text)
    return (text,)


def applied_to(ruleset) -> list[str]:
    """The overlays of a loaded ruleset that it took as the player's applied charts."""
    return [o for o in ruleset.overlays if o in _handed_out]


def charts_line(ruleset) -> list[str]:
    """The line a trace header (and odds, and ``umpire charts``) gives the applied charts; none: no line."""
    mine = applied_to(ruleset)
    return [f"charts: {', '.join(mine)}  (your applied charts; --no-charts leaves them out)"] if mine else []


def record(rid: str, chart: Path | None) -> tuple[Path, Path | None]:
    """Register ``chart`` as the charts of ruleset ``rid`` (None: forget them), keeping every other line of
    the record as it was; returns (the record's path, the file recorded before, if any)."""
    path = config_file()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        text = ("# Umpire: the chart overlay applied to every command, per ruleset (RULESET-ID: FILE).\n"
                "# Written by `umpire charts RULESET --use FILE`; `--forget` removes a line.\n")
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"cannot read your charts record {path}: {getattr(e, 'strerror', None) or e}") from None
    lines = text.splitlines(keepends=True)
    before = None
    for found, where, n in _entries(text, path):
        if found == rid:
            before = where
            lines[n] = ""
            if chart is not None:
                lines[n] = f"{rid}: {json.dumps(str(chart), ensure_ascii=False)}\n"
                chart = None
    if chart is None and before is None:
        return path, None               # nothing to forget: the record stays as it is
    if chart is not None:
        if lines and not lines[-1].endswith("\n"):
            lines[-1] += "\n"
        lines.append(f"{rid}: {json.dumps(str(chart), ensure_ascii=False)}\n")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}")
        tmp.write_text("".join(lines), encoding="utf-8")
        tmp.replace(path)
    except OSError as e:
        raise InputError(f"cannot write your charts record {path}: {e.strerror or e}") from None
    _read.pop(str(path), None)
    return path, before
