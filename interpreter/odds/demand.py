"""Which fields of each procedure's result can matter: a backward analysis for exact odds.

When the user asks for the odds of some result fields (``--by units``), a
sub-procedure's result often carries more than any caller needs (each morale
check's dice, say). Outcomes that differ only in those fields can be merged
before the caller branches on them, which cuts the number of paths through
the dice without changing the answer.

``demanded(ruleset, top, fields)`` works backwards from the fields wanted of
the top procedure: through ``emit`` and ``return``, record literals, ``with``
updates, list building and comprehensions, into ``let`` and ``set`` and the
variables they define, and through calls into the callee's result, to a
fixpoint over all procedures. Everything else (conditions, arithmetic, call
arguments, lookups, messages) counts as using a value whole. ``note`` text is
not a use: exact odds keep no trace.

A result field no caller needs is replaced by ``DEAD`` when outcomes are
merged. Statements still run, so a chart gap or a refusal on any path is
still found; ``DEAD`` only ever reaches computations whose results are
themselves unused, and it absorbs whatever they do to it.
"""

from __future__ import annotations

from ..model.values import DEAD, Record
from ..reading import syntax as ast

ALL = None
"""Demand for a whole value (every field)."""


def _join(a, b):
    """The union of two demands (None means the whole value)."""
    if a is ALL or b is ALL:
        return ALL
    return a | b


class _Procedure:
    """One procedure's analysis under a given demand on its result."""

    def __init__(self, analysis: "Analysis", proc, demand):
        self.analysis = analysis
        self.proc = proc
        self.demand = demand
        self.vars: dict[str, object] = {}     # variable -> demand (missing: not used)
        self.changed = True

    def use_var(self, name: str, demand) -> None:
        if name not in self.vars:
            self.vars[name] = demand
            self.changed = True
            return
        old = self.vars[name]
        new = _join(old, demand)
        if new != old:
            self.vars[name] = new
            self.changed = True

    def run(self) -> None:
        while self.changed:
            self.changed = False
            self.block(self.proc.syntax.body)

    def block(self, statements) -> None:
        for s in statements:
            self.statement(s)

    def statement(self, s) -> None:
        match s:
            case ast.Emit(name=name, value=value):
                if self.demand is ALL or name in self.demand:
                    self.use(value, ALL)
                else:
                    self.use(value, frozenset())   # a call in it still runs
            case ast.Return(value=value):
                if value is not None:
                    self.use(value, self.demand)
            case ast.Let(name=name, value=value) | ast.Set(name=name, value=value):
                self.use(value, self.vars.get(name, frozenset()))
            case ast.Roll(modifier=modifier):
                if modifier is not None:
                    self.use(modifier, ALL)
            case ast.Choose(options=options, default=default):
                self.use(options, ALL)
                self.use(default, ALL)
            case ast.Fail(message=e) | ast.Refuse(reason=e):
                self.use(e, ALL)
            case ast.Note():
                pass  # evaluated only for the trace
            case ast.If(branches=branches):
                for b in branches:
                    if b.condition is not None:
                        self.use(b.condition, ALL)
                    self.block(b.body)
            case ast.ForEach(source=source, body=body):
                self.use(source, ALL)
                self.block(body)

    def use(self, e, demand) -> None:
        """Record that expression ``e`` is used, needing ``demand`` of its value."""
        if demand is not ALL and not demand:
            # nothing of the value is needed, but a call in it still runs: its arguments
            # (and so the fields of earlier results they carry) must be real values; of the
            # called procedure's own result nothing is needed
            for call in _calls(e):
                self.analysis.demand(call.procedure, frozenset(), call.pos)
                for a in call.args:
                    self.use(a.value, ALL)
            for agg in _aggregates(e):      # a call on each item runs: the items must be real too
                if any(_calls(part) for part in (agg.element, agg.condition, agg.key) if part is not None):
                    self.use(agg.source, ALL)
            return
        match e:
            case ast.Literal() | None:
                return
            case ast.Name(name=name):
                self.use_var(name, demand)
            case ast.Attribute(target=target, name=name):
                self.use(target, frozenset({name}))
            case ast.RecordExpr(fields=fields):
                for k, v in fields:
                    # a field nobody needs still runs the calls in it
                    self.use(v, ALL if demand is ALL or k in demand else frozenset())
            case ast.Update(target=target, fields=fields):
                replaced = {k for k, _ in fields}
                for k, v in fields:
                    self.use(v, ALL if demand is ALL or k in demand else frozenset())
                self.use(target, ALL if demand is ALL else frozenset(demand - replaced))
            case ast.Merge(target=target, other=other):
                # a field asked for comes from the merged record when it has it, else from the target
                self.use(other, demand)
                self.use(target, demand)
            case ast.ListExpr(items=items):
                for i in items:
                    self.use(i, demand)     # a demand on a list is a demand on its items
            case ast.Binary(op="+", left=left, right=right):
                # list concatenation passes a demand on to both lists (numbers have no fields,
                # so a field demand here can only be a list's)
                self.use(left, demand)
                self.use(right, demand)
            case ast.Conditional(then=then, condition=c, otherwise=other):
                self.use(c, ALL)
                self.use(then, demand)
                self.use(other, demand)
            case ast.Aggregate(name=name, element=element, var=var, source=source, condition=c, key=key):
                if name in ("list", "first", "highest", "lowest"):
                    self.use(element, demand)
                else:
                    self.use(element, ALL)
                if c is not None:
                    self.use(c, ALL)
                if key is not None:
                    self.use(key, ALL)
                if var in self.vars:
                    self.use(source, self.vars[var])
            case ast.Call(procedure=pname, args=args, pos=pos):
                self.analysis.demand(pname, demand, pos)
                for a in args:
                    self.use(a.value, ALL)
            case _:
                # arithmetic, comparisons, logic, indexing, functions, lookups, stacks, text:
                # every part is used whole
                for f in e._fields:
                    if f == "pos":
                        continue
                    self._use_all(getattr(e, f))

    def _use_all(self, x) -> None:
        if isinstance(x, ast.Node) and not isinstance(x, ast.Arg):
            self.use(x, ALL)
        elif isinstance(x, ast.Arg):
            self.use(x.value, ALL)
        elif isinstance(x, (tuple, list)):
            for y in x:
                if isinstance(y, tuple) and len(y) == 2 and isinstance(y[0], str):
                    self.use(y[1], ALL)
                else:
                    self._use_all(y)


def _aggregates(e) -> list:
    """The comprehensions inside an expression."""
    return _nodes(e, ast.Aggregate)


def _calls(e) -> list:
    """The calls inside an expression."""
    return _nodes(e, ast.Call)


def _nodes(e, cls) -> list:
    """The nodes of class ``cls`` inside ``e``: worked out once per syntax node while it is kept (the analysis
    visits each statement again on every round to its fixpoint, and again for every question)."""
    if not isinstance(e, ast.Node):
        return _find(e, cls)
    key = (id(e), cls)
    kept = _FOUND.get(key)
    if kept is not None and kept[0] is e:
        return kept[1]
    found = _find(e, cls)
    if len(_FOUND) >= 1 << 16:
        _FOUND.clear()
    _FOUND[key] = (e, found)
    return found


_FOUND: dict[tuple, tuple] = {}     # (id(node), class) -> (node, what _find found); the node kept for its id


def _find(e, cls) -> list:
    found, stack = [], [e]
    while stack:
        n = stack.pop()
        if isinstance(n, cls):
            found.append(n)
        if isinstance(n, ast.Node):
            stack.extend(getattr(n, f) for f in n._fields if f != "pos")
        elif isinstance(n, (tuple, list)):
            stack.extend(n)
    return found


class VarDemands(dict):
    """Each procedure's variables' demands (procedure -> variable -> demand; a variable missing is unused), and
    ``sites``: each call's position -> (procedure called, what that call's caller needs of its result)."""

    sites: dict


class Analysis:
    def __init__(self, ruleset):
        self.ruleset = ruleset
        self.demands: dict[str, object] = {}
        self.vars = VarDemands()
        self.vars.sites = {}
        self.pending: set[str] = set()

    def demand(self, name: str, demand, pos=None) -> None:
        if pos is not None:     # the demand of this call site alone (a procedure's is the join of its sites')
            found = self.vars.sites.get(pos)
            self.vars.sites[pos] = (name, demand if found is None else _join(found[1], demand))
        if name not in self.demands:
            self.demands[name] = demand
            self.pending.add(name)
            return
        old = self.demands[name]
        new = _join(old, demand)
        if new != old:
            self.demands[name] = new
            self.pending.add(name)

    def run(self) -> dict[str, object]:
        while self.pending:
            name = self.pending.pop()
            proc = self.ruleset.procedures[name]
            analysed = _Procedure(self, proc, self.demands[name])
            analysed.run()
            self.vars[name] = analysed.vars
        return self.demands


def demanded(ruleset, top: str, fields: list[str] | None) -> dict[str, object]:
    """For each procedure reachable from ``top``: the set of result fields any use needs (None: all)."""
    return analyse(ruleset, top, frozenset(f.split(".", 1)[0] for f in fields) if fields else ALL)[0]


def analyse(ruleset, top: str, wanted) -> tuple[dict, dict]:
    """The demand on each procedure's result and on each of its variables (and each call site's on its
    callee's result: ``VarDemands.sites``), for ``wanted`` of ``top``'s result.

    A compiled ruleset does not change, so the answer is kept on it per question.
    """
    cache = ruleset.__dict__.setdefault("_demands", {})
    key = (top, wanted)
    if key not in cache:
        analysis = Analysis(ruleset)
        analysis.demand(top, wanted)
        cache[key] = (analysis.run(), analysis.vars)
    return cache[key]


def project(value, demand):
    """A result with the fields nobody needs replaced by DEAD (so equal-where-it-matters merge)."""
    if demand is ALL or value.__class__ is not Record:
        return value
    if value.keys() <= demand:      # (a demand is a set of field names)
        return value
    return Record([(k, v if k in demand else DEAD) for k, v in value.items()])
