"""The validated model of a ruleset: values, dice, tables, stacks, hex geometry, the ruleset itself.

Stage 2. Imports reading and errors.
"""
