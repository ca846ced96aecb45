"""Every shared conformance case, one test each: the plugin decides as upstream decides."""

from __future__ import annotations

from pathlib import Path

import pytest

from topospread.conformance.case import iter_case_files, load_case
from topospread.conformance.runner import compare, evaluate

SHARED = Path(__file__).resolve().parents[2] / "shared" / "conformance"
CASES = sorted(iter_case_files([SHARED])) if SHARED.is_dir() else []


def test_the_shared_conformance_cases_are_present() -> None:
    assert len(CASES) >= 132, f"expected the shared cases beside the repository, at {SHARED}"


@pytest.mark.parametrize("path", CASES, ids=[str(p.relative_to(SHARED)) for p in CASES])
def test_conformance_case(path: Path) -> None:
    case = load_case(path)
    assert case.expect is not None
    assert compare(case.expect, evaluate(case)) == []
