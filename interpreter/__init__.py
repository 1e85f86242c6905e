"""Umpire: a declarative rules-as-data interpreter for tactical board wargames.

Packages by pipeline stage, lowest first (each imports only the stages below it):
    reading (positioned YAML, schemas, grammar) -> model (values, tables, dice) ->
    analysis (static facts) -> runtime (run state, trace, builtins) ->
    loading (ruleset folders, overlays, inputs, cache) -> compiling (checker, closures) ->
    api (adjudicate) -> odds (exact odds, simulation) -> tools -> web, cli
The public entry points are in ``interpreter.api``.
"""

__version__ = "0.1.0"
