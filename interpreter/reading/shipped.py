"""Where Umpire's own data files are: the JSON Schemas and the procedure grammar.

They live in the top-level ``schemas/`` and ``grammar/`` folders of a checkout. An installed
distribution (``pip install .``, a wheel, pipx) carries them as package data, inside the package as
``interpreter/schemas`` and ``interpreter/grammar`` (pyproject.toml maps those packages onto the
checkout's folders). The packaged copy wins when it is there; otherwise, in an editable install or
when running from source, the checkout's folder is used.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

FOLDERS = ("grammar", "schemas")
"""The data folders shipped beside the code, by name (each is read by the stage that owns it)."""


def package_root() -> Path:
    """The ``interpreter`` package's folder, as importlib.resources finds it."""
    return Path(str(files("interpreter")))


def folder(name: str, package: Path | None = None) -> Path:
    """The folder holding the shipped data files ``name`` (one of FOLDERS) for the package at ``package``."""
    if name not in FOLDERS:
        raise ValueError(f"not a shipped data folder: {name!r}")
    package = package_root() if package is None else package
    packaged = package / name
    if packaged.is_dir():
        return packaged
    return package.parent / name
