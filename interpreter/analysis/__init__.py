"""Static analyses over the syntax and model: names, purity, roll usage, reuse plans, per-procedure facts.

Stage 3. Imports model, reading and errors.
"""
