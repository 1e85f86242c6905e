"""What the state enumerator's mixins use of one another, declared once so a type checker sees one object.

``StateEnumerator`` (odds/states.py) is assembled from ``StateControl`` (branches, loops, merging) and
``StateRuns`` (a statement over the states); each calls the other through ``self`` and reads the state
``StateEnumerator.__init__`` sets. ``EnumeratorHost`` names that state and those entry points, and defines
nothing at run time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from .state_nodes import _Block
    from .state_plan import Plan


class EnumeratorHost:
    """The shared state and the cross-mixin entry points of ``StateEnumerator``."""

    ruleset: Any
    budget: int
    factor: bool
    hold: bool
    rolls_may_hide: bool
    work: int
    work_limit: int
    run_cost: int
    runs: int
    peak: int
    lazy_made: int
    held_made: int
    fractions: dict

    if TYPE_CHECKING:
        # states.py
        def _outcome(self, outcomes: dict, plan: Plan, value, num: int, den: int) -> None: ...
        def _block(self, block: _Block, states: list, outcomes: dict, rt, plan: Plan) -> list: ...
        def hint(self) -> str: ...
        # state_runs.py
        def _concrete(self, states: list, strict, attr) -> list: ...
        def _charge(self, work: int) -> None: ...
        def _run(self, fn: Callable, states, outcomes, rt, plan, writes, emits, collect=None, targets=None,
                 then=None) -> list: ...
