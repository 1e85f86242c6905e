"""The abstract syntax tree of procedures and expressions.

Plain frozen dataclasses, each with the ``pos`` it came from. The parser builds
them; the checker reads them; the compiler turns them into closures.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from .errors import Position


@dataclass(frozen=True, slots=True)
class Node:
    pos: Position


# ---- expressions -------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Literal(Node):
    value: Any


@dataclass(frozen=True, slots=True)
class Interpolated(Node):
    """A string with ``{expr}`` parts: ``parts`` alternates text and expressions."""
    parts: tuple


@dataclass(frozen=True, slots=True)
class Name(Node):
    name: str


@dataclass(frozen=True, slots=True)
class Attribute(Node):
    target: "Expr"
    name: str


@dataclass(frozen=True, slots=True)
class Index(Node):
    target: "Expr"
    index: "Expr"


@dataclass(frozen=True, slots=True)
class Update(Node):
    target: "Expr"
    fields: tuple  # ((name, Expr), ...)


@dataclass(frozen=True, slots=True)
class ListExpr(Node):
    items: tuple


@dataclass(frozen=True, slots=True)
class RecordExpr(Node):
    fields: tuple  # ((name, Expr), ...)


@dataclass(frozen=True, slots=True)
class Unary(Node):
    op: str  # "-" or "not"
    operand: "Expr"


@dataclass(frozen=True, slots=True)
class Binary(Node):
    op: str  # + - * / // % == != < <= > >= in notin
    left: "Expr"
    right: "Expr"


@dataclass(frozen=True, slots=True)
class Logical(Node):
    op: str  # "and" / "or"
    operands: tuple


@dataclass(frozen=True, slots=True)
class Conditional(Node):
    then: "Expr"
    condition: "Expr"
    otherwise: "Expr"


@dataclass(frozen=True, slots=True)
class Arg:
    name: str | None
    value: "Expr"


@dataclass(frozen=True, slots=True)
class Function(Node):
    name: str
    args: tuple  # of Arg


@dataclass(frozen=True, slots=True)
class Aggregate(Node):
    name: str
    element: "Expr"
    var: str
    source: "Expr"
    condition: "Expr | None"
    key: "Expr | None"


@dataclass(frozen=True, slots=True)
class Call(Node):
    procedure: str
    args: tuple


@dataclass(frozen=True, slots=True)
class Lookup(Node):
    table: str
    args: tuple


@dataclass(frozen=True, slots=True)
class Locate(Node):
    """Where a lookup would land (row and column headings) without reading the cell."""
    table: str
    args: tuple


@dataclass(frozen=True, slots=True)
class Apply(Node):
    stack: str
    args: tuple


Expr = (Literal | Interpolated | Name | Attribute | Index | Update | ListExpr | RecordExpr | Unary
        | Binary | Logical | Conditional | Function | Aggregate | Call | Lookup | Apply)


# ---- statements ----------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Statement(Node):
    cite: str | None = field(default=None, kw_only=True)
    label: str | None = field(default=None, kw_only=True)


@dataclass(frozen=True, slots=True)
class Let(Statement):
    name: str
    value: Expr


@dataclass(frozen=True, slots=True)
class Set(Statement):
    name: str
    value: Expr


@dataclass(frozen=True, slots=True)
class DiceSpec(Node):
    """``2d6`` (count=2, sides=6) or a manifest dice kind (``kind='DR'``)."""
    kind: str | None
    count: int = 0
    sides: int = 0

    @property
    def text(self) -> str:
        return self.kind or (f"{self.count}d{self.sides}" if self.count > 1 else f"d{self.sides}")


@dataclass(frozen=True, slots=True)
class Roll(Statement):
    name: str
    dice: DiceSpec
    modifier: Expr | None


@dataclass(frozen=True, slots=True)
class Emit(Statement):
    name: str
    value: Expr


@dataclass(frozen=True, slots=True)
class Return(Statement):
    value: Expr | None


@dataclass(frozen=True, slots=True)
class Note(Statement):
    text: Expr


@dataclass(frozen=True, slots=True)
class Fail(Statement):
    message: Expr


@dataclass(frozen=True, slots=True)
class Refuse(Statement):
    reason: Expr


@dataclass(frozen=True, slots=True)
class Choose(Statement):
    name: str
    options: Expr
    default: Expr


@dataclass(frozen=True, slots=True)
class Branch:
    condition: Expr | None  # None for else
    body: tuple
    cite: str | None
    pos: Position


@dataclass(frozen=True, slots=True)
class If(Statement):
    branches: tuple  # of Branch


@dataclass(frozen=True, slots=True)
class ForEach(Statement):
    var: str
    source: Expr
    body: tuple


@dataclass(frozen=True, slots=True)
class Param:
    name: str
    type: "TypeRef"
    default: Expr | None
    pos: Position


@dataclass(frozen=True, slots=True)
class TypeRef:
    name: str          # int, number, bool, text, any, a record type, or "list"
    item: "TypeRef | None" = None

    def __str__(self) -> str:
        return f"list[{self.item}]" if self.name == "list" else self.name


@dataclass(frozen=True, slots=True)
class Procedure(Node):
    name: str
    params: tuple
    body: tuple
    cite: str | None
    doc: str | None


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
        case Apply(stack=s, args=a):
            return f"apply({s}" + (f", {args(a)}" if a else "") + ")"
    return "?"
