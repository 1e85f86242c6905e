"""``data_class``: the part of ``dataclasses`` the model uses, without its cost at start-up.

``@dataclass`` writes each class's ``__init__``, ``__eq__`` and ``__repr__`` as Python source and compiles it,
about 0.3 ms a class, and importing ``dataclasses`` imports ``inspect`` (with ``ast``, ``dis`` and
``tokenize``): on a warm ``umpire resolve``, whose loading is a few milliseconds, that was a tenth of the
process. ``data_class`` gives the same behaviour from a few shared functions, compiling nothing:

* fields are the class's annotated names, in order; a plain default stays a class attribute (as with
  ``dataclasses``), ``factory(default_factory=f)`` makes a fresh default per instance (``field(default_factory=f)``);
* ``__init__`` takes the fields positionally or by name, then calls ``__post_init__`` if the class has one
  (a class that defines its own ``__init__`` keeps it);
* ``__eq__`` compares the fields of two instances of the same class, as a tuple, and instances are unhashable,
  as a dataclass's with ``eq`` and without ``frozen``;
* ``__repr__`` shows the fields;
* a field named in ``apart`` is neither compared nor shown (``field(compare=False, repr=False)``);
* ``data_fields(cls_or_instance)`` names the fields (``dataclasses.fields``).

Instances keep their fields in ``__dict__`` (no slots), so a subclass may add lazily decoded fields.
"""

from __future__ import annotations

TYPE_CHECKING = False   # (typing is for the checker only: importing it costs a warm start 2%)
if TYPE_CHECKING:
    from typing import Any, Callable, TypeVar, dataclass_transform

    T = TypeVar("T")
else:
    def dataclass_transform(**_options):
        """(typing's, for the checker; at run time it does nothing)"""
        return lambda f: f


class _Factory:
    __slots__ = ("make",)

    def __init__(self, make: Callable[[], Any]):
        self.make = make


def factory(*, default_factory: Callable[[], T]) -> T:
    """A field's default made afresh for each instance: ``items: list = factory(default_factory=list)``."""
    return _Factory(default_factory)  # type: ignore[return-value]   # replaced by data_class


def data_fields(cls_or_instance) -> tuple[str, ...]:
    """The field names of a ``data_class`` (or of the class of an instance), in order."""
    return cls_or_instance.__data_fields__


@dataclass_transform(field_specifiers=(factory,))      # so mypy types the made __init__ as for a dataclass
def data_class(cls=None, *, apart: tuple[str, ...] = ()):
    """Make ``cls`` a data class (see the module's docstring); usable as ``@data_class`` or with options."""
    if cls is None:
        return lambda c: data_class(c, apart=apart)
    names = tuple(cls.__dict__.get("__annotations__", {}))
    defaults, factories = {}, {}
    for n in names:
        if n in cls.__dict__:
            value = cls.__dict__[n]
            if isinstance(value, _Factory):
                factories[n] = value.make
                delattr(cls, n)           # as dataclasses: no class attribute for a factory's field
            else:
                defaults[n] = value
        elif defaults or factories:
            raise TypeError(f"{cls.__name__}: the field '{n}' without a default follows one with a default")
    cls.__data_fields__ = names
    cls.__data_compared__ = tuple(n for n in names if n not in apart)
    if "__init__" not in cls.__dict__:
        cls.__init__ = _initialiser(cls.__name__, names, defaults, factories, hasattr(cls, "__post_init__"))
    if "__eq__" not in cls.__dict__:
        cls.__eq__ = _eq
        cls.__hash__ = None       # mutable, compared by value: never a dict key
    if "__repr__" not in cls.__dict__:
        cls.__repr__ = _repr
    return cls


def _initialiser(name: str, names: tuple, defaults: dict, factories: dict, post_init: bool):
    count = len(names)

    def __init__(self, *args, **kwargs):
        if len(args) > count:
            raise TypeError(f"{name}() takes {count} arguments, {len(args)} given")
        d = self.__dict__
        for n, v in zip(names, args):
            d[n] = v
        for n in names[len(args):]:
            if n in kwargs:
                d[n] = kwargs.pop(n)
            elif n in defaults:
                d[n] = defaults[n]
            elif n in factories:
                d[n] = factories[n]()
            else:
                raise TypeError(f"{name}() is missing its argument '{n}'")
        if kwargs:
            raise TypeError(f"{name}() has no field '{next(iter(kwargs))}'")
        if post_init:
            self.__post_init__()
    return __init__


def _eq(self, other):
    if other.__class__ is not self.__class__:
        return NotImplemented
    names = self.__data_compared__
    return tuple(getattr(self, n) for n in names) == tuple(getattr(other, n) for n in names)


_SHOWING: set = set()    # ids of the instances whose repr is being made (a value that holds itself shows as ...)


def _repr(self) -> str:
    key = id(self)
    if key in _SHOWING:
        return "..."
    _SHOWING.add(key)
    try:
        return (f"{type(self).__qualname__}("
                + ", ".join(f"{n}={getattr(self, n)!r}" for n in self.__data_compared__) + ")")
    finally:
        _SHOWING.discard(key)
