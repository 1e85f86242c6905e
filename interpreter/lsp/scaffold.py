"""``umpire init NAME``: a new ruleset folder that checks and tests clean as made.

Every file starts with its schema modeline (``# yaml-language-server: $schema=...``) pointing at the
schemas Umpire ships, by a path relative to the file, so a YAML editor checks it as the author types.
The situation's modeline points at a schema made for its procedure (``umpire schema RULESET PROC
--situation``), written under ``schemas/`` in the new folder, so a wrong input name is flagged too.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from ..errors import InputError
from ..reading import shipped

_ID = re.compile(r"^[a-z][a-z0-9_-]*$")

MANIFEST = """\
# yaml-language-server: $schema={schemas}/ruleset.schema.json
# A new ruleset made by `umpire init`: change the title, the citation prefix and the source to your game's.
ruleset: {name}
title: {name} (a new ruleset)
cite_prefix: RB                     # put before every citation that starts with a digit: "1.1" shows as RB 1.1
source: the rulebook you encode (its name and edition)
dice:
  DR: {{dice: [white, red], sides: 6}}   # two six-sided dice, each kept by name
types:
  unit:
    fields:
      id: text
      morale: int
      terrain: {{type: "key_of[terrain]", default: open}}
"""

TABLE = """\
# yaml-language-server: $schema={schemas}/tables.schema.json
tables:
  morale_results:
    title: Morale results
    cite: "1.2"
    rows:
      title: final DR minus morale
      match: bands
      headings: ["<=0", "1-2", ">=3"]
    source: "1.2"
    grid:
      "<=0": [passed]
      "1-2": [pinned]
      ">=3": [broken]
"""

STACK = """\
# yaml-language-server: $schema={schemas}/stacks.schema.json
stacks:
  morale_drm:
    title: Morale check modifiers
    cite: "1.3"
    params: {{unit: unit}}
    combine: sum
    modifiers:
      - id: terrain
        value: terrain[unit.terrain].drm
        cite: "1.3"
"""

CATALOGUE = """\
# yaml-language-server: $schema={schemas}/catalogues.schema.json
catalogues:
  terrain:
    cite: "1.3"
    entries:
      open: {{drm: 0}}
      woods: {{drm: -1}}
      building: {{drm: -2}}
"""

PROCEDURE = """\
# Procedures of {name}. Indentation makes blocks; `#` starts a comment (docs/language.md).

procedure morale_check(unit: unit, modifier: int = 0) cite "1.1":
    doc "The unit rolls two dice plus its modifiers against its morale."
    roll dr = DR cite "1.1"
    let drm = apply(morale_drm, unit: unit) + modifier
    let final = dr.original + drm
    emit final_dr = final
    let outcome = lookup(morale_results, row: final - unit.morale)
    note "final DR {{final}} against morale {{unit.morale}}: {{outcome}}"
    return {{state: outcome}}
"""

SITUATION = """\
# yaml-language-server: $schema=../schemas/morale_check.situation.schema.json
# `umpire resolve` runs this; `umpire schema {name} morale_check --situation` remakes the schema above.
ruleset: ..
procedure: morale_check
title: A unit in woods checks morale
source: "1.1"
inputs:
  unit: {{id: A, morale: 7, terrain: woods}}
dice: [[5, 4]]
"""

TESTS = """\
# yaml-language-server: $schema={schemas}/tests.schema.json
ruleset: ..
cases:
  - id: FIRST-01
    title: 9 in woods is a final DR of 8, one above morale 7, so the unit is pinned
    situation: ../situations/first_check.yaml
    expect:
      final_dr: 8
      state: pinned
  - id: FIRST-02
    title: 4 in the open passes
    procedure: morale_check
    inputs: {{unit: {{id: B, morale: 7}}}}
    dice: [[2, 2]]
    expect: {{final_dr: 4, state: passed}}
"""

README = """\
# {name}

Made by `umpire init`. Check it, run its tests, resolve its situation:

    umpire check {name}
    umpire test {name}
    umpire resolve {name}/situations/first_check.yaml --explain

Write the rules in your own words; cite rule numbers, never paste rulebook text.
"""

FILES = {
    "ruleset.yaml": MANIFEST,
    "tables/morale.yaml": TABLE,
    "stacks/morale.yaml": STACK,
    "catalogues/terrain.yaml": CATALOGUE,
    "procedures/morale.ump": PROCEDURE,
    "situations/first_check.yaml": SITUATION,
    "tests/first.yaml": TESTS,
    "README.md": README,
}
"""What ``umpire init`` writes, by path inside the new folder."""


def _schemas_from(folder: Path) -> str:
    """The shipped schemas folder as a path relative to ``folder`` (absolute when no relative path exists)."""
    target = shipped.folder("schemas").resolve()
    try:
        return Path(os.path.relpath(target, folder.resolve())).as_posix()
    except ValueError:   # another drive (Windows)
        return target.as_posix()


def create(name: str) -> Path:
    """Write the new ruleset folder ``name`` and its per-procedure situation schema; return the folder."""
    root = Path(name)
    rid = root.resolve().name
    if not _ID.match(rid):
        raise InputError(f"'{rid}' cannot be a ruleset id: it is written in lower case letters, digits, - and _, "
                         "starting with a letter", hint="e.g. umpire init my-game")
    if root.exists() and (not root.is_dir() or any(root.iterdir())):
        raise InputError(f"{name} already exists and is not an empty folder; umpire init writes only new folders",
                         hint="choose another name, or remove the folder first")
    for rel, template in FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(template.format(name=rid, schemas=_schemas_from(path.parent)), encoding="utf-8")
    from ..api import find_procedure, load_ruleset
    from ..loading.inputs import situation_schema
    ruleset = load_ruleset(root, use_cache=False)
    schema = situation_schema(ruleset, find_procedure(ruleset, "morale_check"))
    (root / "schemas").mkdir(exist_ok=True)
    (root / "schemas" / "morale_check.situation.schema.json").write_text(json.dumps(schema, indent=2) + "\n",
                                                                        encoding="utf-8")
    return root
