"""The commands that help edit files: ``schema`` (a situation's inputs, for editors) and ``set`` (one value
changed in place, every other byte kept)."""

from __future__ import annotations

import json
import sys


def add_set(sub, overlay_option) -> None:
    s = sub.add_parser("set", help="change one value in a ruleset or overlay file, keeping every other byte",
                       description="Change the value at PATH (keys separated by dots; list items by index or id). "
                                   "Comments, order, quoting and blank lines stay exactly as they were. "
                                   "If the result would be invalid, nothing is written.")
    s.add_argument("file", help="the YAML file to change (a ruleset file, an overlay, a situation, a test file)")
    s.add_argument("path", help="where the value is: keys separated by dots, list items by index or id, e.g. "
                                "stacks.ift_drm.modifiers.target_tem.value")
    s.add_argument("value", help="the new value, as YAML writes it (3, true, \"text\")")
    s.add_argument("--json", action="store_true", help="print the change (file, path, old and new text) as JSON")
    s.set_defaults(func=cmd_set)


def add_schema(sub, overlay_option) -> None:
    sc = sub.add_parser("schema", help="print the JSON Schema of a procedure's situation inputs (for editors)",
                        description="Print the JSON Schema (draft-07) that a situation's inputs for PROCEDURE must "
                                    "satisfy, derived from the procedure's parameters and the ruleset's record types.")
    sc.add_argument("ruleset", help="the ruleset folder")
    sc.add_argument("procedure", help="the procedure whose situation inputs the schema describes")
    sc.add_argument("--situation", action="store_true",
                    help="the schema of a whole situation file for PROCEDURE (ruleset, procedure, title, dice, "
                         "typed inputs), for a situation's `# yaml-language-server: $schema=...` modeline")
    overlay_option(sc)
    sc.set_defaults(func=cmd_schema)


def cmd_schema(args) -> int:
    from ..api import find_procedure, load_ruleset
    from ..loading.inputs import procedure_schema, situation_schema
    r = load_ruleset(args.ruleset, tuple(args.overlays))
    make = situation_schema if args.situation else procedure_schema
    print(json.dumps(make(r, find_procedure(r, args.procedure)), indent=2))
    return 0


def cmd_set(args) -> int:
    from ..tools.edit import set_value
    notes: list = []
    old, new = set_value(args.file, args.path, args.value, lambda text: validate_file_text(args.file, text), notes)
    if args.json:
        print(json.dumps({"ok": True, "file": args.file, "path": args.path, "old": old, "new": new, "notes": notes},
                         indent=2))
    else:
        print(f"{args.file}: {args.path}: {old} -> {new}")
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    return 0


def validate_file_text(file: str, text: str) -> None:
    """Check a file's would-be new text the way its kind is checked (and, in a ruleset, the whole ruleset).

    The file is judged by the name it is given by (a symbolic link by where it sits, not by what it points
    to); a ruleset is loaded from its own folder with this one file's text replaced in memory: nothing is
    copied, and every other file is read as loading reads it (regular files only)."""
    import os
    from pathlib import Path

    from ..errors import InputError as IE
    from ..reading.schema import validate
    from ..reading.source import load_yaml
    path = Path(os.path.abspath(file))           # not resolved: a linked ruleset.yaml is still ruleset.yaml
    doc = load_yaml(file, text)
    kind = next((k for k in ("tables", "stacks", "catalogues") if isinstance(doc.data, dict) and k in doc.data), None)
    if path.name == "ruleset.yaml":
        kind = "ruleset"
    elif isinstance(doc.data, dict) and "overlay" in doc.data:
        kind = "overlay"
    elif isinstance(doc.data, dict) and "cases" in doc.data:
        kind = "tests"
    elif isinstance(doc.data, dict) and "procedure" in doc.data:
        kind = "situation"
    if kind is None:
        raise IE("cannot tell what kind of Umpire file this is", doc.at(()))
    validate(doc, kind)
    root = next((p for p in [path.parent, path.parent.parent] if (p / "ruleset.yaml").is_file()), None)
    if kind == "situation":   # as resolve reads it: ruleset, procedure, inputs, choices, then the given dice
        from ..api import load_situation, run_situation
        situation = load_situation(file, text=text)
        run_situation(situation, seed=0, trace=False)   # a bad die is an InputError; an adjudication may stop
    if kind in ("ruleset", "tables", "stacks", "catalogues") and root is not None:
        from ..analysis.facts import analyse
        from ..compiling.checker import check
        from ..compiling.compiler import Compiler
        from ..loading.loader import read_ruleset
        ruleset = read_ruleset(root, {str(path): text})
        check(ruleset)
        analyse(ruleset)
        Compiler(ruleset).compile(lazy=False, analysed=True)
