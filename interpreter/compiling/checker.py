"""Semantic checks across a whole ruleset, before anything runs.

Names (locals, catalogues, tables, stacks, procedures, dice kinds), arity of
calls and lookups, fields of typed records, and unreachable statements. Each
problem is an ``InputError`` at the offending text, with "did you mean" where
a near name exists. Unused definitions are warnings, not errors.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import InputError, InputErrors, Position, did_you_mean
from ..model.ruleset import SCALAR_TYPES, Ruleset, TypeDef
from ..reading import syntax as ast
from ..runtime.functions import AGGREGATES, BUILTINS


@dataclass(frozen=True)
class StaticType:
    """What the checker knows of a value: a record type, a roll, a list of something, or nothing."""

    kind: str                 # "record", "roll", "list", "entry", "unknown"
    record: TypeDef | None = None
    item: "StaticType | None" = None
    fields: frozenset | None = None       # for catalogue entries: the fields any entry has
    roll_names: tuple = ()


UNKNOWN = StaticType("unknown")


class Checker:
    """One walk over the whole ruleset: a method per kind of definition, statement and expression, each given
    the scope it is checked in (local name -> StaticType).

    It is a class, not a set of functions, because every check shares the same three things: the ruleset's
    definitions (``r``), the problems found so far (collected rather than raised, so one run reports every
    error of every file) and which tables, stacks and procedures were used (for the unused-definition warnings
    at the end). It runs to about 400 lines because the language's every statement and expression form has
    its one short case here, side by side, as a type checker's match over the syntax reads best.
    """

    def __init__(self, ruleset: Ruleset):
        self.r = ruleset
        self.errors: list[InputError] = []
        self.warnings: list[str] = []
        self.used: dict[str, set[str]] = {"tables": set(), "stacks": set(), "procedures": set()}

    def error(self, message: str, pos: Position | None, hint: str | None = None) -> None:
        self.errors.append(InputError(message, pos, hint))

    def run(self) -> list[str]:
        self.check_types()
        for stack in self.r.stacks.values():
            for t in stack.param_types.values():
                self.check_type_ref(t, stack.pos)
            scope = {p: self.type_of(stack.param_types[p]) if p in stack.param_types else UNKNOWN
                     for p in stack.params}
            for m in stack.modifiers:
                for e in (m.value, m.when, m.times):
                    if e is not None:
                        self.expr(e, scope)
        for proc in self.r.procedures.values():
            self.procedure(proc)
        if self.errors:
            raise InputErrors(self.errors)
        for kind in ("tables", "stacks"):
            for name, thing in getattr(self.r, kind).items():
                if name not in self.used[kind] and not getattr(thing, "structure_unknown", False) \
                        and not getattr(thing, "reference", False):
                    # (a table of unknown structure is declared to record that the rulebook names it; a
                    # reference table, to give players a chart the rulebook prints)
                    self.warnings.append(f"{thing.pos}: warning: {kind[:-1]} '{name}' is never used by a procedure")
        return self.warnings

    # -- types
    def type_of(self, ref) -> StaticType:
        if isinstance(ref, tuple):
            return UNKNOWN
        if ref.name == "list":
            return StaticType("list", item=self.type_of(ref.item))
        if ref.name in self.r.types:
            return StaticType("record", record=self.r.types[ref.name])
        return UNKNOWN

    def check_type_ref(self, ref, pos: Position | None) -> None:
        if isinstance(ref, tuple):
            return
        if ref.name == "list":
            self.check_type_ref(ref.item, pos)
        elif ref.name == "key_of":
            if ref.item not in self.r.catalogues:
                self.error(f"type '{ref}' names catalogue '{ref.item}', which does not exist", pos,
                           did_you_mean(ref.item, self.r.catalogues))
        elif ref.name not in SCALAR_TYPES and ref.name not in self.r.types:
            known = sorted(SCALAR_TYPES | set(self.r.types))
            self.error(f"unknown type '{ref.name}'; known types: {', '.join(known)}", pos,
                       did_you_mean(ref.name, known))

    def check_types(self) -> None:
        for t in self.r.types.values():
            for f in t.fields.values():
                self.check_type_ref(f.type, f.pos)
                self.check_key_default(f)
            if t.catalogue and t.catalogue not in self.r.catalogues:
                self.error(f"type '{t.name}' names catalogue '{t.catalogue}', which does not exist", t.pos,
                           did_you_mean(t.catalogue, self.r.catalogues))
            if t.catalogue and not t.key:
                self.error(f"type '{t.name}' takes defaults from a catalogue, so it needs 'key:' (the field "
                           "that names the entry)", t.pos)
            if t.key and t.key not in t.fields:
                self.error(f"type '{t.name}' has key '{t.key}', which is not one of its fields", t.pos,
                           did_you_mean(t.key, t.fields))

    def check_key_default(self, f) -> None:
        """A ``key_of[C]`` field's default names an entry of C, as any given value must."""
        ref = f.type
        cat = self.r.catalogues.get(ref.item) if isinstance(ref, ast.TypeRef) and ref.name == "key_of" else None
        if cat is not None and f.has_default and f.default is not None and f.default not in cat.entries:
            self.error(f"field '{f.name}' defaults to '{f.default}', which is not an entry of catalogue "
                       f"'{cat.name}'", f.pos, did_you_mean(str(f.default), cat.entries))

    def record_fields(self, t: TypeDef) -> set[str]:
        names = set(t.fields)
        if t.catalogue in self.r.catalogues:
            names |= self.r.catalogues[t.catalogue].field_names
        return names

    # -- procedures
    def procedure(self, proc) -> None:
        scope: dict[str, StaticType] = {}
        for p in proc.params:
            if p.name in scope:
                self.error(f"parameter '{p.name}' is declared twice", p.pos)
            self.check_type_ref(p.type, p.pos)
            if p.default is not None:
                self.expr(p.default, scope)
                self.check_record_default(p)
            if p.name in self.r.catalogues:
                self.error(f"parameter '{p.name}' has the name of a catalogue; choose another name", p.pos)
            scope[p.name] = self.type_of(p.type)
        self.enum_values(proc, [(p.name, p.default) for p in proc.params if p.default is not None])
        self.block(proc.syntax.body, scope)

    def enum_values(self, proc, named) -> None:
        """A literal argument or default (``named``: (parameter name, expression) pairs) of a ``one_of[...]``
        parameter is one of its values."""
        params = {p.name: p for p in proc.params}
        for name, value in named:
            p = params.get(name)
            if p is None or not isinstance(p.type, tuple) or not isinstance(value, ast.Literal):
                continue
            if value.value is not None and value.value not in p.type[1]:
                self.error(f"'{value.value}' is not one of the values of parameter '{name}' of procedure "
                           f"'{proc.name}' ({', '.join(map(str, p.type[1]))})", value.pos,
                           did_you_mean(str(value.value), [str(v) for v in p.type[1]]))

    def check_record_default(self, p) -> None:
        """A written-out default of a record type is completed like an input of that type (compiling/compiler.py): it
        must give every field that neither the type nor a catalogue entry supplies, each of its type."""
        from ..analysis.facts import NOT_WRITTEN_OUT, written_out
        from ..loading.inputs import complete_default, holds_record_type
        if not holds_record_type(self.r, p.type):
            return
        value = written_out(p.default)
        if value is NOT_WRITTEN_OUT or value is None:
            return
        try:
            complete_default(self.r, p.type, value, p.default.pos)
        except InputError as e:
            self.error(f"the default of parameter '{p.name}': {e.message}", p.default.pos, e.hint)
        except (TypeError, ValueError, AttributeError, KeyError):
            self.error(f"the default of parameter '{p.name}' is not a {ast.type_text(p.type)}", p.default.pos)

    def block(self, statements, scope) -> None:
        for i, s in enumerate(statements):
            self.statement(s, scope)
            if isinstance(s, (ast.Return, ast.Fail, ast.Refuse)) and i + 1 < len(statements):
                self.error("this statement can never run: the one before it always ends the procedure",
                           statements[i + 1].pos)
                break

    def declare(self, name: str, pos: Position, scope, t: StaticType = UNKNOWN) -> None:
        if name in self.r.catalogues:
            self.error(f"'{name}' is a catalogue; choose another name for this value", pos)
        scope[name] = t

    def statement(self, s, scope) -> None:
        match s:
            case ast.Let(name=name, value=value):
                t = self.expr(value, scope)
                if name in scope:
                    self.error(f"'{name}' is already defined; use `set {name} = ...` to change it", s.pos)
                self.declare(name, s.pos, scope, t)
            case ast.Set(name=name, value=value):
                self.expr(value, scope)
                if name not in scope:
                    self.error(f"`set` changes an existing name, and '{name}' is not defined yet; use `let`", s.pos,
                               did_you_mean(name, scope))
            case ast.Roll(name=name, dice=dice, modifier=modifier):
                names: tuple = ()
                if dice.size is not None:
                    if dice.kind is not None:
                        self.error(f"a die whose number of sides an expression gives is written d(EXPR), "
                                   f"not {dice.kind}(...)", dice.pos)
                    self.expr(dice.size, scope)
                elif dice.kind is None and dice.text in self.r.dice:
                    names = self.r.dice[dice.text].names
                elif dice.kind is not None:
                    if dice.kind not in self.r.dice:
                        self.error(f"unknown dice kind '{dice.kind}'; declare it under dice: in ruleset.yaml, "
                                   "or write dice such as 2d6", dice.pos, did_you_mean(dice.kind, self.r.dice))
                    else:
                        names = self.r.dice[dice.kind].names
                elif dice.count < 1 or dice.sides < 2:
                    self.error(f"dice must be at least one die of two sides, not {dice.count}d{dice.sides}", dice.pos)
                if modifier is not None:
                    self.expr(modifier, scope)
                if name in scope:
                    self.error(f"'{name}' is already defined; roll into a new name", s.pos)
                self.declare(name, s.pos, scope, StaticType("roll", roll_names=names))
            case ast.Emit(value=value) | ast.Note(text=value) | ast.Fail(message=value) | ast.Refuse(reason=value):
                self.expr(value, scope)
            case ast.Return(value=value):
                if value is not None:
                    self.expr(value, scope)
            case ast.Choose(name=name, options=options, default=default):
                t = self.expr(options, scope)
                self.expr(default, scope)
                self.declare(name, s.pos, scope, t.item if t.kind == "list" and t.item else UNKNOWN)
            case ast.If(branches=branches):
                # each branch has its own scope; a name is visible after the if only when every
                # branch (including an else) defines it, so it surely has a value there
                defined = None
                for b in branches:
                    if b.condition is not None:
                        self.expr(b.condition, scope)
                    inner = dict(scope)
                    self.block(b.body, inner)
                    new = {k: v for k, v in inner.items() if k not in scope}
                    defined = new if defined is None else {k: v for k, v in defined.items() if k in new}
                if branches[-1].condition is None and defined:
                    scope.update(defined)
            case ast.ForEach(var=var, source=source, body=body):
                t = self.expr(source, scope)
                if var in self.r.catalogues:
                    self.error(f"'{var}' is a catalogue; choose another name for the loop variable", s.pos)
                inner = dict(scope)
                inner[var] = t.item if t.kind == "list" and t.item else UNKNOWN
                self.block(body, inner)  # names defined in the body stay local to it

    # -- expressions
    def expr(self, e, scope) -> StaticType:
        match e:
            case ast.Literal() | None:
                return UNKNOWN
            case ast.Interpolated(parts=parts):
                for p in parts:
                    if not isinstance(p, str):
                        self.expr(p, scope)
                return UNKNOWN
            case ast.Name(name=name):
                if name in scope:
                    return scope[name]
                if name in self.r.catalogues:
                    fields = frozenset(self.r.catalogues[name].field_names)
                    return StaticType("catalogue", item=StaticType("entry", fields=fields))
                what = ("a table; read it with lookup(" + name + ", row: ...)") if name in self.r.tables else \
                       ("a modifier stack; total it with apply(" + name + ", ...)") if name in self.r.stacks else \
                       ("a procedure; run it with call " + name + "(...)") if name in self.r.procedures else None
                if what:
                    self.error(f"'{name}' is {what}", e.pos)
                else:
                    self.error(f"unknown name '{name}'", e.pos,
                               did_you_mean(name, list(scope) + list(self.r.catalogues)))
                return UNKNOWN
            case ast.Attribute(target=target, name=name):
                t = self.expr(target, scope)
                return self.attribute(t, name, e.pos)
            case ast.Index(target=target, index=index):
                t = self.expr(target, scope)
                self.expr(index, scope)
                if t.kind == "catalogue":
                    if isinstance(index, ast.Literal) and isinstance(target, ast.Name):
                        entries = self.r.catalogues[target.name].entries
                        if str(index.value) not in entries:
                            self.error(f"catalogue '{target.name}' has no entry '{index.value}'", index.pos,
                                       did_you_mean(str(index.value), entries))
                    return t.item or UNKNOWN
                if t.kind == "list":
                    return t.item or UNKNOWN
                return UNKNOWN
            case ast.Update(target=target, fields=fields):
                t = self.expr(target, scope)
                for _, v in fields:
                    self.expr(v, scope)
                return t
            case ast.Merge(target=target, other=other):
                self.expr(target, scope)
                self.expr(other, scope)
                return UNKNOWN      # the fields it adds are known only at run time
            case ast.ListExpr(items=items):
                types = [self.expr(i, scope) for i in items]
                return StaticType("list", item=types[0] if types and all(x == types[0] for x in types) else UNKNOWN)
            case ast.RecordExpr(fields=fields):
                seen = set()
                for k, v in fields:
                    if k in seen:
                        self.error(f"field '{k}' appears twice in this record", v.pos)
                    seen.add(k)
                    self.expr(v, scope)
                return UNKNOWN
            case ast.Unary(operand=o):
                self.expr(o, scope)
                return UNKNOWN
            case ast.Binary(left=l, right=r):
                self.expr(l, scope)
                self.expr(r, scope)
                return UNKNOWN
            case ast.Logical(operands=ops):
                for o in ops:
                    self.expr(o, scope)
                return UNKNOWN
            case ast.Conditional(then=t, condition=c, otherwise=o):
                self.expr(c, scope)
                a, b = self.expr(t, scope), self.expr(o, scope)
                return a if a == b else UNKNOWN
            case ast.Function(name=name, args=args):
                for a in args:
                    if a.name is not None:
                        self.error(f"{name}() takes its arguments by position, without names", a.value.pos)
                    self.expr(a.value, scope)
                if name in AGGREGATES and name not in BUILTINS:
                    self.error(f"{name}() works over a list: write {name}(x for x in list)", e.pos)
                elif name not in BUILTINS:
                    known = sorted(set(BUILTINS) | AGGREGATES)
                    hint = did_you_mean(name, known)
                    if name in self.r.procedures:
                        hint = f"to run the procedure, write: call {name}(...)"
                    elif name in self.r.tables:
                        hint = f"to read the table, write: lookup({name}, row: ...)"
                    elif name in self.r.stacks:
                        hint = f"to total the stack, write: apply({name}, ...)"
                    self.error(f"unknown function '{name}'; functions are: {', '.join(known)}", e.pos, hint)
                else:
                    _, lo, hi = BUILTINS[name]
                    if not lo <= len(args) <= hi:
                        want = str(lo) if lo == hi else f"{lo} to {hi}"
                        self.error(f"{name}() takes {want} argument{'s' if hi != 1 else ''}, not {len(args)}", e.pos)
                return UNKNOWN
            case ast.Aggregate(name=name, element=element, var=var, source=source, condition=cond, key=key):
                if name not in AGGREGATES:
                    self.error(f"unknown aggregate '{name}'; aggregates are: {', '.join(sorted(AGGREGATES))}", e.pos,
                               did_you_mean(name, AGGREGATES))
                t = self.expr(source, scope)
                if var in self.r.catalogues:
                    self.error(f"'{var}' is a catalogue; choose another name for the variable", e.pos)
                inner = dict(scope)
                inner[var] = t.item if t.kind == "list" and t.item else UNKNOWN
                et = self.expr(element, inner)
                if cond is not None:
                    self.expr(cond, inner)
                if key is not None:
                    self.expr(key, inner)
                if name in ("highest", "lowest") and key is None:
                    self.error(f"{name}() needs 'by': {name}(x for x in list by x.value)", e.pos)
                if key is not None and name not in ("highest", "lowest"):
                    self.error("'by' is only for highest() and lowest()", key.pos)
                if name == "list":
                    return StaticType("list", item=et)
                return et if name in ("first", "highest", "lowest") else UNKNOWN
            case ast.Call(procedure=pname, args=args):
                for a in args:
                    self.expr(a.value, scope)
                proc = self.r.procedures.get(pname)
                if proc is None:
                    self.error(f"unknown procedure '{pname}'", e.pos, did_you_mean(pname, self.r.procedures))
                    return UNKNOWN
                self.used["procedures"].add(pname)
                self.arguments(f"procedure '{pname}'", [p.name for p in proc.params],
                               {p.name for p in proc.params if p.default is None}, args, e.pos, allow_positional=True)
                self.enum_values(proc, [(a.name or (proc.params[i].name if i < len(proc.params) else None), a.value)
                                        for i, a in enumerate(args)])
                return UNKNOWN
            case ast.Lookup(table=tname, args=args) | ast.Locate(table=tname, args=args):
                for a in args:
                    self.expr(a.value, scope)
                table = self.r.tables.get(tname)
                if table is None:
                    self.error(f"unknown table '{tname}'", e.pos, did_you_mean(tname, self.r.tables))
                    return UNKNOWN
                self.used["tables"].add(tname)
                names = ["row", "column", "shift"] if table.columns is not None else ["row"]
                required = {"row", "column"} if table.columns is not None else {"row"}
                if isinstance(e, ast.Locate) and table.columns is not None:
                    required = {"column"}   # locate may ask only which column a value reads
                self.arguments(f"lookup of table '{tname}'", names, required, args, e.pos, allow_positional=False)
                return UNKNOWN
            case ast.Apply(stack=sname, args=args):
                for a in args:
                    self.expr(a.value, scope)
                stack = self.r.stacks.get(sname)
                if stack is None:
                    self.error(f"unknown modifier stack '{sname}'", e.pos, did_you_mean(sname, self.r.stacks))
                    return UNKNOWN
                self.used["stacks"].add(sname)
                self.arguments(f"stack '{sname}'", stack.params, set(stack.params), args, e.pos, allow_positional=True)
                return UNKNOWN
        return UNKNOWN

    def attribute(self, t: StaticType, name: str, pos: Position) -> StaticType:
        if t.kind == "record" and t.record is not None:
            fields = self.record_fields(t.record)
            if name not in fields:
                self.error(f"a {t.record.name} has no field '{name}'", pos, did_you_mean(name, fields)
                           or f"its fields are: {', '.join(sorted(fields))}")
                return UNKNOWN
            f = t.record.fields.get(name)
            return self.type_of(f.type) if f is not None else UNKNOWN
        if t.kind == "entry" and t.fields is not None and name not in t.fields:
            self.error(f"no entry of this catalogue has a field '{name}'", pos, did_you_mean(name, t.fields))
        if t.kind == "roll":
            roll_fields = ["original", "final", "dice", "doubles", "modifier", *t.roll_names]
            if name not in roll_fields:
                self.error(f"a roll has no '{name}'", pos, did_you_mean(name, roll_fields)
                           or f"a roll has: {', '.join(roll_fields)}")
        return UNKNOWN

    def arguments(self, what: str, names: list[str], required: set[str], args, pos: Position,
                  allow_positional: bool) -> None:
        given = set()
        for i, a in enumerate(args):
            if a.name is None:
                if not allow_positional:
                    self.error(f"name each argument of the {what}: {', '.join(n + ': ...' for n in names)}",
                               a.value.pos)
                    continue
                if i >= len(names):
                    self.error(f"the {what} takes {len(names)} argument(s), but more were given", a.value.pos)
                    continue
                name = names[i]
            else:
                name = a.name
                if name not in names:
                    self.error(f"the {what} has no parameter '{name}' (it takes: {', '.join(names) or 'nothing'})",
                               a.value.pos, did_you_mean(name, names))
                    continue
            if name in given:
                self.error(f"argument '{name}' is given twice", a.value.pos)
            given.add(name)
        missing = [n for n in names if n in required and n not in given]
        if missing:
            self.error(f"the {what} needs {', '.join(repr(m) for m in missing)}", pos)


def check(ruleset: Ruleset) -> list[str]:
    """Raise InputErrors for every semantic problem; return warnings."""
    return Checker(ruleset).run()
