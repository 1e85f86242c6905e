"""Checking a ruleset and compiling its procedures to closures.

Stage 6. Imports the stages below it. ``interpreter.api`` (stage 7) drives it.
"""
