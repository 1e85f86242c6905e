"""``umpire sweep``: one question asked of a grid of situations, under several rule sets.

A sweep spec (schemas/sweep.schema.json) names a base situation, the axes to vary, the overlays to
compare and the question (exact odds, or a simulation). The stage sits above ``tools`` (it asks its
questions through ``tools.reports``, as ``umpire odds`` and ``umpire diff`` do) and below ``web`` and
``cli``, which run it.

* spec.py   the spec read and checked: positioned errors, did-you-mean on input paths and catalogue
            entries, the cell count capped before any work
* cells.py  each cell a pure task of plain data (ruleset, overlays, situation data, question) and its
            content key; ``run_cell`` answers one in any process
* run.py    the cells run in this process, in local worker processes or on a Dask cluster, each result
            kept in a results cache as it arrives (a rerun resumes from it)
* output.py rows, CSV, JSON and the heat map
"""
