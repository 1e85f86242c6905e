"""Author tools built on adjudication and odds: ruleset tests, YAML edits in place.

Stage 9. Imports the stages below it.
"""
