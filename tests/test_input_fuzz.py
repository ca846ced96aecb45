"""Every example input, mutated at random (tests/input_fuzz.py: a misspelled key, a value of
another type, a bad quantity, a huge integer, an empty or broken file, a duplicate key, an alias
bomb, a tab, a BOM, bytes that are no UTF-8), is read by its command (exit 0, or 1 where the
command reports a finding) or refused in one line naming the file (exit 2): never a traceback,
never another exit code, never a mutation kubectl or our strict formats refuse taken in silence,
never a pod left out of the report. Deterministic: the same cases on every run;
``bench/fuzz_inputs.py`` runs more."""

from __future__ import annotations

import pytest

from input_fuzz import fuzz, targets


@pytest.mark.parametrize("target", [t.name for t in targets()])
def test_every_mutation_of_an_example_input_is_read_or_refused_in_one_line(target: str) -> None:
    report = fuzz(seed=0, per_target=8, only=target, exact=True)
    assert report.runs >= 8
    assert not report.findings, "\n".join(f.line() for f in report.findings)
