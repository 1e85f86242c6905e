"""A short fuzz run (the full one is `python tests/fuzz/fuzz.py -n 100000 -j 2`): no mutant of a shipped file
ends in an internal error or runs away."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "fuzz"))

import fuzz  # noqa: E402


def test_mutants_of_every_shipped_file_end_in_exit_0_1_or_2():
    files = fuzz.shipped_files()
    report = fuzz.fuzz(len(files), jobs=1, seed=12, timeout=5.0)    # each shipped file once: ~20 s of CPU
    assert report["mutants"] >= len(files)             # every shipped file at least once
    assert set(report["by_kind"]) == set(fuzz.KINDS)
    assert report["internal"] == 0 and report["timeouts"] == 0, report["failures"]
    assert {"0", "2"} <= set(report["exit_codes"])      # mutants that still work and mutants refused
    assert set(report["exit_codes"]) <= {"0", "1", "2"}


def test_mutations_change_the_text_and_are_reproducible():
    import random
    text = "procedure p(x: int):\n    let y = x + 1\n    return {y: y}\n"
    mutants = [fuzz.mutate(text, random.Random(s)) for s in range(50)]
    assert mutants == [fuzz.mutate(text, random.Random(s)) for s in range(50)]
    assert sum(m != text for m in mutants) >= 45
