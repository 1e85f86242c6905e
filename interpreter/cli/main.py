"""The ``umpire`` command.

Exit codes: 0 success, 1 an adjudication or a test failed, 2 invalid input,
3 an internal error (a bug in Umpire, never caused by input alone).
Every error the user can cause is printed as ``file:line:column: error: ...``
without a traceback; with ``--json`` the errors are also printed as JSON
diagnostics on standard output (``errors.diagnostics``).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
from pathlib import Path

from .. import __version__
from ..errors import InputError, UmpireError, diagnostics
from .args import formatter

EXAMPLES = """\
examples (the shipped rulesets are the folders under rulesets/):
  umpire check RULESET                      validate a ruleset folder
  umpire list RULESET                       procedures, tables, stacks, catalogues
  umpire resolve SITUATION --explain        one adjudication with its full trace
  umpire resolve SITUATION --seed 7 --json  replayable, as data
  umpire odds SITUATION --by FIELD          exact odds
  umpire test RULESET                       the ruleset's own test cases
  umpire charts RULESET --template          your card's charts as grids to fill in (--format csv: a spreadsheet)
  umpire charts RULESET --use MY-CHARTS     check them, then apply them to every command (--no-charts: not now)
  umpire charts RULESET                     per table, cells filled and unknown; situations still stopping
  umpire sweep SPEC -j 2 -o rows.csv        one question over a grid of situations and house rules
  umpire serve                              the web workbench on http://127.0.0.1:8000/

exit codes:
  0  done; a refusal by the rules (an illegal attack, say) is a result too (for test: every case passed)
  1  the rules ran and could not finish (a needs-chart stop, a limit reached), or a test case failed
  2  bad input: a file, a value or the command line; the message gives file:line:column
  3  an internal error in Umpire itself (please report it with the command that gave it)
  130  interrupted (Ctrl-C)
"""


def main(argv: list[str] | None = None) -> int:
    """Run one command; returns its exit code.

    Run as the program (``argv`` None: the ``umpire`` command, ``python -m interpreter``), a short command
    ends the process with ``os._exit`` once its output is flushed: freeing a loaded ruleset object by object
    at exit would cost about as much as reading it from the load cache.
    """
    collecting = gc.isenabled()
    gc.disable()            # while the parser is built and the command's modules load (many long-lived objects)
    if argv is None:
        from .streams import keep_every_byte
        keep_every_byte()   # a write interrupted part-way (Ctrl-Z, then fg) must not lose the rest of the output
    ending = False
    try:
        code, short = _run(argv)
        ending = argv is None and short
    finally:
        if not ending:
            (gc.enable if collecting else gc.disable)()   # as the caller had it
    if ending:
        # the collector stays off to the end: turned back on, the next allocation (saving what the cache
        # learnt, flushing) would start a collection of every object the command made, about an eighth of a
        # short `umpire test`, just before the process ends without freeing any of them
        cache = sys.modules.get("interpreter.loading.cache")
        if cache is not None:
            cache.save_passed()     # what the load cache learnt (os._exit runs no atexit hook)
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except BrokenPipeError:
            pass
        os._exit(code)
    return code


class Parser(argparse.ArgumentParser):
    """argparse, with its errors as JSON diagnostics too when the command line asks for --json, and an
    unknown option reported with the usage of the subcommand it was given to (not the top-level one)."""

    json_wanted = False
    commands: dict[str, "Parser"]   # set on the top-level parser only: each subcommand's, by name

    def __init__(self, *args, formatter_class=argparse.HelpFormatter, **kwargs):
        super().__init__(*args, formatter_class=formatter(formatter_class), **kwargs)

    def error(self, message):
        if Parser.json_wanted:
            d = diagnostics(InputError(f"{self.prog}: {message}", hint=f"`{self.prog} --help` lists its options"))
            print(json.dumps({"ok": False, "exit": 2, "diagnostics": [dict(x, code="usage") for x in d]}, indent=2))
        super().error(message)


def _run(argv) -> tuple[int, bool]:
    """(exit code, whether the command was a short one): the garbage collector stays off for short ones."""
    words = sys.argv[1:] if argv is None else list(argv)
    Parser.json_wanted = "--json" in words[:words.index("--")] if "--" in words else "--json" in words
    parser = build_parser(words)
    args, extra = parser.parse_known_args(argv)
    if extra:
        commands = getattr(parser, "commands", {})
        (commands.get(getattr(args, "command", None)) or parser).error(f"unrecognized arguments: {' '.join(extra)}")
    if not getattr(args, "command", None):
        parser.print_help()
        return 2, False
    if sys.getrecursionlimit() < RECURSION_LIMIT:
        sys.setrecursionlimit(RECURSION_LIMIT)   # the nesting limits keep every input well inside it
    from ..loading import cache as load_cache
    cache_was_off = load_cache.set_disabled(True) if getattr(args, "no_cache", False) else None
    from ..loading import applied
    charts_were = applied.set_disabled(True) if getattr(args, "no_charts", False) else ...
    short = args.command in SHORT_COMMANDS
    if not short:
        gc.enable()
    try:
        return args.func(args) or 0, short
    except UmpireError as e:
        _report_json(args, e, e.exit_code)
        print(str(e), file=sys.stderr)
        return e.exit_code, short
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130, short
    except BrokenPipeError:
        return 0, short
    except Exception as e:  # a bug in Umpire itself, not in the user's input (RecursionError and MemoryError too)
        if os.environ.get("UMPIRE_DEBUG"):
            raise
        _report_json(args, e, 3)
        print(f"internal error: {type(e).__name__}: {e}\n  this is a bug in Umpire; "
              "run again with UMPIRE_DEBUG=1 for the details and report it", file=sys.stderr)
        return 3, short
    finally:
        if cache_was_off is not None:
            load_cache.set_disabled(cache_was_off)
        if charts_were is not ...:
            applied.restore(charts_were)


SHORT_COMMANDS = {"check", "list", "resolve", "test", "charts", "schema", "set", "cache", "init", "odds"}
"""Commands whose work is bounded by the files they read: they run without Python's cyclic garbage collector,
which would only re-traverse the loaded ruleset (half of `umpire test`'s time; peak memory is the same).
Their memory stays bounded by the input limits (file size, values per file) and the adjudication limits
(steps, loop, depth, list and text sizes), which hold with or without the collector. ``odds`` is one
question, answered with the collector paused anyway (odds/exact.py: it leaves no cyclic garbage) and bounded by
its budget of live states and work: with the collector on, the one collection after it walked every closure the
question had compiled, a fifth of a fresh `umpire odds --all-dice` of the slowest shipped situation. Simulations,
sweeps, diff and the server keep it."""


RECURSION_LIMIT = 20_000
"""Python frames allowed: the language's nesting limits (expressions, calls, values) stay well inside it."""


def _report_json(args, error: BaseException, exit_code: int) -> None:
    """With --json, an error is printed as data on standard output too (for editors and the web page)."""
    if getattr(args, "json", False):
        print(json.dumps({"ok": False, "exit": exit_code, "diagnostics": diagnostics(error)}, indent=2))


COMMANDS: dict[str, tuple[str, str]] = {
    "check": (".main", "add_check"), "list": (".main", "add_list"), "resolve": (".main", "add_resolve"),
    "test": (".main", "add_test"), "cache": (".main", "add_cache"),
    "odds": (".odds", "add_odds"), "simulate": (".odds", "add_simulate"),
    "charts": (".overlays", "add_charts"), "diff": (".overlays", "add_diff"),
    "set": (".editing", "add_set"), "schema": (".editing", "add_schema"), "map": (".maps", "add_map"),
    "sweep": (".sweep", "add_sweep"), "serve": ("..web", "add_serve"),
    "init": ("..lsp", "add_init"), "lsp": ("..lsp", "add_lsp"),
}
"""Each command, in the order ``umpire --help`` lists them: the module (relative to this package) and the function
``f(subparsers, overlay_option)`` that adds its parser. A command line naming one command builds only that one."""


def build_parser(words: list[str] | None = None) -> argparse.ArgumentParser:
    """The command line's parser: with ``words`` (the command line) that name a command first, only that command's
    sub-parser is built (a ``resolve`` builds no ``serve``); otherwise (no command, ``--help``, an unknown command)
    every command's, so the help and the errors list them all."""
    p = Parser(
        prog="umpire",
        description="Adjudicate tactical wargame rules written as data: tables, modifier stacks and procedures.",
        epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version", version=f"umpire {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    p.commands = sub.choices        # each subcommand's parser, by name (its own usage on an unknown option)
    named = words[0] if words and words[0] in COMMANDS else None
    from importlib import import_module
    for name, (module, function) in COMMANDS.items():
        if named is None or name == named:
            getattr(import_module(module, __package__), function)(sub, overlay_option)
    return p


def overlay_option(sp) -> None:
    """The options of every command that reads a ruleset."""
    sp.add_argument("--with", dest="overlays", action="append", default=[], metavar="OVERLAY",
                    help="apply an overlay file (house rules or your own charts); repeatable, applied in order")
    sp.add_argument("--no-cache", action="store_true",
                    help="read every file afresh, without the on-disk load cache (also UMPIRE_CACHE=off)")
    sp.add_argument("--no-charts", action="store_true",
                    help="leave out your applied charts (umpire charts RULESET --use FILE; also UMPIRE_CHARTS=off)")


def add_check(sub, overlay_option) -> None:
    c = sub.add_parser("check", help="validate a ruleset (schemas, names, arity); errors as file:line:col",
                       description="Validate every file of a ruleset and report all problems found.")
    c.add_argument("ruleset", help="the ruleset folder")
    overlay_option(c)
    c.add_argument("--json", action="store_true", help="print the findings as JSON")
    c.set_defaults(func=cmd_check)


def add_list(sub, overlay_option) -> None:
    lst = sub.add_parser("list", help="list procedures, their inputs and rule references, tables and stacks",
                         description="Show what a ruleset defines.")
    lst.add_argument("ruleset", help="the ruleset folder")
    overlay_option(lst)
    lst.add_argument("--json", action="store_true", help="print what the ruleset defines as JSON")
    lst.set_defaults(func=cmd_list)


def add_resolve(sub, overlay_option) -> None:
    r = sub.add_parser("resolve", help="run one adjudication from a situation file",
                       description="Run the situation's procedure with its inputs; dice come from the file, "
                                   "then from --seed (or a random seed that is printed so the run can be replayed).")
    r.add_argument("situation", help="a situation YAML file")
    overlay_option(r)
    r.add_argument("--seed", type=int, help="seed for rolls beyond the dice given in the file")
    detail = r.add_mutually_exclusive_group()
    detail.add_argument("--explain", action="store_true", help="print the full trace: every roll, lookup and modifier")
    detail.add_argument("--brief", action="store_true",
                        help="print the short trace a player checks against the book: cited steps, rolls, lookups, "
                             "applied modifiers, decisions and results")
    r.add_argument("--json", action="store_true", help="print the result and the trace as JSON")
    r.add_argument("--full", action="store_true",
                   help="print every field of each record of the result (by default a list of units is shown as "
                        "what changed, before -> after)")
    r.add_argument("--no-trace", action="store_true",
                   help="with --json, leave the trace out (the result, dice and seed only: a few hundred bytes)")
    r.set_defaults(func=cmd_resolve)


def add_test(sub, overlay_option) -> None:
    t = sub.add_parser("test", help="run a ruleset's own test cases (the rulebook examples)",
                       description="Run every case in the ruleset's tests/*.yaml.")
    t.add_argument("ruleset", help="the ruleset folder, or one of its test files to run only that file's cases")
    overlay_option(t)
    t.add_argument("-k", dest="pattern", help="only cases whose id or title contains this text")
    t.add_argument("-v", "--verbose", action="store_true", help="list every case, not only failures")
    t.add_argument("--json", action="store_true", help="print every case's outcome and the problems found as JSON")
    t.set_defaults(func=cmd_test)


def add_cache(sub, overlay_option) -> None:
    ca = sub.add_parser("cache", help="where the on-disk load cache is and how big; --clear empties it",
                        description="The load cache keeps each ruleset, situation and test file as Umpire read it, "
                                    "keyed by the files' contents, so the next command starts fast. It is always "
                                    "safe to clear (or to delete the folder): entries are rebuilt when needed.")
    ca.add_argument("--clear", action="store_true", help="remove every entry")
    ca.add_argument("--json", action="store_true", help="print the folder, its entries, size and state as JSON")
    ca.set_defaults(func=cmd_cache)


# ---- commands ------------------------------------------------------------------------

def cmd_check(args) -> int:
    from ..api import load_ruleset_with_warnings
    from ..tools.testing import collect, repeated_ids
    ruleset, warnings = load_ruleset_with_warnings(args.ruleset, tuple(args.overlays), use_cache=False, lazy=False)
    cases = collect(args.ruleset)
    warnings = warnings + repeated_ids(cases)
    situations = sorted((ruleset.root / "situations").glob("*.y*ml"))
    from ..api import load_situation
    from ..errors import ErrorCollector
    errors = ErrorCollector()
    for s in situations:
        with errors.attempt():
            load_situation(s, tuple(args.overlays))
    errors.raise_any()
    unknown = sum(t.size - t.known_count for t in ruleset.tables.values())
    summary = (f"{ruleset.id}: ok — {len(ruleset.procedures)} procedures, {len(ruleset.tables)} tables "
               f"({unknown} unknown cells), {len(ruleset.stacks)} modifier stacks, {len(ruleset.catalogues)} "
               f"catalogues, {len(situations)} situations, {len(cases)} test cases")
    if args.json:
        from ..errors import warning_diagnostic
        print(json.dumps({"ok": True, "warnings": warnings, "summary": summary,
                          "diagnostics": [warning_diagnostic(w) for w in warnings]}, indent=2))
    else:
        for w in warnings:
            print(w, file=sys.stderr)
        print(summary)
    return 0


def cmd_list(args) -> int:
    from ..api import load_ruleset
    from ..loading.inputs import signature
    r = load_ruleset(args.ruleset, tuple(args.overlays))
    if args.json:
        print(json.dumps({
            "ruleset": r.id, "title": r.title,
            "procedures": [{"name": p.name, "signature": signature(p), "cite": p.cite, "doc": p.doc,
                            "file": str(p.pos)} for p in r.procedures.values()],
            "tables": [{"name": t.name, "title": t.title, "cite": t.cite, "cells": t.size, "known": t.known_count}
                       for t in r.tables.values()],
            "stacks": [{"name": s.name, "title": s.title, "cite": s.cite, "params": s.params,
                        "modifiers": [m.id for m in s.modifiers]} for s in r.stacks.values()],
            "catalogues": {c.name: sorted(c.entries) for c in r.catalogues.values()},
        }, indent=2))
        return 0
    print(f"{r.title}  ({r.id})")
    print("\nprocedures:")
    for p in r.procedures.values():
        cite = f"  [{p.cite}]" if p.cite else ""
        print(f"  {signature(p)}{cite}")
        if p.doc:
            print(f"      {p.doc}")
    print("\ntables:")
    for t in r.tables.values():
        shape = f"{len(t.rows.headings)}x{len(t.columns.headings)}" if t.columns else f"{len(t.rows.headings)} rows"
        print(f"  {t.name}: {t.title} ({shape}; {t.known_count} of {t.size} cells known)"
              + (f"  [{t.cite}]" if t.cite else ""))
    print("\nmodifier stacks:")
    for s in r.stacks.values():
        print(f"  {s.name}({', '.join(s.params)}): {s.title}, {len(s.modifiers)} modifiers ({s.combine})"
              + (f"  [{s.cite}]" if s.cite else ""))
    print("\ncatalogues:")
    for c in r.catalogues.values():
        names = sorted(c.entries)
        shown = ", ".join(names[:8]) + (f", ... ({len(names)} in all)" if len(names) > 8 else "")
        print(f"  {c.name}: {shown}")
    return 0


def cmd_resolve(args) -> int:
    from ..api import load_situation, outcome_json, run_situation
    from ..tools.reports import changed_fields
    from .results import render_outcome
    s = load_situation(args.situation, tuple(args.overlays))
    outcome = run_situation(s, seed=args.seed, trace=True)
    if args.no_trace and not args.json:
        raise InputError("--no-trace goes with --json (without --json no trace is printed unless --explain or --brief)")
    if args.json:
        data = outcome_json(s, outcome)
        if outcome.status == "ok":
            data["changes"] = changed_fields(s.args, outcome.value)
        if args.no_trace:
            del data["trace"]
        print(json.dumps(data, indent=2))
    else:
        print(render_outcome(s, outcome, args.explain or args.brief, args.brief, args.full))
    for w in outcome.warnings:
        print(str(w).replace(": error: ", ": warning: ", 1) if w.position else f"warning: {w.message}",
              file=sys.stderr)
    # a missing fact (``derive`` with neither a map nor a stated value) is the situation's fault: exit 2
    return getattr(outcome.error, "exit_code", 1) if outcome.status == "error" else 0


def cmd_cache(args) -> int:
    from ..loading import cache as load_cache
    where = load_cache.location()
    data: dict = {"folder": str(where) if where is not None else None}
    if where is None:
        text = "no cache folder: set UMPIRE_CACHE_DIR (there is no home folder to put it in)"
        data.update(state="none", entries=0, bytes=0)
    elif args.clear:
        count, size = load_cache.clear()
        data.update(state="cleared", removed=count, bytes_removed=size)
        text = f"{where}: removed {count} entries ({size / 1e6:.1f} MB)"
    else:
        found = load_cache.entries()
        size = sum(st.st_size for _, st in found)
        refused = load_cache.refusal(where)
        state = ("off (UMPIRE_CACHE=off)" if load_cache.folder() is None and refused is None else
                 f"not used: the folder {refused}" if refused is not None else "on")
        data.update(state="refused" if refused else "off" if state.startswith("off") else "on", refused=refused,
                    entries=len(found), bytes=size, max_bytes=load_cache.MAX_FOLDER_BYTES)
        text = (f"{where}: {len(found)} entries, {size / 1e6:.1f} MB; the cache is {state}; "
                f"kept under {load_cache.MAX_FOLDER_BYTES / 1e6:.0f} MB (least recently used entries go first)")
    print(json.dumps(dict(data, ok=True), indent=2) if args.json else text)
    return 0


def cmd_test(args) -> int:
    from ..errors import ErrorCollector
    from ..tools.testing import collect, load_cases, run_case
    target = Path(args.ruleset)
    cases = load_cases(target) if target.exists() and not target.is_dir() else collect(target)   # a FIFO is refused there
    for c in cases:
        c.overlays = c.overlays + tuple(args.overlays)
    if args.pattern:
        cases = [c for c in cases if args.pattern.lower() in (c.id + " " + (c.title or "")).lower()]
    from ..api import load_ruleset
    results, collector, rulesets, unloadable, not_run = [], ErrorCollector(), {}, set(), 0
    for case in cases:
        key = (str(case.ruleset_path), case.overlays)     # each ruleset (with its overlays) loaded once
        if key not in unloadable:   # a ruleset that did not load is not tried (and its errors reported) again
            with collector.attempt():
                if key not in rulesets:
                    unloadable.add(key)
                    # without prefix reuse: the same results and steps (tests/test_language.py runs both ways),
                    # and for cases run once each, compiling the reusable prefixes costs more than reusing them
                    # saves (callgrind, whole `umpire test` runs of the shipped rulesets: 2-7% fewer instructions)
                    rulesets[key] = load_ruleset(case.ruleset_path, case.overlays, prefix_caching=False)
                    unloadable.discard(key)
                results.append(run_case(case, rulesets[key], trace=False))
        not_run += key in unloadable
    # one error once, though each overlay set over a broken ruleset meets it again
    errors = list({str(e): e for e in collector.errors}.values())
    passed = sum(r.passed for r in results)
    failed = len(results) - passed
    if args.json:
        failures = [dict(d, code="test-failed", message=f"case {r.case.id}: {p}")
                    for r in results if not r.passed
                    for d in diagnostics(UmpireError("", r.case.position)) for p in r.problems]
        print(json.dumps({"ok": not errors and not failed, "passed": passed, "failed": failed, "not_run": not_run,
                          "errors": [str(e) for e in errors],
                          "diagnostics": [d for e in errors for d in diagnostics(e)] + failures,
                          "cases": [{"id": r.case.id, "passed": r.passed, "problems": r.problems,
                                     "source": r.case.source, "file": str(r.case.position)} for r in results]},
                         indent=2))
    else:
        for r in results:
            if not r.passed or args.verbose:
                mark = "PASS" if r.passed else "FAIL"
                print(f"{mark} {r.case.id}" + (f" — {r.case.title}" if r.case.title else "")
                      + (f"  [{r.case.source}]" if r.case.source else ""))
                if not r.passed:
                    print(f"     at {r.case.position}")
                    for p in r.problems:
                        print(f"     {p}")
        for e in errors:
            print(str(e), file=sys.stderr)
        print(f"{passed} passed, {failed} failed" + (f", {len(errors)} invalid" if errors else "")
              + (f" ({not_run} case{'s' if not_run != 1 else ''} not run: {'their' if not_run != 1 else 'its'} "
                 "ruleset did not load)" if not_run else ""))
    if errors:
        return 2
    return 1 if failed else 0
