"""Ruleset test files: cases (usually the rulebook's worked examples) and their expectations.

A case names a procedure with inputs and dice (or reuses a situation file)
and lists the result fields it expects. Records match as subsets, so a case
states only what the book states. ``umpire test`` and the pytest suite both
run cases through ``run_case``.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

from ..api import Outcome, load_ruleset, run_situation, situation_from
from ..errors import ErrorCollector, InputError, Position
from ..loading.cache import valid_document
from ..loading.loader import find_root
from ..loading.maps import Places, referenced_at
from ..model.values import Roll, exact, show, thaw
from ..reading.plain import data_class, factory

TYPE_CHECKING = False   # (typing is for the checker only: importing it costs a warm start 2%)
if TYPE_CHECKING:
    from typing import Any


@data_class
class Case:
    id: str
    file: str
    data: dict
    doc: Any
    path: tuple
    ruleset_path: Path
    overlays: tuple
    title: str | None = None
    source: str | None = None

    @property
    def position(self) -> Position:
        """Where the case is written (looked up when reported: a cached document decodes its positions then)."""
        return self.doc.at(self.path)


@data_class
class CaseResult:
    case: Case
    passed: bool
    problems: list[str] = factory(default_factory=list)
    outcome: Outcome | None = None


def test_files(ruleset_dir: Path) -> list[Path]:
    root = find_root(ruleset_dir)
    return sorted((root / "tests").glob("*.y*ml"))


def load_cases(test_file: Path) -> list[Case]:
    doc = valid_document(test_file, "tests")
    base = Path(test_file).parent
    ruleset_path = base / doc.data["ruleset"]
    overlays = tuple(str(base / w) for w in doc.data.get("with") or ())
    cases: list = []
    seen: dict = {}
    for i, c in enumerate(doc.data["cases"]):
        if c["id"] in seen:
            raise InputError(f"case id '{c['id']}' is used twice in this file (first at "
                             f"{doc.at(('cases', seen[c['id']], 'id'))})", doc.at(("cases", i, "id")))
        seen[c["id"]] = i
        own = tuple(str(base / w) for w in c.get("with") or ())     # this case's overlays, after the file's
        cases.append(Case(c["id"], str(test_file), c, doc, ("cases", i), ruleset_path,
                          overlays + own, c.get("title"), c.get("source")))
    return cases


def repeated_ids(cases: list[Case]) -> list[str]:
    """Warnings for case ids used in more than one test file: a report naming the id is then ambiguous."""
    first: dict[str, Case] = {}
    warnings = []
    for case in cases:
        if case.id in first:
            warnings.append(f"{case.position}: warning: case id '{case.id}' is also used at "
                            f"{first[case.id].position}; give each case its own id")
        else:
            first[case.id] = case
    return warnings


def collect(ruleset_dir) -> list[Case]:
    cases, errors = [], ErrorCollector()
    for f in test_files(Path(ruleset_dir)):
        with errors.attempt():
            cases += load_cases(f)
    errors.raise_any()
    return cases


def _case_situation(case: Case, ruleset=None):
    """The situation a case runs: its own, or a situation file with the parts the case overrides.

    Each part keeps the position of the file it came from, so an error points at the right line.
    ``ruleset`` is the case's ruleset when the caller has loaded it already.
    """
    if ruleset is None:
        ruleset = load_ruleset(case.ruleset_path, case.overlays)
    data = case.data
    if "situation" not in data:
        return situation_from(case.doc, case.path, data, ruleset)
    sit_file = referenced_at(Path(case.file).parent, data["situation"], case.doc, case.path + ("situation",),
                             "situation")
    sit_doc = valid_document(sit_file, "situation")
    base = sit_doc.data
    # the map and what stands on it: the case's own when it gives them, else the situation's
    own_case, situation_file = (case.doc, case.path, data), (sit_doc, (), base)
    board = (own_case if "map" in data else situation_file,
             own_case if "map" in data or "units" in data or "markers" in data else situation_file)
    if "procedure" in data or "inputs" in data:
        # inputs are checked against the procedure, so they are read together from the case
        own = {"procedure": data.get("procedure", base["procedure"]), "inputs": data.get("inputs", base.get("inputs"))}
        situation = situation_from(case.doc, case.path, own, ruleset, board)
    else:
        situation = situation_from(sit_doc, (), base, ruleset, board)
    if "change_inputs" in data:
        # only these inputs change: each keeps the position of the file it came from
        from ..loading.inputs import check_inputs, coerce
        changes = data["change_inputs"] or {}
        given = (data["inputs"] if "inputs" in data else base.get("inputs")) or {}
        merged = {**given, **changes}
        check_inputs(ruleset, situation.procedure, merged, case.doc, case.path + ("change_inputs",))
        for p in situation.procedure.params:
            if p.name in changes:
                situation.args[p.name] = coerce(ruleset, p.type, changes[p.name], case.doc,
                                                case.path + ("change_inputs", p.name))
    dice_doc, dice_path = (case.doc, case.path) if "dice" in data else (sit_doc, ())
    situation.dice = list(data.get("dice", base.get("dice")) or [])
    situation.dice_positions = Places(dice_doc, dice_path + ("dice",), len(situation.dice))
    situation.choices = dict(data.get("choices", base.get("choices")) or {})
    situation.seed = data.get("seed", base.get("seed"))
    return situation


def run_case(case: Case, ruleset=None, trace: bool = True) -> CaseResult:
    """Run one case and compare its outcome with what it expects (``ruleset``: its ruleset, if loaded).

    ``trace`` False runs it untraced, as `umpire test` does: a case checks the result, never the trace,
    and a traced run and an untraced one end alike (same result, same stop, same message).
    """
    situation = _case_situation(case, ruleset)
    outcome = run_situation(situation, seed=case.data.get("seed", 0), trace=trace)
    problems: list[str] = []
    data = case.data
    if "expect_error" in data:
        wanted = data["expect_error"]
        if outcome.status != "error":
            problems.append(f"expected the adjudication to stop with an error containing '{wanted}', "
                            f"but it ended {outcome.status}" + (f": {show(outcome.value)}" if outcome.status == "ok" else
                                                                 f": {outcome.reason}"))
        elif wanted.lower() not in (outcome.reason or "").lower():
            problems.append(f"expected an error containing '{wanted}', got: {outcome.reason}")
    elif "expect_refused" in data:
        wanted = data["expect_refused"]
        if outcome.status != "refused":
            problems.append(f"expected a refusal containing '{wanted}', but it ended {outcome.status}"
                            + (f": {outcome.reason}" if outcome.reason else f": {show(outcome.value)}"))
        elif wanted.lower() not in (outcome.reason or "").lower():
            problems.append(f"expected a refusal containing '{wanted}', got: {outcome.reason}")
    else:
        if outcome.status != "ok":
            problems.append(f"the adjudication ended {outcome.status}: {outcome.reason}")
    if "expect" in data and outcome.status == "ok":
        problems += compare(data["expect"], outcome.value)
    if "expect" not in data and "expect_error" not in data and "expect_refused" not in data:
        problems.append("this case states no expectation (expect, expect_error or expect_refused)")
    return CaseResult(case, not problems, problems, outcome)


def _thawed_here(value: Any) -> Any:
    """``value`` as ``thaw`` gives it, at its top level only: a record or list keeps its parts as they are, to
    be thawed when compared (a case names a few fields of a result that may hold a whole board)."""
    if isinstance(value, Roll) or not isinstance(value, (dict, list, tuple)):
        return thaw(value)
    return list(value) if isinstance(value, tuple) else value


def compare(expected: Any, actual: Any, path: str = "") -> list[str]:
    """Differences between what a case expects and what the adjudication gave (subset match for records).
    ``actual`` is a result as the adjudication gives it, or as ``thaw`` makes it data: the same differences."""
    where = path or "result"
    actual = _thawed_here(actual)
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return [f"{where}: expected a record with {', '.join(expected)}, got {_short(actual)}"]
        out = []
        for k, v in expected.items():
            if isinstance(k, str) and "." in k and k not in actual:
                head, rest = k.split(".", 1)
                out += compare({rest: v}, actual.get(head), f"{path}.{head}" if path else head) if head in actual else \
                    [f"{path + '.' if path else ''}{head}: missing (the result has: {', '.join(map(str, actual)) or 'nothing'})"]
                continue
            if k not in actual:
                out.append(f"{path + '.' if path else ''}{k}: missing (the result has: {', '.join(map(str, actual)) or 'nothing'})")
                continue
            out += compare(v, actual[k], f"{path}.{k}" if path else str(k))
        return out
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return [f"{where}: expected {_short(expected)}, got {_short(actual)}"]
        out = []
        for i, (e, a) in enumerate(zip(expected, actual)):
            out += compare(e, a, f"{where}[{i}]")
        return out
    if _equal(expected, actual):
        return []
    return [f"{where}: expected {_short(expected)}, got {_short(actual)}"]


def _equal(expected, actual) -> bool:
    if isinstance(expected, bool) or isinstance(actual, bool):
        return expected is actual
    if isinstance(expected, (int, float)) and isinstance(actual, (int, str)) and not isinstance(actual, bool):
        try:   # an expected decimal is the exact number written: 0.1 is 1/10
            return Fraction(exact(expected) if isinstance(expected, float) else expected) == Fraction(actual)
        except (ValueError, ZeroDivisionError):
            return False
    if isinstance(expected, str) and isinstance(actual, int):
        try:
            return Fraction(expected) == actual
        except ValueError:
            return False
    return expected == actual


def _short(v) -> str:
    v = thaw(v)
    text = repr(v) if not isinstance(v, str) else f"'{v}'"
    return text if len(text) < 120 else text[:117] + "..."
