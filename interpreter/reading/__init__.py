"""Reading files: positioned YAML, JSON Schemas, the procedure grammar and its syntax tree.

Stage 1 of the pipeline. Imports only ``interpreter.errors``.
"""
