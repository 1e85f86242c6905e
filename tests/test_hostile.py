"""The hostile-input corpus: each file under tests/hostile/<category>/ is one input a hostile or careless
user could give, and what Umpire must answer (exit code, position, message).

A case file (YAML):

    about: what the input is
    files:                      # written over a copy of tests/fixtures/mini ({ruleset} in `run`)
      procedures/extra.ump: |
        ...
    generate:                   # large files: `line` repeated `times` times (after `head`, before `tail`)
      - {path: catalogues/big.yaml, head: "catalogues:\\n", line: "  k{i}: 1\\n", times: 300000}
    chmod: {situations/attack.yaml: 0o444}
    remove: [tables/fire.yaml]
    fifo: [situations/pipe.yaml]  # named pipes made there (reading one would block: a hang guard fails the case)
    symlink: {situations/z.yaml: /dev/zero}   # symbolic links made there
    run: [check, "{ruleset}"]   # {ruleset}: the copy; {tmp}: a scratch folder
    exit: 2
    at: extra.ump:2:14          # the error's position (end of the file name, line, column)
    message: [fragments, the output must contain]
    unchanged: [situations/attack.yaml]   # files that must keep their bytes (umpire set)
    mode: {situations/attack.yaml: 0o640}  # permissions a file must have afterwards
    json: true                  # stdout must be a JSON document whose diagnostics name `at`

Every case also asserts what every input must give: no traceback, no "internal error", exit 0-2.
"""

import contextlib
import json
import os
import re
import shutil
import signal
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from conftest import FIXTURE

CORPUS = Path(__file__).resolve().parent / "hostile"
CASES = sorted(CORPUS.glob("*/*.yaml"))


class Hung(BaseException):
    """Raised by the hang guard's alarm (not an Exception, so no handler in Umpire swallows it)."""


@contextlib.contextmanager
def hang_guard(seconds: int):
    """Fail a command that blocks (on a FIFO's open, say) after ``seconds`` instead of hanging the suite.
    Not a timing test: the bound is far above any case's run time; it only turns a hang into a failure."""
    def alarm(signum, frame):
        raise Hung(f"still running after {seconds} s: blocked (a FIFO or device opened?)")
    previous = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _id(path: Path) -> str:
    return f"{path.parent.name}/{path.stem}"


@pytest.mark.parametrize("case_file", CASES, ids=_id)
def test_hostile_input(case_file, tmp_path, capsys):
    from interpreter.cli.main import main
    case = YAML(typ="safe").load(case_file)
    root = tmp_path / "mini"
    shutil.copytree(FIXTURE, root)
    for name, text in (case.get("files") or {}).items():
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    for g in case.get("generate") or []:
        target = root / g["path"]
        target.parent.mkdir(parents=True, exist_ok=True)
        with target.open("w", encoding="utf-8") as f:
            f.write(g.get("head", ""))
            line = g["line"]
            for i in range(g["times"]):
                f.write(line.replace("{i}", str(i)))
            f.write(g.get("tail", ""))
    for name in case.get("remove") or []:
        (root / name).unlink()
    for name in case.get("fifo") or []:
        os.mkfifo(root / name)
    for name, target in (case.get("symlink") or {}).items():
        os.symlink(target, root / name)
    before = {name: (root / name).read_bytes() for name in case.get("unchanged") or []}
    for name, mode in (case.get("chmod") or {}).items():
        os.chmod(root / name, mode)
    args = [str(a).replace("{ruleset}", str(root)).replace("{tmp}", str(tmp_path)) for a in case["run"]]
    try:
        with hang_guard(60):        # a FIFO or device opened for reading would block: fail instead
            code = main(args)
    except SystemExit as e:          # argparse refuses a command line with exit 2
        code = e.code
    captured = capsys.readouterr()
    out, text = captured.out, captured.out + captured.err
    assert "Traceback" not in text and "internal error" not in text, text
    assert code == case["exit"], text
    if "at" in case:
        at = case["at"]    # file:line:col exactly, or a prefix ending in ':' (file: or file:line:)
        assert re.search(re.escape(at) + ("" if at.endswith(":") else r"(?!\d)"), text), text
    for fragment in case.get("message") or []:
        assert fragment in text, text
    for name, data in before.items():
        assert (root / name).read_bytes() == data, f"{name} changed"
    for name, mode in (case.get("mode") or {}).items():
        assert (root / name).stat().st_mode & 0o777 == mode, f"{name} lost its permissions"
    if case.get("json"):
        doc = json.loads(out[out.index("{"):] if "{" in out else out)
        found = [d for d in doc.get("diagnostics", []) if d["file"] and d["line"]]
        file, line, column = case["at"].rsplit(":", 2)
        assert any(d["file"].endswith(file) and d["line"] == int(line) and d["column"] == int(column)
                   for d in found), doc


def test_the_corpus_covers_every_category():
    categories = {p.parent.name for p in CASES}
    assert categories >= {"yaml", "procedures", "situations", "command-line", "set", "overlays", "sizes", "files"}
    assert len(CASES) >= 60


def test_a_trace_line_renders_only_what_it_shows():
    """A loop growing a list must not make its trace quadratic: a value is rendered only up to the cut."""
    from interpreter.model.values import Record, brief

    class Unreachable:
        def __str__(self):
            raise AssertionError("rendered past the cut")

    huge = tuple(range(1_000_000)) + (Unreachable(),)
    assert brief(huge, 60) == "[" + ", ".join(map(str, range(20)))[:56] + "..."
    assert brief(Record(a=huge), 30).startswith("{a: [0, 1, 2")
    assert brief(tuple(Record(id=f"u{i}") for i in range(100_000)) + (Unreachable(),), 20) == "[u0, u1, u2, u3, ..."
    assert brief(10 ** 5000, 60) == "<a number of about 5,001 digits>"
    assert brief((1, "two", Record(x=(3,))), 60) == "[1, two, {x: [3]}]"
