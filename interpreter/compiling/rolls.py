"""Compiling the `roll` statement: dice of a fixed kind or of a size worked out when rolled, and the roll's modifier."""

from __future__ import annotations

from fractions import Fraction

from ..analysis.caching import MEMO_LIMIT as _MEMO_LIMIT
from ..analysis.facts import roll_kind
from ..errors import AdjudicationError
from ..model.dice import DiceKind, literal_kind
from ..model.values import DEAD, Roll, brief, normalise, show, size_error, type_name
from ..reading import syntax as ast
from .host import CompilerHost


class RollCompiler(CompilerHost):
    """The compiler's mixin for `roll` statements."""

    def s_roll(self, s: ast.Roll, cite):
        if s.dice.size is not None:
            return self.s_roll_sized(s, cite)
        kind = self.dice_kind(s.dice)
        if s.name in self.unordered_rolls and kind.count > 1:
            kind = kind.unordered()
        modifier = self.roll_modifier(s, cite)
        name, names, pos, label = s.name, kind.names, s.pos, kind.describe()
        made: dict = {}     # faces -> the unmodified Roll (values never change: one object per outcome)

        def unmodified_roll(env, rt):
            faces = rt.dice.roll(kind, name, pos)
            r = made.get(faces)
            if r is None:
                r = Roll(faces, names, 0)
                if len(made) < _MEMO_LIMIT:
                    made[faces] = r
            env[name] = r
        if self.untraced and modifier is None:
            return unmodified_roll

        def roll(env, rt):
            if modifier is None:
                unmodified_roll(env, rt)
                r = env[name]
                faces = r.dice
            else:
                faces = rt.dice.roll(kind, name, pos)
                r = env[name] = Roll(faces, names, modifier(env, rt))
            if rt.trace is not None:
                detail = ", ".join(f"{n} {d}" for n, d in zip(names, faces)) if len(faces) > 1 else str(faces[0])
                text = f"roll {name}: {label} -> {detail}"
                if len(faces) > 1:
                    text += f" = {r.original}" + (" (doubles)" if r.doubles else "")
                if r.modifier:
                    text += f"; modified by {show(r.modifier)} -> final {show(normalise(r.final))}"
                rt.trace.add("roll", text, cite, dice=faces, original=r.original, final=r.final)
        return roll

    def roll_modifier(self, s: ast.Roll, cite):
        """A roll's modifier, checked to be a number where it is computed (text or a list is a positioned error)."""
        if s.modifier is None:
            return None
        expr, pos, text = self.expr(s.modifier), s.modifier.pos, ast.unparse(s.modifier)

        def modifier(env, rt):
            m = expr(env, rt)
            c = m.__class__
            if c is int or c is Fraction or c is Roll or c is float or m is DEAD:
                return m
            raise AdjudicationError(f"the modifier of roll {s.name} ({text}) must be a number, not "
                                    f"{type_name(m)} {brief(m, 60)}", pos, citation=cite)
        return modifier

    def s_roll_sized(self, s: ast.Roll, cite):
        """One die whose number of sides is evaluated when the roll is made (a random pick among n)."""
        size = self.expr(s.dice.size)
        modifier = self.roll_modifier(s, cite)
        name, pos, text = s.name, s.pos, ast.unparse(s.dice.size)
        kinds: dict[int, DiceKind] = {}

        def roll(env, rt):
            n = size(env, rt)
            if n.__class__ is not int or n < 1:
                raise AdjudicationError(f"a die rolled as d({text}) needs a whole number of sides of at least 1, "
                                        f"not {show(n)}", pos, citation=cite)
            kind = kinds.get(n)
            if kind is None:
                if n > rt.limits["sides"]:
                    size_error(f"a die rolled as d({text}) would have {n:,} sides", "sides", rt.limits["sides"], pos)
                kind = kinds[n] = literal_kind(1, n)
            faces = rt.dice.roll(kind, name, pos)
            r = env[name] = Roll(faces, kind.names, modifier(env, rt) if modifier is not None else 0)
            if rt.trace is not None:
                text_ = f"roll {name}: d{n} ({text}) -> {faces[0]}"
                if r.modifier:
                    text_ += f"; modified by {show(r.modifier)} -> final {show(normalise(r.final))}"
                rt.trace.add("roll", text_, cite, dice=faces, original=r.original, final=r.final)
        return roll

    def dice_kind(self, spec: ast.DiceSpec) -> DiceKind:
        return roll_kind(self.ruleset, spec)
