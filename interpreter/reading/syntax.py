"""The abstract syntax tree of procedures and expressions.

Small slotted classes, each with the ``pos`` it came from. The parser builds
them; the checker reads them; the compiler turns them into closures. Nodes
are treated as immutable: ``replace`` makes a changed copy (overlays use it).
"""

from __future__ import annotations

from _thread import allocate_lock
from fractions import Fraction

TYPE_CHECKING = False   # (typing is for the checker only: importing it costs a warm start 2%)
if TYPE_CHECKING:
    from typing import Any

GIVEN_NOT_DERIVED = ": given, not derived"
"""How the note of a ``derive`` that took the situation's stated fact reads (the parser writes it as that
statement's else-branch; the brief trace leaves such notes out: the player wrote the fact)."""

class Node:
    """Base of all syntax nodes: fields are named in ``_fields``; a missing trailing field is None."""

    __slots__ = ()
    _fields: tuple[str, ...] = ()

    def __init__(self, *args, **kwargs):
        fields = self._fields
        for name, value in zip(fields, args):
            object.__setattr__(self, name, value)
        for name in fields[len(args):]:
            object.__setattr__(self, name, kwargs.pop(name, None))
        if kwargs:
            raise TypeError(f"{type(self).__name__} has no field {next(iter(kwargs))}")

    def __eq__(self, other):
        return type(other) is type(self) and all(getattr(self, f) == getattr(other, f) for f in self._fields)

    def __hash__(self):
        return hash((type(self).__name__,) + tuple(getattr(self, f) for f in self._fields if f != "pos"))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(" + ", ".join(f"{f}={getattr(self, f)!r}" for f in self._fields) + ")"


def replace(node: Node, **changes) -> Node:
    """A copy of ``node`` with some fields changed."""
    values = {f: getattr(node, f) for f in node._fields}
    values.update(changes)
    return type(node)(**values)


# ---- expressions -------------------------------------------------------------

class Literal(Node):
    __slots__ = _fields = ('pos', 'value')
    pos: Any
    value: Any


class Interpolated(Node):
    """A string with ``{expr}`` parts: ``parts`` alternates text and expressions."""
    __slots__ = _fields = ('pos', 'parts')
    pos: Any
    parts: Any


class Name(Node):
    __slots__ = _fields = ('pos', 'name')
    pos: Any
    name: Any


class Attribute(Node):
    __slots__ = _fields = ('pos', 'target', 'name')
    pos: Any
    target: Any
    name: Any


class Index(Node):
    __slots__ = _fields = ('pos', 'target', 'index')
    pos: Any
    target: Any
    index: Any


class Update(Node):
    __slots__ = _fields = ('pos', 'target', 'fields')
    pos: Any
    target: Any
    fields: Any


class Merge(Node):
    """``record with other``: ``other`` a record computed at run time, its fields replacing or adding to the target's."""
    __slots__ = _fields = ('pos', 'target', 'other')
    pos: Any
    target: Any
    other: Any


class ListExpr(Node):
    __slots__ = _fields = ('pos', 'items')
    pos: Any
    items: Any


class RecordExpr(Node):
    __slots__ = _fields = ('pos', 'fields')
    pos: Any
    fields: Any


class Unary(Node):
    __slots__ = _fields = ('pos', 'op', 'operand')
    pos: Any
    op: Any
    operand: Any


class Binary(Node):
    __slots__ = _fields = ('pos', 'op', 'left', 'right')
    pos: Any
    op: Any
    left: Any
    right: Any


class Logical(Node):
    __slots__ = _fields = ('pos', 'op', 'operands')
    pos: Any
    op: Any
    operands: Any


class Conditional(Node):
    __slots__ = _fields = ('pos', 'then', 'condition', 'otherwise')
    pos: Any
    then: Any
    condition: Any
    otherwise: Any


class Arg(Node):
    """One argument of a call: ``name`` is None for a positional argument."""
    __slots__ = _fields = ("name", "value")
    name: Any
    value: Any


class Function(Node):
    __slots__ = _fields = ('pos', 'name', 'args')
    pos: Any
    name: Any
    args: Any


class Aggregate(Node):
    __slots__ = _fields = ('pos', 'name', 'element', 'var', 'source', 'condition', 'key')
    pos: Any
    name: Any
    element: Any
    var: Any
    source: Any
    condition: Any
    key: Any


class Call(Node):
    __slots__ = _fields = ('pos', 'procedure', 'args')
    pos: Any
    procedure: Any
    args: Any


class Lookup(Node):
    __slots__ = _fields = ('pos', 'table', 'args')
    pos: Any
    table: Any
    args: Any


class Locate(Node):
    """Where a lookup would land (row and column headings) without reading the cell."""
    __slots__ = _fields = ('pos', 'table', 'args')
    pos: Any
    table: Any
    args: Any


class Apply(Node):
    """``apply(stack, ...)``; with ``uncapped`` true, ``uncapped(stack, ...)``: the total before the caps."""
    __slots__ = _fields = ('pos', 'stack', 'args', 'uncapped')
    pos: Any
    stack: Any
    args: Any
    uncapped: Any

Expr = (Literal | Interpolated | Name | Attribute | Index | Update | Merge | ListExpr | RecordExpr | Unary
        | Binary | Logical | Conditional | Function | Aggregate | Call | Lookup | Apply)


# ---- statements ----------------------------------------------------------------

class Statement(Node):
    """Base of statements: every statement may carry a citation and a label (for overlays)."""
    __slots__ = ()
    _fields: tuple[str, ...] = ('pos', 'cite', 'label')
    pos: Any
    cite: Any
    label: Any


class Let(Statement):
    __slots__ = _fields = ('pos', 'name', 'value', 'cite', 'label')
    pos: Any
    name: Any
    value: Any
    cite: Any
    label: Any


class Set(Statement):
    __slots__ = _fields = ('pos', 'name', 'value', 'cite', 'label')
    pos: Any
    name: Any
    value: Any
    cite: Any
    label: Any


class DiceSpec(Node):
    """``2d6`` (count=2, sides=6), a manifest dice kind (``kind='DR'``), or one die whose
    number of sides an expression gives when the roll is made (``d(len(xs))``: ``size``)."""
    __slots__ = _fields = ('pos', 'kind', 'count', 'sides', 'size')
    pos: Any
    kind: Any
    count: Any
    sides: Any
    size: Any

    @property
    def text(self) -> str:
        if self.size is not None:
            return f"d({unparse(self.size)})"
        return self.kind or (f"{self.count}d{self.sides}" if self.count > 1 else f"d{self.sides}")


class Roll(Statement):
    __slots__ = _fields = ('pos', 'name', 'dice', 'modifier', 'cite', 'label')
    pos: Any
    name: Any
    dice: Any
    modifier: Any
    cite: Any
    label: Any


class Emit(Statement):
    __slots__ = _fields = ('pos', 'name', 'value', 'cite', 'label')
    pos: Any
    name: Any
    value: Any
    cite: Any
    label: Any


class Return(Statement):
    __slots__ = _fields = ('pos', 'value', 'cite', 'label')
    pos: Any
    value: Any
    cite: Any
    label: Any


class Note(Statement):
    __slots__ = _fields = ('pos', 'text', 'cite', 'label')
    pos: Any
    text: Any
    cite: Any
    label: Any


class Fail(Statement):
    """``fail`` (the rules cannot settle it, exit 1) or, with ``rejects``, ``reject`` (the situation
    contradicts itself or its map: an input error, exit 2)."""
    __slots__ = _fields = ('pos', 'message', 'cite', 'label', 'rejects')
    pos: Any
    message: Any
    cite: Any
    label: Any
    rejects: Any


class Refuse(Statement):
    __slots__ = _fields = ('pos', 'reason', 'cite', 'label')
    pos: Any
    reason: Any
    cite: Any
    label: Any


class Choose(Statement):
    __slots__ = _fields = ('pos', 'name', 'options', 'default', 'cite', 'label')
    pos: Any
    name: Any
    options: Any
    default: Any
    cite: Any
    label: Any


class Branch(Node):
    """One arm of an if: ``condition`` is None for else.

    A branch read back from the load cache may hold its body as text until the body is first read (``later``:
    an adjudication takes few of the branches of the procedures it runs, and decoding the others was a large
    part of a warm start); ``returns`` answers ``may_return`` without decoding it."""
    __slots__ = ("condition", "body", "cite", "pos", "_later")
    _fields = ("condition", "body", "cite", "pos")
    condition: Any
    body: Any
    cite: Any
    pos: Any

    def later(self, decode, returns: bool) -> None:
        """Leave the body unset, to be ``decode()``d when first read; ``returns``: whether it has a `return`."""
        object.__setattr__(self, "_later", (decode, returns))

    def __getattr__(self, name: str):
        # reached only for a slot not set: the body of a branch made by ``later``, not decoded yet
        if name != "body":
            raise AttributeError(name)
        try:
            decode, _ = object.__getattribute__(self, "_later")
        except AttributeError:
            raise AttributeError(name) from None
        with _LATER_LOCK:       # (two threads reading it first: the body is decoded once, the same tree for both)
            try:
                return object.__getattribute__(self, "body")
            except AttributeError:
                body = decode()
                object.__setattr__(self, "body", body)
                object.__setattr__(self, "_later", (None, False))   # (the decoder, and its texts, may go)
                return body

    def returns(self) -> bool:
        """Whether the body has a `return` inside (a body not decoded yet is not decoded for it)."""
        try:
            body = object.__getattribute__(self, "body")
        except AttributeError:
            return self._later[1]
        return any(may_return(t) for t in body)


_LATER_LOCK = allocate_lock()


class If(Statement):
    __slots__ = _fields = ('pos', 'branches', 'cite', 'label')
    pos: Any
    branches: Any
    cite: Any
    label: Any


class ForEach(Statement):
    __slots__ = _fields = ('pos', 'var', 'source', 'body', 'cite', 'label')
    pos: Any
    var: Any
    source: Any
    body: Any
    cite: Any
    label: Any


class Param(Node):
    __slots__ = _fields = ("name", "type", "default", "pos")
    name: Any
    type: Any
    default: Any
    pos: Any


class TypeRef(Node):
    """A type: int, number, bool, text, any, a record type name, list (``item``: the items' type) or
    key_of (``item``: a catalogue's name; the value is the text of one of its entries)."""
    __slots__ = _fields = ("name", "item")
    name: Any
    item: Any

    def __str__(self) -> str:
        return f"{self.name}[{type_text(self.item)}]" if self.name in ("list", "key_of") else self.name


def may_return(s: Statement) -> bool:
    """Whether a statement has a `return` inside (only such a statement can end its block early)."""
    if s.__class__ is Return:
        return True
    if s.__class__ is If:
        return any(b.returns() for b in s.branches)
    if s.__class__ is ForEach:
        return any(may_return(t) for t in s.body)
    return False


def type_text(ref) -> str:
    """A type as written in a procedure header: an enumeration as ``one_of["a", "b"]``."""
    if isinstance(ref, tuple):
        return "one_of[" + ", ".join(f'"{v}"' for v in ref[1]) + "]"
    return str(ref)


class Procedure(Node):
    __slots__ = _fields = ('pos', 'name', 'params', 'body', 'cite', 'doc')
    pos: Any
    name: Any
    params: Any
    body: Any
    cite: Any
    doc: Any

def number(text: str) -> int | Fraction:
    """A DSL number literal: an int, or an exact fraction for decimals."""
    if "." in text:
        value = Fraction(text)
        return int(value) if value.denominator == 1 else value
    return int(text)


_PRECEDENCE = {"or": 1, "and": 2, "not": 3, "==": 4, "!=": 4, "<": 4, "<=": 4, ">": 4, ">=": 4, "in": 4,
               "not in": 4, "+": 5, "-": 5, "*": 6, "/": 6, "//": 6, "%": 6}


def unparse(e, parent: int = 0) -> str:
    """An expression back as DSL text (for traces: 'not applied: target.terrain == "woods"')."""
    def args(items):
        return ", ".join((f"{a.name}: " if a.name else "") + unparse(a.value) for a in items)

    match e:
        case Literal(value=v):
            if isinstance(v, str):
                return '"' + v.replace('"', '\\"') + '"'
            if v is None:
                return "null"
            if isinstance(v, bool):
                return "true" if v else "false"
            return str(v)
        case Interpolated(parts=parts):
            return '"' + "".join(p if isinstance(p, str) else "{" + unparse(p) + "}" for p in parts) + '"'
        case Name(name=n):
            return n
        case Attribute(target=t, name=n):
            return f"{unparse(t, 9)}.{n}"
        case Index(target=t, index=i):
            return f"{unparse(t, 9)}[{unparse(i)}]"
        case Update(target=t, fields=fs):
            return f"{unparse(t, 9)} with {{" + ", ".join(f"{k}: {unparse(v)}" for k, v in fs) + "}"
        case Merge(target=t, other=o):
            return f"{unparse(t, 9)} with " + (unparse(o) if isinstance(o, Name) else f"({unparse(o)})")
        case ListExpr(items=items):
            return "[" + ", ".join(unparse(i) for i in items) + "]"
        case RecordExpr(fields=fs):
            return "{" + ", ".join(f"{k}: {unparse(v)}" for k, v in fs) + "}"
        case Unary(op="-", operand=o):
            return "-" + unparse(o, 7)
        case Unary(op="not", operand=o):
            text = "not " + unparse(o, 3)
            return f"({text})" if parent > 3 else text
        case Binary(op=op, left=l, right=r):
            p = _PRECEDENCE[op]
            text = f"{unparse(l, p)} {op} {unparse(r, p + 1)}"
            return f"({text})" if parent > p else text
        case Logical(op=op, operands=ops):
            p = _PRECEDENCE[op]
            text = f" {op} ".join(unparse(o, p + 1) for o in ops)
            return f"({text})" if parent > p else text
        case Conditional(then=t, condition=c, otherwise=o):
            text = f"{unparse(t, 1)} if {unparse(c, 1)} else {unparse(o)}"
            return f"({text})" if parent > 0 else text
        case Function(name=n, args=a):
            return f"{n}({args(a)})"
        case Aggregate(name=n, element=el, var=v, source=s, condition=c, key=k):
            text = f"{n}({unparse(el)} for {v} in {unparse(s, 1)}"
            if c is not None:
                text += f" if {unparse(c, 1)}"
            if k is not None:
                text += f" by {unparse(k, 1)}"
            return text + ")"
        case Call(procedure=p, args=a):
            return f"call {p}({args(a)})"
        case Lookup(table=t, args=a):
            return f"lookup({t}" + (f", {args(a)}" if a else "") + ")"
        case Locate(table=t, args=a):
            return f"locate({t}" + (f", {args(a)}" if a else "") + ")"
        case Apply(stack=s, args=a, uncapped=u):
            return ("uncapped(" if u else "apply(") + s + (f", {args(a)}" if a else "") + ")"
    return "?"
