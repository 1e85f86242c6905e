"""Shared helpers for the test suite."""

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RULESETS = sorted(p for p in (ROOT / "rulesets").iterdir() if (p / "ruleset.yaml").is_file())
FIXTURE = ROOT / "tests" / "fixtures" / "mini"

PARITY_SKIPPED: list[str] = []
"""Exact-odds parity comparisons (tests/test_states.py) left out because the path reference is too long: a test
appends here; its report carries them (``user_properties``), so the run that prints the summary sees them
whichever process ran the test (pytest-xdist runs tests in worker processes and reports in the main one)."""

_PARITY_REPORTED: list[str] = []
"""The comparisons left out, as the reports brought them in (the main process's view)."""


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    if PARITY_SKIPPED:
        report = outcome.get_result()
        # (a list of this report's own: the report shares the item's, which the next phase's report reports again)
        report.user_properties = [*report.user_properties, *(("parity_skipped", line) for line in PARITY_SKIPPED)]
        PARITY_SKIPPED.clear()


def pytest_runtest_logreport(report):
    _PARITY_REPORTED.extend(line for name, line in report.user_properties if name == "parity_skipped")


def pytest_terminal_summary(terminalreporter):
    """List the parity comparisons that were not made, so the report says what was not checked."""
    if _PARITY_REPORTED:
        terminalreporter.write_sep("-", f"exact-odds parity: {len(_PARITY_REPORTED)} comparison(s) not made")
        for line in _PARITY_REPORTED:
            terminalreporter.write_line(f"  {line}")


def _freeze_survivors(phase: str, info: dict) -> None:
    """After each full collection, set what survived it aside (gc.freeze): the later collections walk only the
    objects made since. A test process keeps every ruleset it loads compiled (millions of closures and cells, the
    parity checks' memos), and each full collection walked all of them again: about a third of the parity file's
    CPU, and pytest's five collections at exit (its check for exceptions raised in finalizers) took seconds each.
    What survived a full collection is reachable; an object frozen that turns into garbage later is kept (the
    process ends with the run). No test's outcome depends on when the collector runs."""
    if phase == "stop" and info["generation"] == 2:
        import gc
        gc.freeze()


_ENVIRONMENT = ("UMPIRE_CACHE_DIR", "UMPIRE_CACHE", "UMPIRE_CONFIG_DIR", "UMPIRE_CHARTS")
_OLD_ENVIRONMENT: dict = {}


@pytest.hookimpl(trylast=True)      # after pytest's own tmp_path_factory is set up
def pytest_configure(config):
    """The suite runs with the on-disk load cache on, in a folder of its own (never the user's), and with a
    config folder of its own: the user's applied charts never reach a test. Set before collection, which
    loads the rulesets to list their cases."""
    import gc
    import os
    if _freeze_survivors not in gc.callbacks:
        gc.callbacks.append(_freeze_survivors)
    factory = config._tmp_path_factory
    _OLD_ENVIRONMENT.update({k: os.environ.get(k) for k in _ENVIRONMENT})
    os.environ["UMPIRE_CACHE_DIR"] = str(_run_cache_folder(factory))
    os.environ["UMPIRE_CONFIG_DIR"] = str(factory.mktemp("umpire-config"))
    os.environ.pop("UMPIRE_CACHE", None)
    os.environ.pop("UMPIRE_CHARTS", None)


def pytest_unconfigure(config):
    import os
    for k, v in _OLD_ENVIRONMENT.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


def _run_cache_folder(tmp_path_factory) -> Path:
    """This run's load cache folder: under pytest-xdist, one folder for all of the run's workers (beside their
    own temporary folders), so a ruleset built by one worker is read from the cache by the other instead of
    being built again; one process alone gets a folder of its own. Entries are keyed by the files' contents and
    written whole (tests/test_load_cache.py checks two processes filling one folder at once)."""
    import os
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return tmp_path_factory.mktemp("umpire-cache")
    folder = tmp_path_factory.getbasetemp().parent / "umpire-cache"
    folder.mkdir(mode=0o700, exist_ok=True)
    return folder


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
