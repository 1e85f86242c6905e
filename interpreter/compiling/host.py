"""What each of the compiler's mixins may use of the others, declared once so a type checker sees one object.

``Compiler`` (compiling/compiler.py) is assembled from mixins, one per kind of thing compiled; each calls the
others through ``self`` and reads the state ``Compiler.__init__`` and ``Compiler.enter`` set. Every mixin
derives from ``CompilerHost``, which names that state and those entry points (with their types) and defines
nothing at run time, so the mixins need not import one another.
"""

from __future__ import annotations

from .support import Fn

TYPE_CHECKING = False   # (typing is for the checker only: importing it costs a warm start 2%)
if TYPE_CHECKING:
    from _thread import LockType
    from typing import Any

    from ..model.ruleset import Procedure, Ruleset
    from ..model.values import Record
    from ..reading import syntax as ast


class CompilerHost:
    """The shared state and the cross-mixin entry points of ``Compiler``."""

    # per ruleset (Compiler.__init__, Compiler.compile)
    ruleset: Ruleset
    globals: dict[str, Record]
    overlay_files: set
    prefix_caching: bool
    rolls_may_hide: bool
    list_checked_from: int
    text_checked_from: int
    parts: dict
    lock: LockType
    traced_pending: dict | None
    branches_pending: dict | None
    # per procedure (Compiler.enter, lazy.py)
    in_overlay: bool
    roll_names: set[str]
    unordered_rolls: Any
    static_names: set[str]
    static_slots: int
    untraced: bool
    marking: bool
    purity: dict

    if TYPE_CHECKING:
        # compiler.py
        def enter(self, proc: Procedure) -> dict: ...
        def param_constants(self, proc: Procedure) -> dict: ...
        # statements.py
        def block(self, statements) -> Fn: ...
        # lazy.py
        def branch_block(self, branch: ast.Branch) -> Fn: ...
        def block_parts(self, statements) -> tuple: ...
        def statement(self, s: ast.Statement) -> Fn: ...
        # segments.py
        def middle_parts(self, proc: Procedure, statements, start: int) -> tuple: ...
        def rolls_nothing(self, s) -> bool: ...
        # expressions.py
        def expr(self, e) -> Fn: ...
        def e_binary(self, e: ast.Binary, store: str | None = None) -> Fn: ...
        def e_conditional(self, e: ast.Conditional, store: str | None = None) -> Fn: ...
        # operators.py
        def arithmetic(self, e: ast.Binary, store: str | None = None) -> Fn: ...
        def comparison(self, e: ast.Binary) -> Fn: ...
        def membership(self, e: ast.Binary) -> Fn: ...
        # calls.py
        def e_call(self, e: ast.Call, store: str | None = None) -> Fn: ...
        def e_lookup(self, e: ast.Lookup, store: str | None = None) -> Fn: ...
        def e_locate(self, e: ast.Locate, field: str | None = None, field_pos=None) -> Fn: ...
        # fast_paths.py
        def untraced_let(self, s: ast.Let) -> Fn: ...
        def static_or_expr(self, e) -> Fn: ...
        def local_name(self, e) -> str | None: ...
        def local_read(self, e) -> tuple: ...
        def roll_read(self, e) -> tuple: ...
