"""Text to syntax tree: the lark grammar, built once, and a Transformer to AST nodes.

Syntax errors are reported in a ruleset author's words ("expected a name or a
number"), never as lark's internal token names.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from functools import lru_cache

from lark import Lark, Token, Transformer, v_args
from lark.exceptions import (
    UnexpectedCharacters,
    UnexpectedEOF,
    UnexpectedInput,
    UnexpectedToken,
    VisitError,
)
from lark.indenter import DedentError, Indenter

from ..errors import InputError, Position, UmpireError
from . import shipped
from . import syntax as ast

TYPE_CHECKING = False   # (typing is for the checker only: importing it costs a warm start 2%)
if TYPE_CHECKING:
    from typing import Any

MAX_NUMBER_DIGITS = 100
"""Most digits a number literal may have (in procedures and DSL text alike)."""

MAX_NESTING = 200
"""Deepest syntax tree a procedure or expression may have, in levels of the parsed tree: a bracket, an
operator, a record field or a block takes one or more levels each (docs/language.md gives what that allows:
98 nested parentheses, 49 nested records, a chain of 197 terms ...; tests/test_language.py holds each bound).

Real rules stay under 40; the bound keeps every later pass (checker, compiler, run) far from Python's
recursion limit, so deeply nested text is a positioned error rather than a crash."""

MAX_PROCEDURE_CHARS = 250_000
"""Most characters of procedure text parsed at once (a .ump file, or procedures or steps in an overlay).

Parsing is linear but costs about 10 s per MB (lark in pure Python): a larger text is refused before
parsing, in no time. The largest shipped procedure file is under 40 kB."""

GRAMMAR_FILE = shipped.folder("grammar") / "umpire.lark"
"""The grammar: in the checkout's ``grammar/``, or the installed package's copy (reading/shipped.py)."""


class _ProcedureIndenter(Indenter):
    NL_type = "_NL"
    OPEN_PAREN_types = ["LPAR", "LSQB", "LBRACE"]
    CLOSE_PAREN_types = ["RPAR", "RSQB", "RBRACE"]
    INDENT_type = "_INDENT"
    DEDENT_type = "_DEDENT"
    tab_len = 8


@lru_cache(maxsize=1)
def _parser() -> Lark:
    """The LALR parser for both start rules, built once per process."""
    return Lark(GRAMMAR_FILE.read_text(encoding="utf-8"), parser="lalr", start=["module", "expression", "steps"],
                postlex=_ProcedureIndenter(), propagate_positions=True, maybe_placeholders=True,
                cache=shipped.grammar_tables() or False)


# ---- friendly names for terminals ---------------------------------------------------

_TERMINAL_WORDS = {
    "NAME": "a name", "NUMBER": "a number", "STRING": 'a quoted string ("...")',
    "_NL": "the end of the line", "_INDENT": "an indented block", "_DEDENT": "the end of the block",
    "COMP_OP": "a comparison (== != < <= > >=)", "ADD_OP": "+ or -", "MUL_OP": "* / // or %",
    "DICE": "dice such as 2d6 or d10", "LABEL": "a label (@name)", "$END": "the end of the file",
}


def _describe(terminal: str) -> str:
    if terminal in _TERMINAL_WORDS:
        return _TERMINAL_WORDS[terminal]
    for t in _parser().terminals:
        if t.name == terminal and t.pattern.type == "str":
            return f"'{t.pattern.value}'"
    return terminal.lower()


def _expected(terminals) -> str:
    words = sorted({_describe(t) for t in terminals})
    if len(words) > 8:
        words = words[:8] + ["..."]
    return ", ".join(words)


def _token_text(token: Token) -> str:
    """What was found, as read after "unexpected"."""
    if token.type == "_NL":
        return "end of the line"
    if token.type == "_INDENT":
        return "indentation"
    if token.type == "_DEDENT":
        return "end of the block"
    if token.type == "$END":
        return "end of the file"
    return f"'{token.value}'"


def _line_start(token: Token, text: str) -> tuple[int, int]:
    """Where the line after a newline token starts its text (an indentation token borrows the newline's place)."""
    lines, after = text.splitlines(), token.line or 0
    for number in range(after + 1, len(lines) + 1):
        stripped = lines[number - 1].lstrip(" \t")
        if stripped and not stripped.startswith("#"):
            return number, len(lines[number - 1]) - len(stripped) + 1
    return after or 1, token.column or 1


# ---- parsing entry points -------------------------------------------------------------

class _Parsed:
    """The trees of texts parsed before in this process, by (text, place): parsing is pure and the nodes are
    immutable, so a process that loads several variants of one ruleset (each house rule, each applied chart,
    every case file's overlays) parses each file and each YAML expression once. Bounded, least recently used
    first out; a text that fails to parse is never kept (its error is raised again, the same)."""

    def __init__(self, size: int):
        self.size = size
        self.trees: OrderedDict[tuple, Any] = OrderedDict()

    def get(self, key, parse):
        tree = self.trees.get(key)
        if tree is None:
            tree = self.trees[key] = parse()
            if len(self.trees) > self.size:
                self.trees.popitem(last=False)
        else:
            self.trees.move_to_end(key)
        return tree


_MODULES = _Parsed(512)
_EXPRESSIONS = _Parsed(16_384)


def parse_module(text: str, file: str, where: Position | None = None, indent: int = 0) -> list[ast.Procedure]:
    """Parse a whole .ump file (or a block of procedures in an overlay) into its procedures."""
    return list(_MODULES.get((text, file, where, indent), lambda: tuple(_parse_module(text, file, where, indent))))


def _parse_module(text: str, file: str, where: Position | None, indent: int) -> list[ast.Procedure]:
    locate = _Locator(where or Position(file, 1, 1), indent)
    _refuse_tab_indentation(text, locate)
    tree = _parse(text if text.endswith("\n") else text + "\n", "module", locate)
    return _transform(tree, locate)


def parse_steps(text: str, where: Position, indent: int = 0) -> tuple:
    """Parse procedure statements written in an overlay (a YAML block scalar indented ``indent`` in its file)."""
    import textwrap
    body = textwrap.dedent(text)
    first = next((line for line in text.splitlines() if line.strip()), "")
    indent += len(first) - len(first.lstrip())
    locate = _Locator(where, indent)
    _refuse_tab_indentation(body, locate)
    tree = _parse(body if body.endswith("\n") else body + "\n", "steps", locate)
    return tuple(_transform(tree, locate))


def parse_expression(text: str, where: Position) -> ast.Expr:
    """Parse one DSL expression written inside a YAML file, positions relative to ``where``."""
    return _EXPRESSIONS.get((text, where), lambda: _parse_expression(text, where))


def _parse_expression(text: str, where: Position) -> ast.Expr:
    locate = _Locator(where)
    if "\n" in text.strip():
        text = " ".join(text.split())  # expressions in YAML may wrap; they are not indentation-sensitive
    tree = _parse(text.strip(), "expression", locate)
    return _transform(tree, locate)


def _transform(tree, locate: "_Locator"):
    """The syntax tree as AST nodes; an error found while building (a bad ``{...}`` in a string) is raised as is."""
    try:
        return _ToAst(locate).transform(tree)
    except VisitError as e:
        if isinstance(e.orig_exc, UmpireError):
            raise e.orig_exc from None
        raise


def _refuse_tab_indentation(text: str, locate: "_Locator") -> None:
    """Indentation is made of spaces: a tab in a line's leading white space is refused at its place."""
    if "\t" not in text:
        return
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.lstrip(" \t")
        indent = line[:len(line) - len(stripped)]
        if "\t" in indent and stripped and not stripped.startswith("#"):
            raise InputError("this line is indented with a tab", locate(number, indent.index("\t") + 1),
                             hint="indent with spaces (tabs have no fixed width, so the block structure "
                                  "would depend on your editor)")


class _Locator:
    """Maps (line, column) inside parsed text to a Position in its file."""

    def __init__(self, base: Position, indent: int = 0):
        self.base = base
        self.indent = indent  # columns removed from every line (a dedented YAML block)

    def __call__(self, line: int, column: int) -> Position:
        if line <= 1:
            return Position(self.base.file, self.base.line, self.base.column + column - 1)
        return Position(self.base.file, self.base.line + line - 1, column + self.indent)


def _parse(text: str, start: str, locate: _Locator):
    if len(text) > MAX_PROCEDURE_CHARS:
        raise InputError(f"this procedure text is {len(text):,} characters, more than the limit of "
                         f"{MAX_PROCEDURE_CHARS:,} (limit 'procedure text')", locate(1, 1),
                         hint="split it into several .ump files; no real procedure file comes near this size")
    tree = _parse_text(text, start, locate)
    _check_nesting(tree, locate)
    return tree


def _check_nesting(tree, locate: _Locator) -> None:
    """Refuse a syntax tree deeper than MAX_NESTING, at the place where it gets too deep (no recursion here)."""
    from lark import Tree
    stack = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_NESTING:
            meta = node.meta
            raise InputError(f"this is nested more than {MAX_NESTING} deep (operators, brackets or blocks inside "
                             "each other; limit 'nesting')",
                             locate(getattr(meta, "line", 1), getattr(meta, "column", 1)),
                             hint="split it with let statements or smaller procedures")
        for child in node.children:
            if isinstance(child, Tree):
                stack.append((child, depth + 1))


def _parse_text(text: str, start: str, locate: _Locator):
    try:
        return _parser().parse(text, start=start)
    except UnexpectedToken as e:
        tok = e.token
        if start == "expression" and tok.type == "$END":
            message = f"the expression ends too early; expected {_expected(e.accepts or e.expected)}"
        else:
            message = f"unexpected {_token_text(tok)}; expected {_expected(e.accepts or e.expected)}"
        line, column = (tok.line or e.line or 1), (tok.column or e.column or 1)
        if tok.type == "_INDENT":    # the over-indented line itself, where its text starts
            line, column = _line_start(tok, text)
        elif tok.type in ("_NL", "_DEDENT", "$END") and e.line and e.line > 0:
            line, column = e.line, e.column
        raise InputError(message, locate(line, column), hint=_hint_for(tok, e)) from None
    except UnexpectedCharacters as e:
        at = e.pos_in_stream or 0
        char = text[at] if at < len(text) else "?"
        hint = None
        if char == "'":
            hint = 'strings use double quotes: "like this"'
        elif char == "=" :
            hint = "use == to compare; = only follows let, set, roll and emit"
        elif char == "\t":
            hint = "indent with spaces"
        raise InputError(f"unexpected character '{char}'", locate(e.line, e.column), hint=hint) from None
    except UnexpectedEOF as e:
        raise InputError(f"the text ends too early; expected {_expected(e.expected)}",
                         locate(getattr(e, 'line', 1) or 1, getattr(e, 'column', 1) or 1)) from None
    except DedentError:
        line, column = _bad_dedent(text)
        raise InputError("this line's indentation does not match any enclosing block",
                         locate(line, column),
                         hint="indent each block by the same number of spaces") from None
    except UnexpectedInput as e:  # pragma: no cover - other lark errors
        raise InputError(f"syntax error: {e}", locate(getattr(e, "line", 1), getattr(e, "column", 1))) from None


def _bad_dedent(text: str) -> tuple[int, int]:
    """(line, column) of the first line that steps back to an indentation no enclosing block has."""
    levels, depth = [0], 0
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.lstrip(" ")
        if depth == 0 and stripped and not stripped.startswith("#"):
            indent = len(line) - len(stripped)
            if indent > levels[-1]:
                levels.append(indent)
            else:
                while indent < levels[-1]:
                    levels.pop()
                if indent != levels[-1]:
                    return number, indent + 1
        code = re.sub(r'"([^"\\\n]|\\.)*"', '""', stripped.split("#", 1)[0] if '"' not in stripped else stripped)
        depth = max(depth + sum(code.count(c) for c in "([{") - sum(code.count(c) for c in ")]}"), 0)
    return 1, 1


def _hint_for(token: Token, error: UnexpectedToken) -> str | None:
    expected = set(error.accepts or error.expected)
    if token.type == "COLON" and "RSQB" in expected:
        return ("the language has no slices: the items of a list xs from position 1 on are "
                "list(xs[i] for i in range(1, len(xs)))")
    if token.type == "_NL" and "COLON" in expected:
        return "a line that opens a block (procedure, if, elif, else, for each) ends with ':'"
    if token.type == "_INDENT":
        return "only the line after one ending in ':' may be indented more"
    if token.value == "=" or token.type == "EQUAL":
        return "use == to compare"
    return None


# ---- tree to AST ----------------------------------------------------------------------

def _unquote(token: Token) -> str:
    body = token.value[1:-1]
    return re.sub(r'\\(.)', lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), body)


@v_args(meta=True)
class _ToAst(Transformer):
    """Builds ``syntax`` nodes; every node gets the file position of its text."""

    def __init__(self, where: _Locator):
        super().__init__()
        self._where = where

    def _pos(self, meta) -> Position:
        return self._where(getattr(meta, "line", 1), getattr(meta, "column", 1))

    def _tok_pos(self, tok: Token) -> Position:
        return self._where(tok.line or 1, tok.column or 1)

    def _binding(self, tok: Token) -> str:
        """A name being defined or read: a keyword of the language cannot be one."""
        text = str(tok)
        if text in KEYWORDS:
            raise InputError(f"'{text}' is a keyword of the procedure language and cannot be used as a name",
                             self._tok_pos(tok), hint=f"choose another name, e.g. '{text}_'")
        return text

    # top level
    def start(self, meta, children):
        return children[0]

    def module(self, meta, children):
        return [c for c in children if isinstance(c, ast.Procedure)]

    def expression(self, meta, children):
        return children[0]

    def steps(self, meta, children):
        return [c for c in children if c is not None]

    def procedure(self, meta, children):
        name, params, cite, *rest = children
        doc = rest[0] if rest and (rest[0] is None or isinstance(rest[0], str)) else None
        body = tuple(s for s in rest[1:] if s is not None) if rest and (rest[0] is None or isinstance(rest[0], str)) \
            else tuple(s for s in rest if s is not None)
        return ast.Procedure(self._tok_pos(name), self._binding(name), tuple(params or ()), body, cite, doc)

    def params(self, meta, children):
        return children

    def param(self, meta, children):
        name, type_, default = children
        return ast.Param(self._binding(name), type_, default, self._tok_pos(name))

    def simple_type(self, meta, children):
        return ast.TypeRef(str(children[0]))

    def list_type(self, meta, children):
        return ast.TypeRef("list", children[0])

    def key_type(self, meta, children):
        return ast.TypeRef("key_of", str(children[0]))

    def enum_type(self, meta, children):
        """``one_of["a", "b"]``: the same enumeration as a record field's ``{enum: [a, b]}``."""
        values = tuple(_unquote(c) for c in children)
        if len(set(values)) != len(values):
            raise InputError("one_of lists a value twice", self._pos(meta))
        return ("enum", values)

    def doc(self, meta, children):
        return _unquote(children[0])

    def cite(self, meta, children):
        return _unquote(children[0])

    # statements
    def labelled(self, meta, children):
        label, statement = children
        return _with(statement, label=str(label)[1:])

    def simple_statement(self, meta, children):
        statement, cite = children
        return _with(statement, cite=cite) if cite else statement

    def let(self, meta, c):
        return ast.Let(self._pos(meta), self._binding(c[0]), c[1])

    def set_(self, meta, c):
        return ast.Set(self._pos(meta), self._binding(c[0]), c[1])

    def roll(self, meta, c):
        name, dice, sign, modifier = c
        if modifier is not None and str(sign) == "-":
            modifier = ast.Unary(modifier.pos, "-", modifier)
        return ast.Roll(self._pos(meta), self._binding(name), dice, modifier)

    def dice_literal(self, meta, c):
        count, sides = str(c[0]).split("d")
        pos = self._tok_pos(c[0])
        if len(count) > 6 or len(sides) > 12:
            raise InputError(f"the dice '{c[0]}' have absurdly many digits", pos,
                             hint="write dice such as 2d6 or d10")
        count, sides = int(count or 1), int(sides)
        if count < 1 or sides < 1:
            raise InputError(f"'{c[0]}' rolls no dice: the number of dice and of sides are at least 1", pos)
        return ast.DiceSpec(pos, None, count, sides)

    def dice_kind(self, meta, c):
        return ast.DiceSpec(self._tok_pos(c[0]), str(c[0]))

    def dice_sized(self, meta, c):
        # any other name than d is reported by the checker (kind set, size given)
        return ast.DiceSpec(self._tok_pos(c[0]), None if str(c[0]) == "d" else str(c[0]), 1, None, c[1])

    def emit(self, meta, c):
        return ast.Emit(self._pos(meta), str(c[0]), c[1])

    def return_(self, meta, c):
        return ast.Return(self._pos(meta), c[0])

    def note(self, meta, c):
        return ast.Note(self._pos(meta), c[0])

    def fail(self, meta, c):
        return ast.Fail(self._pos(meta), c[0])

    def reject(self, meta, c):
        return ast.Fail(self._pos(meta), c[0], rejects=True)

    def refuse(self, meta, c):
        return ast.Refuse(self._pos(meta), c[0])

    def choose(self, meta, c):
        return ast.Choose(self._pos(meta), self._binding(c[0]), c[1], c[2])

    def derive(self, meta, c):
        """``derive NAME = EXPR from MAP else GIVEN``: NAME is EXPR when MAP is not null, else the stated GIVEN,
        else the situation is missing a fact. Written as the ``if`` it means, with a note for the trace."""
        pos = self._pos(meta)
        name, derived, board, given = self._binding(c[0]), c[1], c[2], c[3]
        null = ast.Literal(pos, None)
        var = ast.Name(pos, name)
        fact = ast.unparse(given)

        def note(*parts):
            return ast.Note(pos, ast.Interpolated(pos, parts))

        stated = ast.Conditional(pos, ast.Literal(pos, ""),
                                 ast.Logical(pos, "or", (ast.Binary(pos, "==", given, null),
                                                         ast.Binary(pos, "==", given, var))),
                                 ast.Interpolated(pos, (f" (the situation also states {fact} = ", given,
                                                        ", which the map's value replaces)")))
        from_map = (ast.Let(pos, name, derived), note(f"{name} = ", var, ": derived from the map", stated))
        from_given = (ast.Let(pos, name, given), note(f"{name} = ", var, f"{ast.GIVEN_NOT_DERIVED} ({fact})"))
        missing = (ast.Let(pos, name, ast.Function(pos, "missing_fact", (ast.Arg(None, ast.Literal(pos, fact)),
                                                                         ast.Arg(None, ast.Literal(pos, name))))),)
        return ast.If(pos, (ast.Branch(ast.Binary(pos, "!=", board, null), from_map, None, pos),
                            ast.Branch(ast.Binary(pos, "!=", given, null), from_given, None, pos),
                            ast.Branch(None, missing, None, pos)))

    def if_(self, meta, c):
        condition, cite, body, *rest = c
        branches = [ast.Branch(condition, body, cite, self._pos(meta))]
        for extra in rest:
            if extra is not None:
                branches.append(extra)
        return ast.If(self._pos(meta), tuple(branches), cite=cite)

    def elif_(self, meta, c):
        condition, cite, body = c
        return ast.Branch(condition, body, cite, self._pos(meta))

    def else_(self, meta, c):
        return ast.Branch(None, c[0], None, self._pos(meta))

    def for_(self, meta, c):
        var, source, cite, body = c
        return ast.ForEach(self._pos(meta), self._binding(var), source, body, cite=cite)

    def block(self, meta, children):
        return tuple(children)

    # expressions
    def conditional(self, meta, c):
        return ast.Conditional(self._pos(meta), c[0], c[1], c[2])

    def or_(self, meta, c):
        return c[0] if len(c) == 1 else ast.Logical(self._pos(meta), "or", tuple(c))

    def and_(self, meta, c):
        return c[0] if len(c) == 1 else ast.Logical(self._pos(meta), "and", tuple(c))

    def not_(self, meta, c):
        return ast.Unary(self._pos(meta), "not", c[0])

    def compare(self, meta, c):
        return ast.Binary(self._pos(meta), str(c[1]), c[0], c[2])

    def in_(self, meta, c):
        return ast.Binary(self._pos(meta), "in", c[0], c[1])

    def not_in(self, meta, c):
        return ast.Binary(self._pos(meta), "not in", c[0], c[1])

    def binary(self, meta, c):
        return ast.Binary(self._pos(meta), str(c[1]), c[0], c[2])

    def neg(self, meta, c):
        return ast.Unary(self._pos(meta), "-", c[0])

    def attribute(self, meta, c):
        return ast.Attribute(self._pos(meta), c[0], str(c[1]))

    def index(self, meta, c):
        return ast.Index(self._pos(meta), c[0], c[1])

    def update(self, meta, c):
        return ast.Update(self._pos(meta), c[0], c[1].fields)

    def merge(self, meta, c):
        return ast.Merge(self._pos(meta), c[0], c[1])

    def number(self, meta, c):
        text = str(c[0])
        if len(text) > MAX_NUMBER_DIGITS:
            raise InputError(f"this number has {len(text):,} characters, more than the limit of {MAX_NUMBER_DIGITS} "
                             "(limit 'number digits')", self._pos(meta))
        return ast.Literal(self._pos(meta), ast.number(text))

    def string(self, meta, c):
        return self._string(c[0])

    def _string(self, token: Token):
        text = _unquote(token)
        base = self._tok_pos(token)
        if "{" not in text and "}" not in text:
            return ast.Literal(base, text)
        parts: list = []
        i, n, plain = 0, len(text), []
        while i < n:
            ch = text[i]
            if ch in "{}" and text.startswith(ch * 2, i):      # {{ and }} are literal braces
                plain.append(ch)
                i += 2
            elif ch == "}":
                raise InputError("a '}' in a string closes no '{'", Position(base.file, base.line, base.column + 1 + i),
                                 hint="write }} for a literal brace")
            elif ch == "{":
                close = text.find("}", i + 1)
                inner_open = text.find("{", i + 1)
                if close < 0 or (0 <= inner_open < close):
                    raise InputError("this '{' in a string is never closed", Position(base.file, base.line,
                                                                                     base.column + 1 + i),
                                     hint="end the expression with '}', or write {{ for a literal brace")
                where = Position(base.file, base.line, base.column + 2 + i)
                if not text[i + 1:close].strip():
                    raise InputError("an empty '{}' in a string; put an expression inside it", where,
                                     hint="write {{}} for literal braces")
                if plain:
                    parts.append("".join(plain))
                    plain = []
                parts.append(parse_expression(text[i + 1:close], where))
                i = close + 1
            else:
                plain.append(ch)
                i += 1
        if plain:
            parts.append("".join(plain))
        if not any(not isinstance(p, str) for p in parts):
            return ast.Literal(base, "".join(parts))
        return ast.Interpolated(base, tuple(parts))

    def true(self, meta, c):
        return ast.Literal(self._pos(meta), True)

    def false(self, meta, c):
        return ast.Literal(self._pos(meta), False)

    def null(self, meta, c):
        return ast.Literal(self._pos(meta), None)

    def name(self, meta, c):
        return ast.Name(self._pos(meta), self._binding(c[0]))

    def list_(self, meta, c):
        return ast.ListExpr(self._pos(meta), tuple(x for x in c if x is not None))

    def record(self, meta, c):
        return ast.RecordExpr(self._pos(meta), tuple(f for f in c if f is not None))

    def field(self, meta, c):
        key = _unquote(c[0]) if c[0].type == "STRING" else str(c[0])
        return (key, c[1])

    def args(self, meta, c):
        return tuple(c)

    def positional(self, meta, c):
        return ast.Arg(None, c[0])

    def named(self, meta, c):
        return ast.Arg(str(c[0]), c[1])

    def function(self, meta, c):
        return ast.Function(self._pos(meta), str(c[0]), tuple(c[1] or ()))

    def aggregate(self, meta, c):
        name, element, var, source, condition, key = c
        return ast.Aggregate(self._pos(meta), str(name), element, self._binding(var), source, condition, key)

    def call(self, meta, c):
        return ast.Call(self._pos(meta), str(c[0]), tuple(c[1] or ()))

    def lookup(self, meta, c):
        return ast.Lookup(self._pos(meta), str(c[0]), tuple(c[1] or ()))

    def locate(self, meta, c):
        return ast.Locate(self._pos(meta), str(c[0]), tuple(c[1] or ()))

    def apply(self, meta, c):
        return ast.Apply(self._pos(meta), str(c[0]), tuple(c[1] or ()))

    def uncapped(self, meta, c):
        return ast.Apply(self._pos(meta), str(c[0]), tuple(c[1] or ()), True)


KEYWORDS = frozenset({
    "procedure", "cite", "from", "default", "if", "elif", "else", "for", "each", "in", "not", "and", "or", "with",
    "true", "false", "null", "call", "lookup", "apply", "uncapped", "locate", "by"})
"""Reserved words: they have a meaning inside expressions and block headers, so they cannot name a
variable, parameter or procedure. (Words that only start a statement, such as ``roll`` or ``note``,
may; result fields and record keys may be any word.)"""


def _with(statement, **changes):
    return ast.replace(statement, **changes)
