"""What the state enumerator (odds/states.py) works out once per procedure before running it.

A ``Plan`` turns the procedure's body into a tree of leaves (statements that map each state to states),
``if`` and ``for each`` nodes and maps over lists (odds/state_nodes.py), with the variables live after each
statement and the key on which states merge.
"""

from __future__ import annotations

from typing import AbstractSet, Any

from ..analysis.caching import EMIT
from ..analysis.names import bound_names, free_names, roll_names, walk
from ..analysis.roll_usage import roll_readings
from ..reading import syntax as ast
from .demand import ALL
from .state_nodes import Key, _Block, _For, _If, _join, _Leaf, _Map, _sequence, _which

_ABSORBING = (ast.Literal, ast.Name, ast.Attribute, ast.RecordExpr, ast.ListExpr, ast.Update, ast.Conditional,
              ast.Interpolated)


def _absorbing(e) -> bool:
    """Whether an expression gives DEAD (never an error) when any name it reads is DEAD."""
    for n in walk((e,)):
        if isinstance(n, (ast.Arg,)):
            return False
        if isinstance(n, ast.Binary):
            if n.op not in ("+", "-", "*"):
                return False
        elif isinstance(n, ast.Unary):
            if n.op != "-":
                return False
        elif isinstance(n, ast.Node) and not isinstance(n, _ABSORBING):
            return False
    return True


def _name_of(e) -> tuple[str | None, bool]:
    """``x`` -> ('x', False); ``x.f`` -> ('x', True); anything else -> (None, False)."""
    if isinstance(e, ast.Name):
        return e.name, False
    if isinstance(e, ast.Attribute) and isinstance(e.target, ast.Name):
        return e.target.name, True
    return None, False


def _strictness(s) -> tuple[AbstractSet[str], AbstractSet[str]]:
    """Names a simple statement needs as plain values (``strict``), and those it only passes on,
    reading at most one field (``attr``: plain only if the variable itself is an independent list).
    Passing on: ``let/set/emit y = x`` or ``= x.f``, ``set x = x + [item]``, lists joined (``a + b.f``,
    each side such a name or a list written out), a returned record of such fields, and ``x with {...}``
    (x's fields kept as they are; the new fields' values are read); whatever a
    call's arguments read is strict."""
    value = getattr(s, "value", None) if not isinstance(s, ast.Roll) else None
    if isinstance(s, (ast.Let, ast.Set, ast.Emit, ast.Return)) and value is not None:
        name, attr = _name_of(value)
        if name is not None:
            return set(), {name} if attr else set()
        if isinstance(s, ast.Set) and isinstance(value, ast.Binary) and value.op == "+" \
                and isinstance(value.left, ast.Name) and value.left.name == s.name and isinstance(value.right, ast.ListExpr):
            return free_names(value.right), set()
        if isinstance(value, ast.Binary) and value.op == "+" and all(
                isinstance(v, ast.ListExpr) or _name_of(v)[0] is not None for v in (value.left, value.right)):
            # joining lists (``a + b``, ``a.f + [x]``): independent items are kept as they are
            return free_names(value.left if isinstance(value.left, ast.ListExpr) else None) | \
                free_names(value.right if isinstance(value.right, ast.ListExpr) else None), set()
        if isinstance(value, ast.Update) and _name_of(value.target)[0] is not None:
            # ``x with {...}`` (or ``x.f with {...}``) passes x's other fields on as they are
            target, attr = _name_of(value.target)
            return free_names(tuple(v for _, v in value.fields)), {target} if attr and target else set()
        if isinstance(s, ast.Return) and isinstance(value, ast.RecordExpr):
            strict: set[str] = set()
            attrs: set[str] = set()
            for _, v in value.fields:
                name, attr = _name_of(v)
                if name is None:
                    strict |= free_names(v)
                elif attr:
                    attrs.add(name)
            return strict, attrs
    if isinstance(s, ast.Note):
        return set(), set()
    return _reads(s), set()


def _lazy_call(s, ruleset) -> bool:
    """``let x = call P(...)``, ``emit f = call P(...)`` or ``return call P(...)``, P's arguments calling
    nothing random: P's result may stay factored."""
    value = getattr(s, "value", None)
    if not isinstance(s, (ast.Let, ast.Set, ast.Emit, ast.Return)) or not isinstance(value, ast.Call):
        return False
    return not any(isinstance(n, (ast.Call,)) and not ruleset.procedures[n.procedure].deterministic
                   for a in value.args for n in walk((a.value,)))


def _reads(s) -> AbstractSet[str]:
    """Names a simple statement reads when run untraced (a note's text is only built for a trace)."""
    if isinstance(s, (ast.Let, ast.Set, ast.Emit)):
        return free_names(s.value)
    if isinstance(s, ast.Roll):
        names = free_names(s.modifier) if s.modifier is not None else set()
        if s.dice.size is not None:
            names |= free_names(s.dice.size)
        return names
    if isinstance(s, ast.Return):
        return free_names(s.value) if s.value is not None else set()
    if isinstance(s, ast.Fail):
        return free_names(s.message)
    if isinstance(s, ast.Refuse):
        return free_names(s.reason)
    if isinstance(s, ast.Choose):
        return free_names(s.options) | free_names(s.default)
    return set()


def _defines(s) -> str | None:
    return s.name if isinstance(s, (ast.Let, ast.Set, ast.Roll, ast.Choose)) else None


class _Static:
    """What planning a procedure learns that no demand changes, worked out once per procedure and kept on the
    ruleset for all of its plans: its roll readings and names, the arguments it never assigns, the variables
    set before each statement, which statements branch and which names each reads, and its compiler of
    untraced closures with what it compiled (a statement's closure depends on the ruleset and the procedure
    only, never on what is asked of it). Each statement is kept beside what is kept for it, so its id stays
    its own."""

    def __init__(self, ruleset, proc):
        self.proc = proc
        body = proc.syntax.body
        self.readings = roll_readings(body)     # rolls told apart only by what is read of them
        self.rolls = roll_names(body)
        # arguments the body never assigns are the same object in every state: they never tell states apart
        assigned = bound_names(body) | {n.name for n in walk(body) if isinstance(n, ast.Set)}
        self.fixed = frozenset(p.name for p in proc.params if p.name not in assigned)
        self.assigned: dict = {}        # id of a statement -> the variables set before it on every way there
        _definitely_set(body, set(), self.assigned)
        self.only_rolled = self.rolls - {n.name for n in walk(body) if isinstance(n, (ast.Let, ast.Set, ast.Choose))} \
            - {n.var for n in walk(body) if isinstance(n, ast.ForEach)} - {p.name for p in proc.params}
        self.random: dict = {}          # id(syntax) -> (syntax, whether it has a branch point)
        self.reads: dict = {}           # id(statement) -> (statement, every name read anywhere under it)
        self.closures: dict = {}        # id(statement) -> (statement, its untraced closure or None)
        from ..compiling.compiler import Compiler
        c = self.compiler = Compiler(ruleset)
        c.enter(proc)
        c.rolls_may_hide = getattr(ruleset, "rolls_may_hide", True)
        c.untraced = True


def _static(ruleset, proc) -> _Static:
    kept = ruleset.__dict__.setdefault("_state_statics", {})
    found = kept.get(proc.name)
    if found is None or found.proc is not proc:
        found = kept[proc.name] = _Static(ruleset, proc)
    return found


class Plan:
    """A procedure prepared for state enumeration under one demand on its result."""

    def __init__(self, ruleset, proc, demand, var_demands: dict | None):
        self.proc = proc
        self.demand = demand
        self.unwanted: dict = {}     # a result's field names -> {field nobody needs: DEAD} (_result)
        self.parts = ruleset.parts
        self.ruleset = ruleset
        self.globals = set(ruleset.catalogues)
        body = proc.syntax.body
        static = self._static = _static(ruleset, proc)
        self.readings, self.rolls, self.fixed = static.readings, static.rolls, static.fixed
        self.assigned, self.only_rolled = static.assigned, static.only_rolled
        self.random_defaults = any(self._random(p.default) for p in proc.params if p.default is not None)
        self.dead = self._deadable(body, proc, demand, var_demands) if var_demands is not None else frozenset()
        self.holding: set = set()       # every variable some merge may hold (odds/held.py), while planning
        self.loops = 0                  # loops the statements being planned are in (no merge there holds)
        self.body, _ = self._block(body, set())
        self.holdable = frozenset(self.holding)
        self.dead_params = tuple(p.name for p in proc.params if p.name in self.dead)

    # -- which variables never matter (kept as DEAD)
    def _deadable(self, body, proc, demand, var_demands) -> frozenset:
        candidates = {n for n in ({p.name for p in proc.params} | {_defines(s) for s in walk(body)
                                                                    if isinstance(s, ast.Statement)})
                      if n and n not in var_demands}
        candidates |= {s.var for s in walk(body) if isinstance(s, ast.ForEach) and s.var not in var_demands}
        # every read of a deadable name must sit in an absorbing value of a deadable target (or of an
        # emitted field nobody asks for); anything else (a condition, a lookup, a call...) needs its value
        reads: list[tuple[AbstractSet[str], Any, bool]] = []   # (names read, target-or-None, absorbing)
        for s in walk(body):
            if isinstance(s, (ast.Let, ast.Set)):
                reads.append((free_names(s.value), s.name, _absorbing(s.value)))
            elif isinstance(s, ast.Emit):
                unused = demand is not ALL and s.name not in demand
                reads.append((free_names(s.value), "" if unused else None, _absorbing(s.value)))
            elif isinstance(s, ast.Return) and isinstance(s.value, ast.RecordExpr):
                for k, v in s.value.fields:
                    unused = demand is not ALL and k not in demand
                    reads.append((free_names(v), "" if unused else None, _absorbing(v)))
            elif isinstance(s, ast.Statement) and not isinstance(s, ast.Note):
                own: AbstractSet[str] = _reads(s)
                if isinstance(s, ast.If):
                    own = frozenset().union(*(free_names(b.condition) for b in s.branches if b.condition is not None))
                elif isinstance(s, ast.ForEach):
                    own = free_names(s.source)
                reads.append((own, None, False))
        dead = set(candidates)
        changed = True
        while changed:
            changed = False
            for names, target, absorbing in reads:
                hit = names & dead
                if hit and not (absorbing and target is not None and (target == "" or target in dead)):
                    dead -= hit
                    changed = True
        return frozenset(dead)

    # -- liveness, building the plan's blocks backwards
    def _key_names(self, live) -> "Key":
        return Key(tuple(sorted(n for n in live if n not in self.globals and n not in self.dead
                                and n not in self.fixed)), self.rolls, self.readings)

    def _block(self, statements, live_out: set) -> tuple[_Block, set]:
        live = set(live_out)
        nodes = []
        for s in reversed(statements):
            node, live = self._statement(s, live)
            nodes.append(node)
        nodes.reverse()
        # consecutive simple statements run as one closure; a branch point ends its run
        grouped: list = []
        for node in nodes:
            last = grouped[-1] if grouped else None
            if node.__class__ is _Leaf and last is not None and last.__class__ is _Leaf and not last.branches \
                    and not node.branches:
                grouped[-1] = _join(last, node)
            else:
                grouped.append(node)
        block = _Block()
        block.nodes = tuple(grouped)
        # States merge around the nodes that can branch them (a roll, a call that rolls, a loop, an ``if``
        # holding one): before (a plain node may have left fewer variables live, so the branch point runs
        # once per merged state) and after. A node that cannot branch maps each state to at most one, so
        # merging after it would mostly cost a key per state and find nothing to merge.
        # A branch point's leaf followed by a plain one: when the states it makes are known apart (no merge
        # between them), the plain leaf runs on each state as it is made (``then``), not in a pass of its own.
        # A merge holds the live variables the node after it does not read (odds/held.py): a merge before a
        # node, those the node does not read; after one, those the next node does not (none at a block's end).
        block.steps = tuple((node,
                             node.branching and i > 0 and not grouped[i - 1].branching
                             and self._holding(grouped[i - 1].key, node),
                             node.branching and self._holding(node.key, grouped[i + 1] if i + 1 < len(grouped)
                                                              else None),
                             grouped[i + 1] if node.__class__ is _Leaf and node.branches and i + 1 < len(grouped)
                             and grouped[i + 1].__class__ is _Leaf and not grouped[i + 1].branches else None)
                            for i, node in enumerate(grouped))
        block.cost = len(statements)
        block.first = statements[0].pos if statements else None
        return block, live

    def _holding(self, key: "Key", ahead) -> "Key":
        """The key of a merge before ``ahead`` (None: the block's end), leaving out the live variables it does
        not read and the emitted fields: those the merged states hold (odds/held.py). Not in a loop's body: a
        round's states are factored and merged by the loop (state_control._for), which holding there would only
        undo."""
        if ahead is None or self.loops:
            return key
        held = tuple(n for n in key.names if n not in ahead.reads)
        self.holding.update(held)
        # (emits are read by no statement: the merge may hold them too)
        reduced = Key(tuple(n for n in key.names if n in ahead.reads), self.rolls, self.readings, held, True)
        reduced.full = key
        return reduced

    def _statement(self, s, live_after: set):
        node, live_in = self._compound(s, live_after)
        if node.__class__ is not _Leaf and not node.branching and self._whole(s):
            compound = node
            node = self._whole_leaf(s, live_after)
            if compound.__class__ is _If:
                # names only a branch reads: a state holding an independent list there runs the ``if`` itself
                node.split_on = frozenset(node.strict - compound.strict)
                node.compound = compound if node.split_on else None
        # every name the statement mentions anywhere (a held variable is opened before any of them runs)
        # (each name read anywhere under it is a Name node the walk meets: what free_names of each expression
        # under it would add is already among them)
        kept = self._static.reads.get(id(s))
        if kept is None or kept[0] is not s:
            kept = self._static.reads[id(s)] = (s, frozenset(n.name for n in walk((s,)) if n.__class__ is ast.Name))
        node.reads = kept[1]
        return node, live_in

    def _whole(self, s) -> bool:
        """Whether an ``if`` or ``for each`` without branch points may run as one closure (as in a single run):
        it sets no variable or result field that is held as DEAD, so the values it leaves are the ones the
        statement-by-statement run would leave."""
        if s.pos is None or id(s) not in self.parts:
            return False
        for n in walk((s,)):
            if isinstance(n, (ast.Let, ast.Set, ast.Roll, ast.Choose)) and n.name in self.dead:
                return False
            if isinstance(n, ast.Emit) and self.demand is not ALL and n.name not in self.demand:
                return False
        return True

    def _whole_leaf(self, s, live_after: set) -> "_Leaf":
        """An ``if`` or ``for each`` that cannot branch, as a leaf: it maps each state to one state (or ends it),
        so it joins the simple statements around it into one closure and one pass over the states."""
        inner = list(walk((s,)))
        node = _Leaf()
        fn, node.pos = self._compiled(s), s.pos
        node.steps = ((fn, None, any(isinstance(n, ast.Return) for n in inner)),)
        node.fn = fn
        node.targets = frozenset(n.name for n in inner if isinstance(n, (ast.Let, ast.Set, ast.Roll, ast.Choose))) \
            | frozenset(n.var for n in inner if isinstance(n, ast.ForEach))
        node.emits = any(isinstance(n, ast.Emit) for n in inner)
        node.writes = bool(node.targets) or node.emits
        node.branches = node.branching = node.lazy_ok = False
        node.fresh = None
        node.compound, node.parts, node.split_on = None, None, frozenset()
        node.key = self._key_names(live_after)
        # whatever it reads anywhere is read as a plain value (independent lists are expanded first): every name
        # of a Name node under it, a comprehension's own variable too
        node.strict, node.attr = {n.name for n in inner if n.__class__ is ast.Name}, set()
        return node

    def _compound(self, s, live_after: set):
        node: Any       # the node this statement plans to: an _If, a _For or a _Leaf
        if isinstance(s, ast.If):
            node = _If()
            node.key, node.pos = self._key_names(live_after), s.pos
            branches = []
            live_in = set() if any(b.condition is None for b in s.branches) else set(live_after)
            conds: set = set()
            for b in s.branches:
                if b.condition is not None:
                    conds |= free_names(b.condition)
                block, inner = self._block(b.body, live_after)
                live_in |= inner
                branches.append((self.parts[id(b)], b.condition.pos if b.condition is not None else b.pos, block))
            node.branches = tuple(branches)
            node.which = _which(node.branches)
            node.strict, node.attr = conds, set()
            node.random = any(self._random(b.condition) for b in s.branches if b.condition is not None)
            node.branching = node.random or any(n.branching for _, _, block in branches for n in block.nodes)
            # conditions reading only arguments never assigned (and catalogues): one answer for every state
            node.same = not node.random and conds <= (self.fixed | self.globals)
            return node, live_in | conds
        if isinstance(s, ast.ForEach):
            node = _For()
            node.source, node.var, node.pos = self.parts[("source", id(s))], s.var, s.pos
            node.key = self._key_names(live_after)
            head = set(live_after)
            self.loops += 1
            while True:
                body, inner = self._block(s.body, head)
                new = set(live_after) | (inner - {s.var})
                if new == head:
                    break
                head = new
            self.loops -= 1
            node.body, node.head_key = body, self._key_names(head)
            node.strict, node.attr = free_names(s.source), set()
            node.branching = self._random(s)
            accs = [a for a in _accumulators(s) if a in node.head_key.names]
            node.acc = accs[0] if len(accs) == 1 else None
            node.acc_key = Key(tuple(n for n in node.head_key.names if n != node.acc), self.rolls, self.readings)
            # a loop over a variable read nowhere else, in the loop or after it, building one list: an independent
            # list there is drawn one item per round (state_control._for), so the loop's source stays strict
            # only for the states where that cannot be done
            source_name = s.source.name if isinstance(s.source, ast.Name) else None
            node.draws = source_name if node.acc is not None and source_name is not None and \
                source_name not in head and source_name != s.var else None
            if node.draws is not None:
                node.strict = set()
            return node, head | free_names(s.source)
        target = _defines(s)
        mapped = self._map(s, live_after)
        if mapped is not None:
            return mapped, (live_after - ({target} if target else set())) | _reads(s)
        node = _Leaf()
        node.compound, node.parts, node.split_on = None, None, frozenset()
        fn, node.pos = self._compiled(s), s.pos
        node.writes = target is not None or isinstance(s, ast.Emit)
        node.emits = isinstance(s, ast.Emit)
        target_dead = target if target in self.dead else None
        emit_dead = s.name if isinstance(s, ast.Emit) and self.demand is not ALL and s.name not in self.demand \
            else None
        # a value nothing will ever tell apart, or a result field nobody asks for, is set to DEAD (without
        # working it out when that cannot fail)
        dead = target_dead if target_dead is not None else (EMIT, emit_dead) if emit_dead is not None else None
        fn = self._reused(s, fn) if dead is None or not self._safe(s) else None
        node.steps = ((fn, dead, isinstance(s, ast.Return)),)
        node.fn = _sequence(node.steps)
        node.targets = frozenset((target,)) if target else frozenset()
        node.branches = node.branching = self._random(s)
        node.key = self._key_names(live_after)
        node.strict, node.attr = _strictness(s)
        node.lazy_ok = _lazy_call(s, self.ruleset)
        # a roll, or a call's result, into a live variable: the states one state branches into all differ there
        node.fresh = target if node.branches and target in node.key.set and (
            isinstance(s, ast.Roll) or (isinstance(s, (ast.Let, ast.Set)) and isinstance(s.value, ast.Call))) \
            else None
        if isinstance(s, (ast.Return, ast.Fail, ast.Refuse)):
            return node, _reads(s)
        return node, (live_after - ({target} if target else set())) | _reads(s)


    def _reused(self, s, fn):
        """A ``let``, ``set`` or ``return`` whose value reads only arguments never assigned (and catalogues):
        every state holds the very same values there, so it is worked out once per those values and
        reused, its steps charged on every reuse (when they would run out, it runs, for its own error)."""
        value = getattr(s, "value", None)
        if not isinstance(s, (ast.Let, ast.Set, ast.Return)) or value is None or \
                isinstance(value, (ast.Literal, ast.Name)) or _name_of(value)[0] is not None or self._random(s):
            return fn
        names = free_names(value)
        if not names <= self.fixed | self.globals:
            return fn
        return _reuse(fn, tuple(sorted(names & self.fixed)), None if isinstance(s, ast.Return) else s.name)

    def _untraced(self):
        """The procedure's compiler of untraced closures (the ones ``simulate`` runs: same results, errors and
        steps as the traced ones, less work); it compiles one statement at a time."""
        return self._static.compiler

    def _compiled(self, s):
        """A statement's untraced closure (a note, which does nothing untraced, keeps its traced one)."""
        closures = self._static.closures
        kept = closures.get(id(s))
        if kept is None or kept[0] is not s:
            kept = closures[id(s)] = (s, self._static.compiler.statement(s))
        fn = kept[1]
        return fn if fn is not None else self.parts[id(s)]

    def _safe(self, s) -> bool:
        """Whether a statement's value cannot fail: a literal, a variable set earlier on every way here, or a
        roll's original, final, doubles, dice or modifier (of a name only ever rolled into). A roll itself is not:
        its dice are drawn (and given dice used) whether or not its value is ever read."""
        if isinstance(s, ast.Roll):
            return False
        value = s.value
        if isinstance(value, ast.Literal):
            return True
        name, attr = _name_of(value)
        if name is None or name not in self.assigned.get(id(s), ()):
            return False
        if not attr:
            return True
        return name in self.only_rolled and value.name in ("original", "final", "doubles", "dice", "modifier")

    def _random(self, s) -> bool:
        """Whether a statement or expression has a branch point (a roll, a choice, a call that rolls)."""
        kept = self._static.random.get(id(s))
        if kept is None or kept[0] is not s:
            kept = self._static.random[id(s)] = (s, any(
                isinstance(n, (ast.Roll, ast.Choose)) or
                (isinstance(n, ast.Call) and not self.ruleset.procedures[n.procedure].deterministic)
                for n in walk((s,))))
        return kept[1]

    def _map(self, s, live_after: set):
        """A statement that maps each item of a list (kept factored if the list is independent), or None."""
        value = getattr(s, "value", None)
        if not isinstance(s, (ast.Let, ast.Emit)) or not isinstance(value, ast.Aggregate) or value.name != "list" \
                or value.condition is not None or value.key is not None:
            return None
        source_name, _ = _name_of(value.source)
        if source_name is None or any(isinstance(n, (ast.Roll, ast.Choose)) or (isinstance(n, ast.Call) and not
                                      self.ruleset.procedures[n.procedure].deterministic)
                                      for n in walk((value.element,))):
            return None
        c = self._untraced()
        node = _Map()
        node.fn, node.pos = self._compiled(s), s.pos
        node.source, node.element = c.expr(value.source), c.expr(value.element)
        node.var, node.name, node.is_emit, node.source_name = value.var, s.name, isinstance(s, ast.Emit), source_name
        node.dead = (s.name in self.dead) if not node.is_emit else \
            (self.demand is not ALL and s.name not in self.demand)
        node.key = self._key_names(live_after)
        node.strict, node.attr = free_names(value.element) - {value.var}, set()
        node.pure = node.strict <= self.globals
        node.branching = True       # its source may be expanded into many states
        return node


def _reuse(fn, reads: tuple, name: str | None):
    """``fn`` (a ``let``/``set`` into ``name``, or a ``return`` when ``name`` is None) reused per identity of
    the values it reads (each entry keeps them alive), within one enumeration (the memo is the dice's)."""
    one = reads[0] if len(reads) == 1 else None

    def reuse(env, rt):
        try:
            values = (env[one],) if one is not None else tuple([env[n] for n in reads])
        except KeyError:
            return fn(env, rt)
        key = (reuse, rt.depth, id(values[0])) if one is not None else (reuse, rt.depth, *map(id, values))
        memo = rt.dice.once
        found = memo.get(key)
        if found is not None:
            left = rt.steps_left - found[2]
            if left >= 0:
                rt.steps_left = left
                if name is None:
                    return found[1]
                env[name] = found[1]
                return None
        steps = rt.steps_left
        signal = fn(env, rt)
        memo[key] = (values, signal if name is None else env[name], steps - rt.steps_left)
        return signal
    return reuse


def _definitely_set(statements, before: set, out: dict) -> None:
    """For each statement (by id), the variables every way to it has set (a branch's or a loop's own
    assignments count only inside it)."""
    now = set(before)
    for s in statements:
        out[id(s)] = frozenset(now)
        if isinstance(s, ast.If):
            for b in s.branches:
                _definitely_set(b.body, now, out)
        elif isinstance(s, ast.ForEach):
            _definitely_set(s.body, now | {s.var}, out)
        name = _defines(s)
        if name is not None:
            now.add(name)


def _accumulators(loop) -> list:
    """Variables a loop body only ever extends by one item (``set x = x + [item]``) and reads nowhere else."""
    sets: dict = {}
    reads: dict = {}
    for n in walk(loop.body):
        if isinstance(n, (ast.Let, ast.Roll, ast.Choose)):
            sets[n.name] = None          # redefined: not an accumulator
        elif isinstance(n, ast.Set):
            v = n.value
            ok = isinstance(v, ast.Binary) and v.op == "+" and isinstance(v.left, ast.Name) \
                and v.left.name == n.name and isinstance(v.right, ast.ListExpr) and len(v.right.items) == 1
            if sets.get(n.name, 0) is not None:
                sets[n.name] = (sets.get(n.name) or 0) + 1 if ok else None
        elif isinstance(n, ast.Name):
            reads[n.name] = reads.get(n.name, 0) + 1
    return sorted(x for x, count in sets.items() if count is not None and reads.get(x, 0) == count
                  and x != loop.var)
