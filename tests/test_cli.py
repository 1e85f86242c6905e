"""What a user sees: the explain trace of a book example, help texts, and robustness to any text."""

import json
import string
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from interpreter.errors import InputError, Position
from interpreter.reading.parser import parse_expression, parse_module
from interpreter.reading.source import load_yaml

from conftest import ROOT


def test_explain_cites_the_rules_at_each_step_of_the_book_example(cli):
    code, out, err = cli("resolve", ROOT / "rulesets/aslsk/situations/prep_fire_fg_pbf.yaml", "--explain")
    assert code == 0, err
    expected_in_order = [
        "[ASLSK 3.2.2] fire_attack(",
        "point_blank: x2",                                       # the adjacent 6-6-6
        "A-O6 (american 6-6-6) at range 1: 6 FP x 2 = 12",
        "[ASLSK 1.1.1] target_tem: +3",
        "los_hindrance: +1",
        "[ASLSK 3.2.3] roll dr: 2d6 -> colored 1, white 5 = 6",
        "final DR 10, FP 19 -> column 16 -> NMC",
        "[cell: ASLSK 3.2.2 Prep Fire Phase example",             # the cell cites the example revealing it
        "morale_check(unit: G1",
    ]
    at = 0
    for text in expected_in_order:
        found = out.find(text, at)
        assert found >= 0, f"missing or out of order: {text!r}"
        at = found
    import re      # G1 rolls 9, G2 rolls 7 (the book's dice): the result's table of changes
    assert re.search(r"G1 +broken.*\n.*\n +state +broken\n +G2 +pinned +false +-> +true\n +state +pinned", out)


@pytest.mark.parametrize("command", ["check", "list", "resolve", "test", "odds", "simulate", "charts", "diff",
                                     "set", "schema", "serve", "init", "lsp", "sweep"])
def test_every_command_explains_itself(command, capsys):
    from interpreter.cli.main import main
    with pytest.raises(SystemExit) as e:
        main([command, "--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert f"usage: umpire {command}" in out and len(out.splitlines()) > 4



@pytest.mark.parametrize("columns", [50, 120])
def test_help_wraps_to_the_terminal_width_columns_gives(columns, capsys, monkeypatch):
    """(cli/args.py finds the width as shutil.get_terminal_size does, without importing shutil)"""
    from interpreter.cli.main import main
    monkeypatch.setenv("COLUMNS", str(columns))
    with pytest.raises(SystemExit):
        main(["resolve", "--help"])
    lines = capsys.readouterr().out.splitlines()
    assert max(map(len, lines)) <= columns - 2
    assert max(map(len, lines)) > (columns - 2) - 20     # filled up to about the width, not wrapped at 80

DSL_ALPHABET = string.ascii_letters[:12] + string.digits[:4] + " .,:()[]{}+-*/<=>!\"@#\n" + "    "


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet=DSL_ALPHABET, max_size=60))
def test_any_text_gives_a_positioned_error_or_a_tree_never_a_crash(text):
    for parse in (lambda: parse_expression(text, Position("x.yaml", 3, 7)),
                  lambda: parse_module("procedure p():\n    " + text + "\n", "x.ump")):
        try:
            parse()
        except InputError as e:
            assert e.position is not None and e.position.file in ("x.yaml", "x.ump")


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet="ab:- {}[]&*!|>'\"#\n01", max_size=60))
def test_any_yaml_text_gives_data_or_a_positioned_error(text):
    try:
        load_yaml("y.yaml", text)
    except InputError as e:
        assert e.position is not None and e.position.file == "y.yaml"


def test_brief_trace_keeps_the_checkable_steps_and_drops_the_rest(cli):
    path = ROOT / "rulesets/aslsk/situations/prep_fire_fg_pbf.yaml"
    _, full, _ = cli("resolve", path, "--explain")
    code, brief, _ = cli("resolve", path, "--brief")
    assert code == 0
    assert len(brief.splitlines()) < len(full.splitlines())
    assert "final DR 10, FP 19 -> column 16 -> NMC" in brief and "target_tem +3 [ASLSK 1.1.1]" in brief
    assert "not applied" in full and "not applied" not in brief


def test_brief_trace_of_the_tour_is_the_ten_steps_a_player_checks_in_the_book_s_order(cli):
    code, out, err = cli("resolve", ROOT / "rulesets/aslsk/situations/prep_fire_fg_pbf.yaml", "--brief")
    assert code == 0, err
    trace = out.split("\n\n")[1].splitlines()        # between the header and the result
    expected = [
        "A-N5 (american 7-4-7) at range 2: 7 FP x 1 = 7",
        "[ASLSK 3.2.2] Firepower multipliers of one firing unit or Weapon (fractions kept exactly): x2 "
        "(point_blank x2)",
        "A-O6 (american 6-6-6) at range 1: 6 FP x 2 = 12",
        "[ASLSK 3.2.3] IFT dice-roll modifiers for one target unit: +4 (target_tem +3 [ASLSK 1.1.1], "
        "los_hindrance +1)  (x2)",
        "[ASLSK 3.2.3] roll dr: 2d6 -> colored 1, white 5 = 6",
        "[ASLSK 3.2.3] Infantry Fire Table (IFT): final DR 10, FP 19 -> column 16 -> NMC   "
        "[cell: ASLSK 3.2.2 Prep Fire Phase example (first attack)]  (x2)",
        "[ASLSK 3.2.3] roll dr: 2d6 -> colored 3, white 6 = 9",
        "G1 (german 4-6-7) breaks and is marked DM",
        "[ASLSK 3.2.3] roll dr: 2d6 -> colored 1, white 6 = 7",
        "passed by exactly the largest margin possible: pinned",
    ]
    assert trace == expected
    assert ": no" not in out and " gives " not in out and "fire_attack(" not in out


def test_brief_trace_never_merges_two_rolls_that_show_the_same_dice(cli, tmp_path):
    from interpreter.runtime.trace import brief
    roll = {"kind": "roll", "depth": 0, "text": "roll dr: 2d6 -> 3, 4 = 7", "cite": "X 1"}
    stack = {"kind": "stack", "depth": 0, "text": "DRM: +1", "cite": "X 2"}
    applied = {"kind": "modifier", "depth": 1, "text": "cover: +1", "cite": "X 3"}
    beaten = {"kind": "modifier", "depth": 1, "text": "smoke: not applied (+1 beaten by cover in group g)"}
    empty = {"kind": "stack", "depth": 0, "text": "MC DRM: +0", "cite": "X 4"}
    lines = brief([roll, dict(roll), stack, applied, beaten, stack, applied, empty,
                   {"kind": "branch", "depth": 0, "text": "x > 1: no", "cite": "X 5"}]).splitlines()
    assert lines == ["[X 1] roll dr: 2d6 -> 3, 4 = 7", "[X 1] roll dr: 2d6 -> 3, 4 = 7",
                     "[X 2] DRM: +1 (cover +1 [X 3])  (x2)"]


def test_resolve_shows_each_unit_s_changed_fields_as_a_table_and_full_the_whole_record(cli):
    path = ROOT / "rulesets/aslsk/situations/prep_fire_fg_pbf.yaml"
    code, out, err = cli("resolve", path)
    assert code == 0, err
    assert "units: what changed (before -> after)\n    G1  broken  false  ->  true\n        dm      false  ->  true\n" \
           "        state              broken\n    G2  pinned  false  ->  true\n" in out
    assert "    A-N5  fire_marker  none  ->  prep_fire" in out
    assert "    id  check  original_dr  final_dr  outcome\n    G1  MC     9            9         broken" in out
    assert "self_rally_box" not in out and "concealed: false" not in out
    code, full, err = cli("resolve", path, "--full")
    assert code == 0, err
    assert "units: [{id: G1, counter: german 4-6-7, state: broken, broken: true, dm: true," in full
    assert "what changed" not in full


def test_resolve_json_gives_the_changed_fields_as_data(cli):
    code, out, err = cli("resolve", ROOT / "rulesets/aslsk/situations/prep_fire_fg_pbf.yaml", "--json", "--no-trace")
    assert code == 0, err
    changes = {(c["at"], c["id"]): c for c in json.loads(out)["changes"]}
    assert changes[("units", "G1")]["changed"] == [{"field": "broken", "before": False, "after": True},
                                                   {"field": "dm", "before": False, "after": True}]
    assert changes[("units", "G1")]["added"] == [{"field": "state", "value": "broken"}]
    assert changes[("firers", "A-O6")]["changed"] == [{"field": "fire_marker", "before": "none",
                                                       "after": "prep_fire"}]
    assert ("checks", "G1") not in changes          # a check record restates no input field


def test_test_runs_one_file_s_cases_when_given_a_test_file(cli):
    path = ROOT / "rulesets/aslsk/tests/examples_pto.yaml"
    code, out, err = cli("test", path)
    assert code == 0, out + err
    in_file = path.read_text().count("\n  - id:")
    assert in_file > 0 and f"{in_file} passed, 0 failed" in out
    code, out, err = cli("test", ROOT / "rulesets/aslsk/ruleset.yaml")   # not a test file: positioned errors
    assert code == 2 and "ruleset.yaml:1:1" in err


def test_test_on_a_ruleset_that_does_not_load_reports_its_error_once(cli, tmp_path):
    # each case used to load the broken ruleset again (minutes for a few hundred cases) and repeat its error
    import shutil
    from conftest import FIXTURE
    root = tmp_path / "mini"
    shutil.copytree(FIXTURE, root)
    (root / "procedures/probe.ump").write_text("procedure probe(units: int):\n    return units\n")
    cases = (root / "tests/cases.yaml").read_text().count("\n  - id:")
    assert cases >= 2
    code, out, err = cli("test", root)
    assert code == 2
    assert err.count("has the name of a catalogue") == 1, err
    assert "probe.ump:1:" in err
    assert f"0 passed, 0 failed, 1 invalid ({cases} cases not run: their ruleset did not load)" in out
    code, out, err = cli("test", root, "--json")
    import json
    doc = json.loads(out)
    assert doc["not_run"] == cases and len(doc["errors"]) == 1


def test_check_warns_about_a_case_id_used_in_two_test_files(cli, tmp_path):
    import json
    import shutil
    from conftest import FIXTURE
    root = tmp_path / "mini"
    shutil.copytree(FIXTURE, root)
    (root / "tests/more.yaml").write_text(
        "ruleset: ..\ncases:\n  - id: FIX-2\n    procedure: morale_check\n"
        "    inputs: {unit: {id: X, counter: rifle}, mc: 1}\n    dice: [6]\n    expect: {state: pinned}\n")
    code, out, err = cli("check", root)
    assert code == 0 and ": ok" in out, out + err
    assert "more.yaml:3:5: warning: case id 'FIX-2' is also used at " in err, err
    assert "cases.yaml:" in err.split("is also used at")[1]
    code, out, err = cli("check", root, "--json")
    warned = [d for d in json.loads(out)["diagnostics"] if "FIX-2" in d["message"]]
    assert len(warned) == 1 and warned[0]["file"].endswith("more.yaml") and warned[0]["line"] == 3


def test_resolve_json_without_the_trace_is_small_and_keeps_the_result(cli):
    path = ROOT / "rulesets/aslsk/situations/prep_fire_fg_pbf.yaml"
    _, full, _ = cli("resolve", path, "--json")
    code, short, err = cli("resolve", path, "--json", "--no-trace")
    assert code == 0, err
    full_data, short_data = json.loads(full), json.loads(short)
    assert "trace" not in short_data and full_data["trace"]
    assert short_data["result"] == full_data["result"] and short_data["dice"] == full_data["dice"]
    assert len(short) * 20 < len(full)


def test_brief_and_explain_together_are_refused(cli):
    path = ROOT / "rulesets/aslsk/situations/prep_fire_fg_pbf.yaml"
    with pytest.raises(SystemExit) as e:
        cli("resolve", path, "--brief", "--explain")
    assert e.value.code == 2
    code, _, err = cli("resolve", path, "--no-trace")
    assert code == 2 and "--no-trace goes with --json" in err


def test_odds_plot_without_matplotlib_is_refused_before_any_work(cli, monkeypatch, tmp_path):
    import sys
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    path = ROOT / "rulesets/aslsk/situations/prep_fire_fg_pbf.yaml"
    code, out, err = cli("odds", path, "--plot", tmp_path / "out.png")
    assert code == 2 and "needs matplotlib" in err
    assert out == ""          # no odds worked out and printed first


def test_help_text_names_every_exit_code(capsys):
    from interpreter.cli.main import main
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert "exit codes:" in out
    for code in ("0", "1", "2", "3", "130"):
        assert f"\n  {code}  " in out


def test_odds_fraction_and_percent_columns_line_up_whatever_the_label_length(cli):
    import re
    path = ROOT / "rulesets/aslsk/situations/prep_fire_fg_pbf.yaml"
    code, out, err = cli("odds", path, "--all-dice", "--by", "units.G1.state",
                         "--by", 'count(u for u in units if u.state == "broken")')
    assert code == 0, err
    code2, whole, err = cli("odds", path, "--all-dice")       # labels by the whole result: far longer than 60 characters
    assert code2 == 0, err
    for text in (out, whole):
        rows = [m for line in text.splitlines() if (m := re.search(r"(\S+)  +(\d+\.\d\d)%", line))]
        assert len(rows) > 1
        assert len({m.end(1) for m in rows}) == 1 and len({m.end(2) for m in rows}) == 1, text
    assert "paths through the dice" in out and "statement runs" not in out


def test_every_option_and_argument_of_every_command_has_help_text():
    from interpreter.cli.main import build_parser
    missing = [(name, a.option_strings or a.dest) for name, sp in build_parser().commands.items()
               for a in sp._actions if not a.help]
    assert not missing


@pytest.mark.parametrize("argv, usage", [(["cache", "--bogus"], "usage: umpire cache"),
                                         (["test", "-x", "."], "usage: umpire test"),
                                         (["resolve", "a.yaml", "--nope"], "usage: umpire resolve")])
def test_an_unknown_option_shows_the_subcommand_s_usage(argv, usage, capsys):
    from interpreter.cli.main import main
    with pytest.raises(SystemExit) as e:
        main(argv)
    err = capsys.readouterr().err
    assert e.value.code == 2 and err.startswith(usage) and "unrecognized arguments" in err


def test_argument_errors_are_json_diagnostics_when_json_is_asked_for(capsys):
    from interpreter.cli.main import main
    with pytest.raises(SystemExit) as e:
        main(["cache", "--json", "--bogus"])
    out = json.loads(capsys.readouterr().out)
    assert e.value.code == 2 and out["ok"] is False and out["exit"] == 2
    assert out["diagnostics"][0]["code"] == "usage" and "--bogus" in out["diagnostics"][0]["message"]
    with pytest.raises(SystemExit):
        main(["odds", "--json"])          # the situation missing
    assert "required: situation" in json.loads(capsys.readouterr().out)["diagnostics"][0]["message"]


def test_cache_and_set_answer_in_json(cli, tmp_path, monkeypatch):
    monkeypatch.setenv("UMPIRE_CACHE_DIR", str(tmp_path / "c"))
    monkeypatch.delenv("UMPIRE_CACHE", raising=False)
    code, out, _ = cli("cache", "--json")
    data = json.loads(out)
    assert code == 0 and data["folder"] == str(tmp_path / "c") and data["entries"] == 0 and data["state"] == "on"
    f = tmp_path / "s.yaml"
    f.write_text((ROOT / "tests/fixtures/mini/situations/attack.yaml").read_text().replace("ruleset: ..",
                 f"ruleset: {ROOT / 'tests/fixtures/mini'}"))
    code, out, err = cli("set", f, "inputs.range", "2", "--json")
    assert code == 0, err
    assert json.loads(out) == {"ok": True, "file": str(f), "path": "inputs.range", "old": "1", "new": "2", "notes": []}


def test_a_command_line_naming_a_command_gets_that_command_s_whole_parser_and_help_lists_every_command(capsys):
    from interpreter.cli.main import COMMANDS, build_parser, main
    everything = build_parser().commands
    assert list(everything) == list(COMMANDS)
    for name in COMMANDS:
        alone = build_parser([name, "x"]).commands
        assert list(alone) == [name]      # the others are not built (a resolve starts faster)
        assert alone[name].format_help() == everything[name].format_help()
    with pytest.raises(SystemExit):
        main(["--help"])
    helped = capsys.readouterr().out
    assert main([]) == 2                  # no command: the same list, and exit 2
    bare = capsys.readouterr().out
    for out in (helped, bare):
        for name in COMMANDS:
            assert f"\n    {name} " in out, name


def test_the_odds_command_runs_without_the_cyclic_garbage_collector_and_ends_at_once(tmp_path):
    """(cli/main.py SHORT_COMMANDS) One question, answered with the collector paused anyway: with it on, the
    collection after the question walked every closure it had compiled, and ending the process freed the whole
    ruleset object by object (a fresh `umpire odds --all-dice` of the slowest shipped situation: 1.15 s of CPU, now
    0.39 s). The answer is the same either way (the collector frees only what nothing refers to)."""
    import os
    import subprocess
    import sys
    situation = ROOT / "rulesets" / "aslsk" / "situations" / "close_combat_ambush_sequential.yaml"
    probe = ("import gc, sys\n"
             "from interpreter.cli.main import main\n"     # (a collection while modules import is any command's)
             "gc.callbacks.append(lambda phase, info: phase == 'start' and sys.stderr.write('COLLECTED\\n'))\n"
             "sys.argv[0] = 'umpire'\n"
             "main()\n")
    env = dict(os.environ, UMPIRE_CACHE_DIR=str(tmp_path / "cache"))
    runs = [subprocess.run([sys.executable, "-c", probe, "odds", str(situation), "--all-dice", "--json"], env=env,
                           capture_output=True, text=True, cwd=ROOT) for _ in range(2)]     # a cold, a warm cache
    for done in runs:
        assert done.returncode == 0, done.stderr
        assert "COLLECTED" not in done.stderr
    first, second = (json.loads(r.stdout) for r in runs)
    assert first["outcomes"] == second["outcomes"] and first["outcomes"]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads a pipe's fill level with Linux's FIONREAD")
def test_output_interrupted_part_way_is_written_whole(tmp_path):
    """A command stopped and continued (Ctrl-Z, then fg) while its output fills a pipe still writes all of it,
    buffered or not. The command is left to fill the pipe (64 KiB) and block on the rest of a 265 KiB result; a
    stop then makes that write return part-way, which Python's own unbuffered standard output (PYTHONUNBUFFERED=1,
    common in containers and CI) took as done: the reader got 64 KiB and the command ended with exit code 0."""
    import fcntl
    import os
    import signal
    import struct
    import subprocess
    import termios
    import time
    cmd = [sys.executable, "-m", "interpreter", "resolve",
           str(ROOT / "rulesets/aslsk/situations/prep_fire_fg_pbf.yaml"), "--seed", "1", "--json"]
    base = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    base["UMPIRE_CACHE_DIR"] = str(tmp_path / "cache")
    whole = subprocess.run(cmd, env=base, capture_output=True, cwd=ROOT, check=True).stdout
    assert len(whole) > 4 * 65536
    for env in (dict(base, PYTHONUNBUFFERED="1"), base):
        p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
        try:
            deadline = time.monotonic() + 60
            while struct.unpack("i", fcntl.ioctl(p.stdout.fileno(), termios.FIONREAD, b"\0" * 4))[0] < 65536:
                assert time.monotonic() < deadline and p.poll() is None, "the command never filled the pipe"
                time.sleep(0.01)
            time.sleep(0.2)                 # blocked in its write, waiting for room
            os.kill(p.pid, signal.SIGSTOP)
            time.sleep(0.05)
            os.kill(p.pid, signal.SIGCONT)
            out, err = p.communicate(timeout=60)
        finally:
            if p.poll() is None:
                p.kill()
        assert p.returncode == 0, err
        assert out == whole, f"{len(out)} of {len(whole)} bytes (PYTHONUNBUFFERED={env.get('PYTHONUNBUFFERED')})"
