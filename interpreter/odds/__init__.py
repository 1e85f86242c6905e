"""Exact odds and simulation: enumeration by states, factoring, grouping, demand analysis.

Stage 8, above ``interpreter.api``. Imports the stages below it.
"""
