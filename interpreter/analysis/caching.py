"""Reusing the deterministic start and end of a procedure across untraced runs.

The analysis (``plan``) splits a procedure body in three:

* the **prefix**: the leading statements that roll nothing, choose nothing and
  call only pure procedures (analysis/purity.py). Their effect depends on the arguments
  alone, so their resulting locals and emits are kept per argument set;
* the **middle**: from the first roll or decision to the last. Expressions in it
  that read only arguments and names the prefix defines (and that nothing
  rebinds) have one value per prefix state, kept with the prefix entry
  (``static_names``; the compiler wraps them, see ``Compiler.static_or_expr``);
* the **suffix**: the trailing statements with no roll, decision or impure call.
  Its return value and emits depend only on the locals it reads
  (``suffix_reads``), which make its key.

``untraced_runner`` is the runner over the three compiled parts. Exceptions are
never kept, and the same steps are charged as if the statements had run.
``dice_path_runner`` wraps it: whole runs kept per argument set and per the
faces their rolls drew, replayed by drawing the same dice from the same source.
"""

from __future__ import annotations

from math import comb
from operator import itemgetter

from ..model.values import (
    CELLS_PER_STEP,
    Record,
    Roll,
    any_roll,
    built_depth,
    check_size,
    depth_of,
    key_form,
)
from ..reading import syntax as ast
from ..reading.plain import data_class
from .names import bound_names, walk

EMIT = "$emit"       # a procedure's locals: the emits made so far
STATIC = "$static"   # per prefix-cache entry: values of the middle's static expressions
MEMO_LIMIT = 4096    # entries kept per cache before it is cleared
_MISSING = object()


# Cache entries are plain tuples, unpacked on the hot path (a named tuple unpacks and reads slower):
# a prefix entry is (returned, saved, emits, used, nesting, ran_at) and a suffix entry is
# (returned, emits, used, nesting, ran_at), where
#   returned  the value a `return` gave, else None;
#   saved     the locals after the prefix (None: the prefix returned, and `emits` holds its result, made once);
#   emits     the emits made so far;
#   used      the steps it used, charged again on every use;
#   nesting   how deep the emits nest;
#   ran_at    the call depth it ran at: not used from deeper calls, so that limit 'depth' stops it there.
_PREFIX_RAN_AT = 5
_SUFFIX_USED, _SUFFIX_RAN_AT = 2, 4
_NO_EMITS: dict = {}   # the emits of a procedure without `emit` (never written to)
NESTING = frozenset((Record, tuple))
"""The classes of values that nest (lists, records): ``NESTING.isdisjoint(map(type, values))`` tells, in one C
pass, that none of ``values`` adds to a depth (the common case: numbers, texts, truth values), before a loop."""


@data_class
class CachePlan:
    prefix_end: int          # statements[:prefix_end] is the prefix
    suffix_start: int        # statements[suffix_start:] is the suffix
    static_names: set        # names with one value per prefix entry (empty without a prefix)
    suffix_reads: tuple      # locals the suffix reads: its cache key
    emits: bool = True                # whether the body emits at all
    middle_emits: tuple | None = None  # the names the middle emits, when no part emits a name another does
    calling: tuple = (True, True)     # whether the prefix and the suffix call procedures (see untraced_runner)


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


_COSTLY = (ast.Call, ast.Apply, ast.Lookup, ast.Locate, ast.Aggregate, ast.ForEach)


def worth_keeping(statements) -> bool:
    """Whether an ending does enough (a call, a stack, a table, a loop) that reusing it beats running it."""
    return any(isinstance(node, _COSTLY) for node in walk(tuple(statements)))


def plan(ruleset, proc, global_names, enabled: bool = True) -> CachePlan:
    """Where a procedure's cached prefix ends and its cached suffix starts, and what each depends on."""
    statements = proc.syntax.body
    k = static_prefix_length(ruleset, statements) if enabled else 0
    j = len(statements) - static_prefix_length(ruleset, statements[::-1]) if enabled else len(statements)
    j = max(j, k)
    if not worth_keeping(statements[j:]):
        j = len(statements)      # hashing its key would cost more than running it
    static: set = set()
    if k:
        prefix_lets = {id(st) for st in statements[:k] if isinstance(st, ast.Let)}
        reassigned = {n.name for n in walk(statements) if isinstance(n, (ast.Set, ast.Roll, ast.Choose))
                      or (isinstance(n, ast.Let) and id(n) not in prefix_lets)} | \
                     {n.var for n in walk(statements) if isinstance(n, ast.ForEach)}
        static = ({p.name for p in proc.params} |
                  {st.name for st in statements[:k] if isinstance(st, ast.Let)}) - reassigned
    ending = tuple(statements[j:])
    reads: tuple = ()
    if ending:      # (no suffix, as when the cache is off: nothing to key, and no walk of the body for it)
        bound_before = {p.name for p in proc.params} | bound_names(tuple(statements[:j]))
        bound_in_ending = bound_names(ending)
        reads = tuple(sorted({n.name for n in walk(ending) if isinstance(n, ast.Name)
                              and n.name not in global_names
                              and (n.name in bound_before or n.name not in bound_in_ending)}))
    emitted = [{n.name for n in walk(tuple(part)) if isinstance(n, ast.Emit)}
               for part in (statements[:k], statements[k:j], statements[j:])]
    apart = not (emitted[0] & emitted[1] or emitted[0] & emitted[2] or emitted[1] & emitted[2])
    calling = (_calls(ruleset, statements[:k]), _calls(ruleset, statements[j:]))
    return CachePlan(k, j, static, reads, any(emitted), tuple(sorted(emitted[1])) if apart else None, calling)


def _calls(ruleset, statements) -> bool:
    """Whether statements call a procedure (directly, or in a modifier of a stack they apply): reusing
    their work then depends on the call depth."""
    for n in walk(tuple(statements)):
        if isinstance(n, ast.Call):
            return True
        if isinstance(n, ast.Apply):
            parts = tuple(e for m in ruleset.stacks[n.stack].modifiers for e in (m.value, m.when, m.times)
                          if e is not None)
            if any(isinstance(x, (ast.Call, ast.Apply)) for x in walk(parts)):
                return True
    return False


def state_key(env: dict, names: tuple, rolls_may_hide: bool) -> tuple:
    """The values of ``names`` in a procedure's locals, as a hashable key (rolls keep their dice)."""
    values = [env.get(n, _MISSING) for n in names]
    if rolls_may_hide:
        key = tuple([key_form(v) for v in values]) if any_roll(values) else tuple(values)
    else:   # rolls only sit in their own variables: freeze those
        key = tuple([v.frozen if v.__class__ is Roll else v for v in values])
    hash(key)   # raises TypeError for anything that cannot be a key
    return key


def result_value(value, emitted: dict):
    """A procedure's result: its return value, with the fields it emitted (the return's fields win)."""
    if emitted:
        if value is None:
            return Record(emitted)
        if value.__class__ is Record:
            return Record({**emitted, **value})
        return Record({**emitted, "value": value})
    return value


def bounded_result(value, emitted: dict, rt, pos):
    """``result_value``, with the nesting of results inside results bounded (values.check_built)."""
    if not emitted:
        return value
    if value.__class__ is Record:         # its depth is known: only the emitted lists and records add to it
        try:
            d = value._depth
        except AttributeError:
            d = built_depth(value)
        value = Record({**emitted, **value})
        if not NESTING.isdisjoint(map(type, emitted.values())):
            for k, v in emitted.items():
                c = v.__class__
                if (c is Record or c is tuple) and value[k] is v:    # (not a field the return replaced)
                    vd = depth_of(v) + 1
                    if vd > d:
                        d = vd
        value._depth = d
    else:
        value = Record(emitted) if value is None else Record({**emitted, "value": value})   # result_value
        d = built_depth(value)            # one pass; the record keeps it
    # a result nesting d deep, checked: results inside results are bounded like any record built
    limits = rt.limits
    if d > 1 and (d > limits["nesting"] or len(value) > limits["list"] or len(value) >= CELLS_PER_STEP):
        return check_size(value, d, rt, pos)
    return value


def untraced_runner(proc, body, prefix, middle, suffix, suffix_reads: tuple, rolls_may_hide: bool,
                    emits: bool = True, roll_names: frozenset = frozenset(), middle_emits: tuple | None = None,
                    calling: tuple = (True, True)):
    """The procedure's untraced run as ``run(env, rt) -> result``, reusing its prefix and suffix work.

    ``body`` is the whole body's (traced) block; ``prefix`` and ``suffix`` are untraced blocks and
    ``middle`` is the untraced middle's parts (statement closures, steps, position; see
    ``Compiler.block_parts``): the middle's statements run here, in this frame. A return signals with
    a 1-tuple ``(value,)``. ``emits`` False: the procedure has no `emit`, so its
    locals need no dict of emits. ``roll_names``: the names it rolls into (when rolls cannot hide, the
    only ones that can hold a roll, which a suffix key must freeze). ``middle_emits``: the names the
    middle emits, when no part emits a name another part emits (else None): a result of emits alone is
    then bounded from the depths its prefix and suffix entries keep and those names only. ``calling``: whether
    the prefix and the suffix call procedures: their entries then keep the call depth they ran at, and are
    not used from deeper (they run again there, so that limit 'depth' stops them where it would).

    The prefix cache is looked up first by the identity of the argument objects (each entry
    holds those objects, so an id cannot be reused while the entry lives: no hashing of big
    records when a caller passes the same values again), then by their values.
    """
    pos = proc.pos
    prefix_calls, suffix_calls = calling
    mfns, mcost, mfirst = middle if middle is not None else ((), 0, None)
    cache, suffix_cache = proc.prefix_cache, proc.suffix_cache
    by_id: dict = {}     # ids of the argument objects -> (names, the objects, *prefix cache entry)
    one_read = suffix_reads[0] if len(suffix_reads) == 1 and not rolls_may_hide else None
    # several reads, none of which can hold a roll: the key is their values, read by one C call
    # (a name not set on this path raises KeyError: then state_key, which keys it as missing)
    plain_reads = itemgetter(*suffix_reads) if len(suffix_reads) > 1 and not rolls_may_hide \
        and not roll_names & set(suffix_reads) else None

    def prefix_entry(env: dict, rt):
        """The prefix cache entry for these arguments (running the prefix on a miss); None: not a key.

        For a prefix that returns, its result (made once; its bounds are checked on each use) is kept in
        place of the emits.
        """
        try:
            key = tuple([(k, key_form(v)) for k, v in env.items()]) \
                if rolls_may_hide and any_roll(env.values()) else tuple(env.items())
            hit = cache.get(key)
        except TypeError:            # an argument that cannot be a key: run it all
            return None
        if hit is None or (prefix_calls and rt.depth > hit[_PREFIX_RAN_AT]):
            emitted: dict = {}
            env[EMIT] = emitted
            before = rt.steps_left
            signal = prefix(env, rt)
            if len(cache) >= MEMO_LIMIT:
                cache.clear()
            used = before - rt.steps_left
            rt.steps_left = before      # charged again below, as for any hit
            if signal is not None:
                value = result_value(signal[0], emitted)
                if emitted and value.__class__ is Record:
                    built_depth(value)
                hit = cache[key] = (signal[0], None, value, used, 0, rt.depth)
            else:
                store: dict = {}
                saved = dict(env)
                del saved[EMIT]
                saved[STATIC] = store
                hit = cache[key] = (None, saved, dict(emitted), used, deepest(emitted.values()), rt.depth)
        return hit

    def run_cached(env: dict, rt):
        if prefix is not None:
            found = by_id.get(tuple(map(id, env.values())))
            if found is not None and found[0] == tuple(env) and (not prefix_calls or rt.depth <= found[7]):
                _, _, returned, saved, saved_emits, used, known, _ = found
            else:
                ids, names, values = tuple(map(id, env.values())), tuple(env), tuple(env.values())
                hit = prefix_entry(env, rt)
                if hit is None:
                    emitted: dict = {}
                    env[EMIT] = emitted
                    signal = body(env, rt)
                    return bounded_result(signal[0] if signal is not None else None, emitted, rt, pos)
                if len(by_id) >= MEMO_LIMIT:
                    by_id.clear()
                by_id[ids] = (names, values) + hit     # (flat: one index fewer on every hit)
                returned, saved, saved_emits, used, known, _ = hit
            left = rt.steps_left - used
            rt.steps_left = left
            if left < 0:             # it would stop in the prefix: the whole body runs, to stop where it would
                rt.steps_left = left + used
                env[EMIT] = {}
                body(env, rt)
                rt.out_of_steps(pos)
            if saved is None:        # the prefix returned: its result (a record of emits: bound its nesting)
                value = saved_emits
                if value.__class__ is Record and value is not returned and value._depth > 1:
                    return check_size(value, value._depth, rt, pos)
                return value
            env = saved.copy()
            if emits:
                env[EMIT] = emitted = saved_emits.copy()
            else:
                emitted = saved_emits       # empty, and nothing writes to it
        elif emits:
            env[EMIT] = emitted = {}
            known = 0
        else:
            emitted, known = _NO_EMITS, 0
        left = rt.steps_left - mcost          # the middle's statements, run here
        rt.steps_left = left
        if left < 0:
            rt.out_of_steps(mfirst)
        for fn in mfns:
            signal = fn(env, rt)
            if signal is not None:
                if len(signal) == 2:
                    # a kept segment's return, boxed (compiling/segments.py): its emits are fixed by the entry the
                    # signal is kept in, so the result is too; kept in the box when building it charged nothing.
                    # (Looked at first: a segment returning a kept result leaves its emits out of ``emitted``.)
                    box = signal[1]
                    if box and box[0] is rt.limits:
                        return box[1]
                    if not emitted:
                        return signal[0]
                    value = bounded_result(signal[0], emitted, rt, pos)
                    if len(value) < CELLS_PER_STEP:      # (no steps charged for its size, no bound exceeded)
                        box[:] = (rt.limits, value)
                    return value
                return bounded_result(signal[0], emitted, rt, pos) if emitted else signal[0]
        if suffix is None:
            if middle_emits is None:
                return bounded_result(None, emitted, rt, pos)
            d = known
        else:
            try:
                if one_read is not None:
                    key = env.get(one_read, _MISSING)
                    if key.__class__ is Roll:
                        key = key.frozen
                elif plain_reads is not None:
                    try:
                        key = plain_reads(env)
                    except KeyError:
                        key = state_key(env, suffix_reads, rolls_may_hide)
                else:
                    key = state_key(env, suffix_reads, rolls_may_hide)
                hit = suffix_cache.get(key)
            except TypeError:
                signal = suffix(env, rt)
                return bounded_result(signal[0] if signal is not None else None, env[EMIT], rt, pos)
            if hit is None or (suffix_calls and rt.depth > hit[_SUFFIX_RAN_AT]):   # kept from a shallower call: run again
                before = rt.steps_left
                own: dict = {}
                env[EMIT] = own
                signal = suffix(env, rt)
                if len(suffix_cache) >= MEMO_LIMIT:
                    suffix_cache.clear()
                suffix_cache[key] = hit = (signal[0] if signal is not None else None, own, before - rt.steps_left,
                                           deepest(own.values()), rt.depth)
                rt.steps_left += hit[_SUFFIX_USED]      # charged again below, as for any hit
            value, own, used, own_depth, _ = hit
            left = rt.steps_left - used
            rt.steps_left = left
            if left < 0:
                rt.out_of_steps(pos)
            if own:
                emitted.update(own)          # the suffix's emits, in the order they were made
            if value is not None or middle_emits is None:
                return bounded_result(value, emitted, rt, pos)
            d = known if known > own_depth else own_depth
        # a result of emits alone (bounded_result(None, emitted), inline): the prefix's and suffix's emits nest
        # d deep (kept with their entries), so only the middle's emits are looked at
        if not emitted:
            return None
        if not NESTING.isdisjoint(map(type, map(emitted.get, middle_emits))):
            for k in middle_emits:
                v = emitted.get(k)
                c = v.__class__
                if c is Record or c is tuple:
                    vd = depth_of(v)
                    if vd > d:
                        d = vd
        d += 1
        value = Record(emitted)
        value._depth = d
        limits = rt.limits
        if d > 1 and (d > limits["nesting"] or len(value) > limits["list"] or len(value) >= CELLS_PER_STEP):
            return check_size(value, d, rt, pos)
        return value

    return run_cached


def deepest(values, d: int = 0) -> int:
    """The deepest nesting of lists and records among ``values`` (numbers, texts and None add none), or ``d``:
    for emits, what they add to a result's depth, less one."""
    for v in values:
        c = v.__class__
        if c is Record or c is tuple:
            vd = depth_of(v)
            if vd > d:
                d = vd
    return d


# ---- whole runs kept by the dice they drew -------------------------------------------------------------------

PATH_OUTCOMES = 10_000
"""Most outcomes the rolls along a kept path may have together (21 for a 2d6 whose order is not read, 9,261 for
three): a run whose dice have more is not kept, and the runs taking the branch where it left the kept tree are
not kept either (they run in full from there: their paths would rarely repeat)."""
PATH_NODES = 8192
"""Most branches a procedure's kept paths hold before they are dropped (and given up the second time)."""
_PATH_TRIAL = 1024
"""Runs of a procedure over which its dice-path memo is given up if three in four of them missed (only speed
changes)."""
_STOP = ("stop",)     # a branch of a kept path beyond which runs are not kept (PATH_OUTCOMES)


class _Recording:
    """The dice of runs being recorded: faces to give back first (``replay``, from ``at`` on), in order, then the
    source's own; every roll logged with the steps left when it was made. One per runtime, however deeply
    recorded runs nest: a run records its rolls as the stretch of the log from where it started (see
    ``dice_path_runner``), so a roll passes through one recording, not one per call it is made in."""

    __slots__ = ("source", "replay", "at", "rt", "log")

    def __init__(self, source, rt):
        self.source, self.replay, self.at, self.rt = source, [], 0, rt
        self.log: list[tuple] = []     # (kind, label, pos, steps left, faces)

    def roll(self, kind, label, pos):
        at = self.at
        if at < len(self.replay):
            faces = self.replay[at]
            self.at = at + 1
        else:
            faces = self.source.roll(kind, label, pos)
        self.log.append((kind, label, pos, self.rt.steps_left, faces))
        return faces

    def give_back(self, drawn: list) -> int:
        """The faces ``drawn`` (the last rolls logged) to be given again, first: where they start in the log."""
        start = len(self.log) - len(drawn)
        del self.log[start:]
        self.replay = drawn + self.replay[self.at:]
        self.at = 0
        return start

    def branch(self, options):
        return self.source.branch(options)

    @property
    def pending_given(self) -> bool:
        return self.source.pending_given

    def __getattr__(self, name):          # (history, seed, used: the source's)
        return getattr(self.source, name)


def _node(rolled: tuple) -> tuple:
    """A kept path's node for a roll logged by ``_Recording``."""
    kind = rolled[0]
    return (kind, rolled[1], rolled[2], rolled[3], {}, kind.ordered or len(kind.names) == 1)


def _outcomes(kind) -> int:
    """How many branches a roll of ``kind`` can take in a kept path (its faces sorted if it is unordered)."""
    if kind.ordered or len(kind.names) == 1:
        return kind.sides ** len(kind.names)
    return comb(kind.sides + len(kind.names) - 1, len(kind.names))


def dice_path_runner(run):
    """``run`` (a procedure's untraced run), with whole runs kept by their arguments and the dice they drew.

    An untraced run with no choices given and no call hook is a function of its arguments (the ruleset's data
    being fixed) and of the faces its rolls return, made in an order those fix. So each run is kept as a path:
    per argument set (looked up by the identity of the argument objects, which the entry holds, then by value),
    a tree whose node names the next roll (its kind, label and position, and the steps used when it is made) and
    whose branches are the faces that roll gave; a leaf holds the result and the steps the run used. A kept run
    draws the same dice from the same source in the same order (the source cannot tell), follows the branch of
    each, and returns the leaf's result, charging the steps the run used. Paths are kept only while their rolls
    have at most PATH_OUTCOMES outcomes together (an attack and the checks of a few units, not a long loop of rolls).

    Where the tree has no branch for the faces drawn (or one not kept), or the steps left would not cover the
    next roll or the whole run, the run is made again from the start with the faces already drawn given back to
    its rolls first (``_Recording``): the source is never asked for a die the run would not have asked for, and a
    limit stops the run where it would. Exceptions are never kept; the tree is kept per ``rt.limits`` and only
    used from calls as shallow as the first (limit 'depth' stops deeper ones where it would).
    """
    by_id: dict = {}       # (names, ids of the argument objects) -> (the objects, root)
    by_value: dict = {}    # (names, classes and values) -> root
    # a root: [limits, depth it ran at, tree]; a tree node: (kind, label, pos, steps used, {faces: node}, ordered)
    # (the faces of a roll whose order the procedure never reads sorted: analysis/roll_usage.py), a leaf
    # (result, steps used) or _STOP
    counts = [0, 0, 0]     # runs, misses, times the tree filled up (for giving up on paths that do not repeat)
    nodes = [0]

    def record(env, rt, root, drawn: list, start: int, keep: bool = True):
        """Run it, its rolls given ``drawn`` first; keep its path under ``root`` (``keep``: it may be new)."""
        rt.steps_left = start
        rec = rt.dice
        if rec.__class__ is _Recording:      # a run that calls this one is being recorded: one log for both
            first = rec.give_back(drawn)
            result = run(env, rt)
        else:
            source = rec
            rec = rt.dice = _Recording(source, rt)
            rec.replay, first = drawn, 0
            try:
                result = run(env, rt)
            finally:
                rt.dice = source
        counts[1] += 1
        if not keep:
            return result
        if nodes[0] >= PATH_NODES:
            by_id.clear()
            by_value.clear()
            nodes[0] = 0
            counts[2] += 1
            if counts[2] >= 2:
                counts[0] = -1        # its paths do not fit, time and again: run it plainly from now on
            return result
        log = [(kind, label, pos, start - left, faces) for kind, label, pos, left, faces in rec.log[first:]]
        leaf = (result, start - rt.steps_left)
        # a path whose rolls have more outcomes together than PATH_OUTCOMES is cut where it leaves the kept tree
        # (that branch marked _STOP): the runs through there run in full from their first roll, drawing no more
        whole = 1
        for rolled in log:
            whole *= _outcomes(rolled[0])
        if root[2] is None:
            root[2] = _node(log[0]) if log else leaf
            nodes[0] += 1
        node = root[2]
        for i, (kind, label, pos, used, faces) in enumerate(log):
            if len(node) != 6 or node[0] is not kind or node[1] != label or node[2] is not pos or node[3] != used:
                return result      # (cannot happen: the same arguments and dice make the same rolls)
            if not node[5]:
                faces = tuple(sorted(faces))
            children = node[4]
            nxt = children.get(faces)
            if nxt is None:
                nxt = children[faces] = _STOP if whole > PATH_OUTCOMES else leaf if i + 1 == len(log) \
                    else _node(log[i + 1])
                nodes[0] += 1
                if nxt is _STOP:
                    return result
            node = nxt
        return result

    def dice_path_run(env, rt):
        if rt.call_hook is not None or rt.choices or counts[0] < 0:
            return run(env, rt)
        counts[0] += 1
        if counts[0] == _PATH_TRIAL:
            if counts[1] * 4 > _PATH_TRIAL * 3:
                counts[0] = -1          # most runs missed: run it plainly from now on
                by_id.clear()
                by_value.clear()
                return run(env, rt)
            counts[0] = counts[1] = 0
        values = tuple(env.values())
        ids = (tuple(env), *map(id, values))
        found = by_id.get(ids)
        if found is not None:
            root = found[1]
        else:
            try:
                # (each value's class in the key: True and 1, 1 and 1.0, are equal but may read differently)
                key = tuple([(k, v.__class__, key_form(v)) for k, v in env.items()]) if any_roll(values) \
                    else tuple([(k, v.__class__, v) for k, v in env.items()])
                root = by_value.get(key)
            except TypeError:        # an argument that cannot be a key: run it
                return run(env, rt)
            if root is None:
                if len(by_value) >= MEMO_LIMIT:
                    by_value.clear()
                root = by_value[key] = [rt.limits, rt.depth, None]
            if len(by_id) >= MEMO_LIMIT:
                by_id.clear()
            by_id[ids] = (values, root)
        start = rt.steps_left
        if root[0] is not rt.limits or rt.depth > root[1]:
            if rt.depth <= root[1] or root[2] is None:      # kept under other limits: kept anew under these
                root[:] = (rt.limits, rt.depth, None)
                return record(env, rt, root, [], start)
            return run(env, rt)
        node = root[2]
        if node is None:
            return record(env, rt, root, [], start)
        drawn: list = []
        dice = rt.dice
        while len(node) == 6:
            left = start - node[3]
            if left < 0:
                return record(env, rt, root, drawn, start)
            rt.steps_left = left
            faces = dice.roll(node[0], node[1], node[2])
            drawn.append(faces)
            if node[5]:
                node = node[4].get(faces)
            elif len(faces) == 2:
                a, b = faces
                node = node[4].get(faces if a <= b else (b, a))
            else:
                node = node[4].get(tuple(sorted(faces)))
            if node is None:
                return record(env, rt, root, drawn, start)
        if node is _STOP:         # a path not kept beyond here
            return record(env, rt, root, drawn, start, False)
        left = start - node[1]
        if left < 0:
            return record(env, rt, root, drawn, start)
        rt.steps_left = left
        return node[0]

    return dice_path_run
