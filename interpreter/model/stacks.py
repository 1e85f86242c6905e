"""Modifier stacks: total the modifiers that apply, by the stack's declared rules.

A stack is evaluated with its parameters bound (``apply(ift_drm, target: t)``).
Each modifier's condition, value and count are compiled closures. Best-of
groups keep one value; caps clamp the total; ``refuse_below``/``refuse_above``
turn an out-of-range total into a refusal with the stack's citation.
"""

from __future__ import annotations

from fractions import Fraction

from ..errors import AdjudicationError, Refusal
from .values import normalise, show


def evaluate_stack(stack, args: dict, rt, pos, uncapped: bool = False):
    """The stack's total; with ``uncapped``, the total before its limits (caps) are applied."""
    if rt.trace is None and not stack.groups:
        return _total_untraced(stack, args, rt, uncapped)
    trace = rt.trace
    product = stack.combine == "product"
    applied = []          # (modifier, value)
    lines = []            # for the trace: (modifier, text)
    for m in stack.modifiers:
        value, skipped = _modifier_value(m, args, rt, product)
        if skipped is not None:
            if trace is not None:
                lines.append((m, f"{m.id}: not applied ({skipped})"))
            continue
        applied.append((m, normalise(value)))
    if stack.groups:
        best: dict[str, tuple] = {}
        for m, v in applied:
            if m.group:
                keep = best.get(m.group)
                pick = stack.groups[m.group]
                if keep is None or (v < keep[1] if pick == "min" else v > keep[1]):
                    best[m.group] = (m, v)
        beaten = [(m, v) for m, v in applied if m.group and best[m.group][0] is not m]
        if trace is not None:
            for m, v in beaten:
                lines.append((m, f"{m.id}: not applied ({_sign(v, product)} beaten by {best[m.group][0].id} "
                                 f"in group {m.group})"))
        applied = [(m, v) for m, v in applied if not (m.group and best[m.group][0] is not m)]
    total = 1 if product else 0
    for _, v in applied:
        total = total * v if product else total + v
    raw = normalise(total)
    total = raw if uncapped else _capped(stack, raw)
    if trace is not None:
        order = {id(m): i for i, m in enumerate(stack.modifiers)}
        lines += [(m, f"{m.id}: {_sign(v, product)}") for m, v in applied]
        lines.sort(key=lambda x: order[id(x[0])])
        capped = f" (capped from {show(raw)})" if total != raw else (" (before its caps)" if uncapped else "")
        trace.add("stack", f"{stack.title}: {_sign(total, product)}{capped}", stack.cite, stack=stack.name, total=total)
        trace.depth += 1
        for m, text in lines:
            trace.add("modifier", text, m.cite, origin=m.origin)
        trace.depth -= 1
    _refuse_if_out_of_range(stack, raw)
    return total


def _sign(v, product: bool) -> str:
    if product:
        return "x" + show(v)
    return f"{v:+d}" if isinstance(v, int) else ("+" if v >= 0 else "") + show(v)


def _total_untraced(stack, args: dict, rt, uncapped: bool = False):
    """The same total as ``evaluate_stack`` for stacks without groups, when no trace is kept."""
    product = stack.combine == "product"
    total = 1 if product else 0
    for m in stack.modifiers:
        value, skipped = _modifier_value(m, args, rt, product)
        if skipped is not None:
            continue
        total = total * value if product else total + value
    raw = normalise(total)
    _refuse_if_out_of_range(stack, raw)
    return raw if uncapped else _capped(stack, raw)


def _modifier_value(m, args: dict, rt, product: bool):
    """(value, None) for a modifier that applies, or (None, why not); raises on a value of the wrong kind."""
    if m.when_fn is not None:
        ok = m.when_fn(args, rt)
        if ok is not True:
            if ok is not False:
                raise AdjudicationError(f"the condition of modifier '{m.id}' gave {show(ok)}, not true/false", m.pos)
            return None, f"{m.text.get('when', '')} is false"
    value = m.value_fn(args, rt)
    if value.__class__ is not int and (isinstance(value, bool) or not isinstance(value, (int, Fraction))):
        raise AdjudicationError(f"modifier '{m.id}' has the value {show(value)}; a number is needed", m.pos)
    if m.times_fn is not None:
        times = m.times_fn(args, rt)
        if isinstance(times, bool) or not isinstance(times, int):
            raise AdjudicationError(f"modifier '{m.id}': times gave {show(times)}; a whole number is needed", m.pos)
        if times == 0:
            return None, "counted 0 times"
        value = value ** times if product else value * times
    return value, None


def _capped(stack, total):
    """The total after the stack's caps (limits)."""
    if stack.limit_max is not None and total > stack.limit_max:
        return stack.limit_max
    if stack.limit_min is not None and total < stack.limit_min:
        return stack.limit_min
    return total


def _refuse_if_out_of_range(stack, raw) -> None:
    """A total (before caps) outside refuse_below / refuse_above refuses the action, citing the stack."""
    if stack.refuse_below is not None and raw < stack.refuse_below:
        raise Refusal(f"{stack.title} total {show(raw)} is below {show(stack.refuse_below)}, which is not allowed",
                      stack.cite)
    if stack.refuse_above is not None and raw > stack.refuse_above:
        raise Refusal(f"{stack.title} total {show(raw)} is above {show(stack.refuse_above)}, which is not allowed",
                      stack.cite)
