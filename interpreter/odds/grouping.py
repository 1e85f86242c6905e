"""Grouping outcomes for odds and simulation: ``--by`` a result field, or ``--by`` an expression over the result.

A ``--by`` text that is a dotted name (``result``, ``units.G1.state``) reads that field;
lists of records are entered by id (or by position). Any other text is an
expression of the procedure language evaluated with the result's fields as its
names (``count(u for u in units if u.state == "broken")``). Each outcome's label
joins ``TEXT=value`` for every ``--by``.

Outcomes from exact odds may hold independent lists kept factored
(odds/independent.py). A field of one item is read factor by factor, a count, sum,
any or all over the items is convolved, and only what neither covers is
expanded; the shares are the same either way.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

from ..errors import AdjudicationError, InputError, Position, did_you_mean
from ..model.changes import input_records, is_view_of_inputs, record_changes, record_lists
from ..model.values import Record, show
from .independent import Independent, convolve, expand, has_lazy, repeats, sample

_PATH = re.compile(r"[A-Za-z_][\w-]*(\.[\w-]+)*")


class Stop:
    """An outcome that is not a result: a refusal, an unknown cell, a failure. Hashable, for grouping."""

    __slots__ = ("label", "kind")

    def __init__(self, kind: str, label: str):
        self.kind, self.label = kind, label

    def __eq__(self, other):
        return isinstance(other, Stop) and other.label == self.label

    def __hash__(self):
        return hash(("stop", self.label))


class _MissingField:
    def __init__(self, path):
        self.path = path

    def __eq__(self, other):
        return isinstance(other, _MissingField) and other.path == self.path

    def __hash__(self):
        return hash(("missing", self.path))

    def __repr__(self):
        return f"(no {self.path})"


def field_value(value, path: str):
    """A dotted field of a result ('units.G1.state'); lists of records are searched by id."""
    current = value
    for part in path.split("."):
        current = _step(current, part)
        if current is _NOTHING:
            return _MissingField(path)
    return current


_NOTHING = object()


def _step(current, part: str):
    if isinstance(current, Record) and part in current:
        return current[part]
    if isinstance(current, tuple):
        match = [v for v in current if isinstance(v, Record) and str(v.get("id")) == part]
        if match:
            return match[0]
        if part.isdigit() and int(part) < len(current):
            return current[int(part)]
    return _NOTHING


class By:
    """One ``--by``: a field path, or an expression compiled against the ruleset."""

    def __init__(self, text: str, ruleset=None):
        self.text = text
        self.fn = self.expr = None
        self.top: str | None = None     # a field of the result itself ('result'): read directly
        self.path: str | None
        self.fields: frozenset | None     # the result fields it reads (None: the whole result)
        self.shown: dict = {}   # its text values -> their labels (a simulation meets the same few each run)
        if _PATH.fullmatch(text):
            self.path = text
            self.fields = frozenset({text.split(".", 1)[0]})
            if "." not in text:
                self.top = text
            return
        self.path = None
        from ..analysis.names import free_names
        from ..errors import UmpireError
        from ..reading.parser import parse_expression
        try:
            e = parse_expression(text, Position("--by", 1, 1))
        except UmpireError as err:
            raise InputError(f"--by '{text}' is neither a field name nor an expression: {err.message}") from None
        from ..analysis.names import walk
        from ..reading import syntax as ast
        if any(isinstance(n, ast.Call) and (ruleset is None or n.procedure not in ruleset.procedures or
                                            not ruleset.procedures[n.procedure].deterministic) for n in walk((e,))):
            raise InputError(f"--by '{text}': a grouping expression may call only procedures that roll nothing")
        if ruleset is None:
            raise InputError(f"--by '{text}': an expression needs the ruleset")
        from ..compiling.compiler import Compiler
        c = Compiler(ruleset)
        c.rolls_may_hide = True
        c.unordered_rolls = set()
        # a result field shadows a catalogue of the same name: both are looked up when evaluated
        names = free_names(e)
        self.catalogues = {n: c.globals.pop(n) for n in names if n in c.globals}
        try:
            self.fn = c.expr(e)
        except KeyError as err:
            raise InputError(f"--by '{text}': unknown name {err}") from None
        self.expr = e
        self.ruleset = ruleset
        # 'result' and 'value' may name the whole result (a list, a number, a record without such a
        # field: see ``value``), so an expression reading either demands all of it
        self.fields = None if "result" in names or "value" in names else frozenset(names)

    def value(self, result):
        if self.path is not None:
            return field_value(result, self.path)
        from ..model.dice import SeededDice
        from ..runtime.state import Runtime
        env = dict(self.catalogues)
        env.update(result if isinstance(result, Record) else {"value": result})
        env.setdefault("result", result)
        try:
            return self.fn(env, Runtime(self.ruleset, SeededDice(0)))
        except AdjudicationError as e:
            raise InputError(f"--by '{self.text}' cannot be evaluated on an outcome: {e.message}",
                             hint="the names of an expression are the result's fields") from None

    def label(self, result) -> str:
        if self.top is not None and result.__class__ is Record:
            v = result.get(self.top, _NOTHING)
            if v.__class__ is str:
                return self.text_of(v)
        return self.text_of(self.value(result))

    def text_of(self, v) -> str:
        """This grouping's part of a label for the value ``v``."""
        if v.__class__ is str:
            found = self.shown.get(v)
            if found is None:
                if len(self.shown) >= 4096:
                    self.shown.clear()
                found = self.shown[v] = f"{self.text}={show(v)}"
            return found
        return f"{self.text}={v!r}" if isinstance(v, _MissingField) else f"{self.text}={show(v)}"


def by_keys(by, ruleset=None) -> list[By]:
    return [b if isinstance(b, By) else By(b, ruleset) for b in by]


def demanded_fields(by: list[By]):
    """The result fields these groupings read (None: the whole result)."""
    if not by:
        return None
    out: frozenset = frozenset()
    for b in by:
        if b.fields is None:
            return None
        out |= b.fields
    return out


def group_label(value, by: list[By], memo: dict | None = None) -> str:
    """An outcome's label; ``memo``: values.show's, shared by the outcomes labelled together."""
    if isinstance(value, Stop):
        return value.label
    if not by:
        return show(value, memo)
    if len(by) == 1:
        return by[0].label(value)
    return ", ".join(b.label(value) for b in by)


def check_fields(values, by: list[By]) -> None:
    """A --by field that no outcome has is a typo: say so, with the fields there are."""
    values = [v for v in values if not isinstance(v, Stop)]
    if not values or not by:
        return
    for b in by:
        if b.path is None:
            continue
        f = b.path
        parts = f.split(".")
        if all(_missing(v, parts) for v in values):
            results = [sample(v) for v in values]
            have = sorted({k for v in results if isinstance(v, Record) for k in v}, key=str)
            head = parts[0]
            raise InputError(f"no outcome has the field '{f}'" + (f"; the results have: {', '.join(have)}" if have
                                                                   else "; the results are not records"),
                             hint=did_you_mean(head, have) if head not in have else
                             "a dotted path goes into records and, in lists of records, by id")


def _missing(value, parts: list) -> bool:
    """Whether ``field_value(sample(value), path)`` is missing, without building the sample: an
    independent list met on the way is sampled (each factor's first item) only where the path enters it."""
    current = value
    for part in parts:
        if current.__class__ is Independent:
            current = tuple([f[0][0] for f in current.factors()])
        current = _step(current, part)
        if current is _NOTHING:
            return True
    return False


def exact_sum(fractions) -> Fraction:
    """A sum of fractions with one division (over their least common denominator)."""
    return weights_sum([(f.numerator, f.denominator) for f in fractions])


def weights_sum(weights) -> Fraction:
    """A sum of (numerator, denominator) weights as one exact fraction (one division)."""
    if not weights:
        return Fraction(0)
    common = math.lcm(*{d for _, d in weights})
    return Fraction(sum([n * (common // d) for n, d in weights]), common)


def group(dist: dict, by: list[By]) -> list[tuple[str, Fraction]]:
    """Shares by label; outcomes holding independent lists are labelled without walking their product."""
    return group_weights({v: (p.numerator, p.denominator) for v, p in dist.items()}, by)


def group_weights(found: dict, by: list[By], changes: dict | None = None) -> list[tuple[str, Fraction]]:
    """``group`` of outcomes weighted numerator/denominator (integers): every share is summed in integers
    over one common denominator, and each label's share is one Fraction. ``changes`` (``by_changes``, with no
    ``by``): the outcomes' labels by what they change in the input records."""
    check_fields(found, by)
    terms: list = []        # (label, numerator, denominator)
    memo: dict = {}         # each record's and list's text, shown once for every outcome it is in
    for value, (n, d) in found.items():
        if changes is not None and value in changes:
            terms.append((changes[value], n, d))
        elif value.__class__ is not Stop and has_lazy(value):
            pairs, den = _labels(value, by)
            d *= den
            terms.extend([(label, n * k, d) for label, k in pairs])
        else:
            terms.append((group_label(value, by, memo), n, d))
    common = math.lcm(*{d for _, _, d in terms}) if terms else 1
    sums: dict[str, int] = {}
    for label, n, d in terms:
        sums[label] = sums.get(label, 0) + n * (common // d)
    # (n / common is the float of the share exactly as float(Fraction) would round it)
    order = sorted(sums.items(), key=lambda kv: (-(kv[1] / common), kv[0]))
    return [(label, Fraction(n, common)) for label, n in order]


def concrete_weights(found: dict, limit: int) -> dict:
    """Outcomes weighted numerator/denominator with their factored lists expanded (at most ``limit`` cases
    each): what a grouping that reads whole outcomes (``by_changes``) needs."""
    if not any(v.__class__ is not Stop and has_lazy(v) for v in found):
        return found
    out: dict = {}
    for v, (n, d) in found.items():
        pairs = expand(v, limit) if v.__class__ is not Stop and has_lazy(v) else [(v, Fraction(1))]
        for w, q in pairs:
            nn, dd = n * q.numerator, d * q.denominator
            had = out.get(w)
            if had is not None:
                nn, dd = had[0] * dd + nn * had[1], had[1] * dd
            g = math.gcd(nn, dd)
            out[w] = (nn // g, dd // g)
    return out


def by_changes(outcomes, inputs: dict) -> dict | None:
    """The default grouping of a whole result: each outcome labelled by what it changes in the records the
    question was given (a list of units restated with their new states, as model/changes.py reads a result),
    as ``path=value`` (``units.G1.state=broken``); outcomes that change them alike are one group, whatever
    dice led there.

    Only the fields some outcome changes are read, and of those only the ones that tell outcomes apart; a
    field that the others already decide (``broken`` where ``state`` says it) is left out, the later in the
    record first, so each label is as short as the groups allow. None (label each outcome by its whole
    record) when an outcome is not a record or holds a factored list, or none restates an input record."""
    given = input_records(inputs)
    results = [v for v in outcomes if v.__class__ is not Stop]
    if not given or not results or any(v.__class__ is not Record or has_lazy(v) for v in results):
        return None
    seen: dict = {}         # path -> (the input's value, or _NOTHING for a field the input lacks)
    order: dict = {}        # path -> where it sits: its list, its record, its field
    changed = []
    for v in results:
        here = {}
        for li, (at, records) in enumerate(record_lists(v)):
            if not is_view_of_inputs(records, given):
                continue        # new records (the checks made), not the units given
            for ri, r in enumerate(records):
                before = given[r["id"]]
                altered, added = record_changes(before, r)
                fields = {k for k, _, _ in altered} | {k for k, _ in added}
                for fi, (k, x) in enumerate(r.items()):
                    if k in fields:
                        p = f"{at}.{r['id']}.{k}"
                        here[p] = x
                        if p not in seen:
                            seen[p], order[p] = before.get(k, _NOTHING), (li, ri, fi)
        changed.append(here)
    if not seen:
        return None
    paths = sorted(seen, key=order.__getitem__)
    rows = [tuple(_leaf_key(h.get(p, seen[p])) for p in paths) for h in changed]
    keep = [i for i in range(len(paths)) if len({r[i] for r in rows}) > 1] or list(range(len(paths)))
    groups = len({tuple(r[i] for i in keep) for r in rows})
    for i in reversed(list(keep)):              # drop what the other fields decide, last fields first
        rest = [j for j in keep if j != i]
        if rest and len({tuple(r[j] for j in rest) for r in rows}) == groups:
            keep = rest
    return {v: ", ".join(f"{paths[i]}={_shown(h.get(paths[i], seen[paths[i]]))}" for i in keep)
            for v, h in zip(results, changed)}


def _leaf_key(v):
    """A value as a set member: rolls by their dice too, so two that show the same total stay apart."""
    from ..model.values import key_form
    return v if v is _NOTHING else key_form(v)


def _shown(v) -> str:
    return "(none)" if v is _NOTHING else show(v)


def _labels(value, by: list[By]) -> tuple[list, int]:
    """Labels of a factored outcome: (label, numerator) pairs over one denominator."""
    if not by:
        return _expanded(value, by)
    slots = []           # per --by, in order: ([(text, numerator)], denominator)
    used: set = set()
    indexes: dict = {}
    for b in by:
        slot = _slot(value, b, used, indexes)
        if slot is None:
            return _expanded(value, by)
        slots.append(slot)
    current, den = slots[0]
    for pairs, d in slots[1:]:
        current = [(prefix + ", " + text, w * n) for prefix, w in current for text, n in pairs]
        den *= d
    return current, den


def _integer_weights(pairs: list) -> tuple[list, int]:
    """(text, Fraction) pairs as (text, numerator) over their least common denominator, equal texts summed."""
    den = math.lcm(*{q.denominator for _, q in pairs})
    acc: dict = {}
    for text, q in pairs:
        acc[text] = acc.get(text, 0) + q.numerator * (den // q.denominator)
    return list(acc.items()), den


def _slot(value, b: By, used: set, indexes: dict):
    """The distribution of one --by's label part, if it reads at most one factor not read before:
    ([(text, numerator)], denominator)."""
    if b.path is not None:
        current = value
        parts = b.path.split(".")
        for i, part in enumerate(parts):
            if current.__class__ is Independent:
                factors = current.factors()
                index = _factor_index(current, factors, part, indexes)
                # (a random item read twice, here or through a list sharing it, is not independent of itself)
                if index is None or id(current.nodes()[index].cell) in used:
                    return None
                used.add(id(current.nodes()[index].cell))
                rest = parts[i + 1:]
                one = rest[0] if len(rest) == 1 else None
                texts: dict = {}     # a text's weights (several items may show the same value)
                for item, q in factors[index]:
                    if one is not None and item.__class__ is Record:
                        v = item.get(one, _NOTHING)
                        if v is _NOTHING:
                            v = _MissingField(one)
                    else:
                        v = _field(item, rest) if rest else item
                    text = b.text_of(v)
                    found = texts.get(text)
                    if found is None:
                        texts[text] = [q]
                    else:
                        found.append(q)
                den = math.lcm(*{q.denominator for qs in texts.values() for q in qs})
                return [(text, sum([q.numerator * (den // q.denominator) for q in qs]))
                        for text, qs in texts.items()], den
            current = _step(current, part)
            if current is _NOTHING:
                return [(b.text_of(_MissingField(b.path)), 1)], 1
        if has_lazy(current):
            return None
        return [(b.text_of(current), 1)], 1
    slot = _expression_slot(value, b, used)
    return _integer_weights(slot) if slot is not None else None


def _field(value, parts: list):
    """``field_value`` of a path already split (``parts`` not empty)."""
    current = value
    for part in parts:
        current = _step(current, part)
        if current is _NOTHING:
            return _MissingField(".".join(parts))
    return current


def _factor_index(lst: Independent, factors: list, part: str, indexes: dict):
    """Which factor of ``lst`` holds the item with id ``part`` (or at position ``part``): None if none does,
    or the id is in several factors, or shares a factor with other ids (the id moves between items)."""
    if part.isdigit():
        i = int(part)
        return i if i < len(factors) else None
    found = indexes.get(id(lst))
    if found is None:       # every id's factor, once per list (the outcome keeps the list alive meanwhile)
        found = indexes[id(lst)] = {}
        for i, f in enumerate(factors):
            ids = {str(item.get("id")) if isinstance(item, Record) else None for item, _ in f}
            for one in ids:
                found[one] = i if len(ids) == 1 and one not in found else None
    return found.get(part)


def _expression_slot(value, b: By, used: set):
    """count/sum/any/all(... for x in FIELD ...) over a factored field: convolved; else None (expand)."""
    from ..analysis.names import free_names
    from ..reading import syntax as ast
    e = b.expr
    if not isinstance(e, ast.Aggregate) or e.name not in ("count", "sum", "any", "all") or e.key is not None \
            or not isinstance(e.source, ast.Name) or not isinstance(value, Record):
        return None
    lst = value.get(e.source.name)
    if lst.__class__ is not Independent or any(has_lazy(v) for k, v in value.items() if k != e.source.name):
        return None
    cells = {id(node.cell) for node in lst.nodes()}
    if repeats(lst) or not cells.isdisjoint(used):
        return None
    inner = set()
    for part in (e.element, e.condition):
        if part is not None:
            inner |= free_names(part)
    if not inner <= {e.var} | set(value.keys()) | set(b.catalogues) | set(b.ruleset.catalogues):
        return None
    from ..compiling.compiler import Compiler
    from ..model.dice import SeededDice
    from ..runtime.state import Runtime
    c = Compiler(b.ruleset)
    c.rolls_may_hide, c.unordered_rolls = True, set()
    for n in b.catalogues:
        c.globals.pop(n, None)
    element, cond = c.expr(e.element), c.expr(e.condition) if e.condition is not None else None
    rt = Runtime(b.ruleset, SeededDice(0))
    env = dict(b.catalogues)
    env.update(value)

    def part_of(item):
        env[e.var] = item
        ok = cond(env, rt) if cond is not None else True
        if e.name == "count":
            return ok
        if ok is not True:
            return 0 if e.name == "sum" else (e.name == "all")
        return element(env, rt)
    try:
        dist = convolve(lst, part_of, e.name)
    except (AdjudicationError, TypeError):
        return None
    used |= cells
    return [(f"{b.text}={show(v)}", q) for v, q in dist]


def _expanded(value, by: list[By]) -> tuple[list, int]:
    pairs = expand(value)
    den = math.lcm(*(q.denominator for _, q in pairs))
    acc: dict = {}
    for v, q in pairs:
        label = group_label(v, by)
        acc[label] = acc.get(label, 0) + q.numerator * (den // q.denominator)
    return list(acc.items()), den
