"""Pausing Python's cyclic garbage collector around work that builds many long-lived objects.

A ruleset load and an exact-odds enumeration both allocate far more than they free;
the collector would only traverse their objects again and again.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager


@contextmanager
def gc_paused():
    """No cyclic garbage collection while a load builds its many long-lived objects: the collector would
    only traverse them again and again (a fifth of a cached load's time), and a load makes little garbage."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
