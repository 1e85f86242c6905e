"""Grouping outcomes for odds and simulation: ``--by`` a result field, or ``--by`` an expression over the result.

A ``--by`` text that is a dotted name (``result``, ``units.G1.state``) reads that field;
lists of records are entered by id (or by position). Any other text is an
expression of the procedure language evaluated with the result's fields as its
names (``count(u for u in units if u.state == "broken")``). Each outcome's label
joins ``TEXT=value`` for every ``--by``.

Outcomes from exact odds may hold independent lists kept factored
(odds/independent.py). Each ``--by`` is read from the random items it tells apart
(a field of one item; a count, sum, any, all, first, min, max, highest, lowest
or list over the items, item by item), ``--by``s sharing no item are worked out apart and
combined as a product, those sharing one jointly, and only what none of this
covers is expanded; the shares are the same either way (``_labels``). An
expression is evaluated once per distinct value of the fields it reads.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

from ..errors import AdjudicationError, InputError, Position, did_you_mean
from ..model.changes import input_records, is_view_of_inputs, record_changes, record_lists
from ..model.values import Record, check_built, key_form, normalise, show
from .independent import MAX_CASES, Independent, expand, has_lazy, repeats, sample

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
    return _field(value, path.split("."), path)


def _field(value, parts, path: str):
    """``field_value`` of a path already split."""
    current = value
    for part in parts:
        current = _step(current, part)
        if current is _NOTHING:
            return _MissingField(path)
    return current


_NOTHING = object()


def _memo_key(v):
    """A value as a memo key: equal to another's only when both are the same kind, dice included."""
    return (v.__class__, key_form(v))


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
        self.parts: tuple = ()
        self._values: dict = {}     # an expression's value by the values of the fields it reads
        self._runtime = None
        self._folded: tuple | None = None
        self.parts_by_item: dict = {}   # a fold's part of each item (_expression_reader)
        if _PATH.fullmatch(text):
            self.path = text
            self.parts = tuple(text.split("."))
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
        self.read = tuple(sorted(self.fields or ()))

    def value(self, result):
        if self.path is not None:
            return _field(result, self.parts, self.path)
        # an expression's value depends only on the fields it reads: worked out once per distinct values of
        # those (each value by kind, so 1 and true stay apart), with one runtime (the expression rolls nothing:
        # its bounds are reset for each evaluation, as a new runtime's would be)
        fields = self.fields
        if fields is not None and result.__class__ is Record:
            key: tuple | None = tuple([_memo_key(result.get(f, _NOTHING)) for f in self.read])
        else:
            key = (_memo_key(result),)
        try:
            return self._values[key]
        except KeyError:
            pass
        except TypeError:       # (a value that cannot be a key: worked out each time)
            key = None
        env = dict(self.catalogues)
        env.update(result if isinstance(result, Record) else {"value": result})
        env.setdefault("result", result)
        try:
            v = self.fn(env, self.runtime())
        except AdjudicationError as e:
            raise InputError(f"--by '{self.text}' cannot be evaluated on an outcome: {e.message}",
                             hint="the names of an expression are the result's fields") from None
        if key is not None:
            if len(self._values) >= 65536:
                self._values.clear()
            self._values[key] = v
        return v

    def runtime(self):
        """The runtime an expression is evaluated with, its bounds as a new one's (kept: it rolls nothing)."""
        from ..model.dice import SeededDice
        from ..runtime.state import Runtime
        rt = self._runtime
        if rt is None:
            rt = self._runtime = Runtime(self.ruleset, SeededDice(0))
        rt.steps_left, rt.depth = rt.limits["steps"], 0
        return rt

    def fold_parts(self):
        """An aggregate expression's element, condition and key compiled on their own (to read it over a
        factored list item by item), and the names they read besides the item; compiled once."""
        if self._folded is None:
            self._folded = (self._compile_parts(),)
        return self._folded[0]

    def _compile_parts(self):
        from ..analysis.names import free_names
        from ..compiling.compiler import Compiler
        e = self.expr
        inner: set = set()
        for part in (e.element, e.condition, e.key):
            if part is not None:
                inner |= free_names(part)
        c = Compiler(self.ruleset)
        c.rolls_may_hide, c.unordered_rolls = True, set()
        for n in self.catalogues:
            c.globals.pop(n, None)
        return (c.expr(e.element), c.expr(e.condition) if e.condition is not None else None,
                c.expr(e.key) if e.key is not None else None, frozenset(inner - {e.var}))

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
    blocks: list = []       # ([(label, numerator)], the outcome's numerator, denominator); a factored outcome's
    memo: dict = {}         # labels as keys (_labels). memo: each record's and list's text, shown once for
    ctx: dict = {}          # every outcome it is in; ctx: what _labels works out once for every outcome
    for value, (n, d) in found.items():
        if changes is not None and value in changes:
            blocks.append((((changes[value], 1),), n, d))
        elif value.__class__ is not Stop and has_lazy(value):
            pairs, den = _labels(value, by, ctx)
            blocks.append((pairs, n, d * den))
        else:
            blocks.append((((group_label(value, by, memo), 1),), n, d))
    common = math.lcm(*{d for _, _, d in blocks}) if blocks else 1
    keyed: dict = {}
    for pairs, n, d in blocks:
        f = n * (common // d)
        for label, k in pairs:
            keyed[label] = keyed.get(label, 0) + k * f
    sums: dict[str, int] = {}
    joined = _joiner(ctx)
    for label, n in keyed.items():      # each factored outcome's key joined once
        if label.__class__ is tuple:
            label = joined(label)
        sums[label] = sums.get(label, 0) + n
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


def _labels(value, by: list[By], ctx: dict) -> tuple[list, int]:
    """Labels of a factored outcome: ([(label, numerator)], denominator). A label is its text when the groups
    below come in the --bys' order, else a key (the order's number, the texts in the groups' order) that
    ``group_weights`` joins once for all the outcomes giving it.

    Each --by is read as a function of the random items it tells apart (its *cells*): a field of one item
    reads that item's cell; a count, sum, any, all, first, min, max, highest, lowest or list over a factored list
    reads the cells whose items give it different parts; a --by that reads no random item is one text. The
    --bys are put in groups that share no cell. Random items are independent, so each group's distribution is
    worked out on its own (cell by cell, states it cannot tell apart merged) and the groups combine as a
    product; the --bys of one group (two fields of one item, a count and a field of one counted item) are
    read jointly, over the cells they share. A --by read any other way expands the outcome."""
    if not by:
        return _expanded(value, by)
    readers = []
    for b in by:
        r = _reader(value, b, ctx)
        if r is None:
            return _expanded(value, by)
        readers.append(r)
    try:
        groups = _groups(readers)
        dists = [_group_distribution([readers[i] for i in g]) for g in groups]
    except (_Unfit, AdjudicationError, TypeError):     # (expanded, each outcome is read as it is)
        return _expanded(value, by)
    if any(d is None for d in dists):
        return _expanded(value, by)
    positions = [i for g in groups for i in g]
    den = 1
    for _, d in dists:
        den *= d
    if positions == sorted(positions):      # the groups in the --bys' order: each label made as they combine
        current: list = [("", 1)]
        sep = ""
        for pairs, _ in dists:
            if len(pairs) == 1:
                text, k = ", ".join(pairs[0][0]), pairs[0][1]
                current = [(prefix + sep + text, w * k) for prefix, w in current]
            else:
                joined = [(sep + ", ".join(texts), k) for texts, k in pairs]
                current = [(prefix + text, w * k) for prefix, w in current for text, k in joined]
            sep = ", "
        return current, den
    # else each label's texts are kept as a key, in the groups' order, joined once at the end
    keys: list = [((), 1)]
    for pairs, _ in dists:
        keys = [(prefix + texts, w * k) for prefix, w in keys for texts, k in pairs]
    orders = ctx.setdefault("orders", {})      # each order of the --bys met, as a number (hashed fast)
    order = orders.setdefault(tuple(positions), len(orders))
    return [((order, texts), n) for texts, n in keys], den


def _joiner(ctx: dict):
    """A function joining a factored outcome's key (``_labels``) into its label: its texts in the --bys' order."""
    perms: dict = {}
    for positions, number in ctx.get("orders", {}).items():
        perms[number] = None if list(positions) == sorted(positions) else sorted(range(len(positions)),
                                                                                 key=positions.__getitem__)

    def joined(key: tuple) -> str:
        perm = perms[key[0]]
        texts = key[1]
        return ", ".join(texts) if perm is None else ", ".join([texts[i] for i in perm])
    return joined


class _Unfit(Exception):
    """A --by that cannot be read factor by factor here (the outcome is expanded instead)."""


_SCALARS = frozenset({int, str, bool, type(None), Fraction})
_FOLDS = frozenset({"count", "sum", "any", "all", "first", "min", "max", "highest", "lowest", "list"})


def _strict(v):
    """A fold's part as a key: equal only to the same value of the same kind (1 and true stay apart)."""
    if v.__class__ not in _SCALARS:
        raise _Unfit
    return (v.__class__, v)


class _Const:
    """A --by that reads no random item of the outcome: one text."""

    __slots__ = ("text",)
    cells: frozenset = frozenset()

    def __init__(self, text: str):
        self.text = text


class _Node:
    """A --by that reads one random item (a list's node): ``text(item)``. ``effects``: the texts of the node's
    factor items, with their weights."""

    __slots__ = ("node", "text", "effects", "cells")

    def __init__(self, node: Independent, text, effects: list):
        self.node, self.text, self.effects = node, text, effects
        self.cells = frozenset({id(node.cell)}) if len({t for t, _ in effects}) > 1 else frozenset()


class _Fold:
    """A count, sum, any, all, first, min, max, highest, lowest or list over a factored list: each item's part
    (``part(item)``), folded over the list's items in order. ``parts``: each node's factor items' parts."""

    __slots__ = ("by", "name", "nodes", "part", "parts", "cells", "order")

    def __init__(self, by: By, name: str, nodes: list, part):
        self.by, self.name, self.nodes, self.part = by, name, nodes, part
        self.parts = [[(part(item), q) for item, q in node.factor] for node in nodes]
        self.cells = frozenset(id(node.cell) for node, ps in zip(nodes, self.parts)
                               if len({p for p, _ in ps}) > 1)
        self.order = tuple(id(node.cell) for node in nodes)

    def start(self):
        name = self.name
        if name == "count":
            return 0
        if name == "sum":
            return (int, 0)
        if name in ("any", "all"):
            return name == "all"
        if name == "list":
            return ()
        return _NOTHING

    def add(self, acc, part):
        name = self.name
        if name == "count":
            return acc + part
        if name == "sum":
            return _strict(acc[1] + part[1])
        if name == "any":
            return acc or part
        if name == "all":
            return acc and part
        if part is _NOTHING:
            return acc
        if name == "list":
            return acc + (part,)
        if acc is _NOTHING:
            return part
        if name == "first":
            return acc
        if name == "min":       # (as min() keeps the first of equal values)
            return part if part[1] < acc[1] else acc
        if name == "max":
            return part if part[1] > acc[1] else acc
        if name == "highest":
            return part if part[1][1] > acc[1][1] else acc
        return part if part[1][1] < acc[1][1] else acc

    def text_of(self, acc) -> str:
        name = self.name
        if name == "sum":
            v = normalise(acc[1])
        elif name in ("count", "any", "all"):
            v = acc
        elif name == "list":        # bounded as the list built by evaluating the expression is
            v = check_built(tuple([x[1] for x in acc]), self.by.runtime(), getattr(self.by.expr, "pos", None)) \
                if acc else ()
        elif acc is _NOTHING:
            v = None
        else:
            v = acc[0][1] if name in ("highest", "lowest") else acc[1]
        return self.by.text_of(v)


def _reader(value, b: By, ctx: dict):
    """How ``b`` reads the factored outcome ``value``: a _Const, _Node or _Fold, or None (expand it)."""
    if b.path is not None:
        return _path_reader(value, b, ctx)
    return _expression_reader(value, b)


def _path_reader(value, b: By, ctx: dict):
    current = value
    parts = b.parts
    for i, part in enumerate(parts):
        if current.__class__ is Independent:
            nodes, ids = _list_index(current, ctx)
            index = ids.get(part, _NOTHING)
            if index is None:           # the id moves between items, or is in several
                return None
            if index is _NOTHING:       # no item has that id: by position, as _step reads it
                if not (part.isdigit() and int(part) < len(nodes)):
                    return _Const(b.text_of(_MissingField(b.path)))
                index = int(part)
            node = nodes[index]
            key = (id(b), id(node.factor))
            found = ctx.get(key)
            if found is not None and found[0] is node.factor:
                return _Node(node, found[1], found[2])
            rest = parts[i + 1:]
            text = _item_text(b, rest)
            try:
                effects = [(text(item), q) for item, q in node.factor]
            except _Unfit:
                return None
            ctx[key] = (node.factor, text, effects)
            return _Node(node, text, effects)
        current = _step(current, part)
        if current is _NOTHING:
            return _Const(b.text_of(_MissingField(b.path)))
    if has_lazy(current):
        return None
    return _Const(b.text_of(current))


def _item_text(b: By, rest: tuple):
    """The text ``b`` gives an item of the list its path enters (``rest``: the path after the item)."""
    missing = _MissingField(b.path)
    if len(rest) == 1:
        one = rest[0]

        def text(item):
            v = item.get(one, _NOTHING) if item.__class__ is Record else _step(item, one)
            if v is _NOTHING:
                return b.text_of(missing)
            if (v.__class__ is Record or v.__class__ is tuple) and has_lazy(v):
                raise _Unfit
            return b.text_of(v)
        return text

    def text_at(item):
        v = item
        for p in rest:
            v = _step(v, p)
            if v is _NOTHING:
                return b.text_of(missing)
        if v.__class__ is Independent or ((v.__class__ is Record or v.__class__ is tuple) and has_lazy(v)):
            raise _Unfit
        return b.text_of(v)
    return text_at


def _list_index(lst: Independent, ctx: dict):
    """The list's nodes, and which node holds each id (None: the id moves between items, or is in several);
    once per list (the outcome keeps the list alive meanwhile)."""
    found = ctx.get(id(lst))
    if found is not None and found[0] is lst:
        return found[1], found[2]
    nodes = lst.nodes()
    ids: dict = {}
    for i, node in enumerate(nodes):
        here = {str(item.get("id")) if item.__class__ is Record else _NOTHING for item, _ in node.factor}
        for one in here:
            ids[one] = i if len(here) == 1 and one not in ids else None
    ids.pop(_NOTHING, None)
    ctx[id(lst)] = (lst, nodes, ids)
    return nodes, ids


def _expression_reader(value, b: By):
    """An expression that reads no random item is one text; a count/sum/any/all/first/min/max/highest/lowest/list
    (... for x in FIELD ...) over a factored field, reading nothing else random, is a _Fold; else None."""
    if b.fields is None or value.__class__ is not Record:
        return None
    lazy = [f for f in b.fields if f in value and has_lazy(value[f])]
    if not lazy:
        return _Const(b.label(value))
    from ..reading import syntax as ast
    e = b.expr
    if not isinstance(e, ast.Aggregate) or e.name not in _FOLDS or not isinstance(e.source, ast.Name) \
            or lazy != [e.source.name] or (e.key is not None) != (e.name in ("highest", "lowest")):
        return None
    lst = value[e.source.name]
    if lst.__class__ is not Independent or repeats(lst):
        return None
    element, cond, key, inner = b.fold_parts()
    if not all(n in value or n in b.catalogues or n in b.ruleset.catalogues for n in inner):
        return None
    # each item's part, kept by the item when the expression reads nothing of the result but the list
    known = b.parts_by_item if not any(n in value for n in inner) else None
    rt = b.runtime()
    env = dict(b.catalogues)
    env.update(value)
    name, var = e.name, e.var

    def part(item):
        if known is not None:
            k = _memo_key(item)
            found = known.get(k, _NOTHING)
            if found is not _NOTHING:
                return found
            if len(known) >= 65536:
                known.clear()
            found = known[k] = worked_out(item)
            return found
        return worked_out(item)

    def worked_out(item):
        env[var] = item
        rt.steps_left, rt.depth = rt.limits["steps"], 0
        ok = cond(env, rt) is True if cond is not None else True
        if name == "count":
            return 1 if ok else 0
        if not ok:
            return (int, 0) if name == "sum" else (name == "all") if name in ("any", "all") else _NOTHING
        v = element(env, rt)
        if name in ("any", "all"):
            return v is True
        if name in ("highest", "lowest"):
            return (_strict(v), _strict(key(env, rt)))
        return _strict(v)
    try:
        return _Fold(b, name, lst.nodes(), part)
    except (AdjudicationError, TypeError, _Unfit):
        return None


def _groups(readers: list) -> list:
    """The readers' indexes in groups that share no cell, each in order (the first reader's group first)."""
    parent = list(range(len(readers)))

    def root(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i
    owner: dict = {}
    for i, r in enumerate(readers):
        for c in r.cells:
            j = owner.setdefault(c, i)
            if root(j) != root(i):
                parent[root(i)] = root(j)
    groups: dict = {}
    for i in range(len(readers)):
        groups.setdefault(root(i), []).append(i)
    return list(groups.values())


def _group_distribution(readers: list):
    """The joint distribution of one group's texts: ([(texts, numerator)], denominator), or None (expand).

    Worked out cell by cell (a fold's in its list's order, then the cells only fields read): each state holds
    what each reader has so far (a field's text, a fold's running value), and states alike merge."""
    first = readers[0]
    if len(readers) == 1:
        if first.__class__ is _Const:
            return [((first.text,), 1)], 1
        if first.__class__ is _Node:
            return _integer_weights([((t,), q) for t, q in first.effects])
    if all(r.__class__ is _Node and r.node is first.node for r in readers):     # fields of one item
        return _integer_weights([(tuple([r.effects[k][0] for r in readers]), q)
                                 for k, (_, q) in enumerate(first.node.factor)])
    folds = [r for r in readers if r.__class__ is _Fold]
    if any(f.order != folds[0].order for f in folds[1:]):
        return None         # folds over lists in different orders: not followed here
    cells = set().union(*[r.cells for r in readers])
    steps: list = []        # (cell id, [(reader index, node, position in a fold's list or None)])
    at: dict = {}
    if folds:
        for pos, c in enumerate(folds[0].order):
            at[c] = len(steps)
            steps.append((c, [(i, r.nodes[pos], pos) for i, r in enumerate(readers) if r.__class__ is _Fold]))
    for i, r in enumerate(readers):
        if r.__class__ is _Node and id(r.node.cell) in cells:
            c = id(r.node.cell)
            if c not in at:
                at[c] = len(steps)
                steps.append((c, []))
            steps[at[c]][1].append((i, r.node, None))
    start = tuple([r.start() if r.__class__ is _Fold else None for r in readers])
    states: dict = {start: Fraction(1)}
    for c, touching in steps:
        outcomes = _step_outcomes(readers, c in cells, touching)
        nxt: dict = {}
        for state, p in states.items():
            for effect, q in outcomes:
                now = list(state)
                for (i, _, pos), e in zip(touching, effect):
                    now[i] = readers[i].add(now[i], e) if pos is not None else e
                after = tuple(now)
                w = p if q is None else p * q
                had = nxt.get(after)
                nxt[after] = w if had is None else had + w
        states = nxt
        if len(states) > MAX_CASES:
            return None
    texts: list = []
    for state, p in states.items():
        texts.append((tuple([r.text if r.__class__ is _Const else
                             r.text_of(v) if r.__class__ is _Fold else
                             v if v is not None else r.effects[0][0]
                             for r, v in zip(readers, state)]), p))
    return _integer_weights(texts)


def _step_outcomes(readers: list, varies: bool, touching: list) -> list:
    """One cell's outcomes as (the effect on each touching reader, weight; None: certain), equal effects merged.
    One node read there: its factor's items; several (lists sharing the random item): the cell's draws, each
    node's item the image of the same draw."""
    if not varies:          # every draw gives every reader here the same effect: the first, for certain
        return [(tuple([readers[i].parts[pos][0][0] if pos is not None else readers[i].effects[0][0]
                        for i, _, pos in touching]), None)]
    nodes = {id(node) for _, node, _ in touching}
    acc: dict = {}
    if len(nodes) == 1:
        node = touching[0][1]
        for k, (_, q) in enumerate(node.factor):
            one = tuple([readers[i].parts[pos][k][0] if pos is not None else readers[i].effects[k][0]
                         for i, _, pos in touching])
            had = acc.get(one)
            acc[one] = q if had is None else had + q
    else:
        cell = touching[0][1].cell
        for k, (x, q) in enumerate(cell):
            drawn = []
            for i, node, pos in touching:
                item = x if node.images is None else node.images[k]
                r = readers[i]
                drawn.append(r.part(item) if pos is not None else r.text(item))
            one = tuple(drawn)
            had = acc.get(one)
            acc[one] = q if had is None else had + q
    return list(acc.items())


def _integer_weights(pairs: list) -> tuple[list, int]:
    """(key, Fraction) pairs as (key, numerator) over their least common denominator, equal keys summed."""
    den = math.lcm(*{q.denominator for _, q in pairs})
    acc: dict = {}
    for key, q in pairs:
        acc[key] = acc.get(key, 0) + q.numerator * (den // q.denominator)
    return list(acc.items()), den


def _expanded(value, by: list[By]) -> tuple[list, int]:
    pairs = expand(value)
    den = math.lcm(*(q.denominator for _, q in pairs))
    acc: dict = {}
    for v, q in pairs:
        label = group_label(v, by)
        acc[label] = acc.get(label, 0) + q.numerator * (den // q.denominator)
    return list(acc.items()), den
