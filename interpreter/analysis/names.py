"""Walking the syntax tree, and which names a piece of syntax binds or reads.

The static analyses (analysis/purity.py, analysis/roll_usage.py, analysis/caching.py) are built on these.
"""

from __future__ import annotations

from ..reading import syntax as ast

_CHILD_FIELDS = {cls: tuple(f for f in cls._fields if f != "pos") for cls in vars(ast).values()
                 if isinstance(cls, type) and issubclass(cls, ast.Node)}
_LEAVES = (str, int, float, bool)


def walk(node):
    """Every syntax node under a statement list (statements and expressions), each subtree in the order
    of a depth-first walk (the last statement's first). The nodes under each statement or expression
    walked are kept (syntax is immutable and the parse memo shares it between loads), so the analyses,
    which walk the same bodies many times over, walk each once."""
    if isinstance(node, (tuple, list)):
        for n in reversed(node):
            yield from _under(n)
    else:
        yield from _under(node)


_UNDER: dict[int, tuple] = {}   # id(node) -> (node, the nodes under it); the node kept so its id stays its own
_UNDER_LIMIT = 1 << 16


def _under(n) -> tuple:
    """The nodes under one node (itself first), worked out once while it is kept."""
    if n.__class__ not in _CHILD_FIELDS:
        return tuple(_walked([n]))
    kept = _UNDER.get(id(n))
    if kept is not None and kept[0] is n:
        return kept[1]
    nodes = tuple(_walked([n]))
    if len(_UNDER) >= _UNDER_LIMIT:
        _UNDER.clear()
    _UNDER[id(n)] = (n, nodes)
    return nodes


def _walked(stack: list):
    """The depth-first walk itself: syntax nodes and the tuples and lists that hold them."""
    pop, push, children = stack.pop, stack.append, _CHILD_FIELDS
    while stack:
        n = pop()
        fields = children.get(n.__class__)
        if fields is not None:          # a syntax node: the common case, decided by one lookup
            yield n
            for f in fields:
                push(getattr(n, f))
            continue
        if n is None or isinstance(n, _LEAVES):
            continue
        if isinstance(n, (tuple, list)):
            stack.extend(n)
            continue
        yield n
        if isinstance(n, ast.Node):
            for f in n._fields:
                if f != "pos":
                    push(getattr(n, f))


def bound_names(statements) -> set[str]:
    """Names these statements define (let, roll, choose, loop variables, comprehension variables)."""
    names = set()
    for n in walk(statements):
        if isinstance(n, (ast.Let, ast.Roll, ast.Choose)):
            names.add(n.name)
        elif isinstance(n, (ast.ForEach, ast.Aggregate)):
            names.add(n.var)
    return names


def free_names(e) -> frozenset[str]:
    """Names an expression reads from its surroundings (a comprehension's own variable excluded). Worked out
    once per syntax node while it is kept (syntax is immutable; the plans ask again for every demand)."""
    if isinstance(e, ast.Node):
        kept = _FREE.get(id(e))
        if kept is not None and kept[0] is e:
            return kept[1]
        names = _free_names(e)
        if len(_FREE) >= _UNDER_LIMIT:
            _FREE.clear()
        _FREE[id(e)] = (e, names)
        return names
    if isinstance(e, (tuple, list)):
        return frozenset().union(*(free_names(x) for x in e))
    return _NONE


_FREE: dict[int, tuple] = {}    # id(node) -> (node, its free names); the node kept so its id stays its own
_NONE: frozenset[str] = frozenset()


def _free_names(e) -> frozenset[str]:
    if isinstance(e, ast.Name):
        return frozenset((e.name,))
    if isinstance(e, ast.Aggregate):
        inner = frozenset().union(*(free_names(part) for part in (e.element, e.condition, e.key)
                                    if part is not None))
        return free_names(e.source) | (inner - {e.var})
    return frozenset().union(*(free_names(getattr(e, f)) for f in e._fields if f != "pos"))


def roll_names(body) -> set[str]:
    """The names a procedure body rolls into."""
    return {n.name for n in walk(body) if isinstance(n, ast.Roll)}
