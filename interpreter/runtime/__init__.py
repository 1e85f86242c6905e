"""What compiled procedures run against: the run state, the trace, built-in functions and operators.

Stage 4. Imports analysis, model, reading and errors.
"""
