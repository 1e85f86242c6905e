"""What several of the compiler's modules share: the closure type, the fields a roll keeps, a field read's slow path."""

from __future__ import annotations

from ..errors import AdjudicationError, did_you_mean
from ..model.values import Record, Roll, show, type_name

TYPE_CHECKING = False   # (typing is for the checker only: importing it costs a warm start 2%)
if TYPE_CHECKING:
    from typing import Any, Callable

    Fn = Callable[[dict, Any], Any]
else:
    Fn = "Fn"      # (a closure, fn(env, rt) -> value: named in annotations only)


def described(fn: Fn, **facts) -> Fn:
    """``fn`` with facts about it kept as attributes (what it reads, what it returns, its operands), which the
    closures that could run it in place look up with ``getattr``."""
    for name, value in facts.items():
        setattr(fn, name, value)
    return fn


_ROLL_SLOTS = {"original": 3, "doubles": 4, "dice": 0, "modifier": 2}   # where Roll._d keeps them


_ROLL_FIELDS = {"original": lambda r: r._d[3], "final": lambda r: r._d[3] + r._d[2], "doubles": lambda r: r._d[4],
                "dice": lambda r: r._d[0], "modifier": lambda r: r._d[2]}


def _slow_attribute(v, name, pos):
    if v.__class__ is Roll:
        getter = _ROLL_FIELDS.get(name)
        if getter is not None:
            return getter(v)
        try:
            return v.field(name)
        except KeyError:
            raise AdjudicationError(f"a roll has no '{name}'", pos, hint=did_you_mean(name, v.fields())) from None
    if isinstance(v, Record):
        raise AdjudicationError(f"this record has no field '{name}' (it has: {', '.join(map(str, v.keys())) or 'none'})", pos,
                                hint=did_you_mean(name, v.keys()))
    if v is None:
        raise AdjudicationError(f"cannot read '.{name}' of null (nothing)", pos)
    raise AdjudicationError(f"cannot read '.{name}' of {type_name(v)} {show(v)}", pos)
