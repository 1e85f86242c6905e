"""The state of one adjudication while it runs: dice, trace, choices and bounds.

Compiled closures receive ``(env, rt)``: ``env`` is the procedure's local
variables, ``rt`` this object. Calls between procedures go through
``Runtime.call`` so the odds engine can intercept them (``call_hook``) and
replace a whole sub-procedure by its memoised distribution.
"""

from __future__ import annotations

from ..errors import LimitError, Position
from ..model.dice import DiceSource
from .trace import Trace

TYPE_CHECKING = False   # (typing is for the checker only: importing it costs a warm start 2%)
if TYPE_CHECKING:
    from typing import Any, Callable

_NO_CHOICES: dict = {}   # the choices of a runtime given none (only ever read)


class Runtime:
    __slots__ = ("ruleset", "dice", "trace", "steps_left", "limits", "depth", "max_depth", "choices",
                 "choice_counts", "call_hook")

    def __init__(self, ruleset, dice: DiceSource, trace: Trace | None = None, choices: dict | None = None,
                 limits: dict | None = None):
        self.ruleset = ruleset
        self.dice = dice
        self.trace = trace
        self.limits = limits = limits or ruleset.limits
        self.steps_left = limits["steps"]
        self.depth = 0
        self.max_depth = limits["depth"]   # read on every call
        self.choices = choices or _NO_CHOICES
        self.choice_counts: dict[str, int] = {}
        self.call_hook: Callable | None = None

    def out_of_steps(self, pos: Position | None):
        raise LimitError(f"the adjudication ran more than {self.limits['steps']} statements "
                         "(limit 'steps'); is a loop or a call repeating without end?", pos,
                         hint="raise limits.steps in ruleset.yaml if the rules really need more")

    def call(self, procedure, args: dict, pos: Position | None = None) -> Any:
        if self.depth >= self.limits["depth"]:
            raise LimitError(f"procedure calls are nested more than {self.limits['depth']} deep "
                             f"(limit 'depth') at a call of '{procedure.name}'; is a procedure calling itself?",
                             pos, hint="raise limits.depth in ruleset.yaml if the rules really need more")
        hook = self.call_hook
        if hook is not None:
            return hook(procedure, args, pos)
        return self.invoke(procedure, args)

    def invoke(self, procedure, args: dict) -> Any:
        self.depth += 1
        try:
            return procedure.run(dict(args), self)  # a procedure uses its argument dict as its locals
        finally:
            self.depth -= 1
