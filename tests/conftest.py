"""Shared helpers for the test suite."""

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RULESETS = sorted(p for p in (ROOT / "rulesets").iterdir() if (p / "ruleset.yaml").is_file())
FIXTURE = ROOT / "tests" / "fixtures" / "mini"

PARITY_SKIPPED: list[str] = []
"""Exact-odds parity comparisons (tests/test_states.py) left out because the path reference is too long."""


def pytest_terminal_summary(terminalreporter):
    """List the parity comparisons that were not made, so the report says what was not checked."""
    if PARITY_SKIPPED:
        terminalreporter.write_sep("-", f"exact-odds parity: {len(PARITY_SKIPPED)} comparison(s) not made")
        for line in PARITY_SKIPPED:
            terminalreporter.write_line(f"  {line}")


@pytest.fixture(autouse=True, scope="session")
def _load_cache_folder(tmp_path_factory):
    """The suite runs with the on-disk load cache on, in a folder of its own (never the user's), and with a
    config folder of its own: the user's applied charts never reach a test."""
    import os
    old = {k: os.environ.get(k) for k in ("UMPIRE_CACHE_DIR", "UMPIRE_CACHE", "UMPIRE_CONFIG_DIR", "UMPIRE_CHARTS")}
    os.environ["UMPIRE_CACHE_DIR"] = str(tmp_path_factory.mktemp("umpire-cache"))
    os.environ["UMPIRE_CONFIG_DIR"] = str(tmp_path_factory.mktemp("umpire-config"))
    os.environ.pop("UMPIRE_CACHE", None)
    os.environ.pop("UMPIRE_CHARTS", None)
    yield
    for k, v in old.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


@pytest.fixture
def cli(capsys):
    """Run the umpire command in-process; returns (exit code, stdout, stderr)."""
    from interpreter.cli.main import main

    def run(*args):
        code = main([str(a) for a in args])
        out = capsys.readouterr()
        return code, out.out, out.err
    return run


def write_ruleset(tmp_path: Path, files: dict[str, str]) -> Path:
    """A copy of the fixture ruleset with some files replaced (for error tests)."""
    import shutil
    target = tmp_path / "mini"
    shutil.copytree(FIXTURE, target)
    for name, text in files.items():
        path = target / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return target
