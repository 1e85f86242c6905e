"""The ``umpire`` command: argument parsing and printing for every subcommand.

The top stage, with the web workbench beside it; nothing imports it.
"""
