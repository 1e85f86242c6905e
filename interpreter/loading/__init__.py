"""From files to a checked model: reading a ruleset folder, overlays, situation inputs, the load cache.

Stage 5. Imports the stages below it.
"""
