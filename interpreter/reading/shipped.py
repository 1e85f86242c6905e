"""Where Umpire's own data files are: the JSON Schemas and the procedure grammar.

They live in the top-level ``schemas/`` and ``grammar/`` folders of a checkout. An installed
distribution (``pip install .``, a wheel, pipx) carries them as package data, inside the package as
``interpreter/schemas`` and ``interpreter/grammar`` (pyproject.toml maps those packages onto the
checkout's folders). The packaged copy wins when it is there; otherwise, in an editable install or
when running from source, the checkout's folder is used.
"""

from __future__ import annotations

from pathlib import Path

TYPE_CHECKING = False   # (typing is for the checker only: importing it costs a warm start 2%)
if TYPE_CHECKING:
    from typing import Callable

FOLDERS = ("grammar", "schemas")
"""The data folders shipped beside the code, by name (each is read by the stage that owns it)."""


def package_root() -> Path:
    """The ``interpreter`` package's folder (this module's grandparent). Not importlib.resources: the package
    is always a folder on disk (installed or a checkout), and importing it costs every command's start-up its
    zipfile and tempfile imports (about 3 ms)."""
    return Path(__file__).resolve().parent.parent


def folder(name: str, package: Path | None = None) -> Path:
    """The folder holding the shipped data files ``name`` (one of FOLDERS) for the package at ``package``."""
    if name not in FOLDERS:
        raise ValueError(f"not a shipped data folder: {name!r}")
    package = package_root() if package is None else package
    packaged = package / name
    if packaged.is_dir():
        return packaged
    return package.parent / name


def _no_grammar_tables() -> str | None:
    return None


grammar_tables: Callable[[], str | None] = _no_grammar_tables
"""Where lark may keep the procedure grammar's LALR tables between processes (reading/parser.py), or None to
build them in each process (about 0.2 s). loading/cache.py sets it to a file in the user's own load cache
folder, which it has checked no one else may write: lark reads the file back with pickle, so never the shared
temporary folder (lark's ``cache=True``), where another user could plant one."""
