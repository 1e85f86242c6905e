"""The on-disk load cache: the same results as a fresh load, and never trusted when it should not be.

Every test runs with its own cache folder (UMPIRE_CACHE_DIR); "a fresh process" is simulated by
clearing the in-process cache (api.clear_cache), or is a real subprocess where that matters.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from interpreter import api

from interpreter.loading import cache as load_cache
from interpreter.loading.codec import LazyProcedure, dumps

from conftest import FIXTURE, ROOT, RULESETS, write_ruleset


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv("UMPIRE_CACHE_DIR", str(folder))
    monkeypatch.delenv("UMPIRE_CACHE", raising=False)
    api.clear_cache()
    yield folder
    api.clear_cache()


def entries(folder: Path, kind: str = "ruleset") -> list[Path]:
    return sorted(folder.glob(f"{kind}-*.json")) if folder.is_dir() else []


def fresh_load(root, overlays=()):
    """What a new process gets: no in-process cache, the disk cache as it is."""
    api.clear_cache()
    return api.load_ruleset_with_warnings(root, overlays)


def model_data(ruleset) -> tuple:
    files, main, bodies = dumps(ruleset)
    return files, json.loads(main), [json.loads(b) for b in bodies]


def uncompiled(root, overlays=()):
    """The checked model with the cache on (read_checked), not compiled: comparable as data."""
    return api.read_checked(api.find_root(root), tuple(str(o) for o in overlays))


# ---- the same model, results and positions -------------------------------------------------------

@pytest.mark.parametrize("root", RULESETS + [FIXTURE], ids=[r.name for r in RULESETS] + ["fixture"])
def test_a_ruleset_read_from_the_cache_is_the_ruleset_built_from_its_files(root, cache_dir, monkeypatch):
    monkeypatch.setenv("UMPIRE_CACHE", "off")
    built, built_warnings = uncompiled(root)
    monkeypatch.delenv("UMPIRE_CACHE")
    uncompiled(root)                                   # writes the entry
    assert len(entries(cache_dir)) == 1
    cached, cached_warnings = uncompiled(root)         # reads it
    assert all(isinstance(p, LazyProcedure) for p in cached.procedures.values())
    assert cached_warnings == built_warnings
    for name, proc in built.procedures.items():        # syntax trees equal, every position included
        assert cached.procedures[name].syntax == proc.syntax
        assert cached.procedures[name].pos == proc.pos
    cached.cache_key = built.cache_key = None
    assert model_data(cached) == model_data(built)


def test_a_cached_load_decodes_only_the_procedures_a_resolve_reaches(cache_dir):
    root = ROOT / "rulesets" / "aslsk"
    built, _ = uncompiled(root)                        # writes the entry
    cached, _ = uncompiled(root)
    # a field whose default is a class attribute reads the stored value, not the class's default
    pure = [name for name, p in built.procedures.items() if p.deterministic]
    assert pure and all(cached.procedures[name].deterministic for name in pure)
    api.clear_cache()
    situation = api.load_situation(root / "situations" / "prep_fire_fg_pbf.yaml")
    api.run_situation(situation, seed=1)
    procs = situation.ruleset.procedures.values()
    decoded = [p.name for p in procs if "_attrs_text" not in vars(p)]
    assert "fire_attack" in decoded and 0 < len(decoded) < len(procs) / 2



def _branches(procedures):
    """Every branch of every if in these procedures' bodies, at any depth, without decoding a body not decoded
    (a stored long branch body is decoded when first read: reading.syntax.Branch)."""
    from interpreter.reading import syntax as ast
    out, todo = [], [s for p in procedures for s in p.syntax.body]
    while todo:
        s = todo.pop()
        if isinstance(s, ast.If):
            for b in s.branches:
                out.append(b)
                if _decoded(b):
                    todo.extend(b.body)
        elif isinstance(s, ast.ForEach):
            todo.extend(s.body)
    return out


def _decoded(branch) -> bool:
    try:
        object.__getattribute__(branch, "body")
    except AttributeError:
        return False
    return True


def test_a_cached_load_decodes_only_the_branches_a_resolve_takes(cache_dir, monkeypatch):
    """(codec.LATER_FROM) A long branch body stays text until a run takes the branch; read then, it is the body
    built from the files (the test above compares whole trees, which decodes every one)."""
    from interpreter.loading import codec
    root = ROOT / "rulesets" / "aslsk"
    uncompiled(root)                                    # writes the entry
    api.clear_cache()
    monkeypatch.setattr(codec, "_BODIES", {})           # as a new process: no body decoded by an earlier load
    situation = api.load_situation(root / "situations" / "prep_fire_fg_pbf.yaml")
    api.run_situation(situation, seed=1)
    reached = [p for p in situation.ruleset.procedures.values() if "_syntax" in vars(p)]
    branches = _branches(reached)
    waiting = [b for b in branches if not _decoded(b)]
    assert "fire_attack" in [p.name for p in reached] and waiting and len(waiting) < len(branches)
    monkeypatch.setenv("UMPIRE_CACHE", "off")
    built = uncompiled(root)[0].procedures
    for p in reached:
        assert p.syntax == built[p.name].syntax     # (decodes what was waiting)
    assert all(_decoded(b) for b in waiting)


def test_a_branch_edited_in_place_is_read_as_edited_by_the_process_that_read_it_before(tmp_path, cache_dir,
                                                                                       monkeypatch):
    """A long-running process (``umpire serve``) reads a ruleset from the cache, the author edits a line inside a
    long branch (the lines around it unchanged), and the process reads the new entry: the procedure's own stored
    text is the same as before, only the branch's differs, and the procedure is read as edited, not as the body
    decoded before (bodies stored alike are shared within a process)."""
    root = write_ruleset(tmp_path, {})
    fire = root / "procedures" / "fire.ump"
    line = "        set cower = 2 if any(f.inexperienced for f in firers) else 1"
    before = uncompiled(root)[0].procedures["attack"]    # writes the entry
    before = uncompiled(root)[0].procedures["attack"]    # reads it
    assert [b for b in _branches([before]) if not _decoded(b)]       # (the branch is stored apart)
    fire.write_text(fire.read_text().replace(line, line.replace("else 1", "else 3")))
    uncompiled(root)                                    # writes the new entry
    after = uncompiled(root)[0].procedures["attack"]
    monkeypatch.setenv("UMPIRE_CACHE", "off")
    assert after.syntax == uncompiled(root)[0].procedures["attack"].syntax and after.syntax != before.syntax


@pytest.mark.parametrize("root", RULESETS, ids=[r.name for r in RULESETS])
def test_every_situation_gives_the_same_outcome_and_trace_from_the_cache(root, cache_dir, monkeypatch):
    situations = sorted((root / "situations").glob("*.yaml"))

    def outcomes():
        api.clear_cache()
        out = []
        for s in situations:
            sit = api.load_situation(s)
            out.append(api.outcome_json(sit, api.run_situation(sit, seed=7)))
        return out
    monkeypatch.setenv("UMPIRE_CACHE", "off")
    without = outcomes()
    assert not entries(cache_dir)
    monkeypatch.delenv("UMPIRE_CACHE")
    outcomes()                                          # fills the cache
    assert entries(cache_dir) and entries(cache_dir, "document")
    assert outcomes() == without


def test_errors_point_at_the_same_place_from_the_cache(tmp_path, cache_dir, monkeypatch, cli):
    root = write_ruleset(tmp_path, {"procedures/extra.ump":
                                    "procedure broken(n: int):\n    let x = n + 1\n    fail \"stopped at {x}\"\n"})
    situation = root / "situations" / "broken.yaml"
    situation.write_text("ruleset: ..\nprocedure: broken\ninputs: {n: 1}\n")
    bad_input = root / "situations" / "bad.yaml"
    bad_input.write_text("ruleset: ..\nprocedure: broken\ninputs:\n  n: many\n")
    runs = []
    for setting in ("off", None, None):                  # without the cache, filling it, from it
        if setting:
            monkeypatch.setenv("UMPIRE_CACHE", setting)
        else:
            monkeypatch.delenv("UMPIRE_CACHE", raising=False)
        api.clear_cache()
        runs.append((cli("resolve", situation), cli("resolve", bad_input)))
    assert runs[0] == runs[1] == runs[2]
    (code, out, err), (bad_code, _, bad_err) = runs[2]
    assert code == 1 and "extra.ump:3:5" in out + err and "stopped at 2" in out + err
    assert bad_code == 2 and "bad.yaml:4:6" in bad_err


def test_a_document_read_from_the_cache_is_the_document_read_from_its_file(cache_dir):
    from interpreter.reading.source import load_yaml
    for path, kind in [(FIXTURE / "situations" / "attack.yaml", "situation"), (FIXTURE / "tests" / "cases.yaml", "tests")]:
        load_cache.valid_document(path, kind)
        load_cache.forget()                                  # a new process: read back from the entry
        cached = load_cache.valid_document(path, kind)
        fresh = load_yaml(path)
        assert entries(cache_dir, "document") and cached == fresh and fresh == cached
        assert cached.positions == fresh.positions and cached.key_positions == fresh.key_positions
        assert cached.text_offsets == fresh.text_offsets and cached.at(("procedure",)) == fresh.at(("procedure",))


def test_every_place_in_a_document_read_from_the_cache_is_where_its_file_puts_it(cache_dir):
    """Lookups answered from the stored tables (one place at a time, as a test run reports a few) name the same
    line and column as the file: every value and key, a path below a value (its nearest parent), the root."""
    from interpreter.reading.source import load_yaml
    for path, kind in [(FIXTURE / "situations" / "attack.yaml", "situation"), (FIXTURE / "tests" / "cases.yaml", "tests")]:
        load_cache.valid_document(path, kind)
        load_cache.forget()
        cached = load_cache.valid_document(path, kind)
        fresh = load_yaml(path)
        for where in list(fresh.positions) + [p + ("below", 0) for p in fresh.positions] + [(), ("nowhere",)]:
            assert cached.at(where) == fresh.at(where), where
        for where in fresh.key_positions:
            assert cached.key_at(where) == fresh.key_at(where), where
        assert cached.positions == fresh.positions      # and the whole table, once asked for


def test_a_document_whose_stored_positions_are_malformed_takes_them_from_its_text(cache_dir):
    from interpreter.reading.source import load_yaml
    path = FIXTURE / "tests" / "cases.yaml"
    load_cache.valid_document(path, "tests")
    [entry] = entries(cache_dir, "document")
    key = entry.name[len("document-"):-len(".json")]
    found = load_cache.read("document", key)
    assert found is not None and len(found[2]) == 3           # the data, then three position tables
    load_cache.write("document", key, [], found[1], ['[["cases",0],"x"]', "{}", "[1]"])   # signed, but not tables
    load_cache.forget()
    doc = load_cache.valid_document(path, "tests")
    fresh = load_yaml(path)
    assert doc.data == fresh.data and doc.at(("cases", 1, "inputs")) == fresh.at(("cases", 1, "inputs"))
    assert doc.key_positions == fresh.key_positions and doc.text_offsets == fresh.text_offsets


def test_a_failing_case_is_reported_at_its_place_from_a_warm_cache(tmp_path, cache_dir, cli):
    root = write_ruleset(tmp_path, {})
    cases = root / "tests" / "cases.yaml"
    cases.write_text(cases.read_text().replace("expect: {state: pinned, final_dr: 7}",
                                               "expect: {state: broken, final_dr: 7}"))
    runs = []
    for _ in range(3):                                       # filling the cache, then from it (twice)
        api.clear_cache()
        load_cache.forget()
        runs.append(cli("test", root))
    assert runs[0] == runs[1] == runs[2]
    code, out, _ = runs[2]
    assert code == 1 and "FAIL FIX-2" in out and f"at {cases}:8:5" in out and "expected 'broken'" in out


def test_overlays_are_part_of_the_entry(cache_dir):
    overlay = ROOT / "rulesets" / "aslsk" / "house-rules" / "field-rally.yaml"
    base = fresh_load(ROOT / "rulesets" / "aslsk")[0]
    with_overlay = fresh_load(ROOT / "rulesets" / "aslsk", (overlay,))[0]
    assert len(entries(cache_dir)) == 2
    again = fresh_load(ROOT / "rulesets" / "aslsk", (overlay,))[0]
    assert again.overlays == with_overlay.overlays == [str(overlay)] and not base.overlays
    assert [c.what for c in again.changes] == [c.what for c in with_overlay.changes]
    assert [str(c.origin) for c in again.changes] == [str(c.origin) for c in with_overlay.changes]


def test_one_process_loading_a_ruleset_under_several_overlays_from_the_cache_gets_each_as_built(tmp_path, cache_dir,
                                                                                               monkeypatch):
    """`umpire test` loads a ruleset once per overlay set; bodies stored alike are decoded once and shared, and
    each procedure still reads as built from its files, every position (the overlay's file too) included."""
    root = write_ruleset(tmp_path, {})
    overlay = tmp_path / "house.yaml"
    overlay.write_text("overlay: house\ntitle: t\nextends: mini\nchanges:\n  - add_procedures: |\n"
                       "      procedure house_extra(n: int = 2):\n          let m = n + 1\n          return m\n")
    monkeypatch.setenv("UMPIRE_CACHE", "off")
    built = [uncompiled(root)[0], uncompiled(root, (overlay,))[0]]
    monkeypatch.delenv("UMPIRE_CACHE")
    uncompiled(root)                                    # writes the entries
    uncompiled(root, (overlay,))
    cached = [uncompiled(root)[0], uncompiled(root, (overlay,))[0]]    # read back in one process
    assert "house_extra" in cached[1].procedures and "house_extra" not in cached[0].procedures
    for fresh, read in zip(built, cached):
        for name, proc in fresh.procedures.items():
            assert read.procedures[name].syntax == proc.syntax and read.procedures[name].pos == proc.pos
    assert cached[1].procedures["house_extra"].syntax.pos.file == str(overlay)


# ---- invalidation ---------------------------------------------------------------------------------

def _same_size_same_time(path: Path, old: str, new: str) -> None:
    """Change a file's text without changing its size or modification time (a cache must hash contents)."""
    stat = path.stat()
    text = path.read_text()
    assert len(old) == len(new) and old in text
    path.write_text(text.replace(old, new, 1))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert path.stat().st_size == stat.st_size


def test_a_changed_ruleset_file_is_read_again_even_with_the_same_size_and_time(tmp_path, cache_dir):
    root = write_ruleset(tmp_path, {})
    situation = root / "situations" / "attack.yaml"
    before = api.run_situation(api.load_situation(situation))
    api.clear_cache()
    assert api.run_situation(api.load_situation(situation)).value == before.value   # from the cache
    _same_size_same_time(root / "stacks" / "fire.yaml", "point_blank, value: 2", "point_blank, value: 3")
    api.clear_cache()
    after = api.run_situation(api.load_situation(situation))
    assert after.value != before.value
    api.clear_cache()
    load_cache_off = api.run_situation(api.load_situation(situation))
    assert load_cache_off.value == after.value
    assert len(entries(cache_dir)) == 2


def test_a_changed_overlay_is_read_again(tmp_path, cache_dir):
    root = write_ruleset(tmp_path, {})
    overlay = tmp_path / "house.yaml"
    overlay.write_text("overlay: house\ntitle: t\nextends: mini\nchanges:\n  - stack: drm\n    add: {id: extra, value: 1}\n")
    first = fresh_load(root, (overlay,))[0]
    assert [m.id for m in first.stacks["drm"].modifiers][-1] == "extra"
    _same_size_same_time(overlay, "extra", "bonus")
    second = fresh_load(root, (overlay,))[0]
    assert [m.id for m in second.stacks["drm"].modifiers][-1] == "bonus"


def test_a_new_file_in_the_ruleset_is_read(tmp_path, cache_dir):
    root = write_ruleset(tmp_path, {})
    assert "extra" not in fresh_load(root)[0].procedures
    (root / "procedures" / "more.ump").write_text("procedure extra():\n    return 1\n")
    assert "extra" in fresh_load(root)[0].procedures


@pytest.mark.parametrize("changed", ["grammar/umpire.lark", "schemas/stacks.schema.json", "interpreter/loading/loader.py"])
def test_a_change_to_umpire_itself_leaves_older_entries_unread(changed, tmp_path, cache_dir, monkeypatch):
    """The entries' keys cover Umpire's grammar, schemas and code: a copy of them stands in for an upgrade."""
    copy = tmp_path / "umpire"
    for part in ("grammar", "schemas", "interpreter"):
        for f in (ROOT / part).rglob("*.*"):
            if "__pycache__" in f.parts:
                continue
            target = copy / part / f.relative_to(ROOT / part)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(f.read_bytes())
    monkeypatch.setattr(load_cache, "_PACKAGE", copy / "interpreter")
    monkeypatch.setattr(load_cache, "_ENVIRONMENT", None)
    fresh_load(FIXTURE)
    fresh_load(FIXTURE)
    assert len(entries(cache_dir)) == 1
    assert (copy / changed).is_file()     # a change to a file Umpire really has, not a new file beside it
    with (copy / changed).open("a") as f:
        f.write("\n")
    monkeypatch.setattr(load_cache, "_ENVIRONMENT", None)
    fresh_load(FIXTURE)
    assert len(entries(cache_dir)) == 2



def _umpire_copy(tmp_path) -> Path:
    """A copy of Umpire's code, grammar and schemas (standing in for an installed or edited Umpire)."""
    copy = tmp_path / "umpire"
    for part in ("grammar", "schemas", "interpreter"):
        for f in (ROOT / part).rglob("*.*"):
            if "__pycache__" not in f.parts:
                target = copy / part / f.relative_to(ROOT / part)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(f.read_bytes())
    return copy / "interpreter"


def _environment(monkeypatch, clock_ahead_ns: int = 0) -> tuple[str, int]:
    """(a fresh start's environment key, how many of Umpire's own files it read), its clock ``clock_ahead_ns``
    ahead (a start long after the files were last changed)."""
    import time
    read = []
    real = load_cache._own_bytes
    monkeypatch.setattr(load_cache, "_own_bytes", lambda path: read.append(path) or real(path))
    monkeypatch.setattr(load_cache, "_now_ns", lambda: time.time_ns() + clock_ahead_ns)
    monkeypatch.setattr(load_cache, "_ENVIRONMENT", None)
    return load_cache.environment_key(), len(read)


def test_a_start_after_one_that_hashed_umpires_unchanged_files_reads_none_of_them(tmp_path, cache_dir, monkeypatch):
    monkeypatch.setattr(load_cache, "_PACKAGE", _umpire_copy(tmp_path))
    first, read = _environment(monkeypatch, clock_ahead_ns=10 ** 10)
    assert read > 100
    again, read = _environment(monkeypatch)
    assert again == first and read == 0


def test_umpires_files_changed_since_their_hash_are_hashed_again_even_with_the_same_size_and_time(tmp_path, cache_dir,
                                                                                                 monkeypatch):
    """(a write moves a file's status-change time, which no tool sets back)"""
    package = _umpire_copy(tmp_path)
    monkeypatch.setattr(load_cache, "_PACKAGE", package)
    first, _ = _environment(monkeypatch, clock_ahead_ns=10 ** 10)
    loader = package / "loading" / "loader.py"
    mtime = loader.stat().st_mtime_ns
    _same_size_same_time(loader, "# ", "#!")           # (a comment: the same size, the time set back)
    assert loader.stat().st_mtime_ns == mtime
    again, read = _environment(monkeypatch, clock_ahead_ns=10 ** 10)
    assert read > 100 and again != first


def test_a_hash_taken_just_after_a_change_is_not_used_the_files_are_hashed_again(tmp_path, cache_dir, monkeypatch):
    """A file changed within two seconds before its hashing could change again within the same clock tick."""
    monkeypatch.setattr(load_cache, "_PACKAGE", _umpire_copy(tmp_path))     # every file written just now
    first, _ = _environment(monkeypatch)
    again, read = _environment(monkeypatch)
    assert again == first and read > 100

# ---- damaged, foreign, shared or unwritable caches -----------------------------------------------------

def _damage_truncate(data: bytes) -> bytes:
    return data[: len(data) // 2]


def _damage_flip(data: bytes) -> bytes:
    i = len(data) - 100
    return data[:i] + bytes([data[i] ^ 0x01]) + data[i + 1:]


def _damage_garbage(data: bytes) -> bytes:
    return b"\x00\xff not a cache entry \n{]"


def _damage_empty(data: bytes) -> bytes:
    return b""


def _damage_foreign(data: bytes) -> bytes:
    """Another format version's entry (the same body, as a future Umpire might write it)."""
    head, _, body = data.partition(b"\n")
    header = json.loads(head)
    header["umpire_cache"] = load_cache.FORMAT + 1
    return json.dumps(header).encode() + b"\n" + body


def _damage_other_key(data: bytes) -> bytes:
    """A sound entry of another ruleset, under this one's name."""
    head, _, body = data.partition(b"\n")
    header = json.loads(head)
    header["key"] = "0" * 64
    return json.dumps(header).encode() + b"\n" + body


def _damage_bad_body(data: bytes) -> bytes:
    """A consistent header (checksum right) over a body that is JSON but not a model."""
    head, _, _ = data.partition(b"\n")
    header = json.loads(head)
    body = b'{"d":["ruleset",{"o":["Nope",[]]},"warnings",[]]}'
    header["blake2b"], header["lines"] = load_cache.digest(body), 1
    return json.dumps(header).encode() + b"\n" + body


def _damage_table_without_cells(data: bytes) -> bytes:
    """A consistent header (checksum right) over a model whose tables lack their cells."""
    head, _, body = data.partition(b"\n")
    header = json.loads(head)
    body = body.replace(b'"cells",', b'"cellz",')
    header["blake2b"] = load_cache.digest(body)
    return json.dumps(header).encode() + b"\n" + body


@pytest.mark.parametrize("damage", [_damage_truncate, _damage_flip, _damage_garbage, _damage_empty, _damage_foreign,
                                    _damage_other_key, _damage_bad_body, _damage_table_without_cells])
def test_a_damaged_or_foreign_entry_is_ignored_and_rebuilt(damage, cache_dir, cli):
    situation = FIXTURE / "situations" / "attack.yaml"
    expected = cli("resolve", situation, "--json", "--seed", "1")
    for kind in ("ruleset", "document"):
        for entry in entries(cache_dir, kind):
            entry.write_bytes(damage(entry.read_bytes()))
    api.clear_cache()
    assert cli("resolve", situation, "--json", "--seed", "1") == expected
    api.clear_cache()
    for kind in ("ruleset", "document"):             # rebuilt: sound again
        found = entries(cache_dir, kind)
        assert found and load_cache.read(kind, found[0].name[len(kind) + 1:-5]) is not None
    assert cli("resolve", situation, "--json", "--seed", "1") == expected


def test_two_processes_filling_the_cache_at_once_both_get_the_right_result(tmp_path):
    folder = tmp_path / "cache"
    env = dict(os.environ, UMPIRE_CACHE_DIR=str(folder))
    env.pop("UMPIRE_CACHE", None)
    cmd = [sys.executable, "-m", "interpreter", "resolve", str(ROOT / "rulesets" / "aslsk" / "situations" /
                                                                   "prep_fire_fg_pbf.yaml"), "--seed", "1", "--json"]
    for _ in range(2):
        procs = [subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
                 for _ in range(3)]
        results = [p.communicate() + (p.returncode,) for p in procs]
        assert {r[2] for r in results} == {0}, results[0][1]
        assert len({r[0] for r in results}) == 1
    env_off = dict(env, UMPIRE_CACHE="off")
    without = subprocess.run(cmd, env=env_off, capture_output=True, cwd=ROOT)
    assert without.stdout == results[0][0]
    assert len(entries(folder)) == 1 and not list(folder.glob(".*tmp"))


def test_a_cache_folder_that_cannot_be_written_leaves_umpire_working(tmp_path, monkeypatch, cli):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("UMPIRE_CACHE_DIR", str(blocker / "cache"))   # cannot be created
    api.clear_cache()
    code, out, err = cli("resolve", FIXTURE / "situations" / "attack.yaml")
    assert code == 0 and "result:" in out and not err


def test_a_read_only_cache_folder_is_read_and_never_written(tmp_path, monkeypatch, cli):
    folder = tmp_path / "cache"
    monkeypatch.setenv("UMPIRE_CACHE_DIR", str(folder))
    situation = FIXTURE / "situations" / "attack.yaml"
    api.clear_cache()
    expected = cli("resolve", situation)
    before = sorted(p.name for p in folder.iterdir())
    folder.chmod(0o555)
    try:
        api.clear_cache()
        assert cli("resolve", situation) == expected
        root = write_ruleset(tmp_path, {})            # a ruleset not yet in the cache
        api.clear_cache()
        code, out, err = cli("resolve", root / "situations" / "attack.yaml")
        assert code == 0 and not err
    finally:
        folder.chmod(0o755)
    if os.geteuid() != 0:                             # root writes anyway
        assert sorted(p.name for p in folder.iterdir()) == before


def test_the_cache_can_be_turned_off(tmp_path, cache_dir, monkeypatch, cli):
    situation = FIXTURE / "situations" / "attack.yaml"
    code, out, _ = cli("resolve", situation, "--no-cache")
    assert code == 0 and not cache_dir.exists()
    monkeypatch.setenv("UMPIRE_CACHE", "off")
    api.clear_cache()
    assert cli("resolve", situation) == (code, out, "")
    assert not cache_dir.exists()
    monkeypatch.delenv("UMPIRE_CACHE")
    api.clear_cache()
    assert cli("resolve", situation) == (code, out, "")
    assert entries(cache_dir)


def test_the_default_folder_follows_xdg(monkeypatch, tmp_path):
    monkeypatch.delenv("UMPIRE_CACHE_DIR", raising=False)
    monkeypatch.delenv("UMPIRE_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert load_cache.folder() == tmp_path / "umpire"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert load_cache.folder() == tmp_path / ".cache" / "umpire"


# ---- what a warm start imports ------------------------------------------------------------------

@pytest.mark.parametrize("command", [["resolve", "rulesets/aslsk/situations/prep_fire_fg_pbf.yaml", "--seed", "1"],
                                     ["test", "rulesets/aslsk"]], ids=["resolve", "test"])
def test_a_warm_start_imports_no_parser_schema_yaml_web_or_openssl_library(command, tmp_path):
    """Nor OpenSSL (``_hashlib``, which ``hashlib`` and ``hmac`` load: 7% of a warm resolve's instructions; the
    cache's keys and MACs are BLAKE2b from the stdlib's own ``_blake2``), nor ``dataclasses`` (with ``inspect``; the
    model's classes are reading/plain.py's, which compile no code), nor ``shutil`` (with bz2, lzma and zlib: argparse
    imports it for the terminal's width, which cli/args.py finds with ``os``), nor ``typing`` (the modules name its
    types for the checker only)."""
    env = dict(os.environ, UMPIRE_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("UMPIRE_CACHE", None)
    probe = ("import sys\nfrom interpreter.cli.main import main\ncode = main(sys.argv[1:])\n"
             "heavy = sorted(m for m in sys.modules if m.split('.')[0] in "
             "('lark', 'jsonschema', 'ruamel', 'starlette', 'uvicorn', 'matplotlib', 'icepool', '_hashlib', 'dataclasses', 'shutil', 'typing'))\n"
             "print('HEAVY', heavy, code)\n")
    first = subprocess.run([sys.executable, "-c", probe, *command], env=env, capture_output=True, text=True, cwd=ROOT)
    assert "HEAVY [" in first.stdout and "lark" in first.stdout   # a cold cache parses
    warm = subprocess.run([sys.executable, "-c", probe, *command], env=env, capture_output=True, text=True, cwd=ROOT)
    assert "HEAVY [] 0" in warm.stdout, warm.stdout + warm.stderr


# ---- the folder's size, and clearing it ---------------------------------------------------------------

def test_the_folder_is_kept_within_its_bound_least_recently_used_entries_first(tmp_path, cache_dir, monkeypatch):
    small = write_ruleset(tmp_path / "a", {})
    big = write_ruleset(tmp_path / "b", {"procedures/more.ump": "procedure extra(n: int):\n    return n * 2\n"})
    fresh_load(small)
    fresh_load(big)
    small_entry = [e for e in entries(cache_dir) if e.stat().st_size == min(x.stat().st_size
                                                                          for x in entries(cache_dir))][0]
    big_entry = next(e for e in entries(cache_dir) if e != small_entry)
    os.utime(small_entry, (1_000_000, 1_000_000))     # written long ago ...
    os.utime(big_entry, (2_000_000, 2_000_000))
    fresh_load(small)                                  # ... but used just now
    monkeypatch.setattr(load_cache, "MAX_FOLDER_BYTES", small_entry.stat().st_size + big_entry.stat().st_size)
    other = write_ruleset(tmp_path / "c", {})
    (other / "tables" / "fire.yaml").write_text((other / "tables" / "fire.yaml").read_text() + "\n# changed\n")
    fresh_load(other)                                  # a third entry: the folder is over its bound
    left = entries(cache_dir)
    assert small_entry in left and big_entry not in left and len(left) == 2
    assert fresh_load(big)[0].procedures["extra"]       # a pruned entry is simply rebuilt


def test_clearing_the_cache_removes_its_entries_and_nothing_else(cache_dir, cli):
    code, out, _ = cli("resolve", FIXTURE / "situations" / "attack.yaml")
    assert code == 0 and entries(cache_dir)
    keep = cache_dir / "notes.txt"
    keep.write_text("not Umpire's")
    code, out, _ = cli("cache")
    assert code == 0 and str(cache_dir) in out and "entries" in out
    code, out, _ = cli("cache", "--clear")
    assert code == 0 and "removed" in out
    assert not entries(cache_dir) and not entries(cache_dir, "document") and keep.read_text() == "not Umpire's"
    assert not list(cache_dir.glob("grammar-tables-*"))
    api.clear_cache()
    assert cli("resolve", FIXTURE / "situations" / "attack.yaml")[0] == 0


def test_the_grammar_tables_are_kept_in_the_users_cache_folder_never_the_shared_temporary_one(tmp_path):
    """lark reads its kept tables back with pickle: a file in /tmp could be planted by another user."""
    import subprocess
    import sys
    scratch, cache = tmp_path / "tmp", tmp_path / "cache"
    scratch.mkdir()
    env = dict(os.environ, TMPDIR=str(scratch), UMPIRE_CACHE_DIR=str(cache))
    env.pop("UMPIRE_CACHE", None)
    done = subprocess.run([sys.executable, "-m", "interpreter", "check", str(FIXTURE)], env=env,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert list(scratch.iterdir()) == []
    assert [p.name for p in cache.glob("grammar-tables-*.lark")], sorted(p.name for p in cache.iterdir())
    off = dict(env, UMPIRE_CACHE="off", UMPIRE_CACHE_DIR=str(tmp_path / "unused"))
    done = subprocess.run([sys.executable, "-m", "interpreter", "check", str(FIXTURE)], env=off,
                          capture_output=True, text=True)
    assert done.returncode == 0 and list(scratch.iterdir()) == [] and not (tmp_path / "unused").exists()


def test_the_command_leaves_the_garbage_collector_as_the_caller_had_it(cli):
    import gc
    situation = FIXTURE / "situations" / "attack.yaml"
    try:
        for enabled in (True, False):
            (gc.enable if enabled else gc.disable)()
            for args in (["resolve", situation], ["odds", situation], ["nonsense-command"]):
                try:
                    cli(*args)
                except SystemExit:
                    pass
                assert gc.isenabled() is enabled, args
    finally:
        gc.enable()


# ---- another user cannot forge the cache --------------------------------------------------------------------

def _forge(entry: Path, old: bytes, new: bytes, secret: bytes | None = None) -> None:
    """Edit an entry's body and fix its checksum, as someone who can write the folder would; with the
    folder's ``secret`` also its MAC (what only this user's Umpire can do)."""
    head, _, body = entry.read_bytes().partition(b"\n")
    assert old in body
    body = body.replace(old, new)
    header = json.loads(head)
    header["blake2b"] = load_cache.digest(body)
    if secret is not None:
        header["mac"] = load_cache._mac(secret, header)
    entry.write_bytes(json.dumps(header, separators=(",", ":")).encode() + b"\n" + body)


def test_the_folder_is_made_0700_with_a_0600_secret_and_entries_only_its_user_reads(cache_dir, cli):
    code, out, err = cli("resolve", FIXTURE / "situations" / "attack.yaml")
    assert code == 0 and "fp: 14" in out and not err
    assert cache_dir.stat().st_mode & 0o777 == 0o700
    assert (cache_dir / load_cache.SECRET_NAME).stat().st_mode & 0o777 == 0o600
    assert all(p.stat().st_mode & 0o077 == 0 for p, _ in load_cache.entries(cache_dir))


def test_an_entry_edited_and_re_checksummed_without_the_secret_changes_nothing(cache_dir, cli):
    situation = FIXTURE / "situations" / "attack.yaml"
    assert "fp: 14" in cli("resolve", situation)[1]
    [entry] = entries(cache_dir)
    forged = b'"rifle",{"r":["fp",9'
    _forge(entry, b'"rifle",{"r":["fp",4', forged)          # the checksum matches; the MAC does not
    api.clear_cache()
    code, out, err = cli("resolve", situation)
    assert code == 0 and "fp: 14" in out, out + err           # read from the files, not the forged entry
    assert forged not in entry.read_bytes()                   # and the entry rebuilt
    secret = (cache_dir / load_cache.SECRET_NAME).read_bytes()
    _forge(entry, b'"rifle",{"r":["fp",4', forged, secret)   # the control: signed, the same edit is read
    api.clear_cache()
    assert "fp: 24" in cli("resolve", situation)[1]


def _value_key(what, rkey, value) -> str:
    key = load_cache.value_key(what, rkey, value)      # the key a process that checked it would remember
    assert key is not None
    return key


def test_a_planted_valid_entry_cannot_skip_the_inputs_schema(cache_dir):
    from interpreter.errors import InputError
    load_cache.write("valid", "0" * 64, [], "[]")              # the folder and its secret exist
    what, rkey, value = "inputs", "r" * 64, {"range": "far"}
    data = json.dumps([_value_key(what, rkey, value)]).encode()
    header = {"umpire_cache": load_cache.FORMAT, "kind": "valid", "key": rkey, "files": [], "lines": 1,
              "blake2b": load_cache.digest(data)}
    (cache_dir / f"valid-{rkey}.json").write_bytes(json.dumps(header).encode() + b"\n" + data)

    def check():
        raise InputError("range: expected a whole number")
    with pytest.raises(InputError):
        load_cache.checked_once(what, rkey, value, check)


def test_values_that_differ_in_kind_are_remembered_apart():
    from fractions import Fraction

    from interpreter.model.values import Record
    values = [{"a": [1]}, {"a": (1,)}, Record({"a": [1]}), {"a": [1.0]}, {"a": [True]}, {1: [1]}, {"1": [1]},
              {"a": [Fraction(1)]}, {"a": ["1"]}, [{"a": [1]}]]
    keys = [load_cache.value_key("inputs", "k" * 64, v) for v in values]
    assert None not in keys and len(set(keys)) == len(values)
    assert load_cache.value_key("inputs", "k" * 64, {"a": [1]}) == keys[0]      # the same value, the same key


def test_values_that_passed_are_one_entry_per_ruleset_and_a_new_process_skips_them(cache_dir):
    rkey, checked = "k" * 64, []
    for n in range(3):
        load_cache.checked_once("inputs", rkey, {"range": n}, lambda n=n: checked.append(n))
    load_cache.forget()                                         # as a new process: the entry is written
    assert [p.name for p in cache_dir.glob("valid-*.json")] == [f"valid-{rkey}.json"]
    for n in range(4):
        load_cache.checked_once("inputs", rkey, {"range": n}, lambda n=n: checked.append(n))
    assert checked == [0, 1, 2, 3]                              # only the new value is checked again
    load_cache.forget()
    entry = load_cache.read("valid", rkey)
    assert entry is not None and len(json.loads(entry[1])) == 4


@pytest.mark.parametrize("mode", [0o770, 0o707, 0o777])
def test_a_folder_others_may_write_is_refused_with_a_warning_and_the_command_works(mode, cache_dir, cli):
    cache_dir.mkdir(mode=0o700)
    cache_dir.chmod(mode)
    load_cache._refusals.clear()
    code, out, err = cli("resolve", FIXTURE / "situations" / "attack.yaml")
    assert code == 0 and "fp: 14" in out
    assert f"the load cache folder {cache_dir} may be written by" in err and "chmod 700" in err
    assert not list(cache_dir.iterdir())                       # nothing written there


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="giving a folder away needs root")
def test_a_folder_of_another_user_is_refused(cache_dir, cli):
    cache_dir.mkdir(mode=0o700)
    os.chown(cache_dir, 12345, -1)
    load_cache._refusals.clear()
    code, out, err = cli("resolve", FIXTURE / "situations" / "attack.yaml")
    assert code == 0 and "fp: 14" in out
    assert "belongs to another user (uid 12345)" in err and not list(cache_dir.iterdir())


def test_a_fifo_at_an_entry_s_name_is_a_miss_and_never_blocks(cache_dir, cli):
    from test_hostile import hang_guard
    situation = FIXTURE / "situations" / "attack.yaml"
    expected = cli("resolve", situation)
    for entry in list(load_cache.entries(cache_dir)):
        entry[0].unlink()
        os.mkfifo(entry[0])
    os.unlink(cache_dir / load_cache.SECRET_NAME)
    os.mkfifo(cache_dir / load_cache.SECRET_NAME)
    load_cache._secrets.clear()
    api.clear_cache()
    with hang_guard(60):
        assert cli("resolve", situation) == expected


def test_inputs_that_passed_in_a_file_are_checked_again_once_the_file_changes(tmp_path, cache_dir, cli):
    root = write_ruleset(tmp_path, {"procedures/extra.ump": "procedure twice(n: int):\n    return n * 2\n"})
    situation = root / "situations" / "twice.yaml"
    situation.write_text("ruleset: ..\nprocedure: twice\ninputs:\n  n: 3\n")
    for _ in range(2):                                       # filling the cache, then from it
        api.clear_cache()
        load_cache.forget()
        code, out, err = cli("resolve", situation)
        assert code == 0 and "6" in out, out + err
    situation.write_text("ruleset: ..\nprocedure: twice\ninputs:\n  n: three\n")
    api.clear_cache()
    load_cache.forget()
    code, _, err = cli("resolve", situation)
    assert code == 2 and "twice.yaml:4:6" in err


def test_cases_sharing_a_map_file_share_its_map_until_the_file_changes(tmp_path, cache_dir):
    import shutil

    from interpreter.loading.maps import load_board
    from interpreter.reading.source import load_yaml
    root = tmp_path / "board"
    shutil.copytree(FIXTURE.parent / "board", root)
    ruleset = api.load_ruleset(root)
    here = root / "situations" / "here.yaml"
    here.write_text("map: ../maps/field.yaml\n")
    doc = load_yaml(here)

    def board():
        return load_board(ruleset, doc, (), doc.data)
    first = board()
    assert board()["hexes"] is first["hexes"]                # built once
    field = root / "maps" / "field.yaml"
    field.write_text(field.read_text().replace('"0202": {terrain: woods}', '"0202": {terrain: open_ground}'))
    changed = board()
    assert changed["hexes"]["0202"]["terrain"] == "open_ground" and first["hexes"]["0202"]["terrain"] == "woods"


# ---- which files make up a ruleset --------------------------------------------------------------------

def test_the_ruleset_files_are_the_ones_the_glob_patterns_name():
    """(loader.ruleset_files tests names without compiling the patterns to regular expressions at every start)"""
    from fnmatch import fnmatchcase

    from hypothesis import given, settings
    from hypothesis import strategies as st

    from interpreter.loading.loader import _procedure_name, _yaml_name

    @settings(max_examples=500, deadline=None)
    @given(st.text(alphabet="aymlupY.-_~", max_size=12))
    def same(name):
        assert _yaml_name(name) == fnmatchcase(name, "*.y*ml")
        assert _procedure_name(name) == fnmatchcase(name, "*.ump")
    same()
