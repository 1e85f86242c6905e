"""Every error a user can meet, each carrying where it happened.

Three families, matching the exit codes of the command line:

* ``InputError`` (exit 2): the ruleset, overlay, situation or command line is
  wrong. Always positioned (file:line:column) when the text is known.
* ``AdjudicationError`` (exit 1): the rules ran and could not finish: an
  unknown chart cell, a ``fail`` step, a limit reached.
* ``Refusal`` is not an error to the user; it is a legal outcome ("attack not
  allowed") that a procedure or a stack produces.
"""

from __future__ import annotations

import re
from contextlib import contextmanager

TYPE_CHECKING = False   # (typing is for the checker only: importing it costs a warm start 2%)
if TYPE_CHECKING:
    from typing import Any, Final, Iterable


class Position:
    """A place in a source file (1-based line and column); ``end`` is (line, column) just after it, when known.

    A value: equal and hashed by file, line and column (``end`` does not count); never changed once made (its
    fields are ``Final``, which mypy holds every assignment to). A plain class with slots rather than a frozen
    dataclass: a load makes thousands (a warm ``resolve`` 4,500 from the load cache, one that reads YAML 35,000), and a
    frozen dataclass's constructor costs three times as much."""

    __slots__ = ("file", "line", "column", "end")

    def __init__(self, file: str, line: int = 0, column: int = 0, end: tuple | None = None):
        self.file: Final = file
        self.line: Final = line
        self.column: Final = column
        self.end: Final = end

    def __eq__(self, other):
        if other.__class__ is not Position:
            return NotImplemented
        return self.line == other.line and self.column == other.column and self.file == other.file

    def __hash__(self) -> int:
        return hash((self.file, self.line, self.column))

    def __repr__(self) -> str:
        return f"Position(file={self.file!r}, line={self.line!r}, column={self.column!r}, end={self.end!r})"

    def __reduce__(self):
        return Position, (self.file, self.line, self.column, self.end)

    def __str__(self) -> str:
        if not self.line:
            return self.file
        return f"{self.file}:{self.line}:{self.column}"

    def shifted(self, lines: int = 0, column: int | None = None) -> "Position":
        return Position(self.file, self.line + lines, self.column if column is None else column)

    def in_file(self, file: str) -> "Position":
        """The same place, in a file named otherwise."""
        return Position(file, self.line, self.column, self.end)


class UmpireError(Exception):
    """Base of Umpire's own errors; ``str()`` gives the message a user reads.

    ``related`` lists other places that explain the error, each (position, what it is), e.g. the
    line of a situation that supplied the value a procedure could not use.
    """

    exit_code = 1
    code = "error"

    def __init__(self, message: str, position: Position | None = None, hint: str | None = None,
                 code: str | None = None):
        super().__init__(message)
        self.message = message
        self.position = position
        self.hint = hint
        self.related: list[tuple[Position, str]] = []
        if code:
            self.code = code

    def __str__(self) -> str:
        where = f"{self.position}: " if self.position else ""
        related = "".join(f"\n  {pos}: {what}" for pos, what in self.related)
        hint = f"\n  hint: {self.hint}" if self.hint else ""
        return f"{where}{self.kind}: {self.message}{related}{hint}"

    kind = "error"


class InputError(UmpireError):
    """Invalid input: exit code 2."""

    exit_code = 2
    kind = "error"
    code = "invalid-input"


class InputErrors(InputError):
    """Several input errors found in one pass (checks report all they find)."""

    def __init__(self, errors: list[InputError]):
        self.errors = errors
        super().__init__(errors[0].message, errors[0].position, errors[0].hint)

    def __str__(self) -> str:
        lines = [str(e) for e in self.errors]
        if len(self.errors) > 1:
            lines.append(f"{len(self.errors)} errors")
        return "\n".join(lines)


class ErrorCollector:
    """Gathers every InputError from several attempts, so a check reports all it finds at once.

        errors = ErrorCollector()
        for f in files:
            with errors.attempt():
                load(f)
        errors.raise_any()

    (or ``except InputError as e: errors.add(e)`` in a loop hot enough that a context manager shows.)
    """

    def __init__(self):
        self.errors: list[InputError] = []

    @contextmanager
    def attempt(self):
        try:
            yield
        except InputError as e:
            self.add(e)

    def add(self, error: InputError) -> None:
        if isinstance(error, InputErrors):
            self.errors += error.errors
        else:
            self.errors.append(error)

    def raise_any(self) -> None:
        if self.errors:
            raise InputErrors(self.errors)


class AdjudicationError(UmpireError):
    """The rules could not be carried to the end: exit code 1."""

    exit_code = 1
    kind = "cannot adjudicate"
    code = "cannot-adjudicate"

    def __init__(self, message, position=None, hint=None, citation: str | None = None, value=None):
        super().__init__(message, position, hint)
        self.citation = citation
        self.value = value      # the value the rules could not use (to find where a situation gave it)


class UnknownCellError(AdjudicationError):
    """An adjudication reached a chart cell the rulebook does not print."""

    kind = "needs chart"
    code = "needs-chart"

    def __init__(self, table: str, title: str, row_label: str | None, column_label: str | None,
                 player_aid: str | None, position: Position | None = None):
        parts = ([f"row {row_label}"] if row_label is not None else []) + \
            ([f"column {column_label}"] if column_label is not None else [])
        where = ", ".join(parts)
        aid = f" (printed on {player_aid})" if player_aid else ""
        message = (f"table '{table}' ({title}){aid}: the cell at {where} is not given in the rulebook" if parts else
                   f"table '{table}' ({title}){aid}: the rulebook gives neither its rows nor its columns")
        hint = ("supply it from your own chart with an overlay: "
                "`umpire charts RULESET --template > my-charts.yaml`, fill in the cell, "
                "then `umpire charts RULESET --use my-charts.yaml` (every command applies it from then on; "
                "or `--with my-charts.yaml` for one command)") if parts else (
                "supply the whole table from your own chart with an overlay change "
                "`- table: NAME` and `replace:` (see docs/language.md, Overlays)")
        super().__init__(message, position, hint)
        self.table, self.row_label, self.column_label = table, row_label, column_label

    @property
    def short(self) -> str:
        parts = ([f"row {self.row_label}"] if self.row_label is not None else []) + \
            ([f"column {self.column_label}"] if self.column_label is not None else [])
        return f"needs chart: {self.table} " + (", ".join(parts) if parts else "(structure not given)")


class LimitError(AdjudicationError):
    """A bound on evaluation (steps, loop, depth, dice) or on the size of a value was reached."""

    kind = "limit reached"
    code = "limit"


class Refusal(Exception):
    """A legal 'not allowed' outcome, with the reason and the rule that says so."""

    def __init__(self, reason: str, citation: str | None = None):
        super().__init__(reason)
        self.reason = reason
        self.citation = citation


def did_you_mean(word: str, candidates: Iterable[str]) -> str | None:
    """A 'did you mean' hint for a misspelt name (at most three candidates, nearest first), or None.

    Besides near spellings, a name written in another case and a short name that begins a candidate
    (``u`` for ``unit``) count, when few candidates begin so."""
    return _hint(nearest(word, candidates))


def nearest(word: str, candidates: Iterable[str], n: int = 3) -> list[str]:
    """The candidates nearest to a misspelt name, at most ``n``, nearest first."""
    import difflib  # only for a misspelt name: not at every start
    word, names = str(word), [str(c) for c in candidates]
    matches = difflib.get_close_matches(word, names, n=n, cutoff=0.6)
    if not matches:
        folded = [c for c in names if c.lower() == word.lower()]
        prefixed = [c for c in names if word and c.lower().startswith(word.lower())]
        matches = folded or (prefixed if len(prefixed) <= n else [])
    return matches[:n]


def _hint(matches: list[str]) -> str | None:
    if not matches:
        return None
    return "did you mean " + " or ".join(f"'{m}'" for m in matches) + "?"


class BuiltinArgumentError(ValueError):
    """Raised by a builtin function whose arguments are wrong; its message is shown with the call's position."""

    value: Any = None
    """The argument it could not use, when the message names one (so a situation that gave it is named too)."""

    def positioned(self, name: str, position: Position | None) -> AdjudicationError:
        return AdjudicationError(f"{name}(): {self}", position, value=self.value)


class MissingFactError(AdjudicationError):
    """A fact the rules need that the situation neither states nor gives a map to derive it from (exit 2: the
    situation is incomplete, as an input error is)."""

    exit_code = 2
    kind = "missing fact"
    code = "missing-fact"


class RejectedInputError(AdjudicationError):
    """A ``reject`` statement: the situation contradicts itself or its map (a unit stated in a hex the map
    places it elsewhere), so it is an input error (exit 2), not a question the rules leave open."""

    exit_code = 2
    kind = "rejected input"
    code = "rejected-input"


class MissingFact(BuiltinArgumentError):
    """Raised by the ``missing_fact`` builtin (``derive`` without a map or a stated value)."""

    def __init__(self, message: str, hint: str):
        super().__init__(message)
        self.hint = hint

    def positioned(self, name: str, position: Position | None) -> AdjudicationError:
        return MissingFactError(str(self), position, self.hint)


# ---- machine-readable diagnostics (for --json, editors and the web workbench) -------------

def diagnostics(error: BaseException, texts: dict[str, str] | None = None) -> list[dict]:
    """An error as a list of diagnostics: file, line, column, end, severity, code, message, hint.

    The one place that turns errors into data: ``--json`` output of the commands and any
    editor or web front end use it. Several input errors give several diagnostics; an
    exception that is not Umpire's own is reported as code 'internal'. ``end`` is just after
    the name, number, quoted text or character the error points at, read from ``texts``
    (file -> content, e.g. an editor's unsaved buffers) or from the file.
    """
    lines = _Lines(texts)
    if isinstance(error, InputErrors):
        return [d for e in error.errors for d in diagnostics(e, lines.texts)]
    if isinstance(error, UmpireError):
        d = _diagnostic(lines.ended(error.position, error.message), "error", error.code, error.message, error.hint)
        if error.related:
            d["related"] = [_diagnostic(lines.ended(pos), "info", "related", what, None)
                            for pos, what in error.related]
        return [d]
    return [_diagnostic(None, "error", "internal", f"{type(error).__name__}: {error}",
                        "this is a bug in Umpire; run again with UMPIRE_DEBUG=1 for the details and report it")]


_WARNING = r"^(?P<file>.*?):(?P<line>\d+):(?P<column>\d+): warning: (?P<message>.*)$"
# (texts, here and below: re compiles each when a diagnostic first needs it, never on a start without one)


def warning_diagnostic(text: str, texts: dict[str, str] | None = None) -> dict:
    """A checker warning ('file:line:col: warning: ...') as a diagnostic."""
    m = re.match(_WARNING, text, re.S)
    if not m:
        return _diagnostic(None, "warning", "warning", text, None)
    pos = _Lines(texts).ended(Position(m["file"], int(m["line"]), int(m["column"])))
    return _diagnostic(pos, "warning", "warning", m["message"], None)


_TOKEN = r'[A-Za-z_][\w-]*|-?\d+(?:\.\d+)?|"(?:[^"\\\n]|\\.)*"?|\'[^\'\n]*\'?|@\w+|\S'
_MAX_READ = 2_000_000
"""Bytes of a file read to find where a diagnostic ends (Umpire's own file-size limit)."""


class _Lines:
    """The lines of the files diagnostics point into, each file read once."""

    def __init__(self, texts: dict[str, str] | None):
        self.texts = texts if texts is not None else {}

    def ended(self, pos: Position | None, message: str = "") -> Position | None:
        """``pos`` with ``end`` set after the token it starts at (unchanged when the text is unknown).

        When the message names something in quotes that is written further along the line (``unknown
        table 'ift2'`` at ``lookup(ift2, ...)``), the range is that name, so an editor marks the name."""
        if pos is None or pos.end is not None or not pos.line or not pos.column:
            return pos
        text = self.texts.get(pos.file)
        if text is None:
            try:
                with open(pos.file, encoding="utf-8-sig") as f:
                    text = f.read(_MAX_READ)
            except (OSError, UnicodeDecodeError, ValueError):
                text = ""
            self.texts[pos.file] = text
        lines = text.splitlines()
        if pos.line > len(lines):
            return pos
        line = lines[pos.line - 1]
        named = re.search(r"'([^'\n]+)'", message)
        if named and pos.column <= len(line):
            at = re.search(r"(?<![\w-])" + re.escape(named.group(1)) + r"(?![\w-])", line[pos.column - 1:])
            if at and not line[pos.column - 1:pos.column - 1 + at.start()].count("\""):
                start = pos.column + at.start()
                return Position(pos.file, pos.line, start, (pos.line, start + len(named.group(1))))
        m = re.compile(_TOKEN).match(line, pos.column - 1) if pos.column <= len(line) else None
        end = pos.column + (len(m.group(0)) if m else 0)
        return Position(pos.file, pos.line, pos.column, (pos.line, end))


def _diagnostic(pos: Position | None, severity: str, code: str, message: str, hint: str | None) -> dict:
    return {"file": pos.file if pos else None, "line": (pos.line or None) if pos else None,
            "column": (pos.column or None) if pos else None,
            "end": {"line": pos.end[0], "column": pos.end[1]} if pos is not None and pos.end else None,
            "severity": severity, "code": code, "message": message, "hint": hint}
