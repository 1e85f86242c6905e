"""Editor support: ``umpire init`` (a new ruleset folder) and ``umpire lsp`` (a language server over stdio).

Stage 10, after tools and before cli. Importing this package is cheap: pygls and lsprotocol load only
when the server starts (they are the optional extra ``lsp``); the symbol index (``index``) needs neither.
"""

from __future__ import annotations


def add_init(sub, overlay_option=None) -> None:
    i = sub.add_parser("init", help="start a new ruleset folder: manifest, a table, a stack, a procedure, a test",
                       description="Create folder NAME holding a small working ruleset (ruleset.yaml, one table, "
                                   "one modifier stack, one catalogue, one procedure, a situation and a test "
                                   "file), every file with its schema modeline. It passes `umpire check` and "
                                   "`umpire test` as made; change it into your game from there.")
    i.add_argument("name", metavar="NAME", help="the folder to create; its last part is the ruleset id")
    i.set_defaults(func=cmd_init)


def add_lsp(sub, overlay_option=None) -> None:
    s = sub.add_parser("lsp", help="a language server for editors (LSP over stdio): diagnostics, hover, "
                                   "go to definition, completion",
                       description="Serve the Language Server Protocol on standard input and output for .ump "
                                   "procedure files and a ruleset's YAML files. Editors start it themselves "
                                   "(see editors/README.md). Needs pygls: pip install 'umpire-wargames[lsp]'.")
    s.add_argument("--stdio", action="store_true", help="talk over standard input and output (the default)")
    s.set_defaults(func=cmd_lsp)


def cmd_init(args) -> int:
    from .scaffold import create
    root = create(args.name)
    print(f"created {root}/ (ruleset '{root.name}')\n"
          f"  umpire check {root}\n  umpire test {root}\n  umpire resolve {root}/situations/first_check.yaml --explain")
    return 0


def cmd_lsp(args) -> int:
    from ..errors import InputError
    try:
        from .server import serve
    except ImportError as e:
        raise InputError(f"umpire lsp needs pygls and lsprotocol ({e}): pip install 'umpire-wargames[lsp]' "
                         "(or pip install pygls lsprotocol)") from None
    serve()
    return 0
