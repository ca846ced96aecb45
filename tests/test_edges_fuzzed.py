"""The classes of bad input the mutation fuzzer (tests/input_fuzz.py) found accepted, or refused
without naming the file, each now refused with one line naming the file, the object and the
field, and exit code 2."""

from __future__ import annotations

from pathlib import Path
from typing import Final

import pytest

from test_bad_input import assert_one_line_exit_2, write_text
from test_strict_config_and_cases import CASE

# A conformance case's values are typed as FORMAT.md gives them: a wrong type used to be taken
# (a name that is a mapping, an expected score that is a list) and compared, or printed, as is.
BAD_CASE_VALUES: Final = {
    "name not a string": (
        ("name: strict", "name: {a: b}"),
        "case.yaml: name: expected a string, got a mapping",
    ),
    "source not a string": (
        ("name: strict", "name: strict\nsource: [a]"),
        "case.yaml: source: expected a string, got a list",
    ),
    "preFilter not a code": (
        ("preFilter: Success", "preFilter: Sucess"),
        'case.yaml: expect.preFilter: Unsupported value: "Sucess": supported values: '
        '"Success", "Skip", "UnschedulableAndUnresolvable", "Error"',
    ),
    "preScore a mapping": (
        ("preFilter: Success", "preFilter: Success\n  preScore: {a: b}"),
        "case.yaml: expect.preScore: expected a string, got a mapping",
    ),
    "filter result a list": (
        ("filter: {node1: Success}", "filter: {node1: [Success]}"),
        "case.yaml: expect.filter.node1: expected a string, got a list",
    ),
    "score a string": (
        ("filter: {node1: Success}", "filter: {node1: Success}\n  score: {node1: high}"),
        "case.yaml: expect.score.node1: expected an integer, got a string",
    ),
    "globalMin a boolean": (
        ("globalMin: 0", "globalMin: true"),
        "case.yaml: expect.domains[0].globalMin: expected an integer, got a boolean",
    ),
    "topologyKey a list": (
        ("topologyKey: zone, counts", "topologyKey: [zone], counts"),
        "case.yaml: expect.domains[0].topologyKey: expected a string, got a list",
    ),
    "a count a mapping": (
        ("counts: {a: 0}", "counts: {a: {b: 0}}"),
        "case.yaml: expect.domains[0].counts.a: expected an integer, got a mapping",
    ),
}


@pytest.mark.parametrize("command", ["evaluate", "conformance"])
@pytest.mark.parametrize(("change", "message"), BAD_CASE_VALUES.values(), ids=list(BAD_CASE_VALUES))
def test_a_case_value_of_the_wrong_type_is_refused(
    command: str,
    change: tuple[str, str],
    message: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert change[0] in CASE
    path = write_text(tmp_path, "case.yaml", CASE.replace(*change, 1))
    assert_one_line_exit_2([command, path], capsys, message)
