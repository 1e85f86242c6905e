"""An installed Umpire (a wheel, ``pip install .``, pipx) finds its schemas and grammar inside the package.

An installed package has no checkout around it: the top-level ``schemas/`` and ``grammar/`` ship as
``interpreter/schemas`` and ``interpreter/grammar`` (pyproject.toml). These tests lay the package out
as an install does, outside the checkout; ``.ci/install-check`` builds and installs a real wheel.
"""

import os
import shutil
import subprocess
import sys

import pytest
from conftest import FIXTURE, ROOT

from interpreter.loading import cache as load_cache
from interpreter.reading import shipped


def _installed_layout(site):
    """A copy of the package as a wheel installs it: the data folders inside ``interpreter/``."""
    package = site / "interpreter"
    shutil.copytree(ROOT / "interpreter", package, ignore=shutil.ignore_patterns("__pycache__"))
    for name in shipped.FOLDERS:
        shutil.copytree(ROOT / name, package / name)
    return package


def test_the_checkout_reads_its_own_folders():
    assert shipped.folder("schemas") == ROOT / "schemas"
    assert shipped.folder("grammar") == ROOT / "grammar"


def test_an_installed_package_reads_its_packaged_folders(tmp_path):
    package = _installed_layout(tmp_path / "site")
    assert shipped.folder("schemas", package) == package / "schemas"
    assert shipped.folder("grammar", package) == package / "grammar"


def test_an_installed_umpire_checks_and_tests_a_ruleset_outside_the_checkout(tmp_path):
    """Before the data shipped inside the package this ended in exit 3, FileNotFoundError for the schema."""
    site = tmp_path / "site"
    _installed_layout(site)
    ruleset = shutil.copytree(FIXTURE, tmp_path / "elsewhere" / "mini")
    env = {k: v for k, v in os.environ.items() if k != "UMPIRE_CACHE"}
    env.update(PYTHONPATH=str(site), UMPIRE_CACHE_DIR=str(tmp_path / "cache"))   # an empty cache: every file is read
    run = ("import sys, interpreter; from pathlib import Path\n"
           f"assert Path(interpreter.__file__).is_relative_to({str(site)!r}), interpreter.__file__\n"
           "from interpreter.cli.main import main\n"
           "sys.exit(main(sys.argv[1:]))")
    for command in (["check", str(ruleset)], ["test", str(ruleset)]):
        done = subprocess.run([sys.executable, "-c", run, *command], cwd=tmp_path / "elsewhere", env=env,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, (command, done.stdout, done.stderr)
    assert "FileNotFoundError" not in done.stderr


@pytest.mark.parametrize("changed", ["grammar/umpire.lark", "schemas/stacks.schema.json"])
def test_a_change_to_the_packaged_data_changes_the_load_cache_key(changed, tmp_path, monkeypatch):
    """An installed upgrade that changes only a schema or the grammar never reads an older cache entry."""
    package = _installed_layout(tmp_path / "site")
    monkeypatch.setattr(load_cache, "_PACKAGE", package)
    monkeypatch.setattr(load_cache, "_ENVIRONMENT", None)
    before = load_cache.environment_key()
    with (package / changed).open("a") as f:
        f.write("\n")
    monkeypatch.setattr(load_cache, "_ENVIRONMENT", None)
    assert load_cache.environment_key() != before


# ---- install hints ---------------------------------------------------------------------------------------
# PyPI's "umpire" is an unrelated project: a hint says what works from a checkout, never `pip install umpire`.

def test_serve_without_starlette_says_how_to_install_it_from_a_checkout(cli, monkeypatch):
    monkeypatch.setitem(sys.modules, "starlette", None)
    code, out, err = cli("serve", str(FIXTURE))
    assert code == 2 and "pip install -e ." in err and "pip install umpire" not in err, err


def test_plot_without_matplotlib_says_how_to_install_it_from_a_checkout(cli, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    code, out, err = cli("odds", str(FIXTURE / "situations" / "attack.yaml"), "--plot", str(tmp_path / "x.png"))
    assert code == 2 and "pip install -e '.[plot]'" in err and "umpire[" not in err, err


def test_the_browser_tests_say_why_they_are_skipped_where_chromium_is_missing(tmp_path):
    """A plain run (pyproject's addopts) names what is missing and how to install it, for each skipped test."""
    env = dict(os.environ, PATH=str(tmp_path))    # no Chromium on this PATH
    # (hypothesis's plugin off: the browser tests use none of it, and each of the run's processes would import it)
    done = subprocess.run([sys.executable, "-m", "pytest", "tests/test_web_e2e.py", "-p", "no:cacheprovider",
                           "-p", "no:hypothesispytest"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    skipped = [line for line in done.stdout.splitlines() if line.startswith("SKIPPED")]
    assert skipped and all("no Chromium on PATH (sudo apt-get install -y chromium)" in line for line in skipped), \
        done.stdout
