"""Record fields a procedure only passes on: exact odds share one distribution among calls differing there.

A morale check of squad G1 and one of squad G2 differ only in the squad's id (and
whatever else the check never looks at): the check copies the unit into its result,
but no decision it takes reads the id. Exact odds (odds/states.py) therefore compute the
check's distribution once, on a copy of the unit whose unread fields are *holes*
(placeholders), and give each call that distribution with its own values put back
in place of the holes. Four identical squads cost one morale-check distribution,
not four.

Which fields count as read is decided statically and conservatively, over the
procedure and every procedure it calls (``passed_on``): a field is read if its name
appears anywhere as a field access or as a text literal. A parameter is only
abstracted if every use of a value that may hold it (its *taint*) merely passes it
on: into a variable, a record, a list (``xs + [u]``), ``with``, a procedure call,
an emit or a return, or reads a field of it. Any other use (a comparison, a
condition, arithmetic, a text, a function, a table, a loop over it, a choice)
means no abstraction for that procedure.

A safety net stands behind the analysis: a hole that is ever compared, printed,
hashed into a lookup by value, or used as a number raises ``Observed`` (not an
``Exception``, so no stop handler turns it into an outcome), and the call is then
computed on its real arguments, and the procedure is never abstracted again.
"""

from __future__ import annotations

from typing import Any

from ..analysis.names import walk
from ..model.values import Record
from ..reading import syntax as ast
from .independent import Independent

_SCALAR_TYPES = {"int", "number", "bool", "text", "any", "list"}


class Observed(BaseException):
    """A hole was looked at: the abstraction does not hold for this procedure."""


class Hole:
    """A field value no decision reads; stands for each call's own value until it is put back."""

    __slots__ = ("where",)

    def __init__(self, where: tuple):
        self.where = where

    __hash__ = object.__hash__

    def __eq__(self, other):
        if other is self:
            return True
        raise Observed(self.where)

    def __ne__(self, other):
        if other is self:
            return False
        raise Observed(self.where)

    def _observed(self, *args):
        raise Observed(self.where)

    def __repr__(self):         # for debugging only: the language shows values with str()/format
        return f"<passed on: {'.'.join(self.where)}>"

    __lt__ = __le__ = __gt__ = __ge__ = __bool__ = __str__ = __format__ = _observed
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = _observed
    __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = __neg__ = __int__ = __float__ = __index__ = _observed
    __len__ = __iter__ = __contains__ = __getitem__ = _observed


class _Unsafe(Exception):
    pass


def passed_on(ruleset, proc) -> dict[str, frozenset]:
    """Record-typed parameters of ``proc`` that may be abstracted, each with the fields that are read."""
    kept = ruleset.__dict__.setdefault("_passed_on", {})
    found = kept.get(proc.name)
    if found is None:
        try:
            found = _analyse(ruleset, proc)
        except _Unsafe:
            found = {}
        kept[proc.name] = found
    return found


def forget(ruleset, proc) -> None:
    """The safety net caught a hole being looked at: never abstract this procedure again."""
    ruleset.__dict__.setdefault("_passed_on", {})[proc.name] = {}


def _reachable(ruleset, proc) -> dict:
    out, todo = {}, [proc]
    while todo:
        p = todo.pop()
        if p.name in out:
            continue
        out[p.name] = p
        for n in walk(p.syntax.body):
            if isinstance(n, ast.Call):
                todo.append(ruleset.procedures[n.procedure])
    return out


def _analyse(ruleset, proc) -> dict[str, frozenset]:
    sources = [p.name for p in proc.syntax.params if p.type is not None and not isinstance(p.type, tuple)
               and p.type.name not in _SCALAR_TYPES]   # an enumeration (a tuple) holds text
    if not sources:
        return {}
    procs = _reachable(ruleset, proc)
    read: set = set()
    for p in procs.values():
        for n in _walk_run(p.syntax):
            if isinstance(n, ast.Attribute):
                read.add(n.name)
            elif isinstance(n, ast.Literal) and isinstance(n.value, str):
                read.add(n.value)
    tainted: dict[str, set] = {name: set() for name in procs}
    tainted[proc.name] = set(sources)
    carriers: set = set()
    while True:
        before = (sum(len(t) for t in tainted.values()), len(carriers))
        for p in procs.values():
            _Taint(ruleset, p, tainted, carriers).run()
        if (sum(len(t) for t in tainted.values()), len(carriers)) == before:
            break
    return {name: frozenset(read) for name in sources}


class _Taint:
    """One pass over a procedure: which names may hold an abstracted record; raises _Unsafe on a look."""

    def __init__(self, ruleset, proc, tainted: dict, carriers: set):
        self.ruleset, self.proc, self.tainted, self.carriers = ruleset, proc, tainted, carriers
        self.names = tainted[proc.name]

    def run(self) -> None:
        for param in self.proc.syntax.params:      # a default may be computed from earlier arguments
            if param.default is not None and self.expr(param.default):
                self.names.add(param.name)
        self.block(self.proc.syntax.body)

    def block(self, statements) -> None:
        for s in statements:
            self.statement(s)

    def statement(self, s) -> None:
        if isinstance(s, (ast.Let, ast.Set)):
            if self.expr(s.value):
                self.names.add(s.name)
        elif isinstance(s, (ast.Emit, ast.Return)):
            if s.value is not None:
                self.expr(s.value)
        elif isinstance(s, ast.Note):
            return          # a note's text is only built for a trace (never in exact odds)
        elif isinstance(s, ast.If):
            for b in s.branches:
                if b.condition is not None:
                    self.look(b.condition)
                self.block(b.body)
        elif isinstance(s, ast.ForEach):
            self.look(s.source)
            if s.var in self.names:
                raise _Unsafe()
            self.block(s.body)
        elif isinstance(s, ast.Roll):
            for e in (s.modifier, s.dice.size):
                if e is not None:
                    self.look(e)
        elif isinstance(s, ast.Fail):
            self.look(s.message)
        elif isinstance(s, ast.Refuse):
            self.look(s.reason)
        elif isinstance(s, ast.Choose):
            self.look(s.options)
            if s.default is not None:
                self.look(s.default)
        else:
            raise _Unsafe()

    def look(self, e) -> None:
        """An expression whose value is examined: it may not hold an abstracted record."""
        if self.expr(e):
            raise _Unsafe()

    def expr(self, e) -> bool:
        """Whether ``e``'s value may hold an abstracted record (raises _Unsafe if it would be examined)."""
        if e is None or isinstance(e, ast.Literal):
            return False
        if isinstance(e, ast.Name):
            return e.name in self.names
        if isinstance(e, ast.Attribute):
            return self.expr(e.target) and e.name in self.carriers
        if isinstance(e, ast.Index):
            self.look(e.index)
            return self.expr(e.target)
        if isinstance(e, (ast.Update, ast.RecordExpr)):
            held = self.expr(e.target) if isinstance(e, ast.Update) else False
            for k, v in e.fields:
                if self.expr(v):
                    self.carriers.add(k)
                    held = True
            return held
        if isinstance(e, ast.Merge):
            if self.expr(e.other):
                raise _Unsafe()     # which fields would carry it is known only at run time
            return self.expr(e.target)
        if isinstance(e, ast.ListExpr):
            return any([self.expr(i) for i in e.items])
        if isinstance(e, ast.Binary):
            left, right = self.expr(e.left), self.expr(e.right)
            if e.op == "+" and (isinstance(e.left, ast.ListExpr) or isinstance(e.right, ast.ListExpr)):
                return left or right        # a list extended: its items are not looked at
            if left or right:
                raise _Unsafe()
            return False
        if isinstance(e, ast.Conditional):
            self.look(e.condition)
            return any([self.expr(e.then), self.expr(e.otherwise)])
        if isinstance(e, ast.Call):
            callee = self.ruleset.procedures[e.procedure].syntax
            held = False
            for i, a in enumerate(e.args):
                if self.expr(a.value):
                    name = a.name if a.name is not None else (callee.params[i].name if i < len(callee.params)
                                                              else None)
                    if name is None:
                        raise _Unsafe()
                    self.tainted[e.procedure].add(name)
                    held = True
            return held
        if isinstance(e, ast.Aggregate):
            for part in (e.source, e.element, e.condition, e.key):
                if part is not None:
                    self.look(part)
            if e.var in self.names:
                raise _Unsafe()
            return False
        if isinstance(e, (ast.Unary, ast.Logical, ast.Function, ast.Lookup, ast.Locate, ast.Apply,
                          ast.Interpolated)):
            for n in _children(e):
                self.look(n)
            return False
        raise _Unsafe()


def _walk_run(proc):
    """Every node of a procedure that runs untraced (a note's text is only built for a trace)."""
    stack = list(proc.body) + [p.default for p in proc.params if p.default is not None]
    while stack:
        n = stack.pop()
        if isinstance(n, (tuple, list)):
            stack.extend(n)
        elif isinstance(n, ast.Node) and not isinstance(n, ast.Note):
            yield n
            stack.extend(getattr(n, f) for f in n._fields if f != "pos")


def _children(e):
    """The expressions directly inside ``e`` (arguments unwrapped)."""
    stack = [getattr(e, f) for f in e._fields if f != "pos"]
    while stack:
        x = stack.pop()
        if isinstance(x, ast.Arg):
            stack.append(x.value)
        elif isinstance(x, ast.Node):
            yield x
        elif isinstance(x, (tuple, list)):
            stack.extend(x)


# ---- using it: the memo key, the abstracted arguments, and putting the values back ---------------------

def record_lists(args: dict) -> list:
    """The lists of records in a question's arguments (at any depth): where calls' records come from."""
    out, stack = [], [v for v in args.values() if v.__class__ in _NESTED]
    while stack:
        v: Any = stack.pop()
        if v.__class__ is tuple and any([x.__class__ is Record for x in v]):
            out.append(v)
        items = dict.values(v) if v.__class__ is Record else v
        stack.extend([x for x in items if x.__class__ in _CONTAINERS])
    return out


_CONTAINERS = {Record, tuple}


def may_share(proc_name: str, args: dict, spec: dict, lists: list) -> bool:
    """Whether other calls may differ from this one only in fields passed on: false when each record
    argument is one of the question's records (alike in every field passed on) and no record beside it
    in its lists (of its fields) differs from it there. Calls then get that one record, or copies of it
    differing in fields read, so a distribution with holes would be used once, and abstracting and
    putting back would cost more than they save. (A guess, never a question of exactness: a call worked
    out on its own arguments has the same distribution.)"""
    try:
        return _may_share(proc_name, args, spec, lists)
    except Observed:        # a hole deeper inside a record (a caller's): keep to the shortcut
        return True


def _may_share(proc_name: str, args: dict, spec: dict, lists: list) -> bool:
    for name, read in spec.items():
        r = args.get(name)
        if r.__class__ is not Record:
            continue
        fields = [k for k, _ in _holes_for(proc_name, name, read, r)]
        if not fields:
            continue
        values = tuple(map(r.__getitem__, fields))
        if any(v.__class__ is Hole for v in values):
            return True
        found = False
        for lst in lists:
            alike = [tuple(map(x.__getitem__, fields)) for x in lst if x.__class__ is Record and x.keys() == r.keys()]
            if values not in alike:
                continue
            found = True
            if alike.count(values) != len(alike):
                return True     # a record beside it differs only where this procedure does not look
        if not found:
            return True         # a record the rules made: other calls may get others like it
    return False


def abstracted(proc_name: str, args: dict, spec: dict) -> tuple[dict, dict] | None:
    """The arguments with unread fields of abstracted records replaced by holes, and hole -> real value;
    None when there is nothing to abstract."""
    out, values, flat = None, {}, True
    for name, read in spec.items():
        v = args.get(name)
        if v.__class__ is not Record:
            continue
        changed = {}
        for k, hole in _holes_for(proc_name, name, read, v):
            x = v[k]
            if x.__class__ is not Hole:
                changed[k] = hole
                values[hole] = x
                if x.__class__ in _NESTED:
                    flat = False
        if changed:
            if out is None:
                out = dict(args)
                values[_SAME] = same = {}
            out[name] = shared = v.updated(changed)
            same[id(shared)] = (shared, v)
    if out is None:
        return None
    values[_FLAT] = flat
    return out, values


_HOLES: dict = {}
_FLAT = object()
"""A key of the values ``abstracted`` returns: true when every real value is a number, text or truth, so a
record with its holes filled nests exactly as deep as with them."""
_SAME = object()
"""A key of the values ``abstracted`` returns: id of each abstracted record -> (it, the real record), so a
result that passes the argument on unchanged gets the caller's very record back."""


_UNREAD: dict = {}


def _holes_for(proc_name: str, name: str, read: frozenset, record: Record) -> tuple:
    """(field, its hole) for each field of ``record`` the procedure does not read, per record shape."""
    key = (proc_name, name, read, tuple(record))
    found = _UNREAD.get(key)
    if found is None:
        if len(_UNREAD) >= 4096:
            _UNREAD.clear()
        found = _UNREAD[key] = tuple((k, _hole((proc_name, name, k))) for k in record if k not in read)
    return found


def _hole(where: tuple) -> Hole:
    h = _HOLES.get(where)
    if h is None:
        h = _HOLES[where] = Hole(where)
    return h


def put_back(value, values: dict, layouts: dict):
    """``value`` with each hole replaced by its real value; ``layouts`` keeps where the holes of a shared
    distribution's records are (``_layout``), for as long as the caller keeps that distribution."""
    cls = value.__class__
    if cls is Hole:
        return values.get(value, value)
    if cls is Record:
        same = values[_SAME].get(id(value))
        if same is not None and same[0] is value:
            return same[1]
        _, holes, nested = _layout(value, layouts)
        if not holes and not nested:
            return value
        filled = dict(value)
        for k, h in holes:
            filled[k] = values.get(h, h)
        for k, v in nested:
            filled[k] = put_back(v, values, layouts)
        out = Record(filled)
        if values.get(_FLAT):
            try:
                out._depth = value._depth       # known without looking again (see _FLAT)
            except AttributeError:
                pass
        return out
    if cls is tuple:
        return tuple([put_back(v, values, layouts) if v.__class__ in _NESTED or v.__class__ is Hole else v
                      for v in value])
    if cls is Independent:
        from .independent import map_items
        return map_items(value, lambda item: put_back(item, values, layouts))
    return value


_NESTED = {Record, tuple, Independent}


def _layout(record: Record, layouts: dict) -> tuple:
    """(record, its fields holding holes, its fields holding lists or records): a shared distribution's
    values are filled once per call, so where their holes are is found once (kept in ``layouts``, by id:
    the entry keeps the record alive)."""
    found = layouts.get(id(record))
    if found is None or found[0] is not record:
        holes, nested = [], []
        for k, v in record.items():
            c = v.__class__
            if c is Hole:
                holes.append((k, v))
            elif c in _NESTED:
                nested.append((k, v))
        found = layouts[id(record)] = (record, holes, nested)
    return found
