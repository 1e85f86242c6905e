"""Reusing the deterministic start and end of a procedure across untraced runs.

The analysis (``plan``) splits a procedure body in three:

* the **prefix**: the leading statements that roll nothing, choose nothing and
  call only pure procedures (purity.py). Their effect depends on the arguments
  alone, so their resulting locals and emits are kept per argument set;
* the **middle**: from the first roll or decision to the last. Expressions in it
  that read only arguments and names the prefix defines (and that nothing
  rebinds) have one value per prefix state, kept with the prefix entry
  (``static_names``; the compiler wraps them, see ``Compiler.static_or_expr``);
* the **suffix**: the trailing statements with no roll, decision or impure call.
  Its return value and emits depend only on the locals it reads
  (``suffix_reads``), which make its key.

``cached_body`` is the runner over the three compiled parts. Exceptions are
never kept, and the same steps are charged as if the statements had run.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import syntax as ast
from .names import bound_names, walk
from .values import Roll, any_roll, key_form

EMIT = "$emit"       # a procedure's locals: the emits made so far
STATIC = "$static"   # per prefix-cache entry: values of the middle's static expressions
MEMO_LIMIT = 4096    # entries kept per cache before it is cleared
_MISSING = object()


@dataclass
class CachePlan:
    prefix_end: int          # statements[:prefix_end] is the prefix
    suffix_start: int        # statements[suffix_start:] is the suffix
    static_names: set        # names with one value per prefix entry (empty without a prefix)
    suffix_reads: tuple      # locals the suffix reads: its cache key


def static_prefix_length(ruleset, statements) -> int:
    """How many leading statements roll nothing, choose nothing and call only pure procedures."""
    count = 0
    for s in statements:
        for node in walk((s,)):
            if isinstance(node, (ast.Roll, ast.Choose)):
                return count
            if isinstance(node, ast.Call) and not ruleset.procedures[node.procedure].deterministic:
                return count
        count += 1
    return count


def plan(ruleset, proc, global_names, enabled: bool = True) -> CachePlan:
    """Where a procedure's cached prefix ends and its cached suffix starts, and what each depends on."""
    statements = proc.syntax.body
    k = static_prefix_length(ruleset, statements) if enabled else 0
    j = len(statements) - static_prefix_length(ruleset, statements[::-1]) if enabled else len(statements)
    j = max(j, k)
    static: set = set()
    if k:
        prefix_lets = {id(st) for st in statements[:k] if isinstance(st, ast.Let)}
        reassigned = {n.name for n in walk(statements) if isinstance(n, (ast.Set, ast.Roll, ast.Choose))
                      or (isinstance(n, ast.Let) and id(n) not in prefix_lets)} | \
                     {n.var for n in walk(statements) if isinstance(n, ast.ForEach)}
        static = ({p.name for p in proc.params} |
                  {st.name for st in statements[:k] if isinstance(st, ast.Let)}) - reassigned
    ending, before_ending = tuple(statements[j:]), tuple(statements[:j])
    bound_before = {p.name for p in proc.params} | bound_names(before_ending)
    bound_in_ending = bound_names(ending)
    reads = tuple(sorted({n.name for n in walk(ending) if isinstance(n, ast.Name)
                          and n.name not in global_names
                          and (n.name in bound_before or n.name not in bound_in_ending)}))
    return CachePlan(k, j, static, reads)


def state_key(env: dict, names: tuple, rolls_may_hide: bool) -> tuple:
    """The values of ``names`` in a procedure's locals, as a hashable key (rolls keep their dice)."""
    values = [env.get(n, _MISSING) for n in names]
    if rolls_may_hide:
        key = tuple([key_form(v) for v in values]) if any_roll(values) else tuple(values)
    else:   # rolls only sit in their own variables: freeze those
        key = tuple([v.frozen if v.__class__ is Roll else v for v in values])
    hash(key)   # raises TypeError for anything that cannot be a key
    return key


def cached_body(proc, body, prefix, middle, suffix, suffix_reads: tuple, rolls_may_hide: bool):
    """The procedure's body as ``run(env, rt) -> signal``, reusing its prefix and suffix work."""
    cache, suffix_cache = proc.prefix_cache, proc.suffix_cache
    pos = proc.pos

    def run_cached(env: dict, rt):
        signal = None
        if prefix is not None:
            try:
                key = tuple([(k, key_form(v)) for k, v in env.items()]) \
                    if rolls_may_hide and any_roll(env.values()) else tuple(env.items())
                hit = cache.get(key)
            except TypeError:            # an argument that cannot be a key: run it all
                env[EMIT] = {}
                return body(env, rt)
            if hit is None:
                env[EMIT] = {}
                before = rt.steps_left
                signal = prefix(env, rt)
                if len(cache) >= MEMO_LIMIT:
                    cache.clear()
                store = {}
                cache[key] = (signal, dict(env), dict(env[EMIT]), before - rt.steps_left, store)
                env[STATIC] = store
            else:
                signal, saved, saved_emits, used, store = hit
                env.clear()
                env.update(saved)
                env[EMIT] = dict(saved_emits)
                env[STATIC] = store
                rt.steps_left -= used
                if rt.steps_left < 0:
                    rt.out_of_steps(pos)
            if signal is not None:
                return signal
        else:
            env[EMIT] = {}
        if middle is not None:
            signal = middle(env, rt)
            if signal is not None:
                return signal
        if suffix is None:
            return None
        try:
            key = state_key(env, suffix_reads, rolls_may_hide)
            hit = suffix_cache.get(key)
        except TypeError:
            return suffix(env, rt)
        emitted = env[EMIT]
        if hit is None:
            before = rt.steps_left
            env[EMIT] = own = {}
            signal = suffix(env, rt)
            emitted.update(own)          # the suffix's emits, in the order they were made
            env[EMIT] = emitted
            if len(suffix_cache) >= MEMO_LIMIT:
                suffix_cache.clear()
            suffix_cache[key] = (signal, own, before - rt.steps_left)
            return signal
        signal, own, used = hit
        emitted.update(own)
        rt.steps_left -= used
        if rt.steps_left < 0:
            rt.out_of_steps(pos)
        return signal
    return run_cached
