"""Umpire: a declarative rules-as-data interpreter for tactical board wargames.

Pipeline, one module per step:
    source (positioned YAML) -> schema (shape) -> parser (DSL to syntax tree) ->
    loader (model) -> checker (names, arity) -> compiler (closures) ->
    runtime (dice, bounds) -> trace (explain / JSON)
The public entry points are in ``interpreter.api``.
"""

__version__ = "0.1.0"
