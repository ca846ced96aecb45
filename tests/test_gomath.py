"""Go's rounding and normalization helpers: the scalar forms the plugins use and the numpy forms
the fast path uses agree, on the edge cases and on random inputs."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from topospread.framework.status import SUCCESS
from topospread.framework.types import MAX_NODE_SCORE, NodeScore
from topospread.plugins.helper.gomath import go_div, go_int64, go_round, go_round_array
from topospread.plugins.helper.normalize_score import (
    default_normalize_score,
    default_normalize_score_array,
)

_JUST_BELOW_HALF = 0.49999999999999994  # floor(x + 0.5) would round it up to 1


@pytest.mark.parametrize(
    ("x", "want"),
    [
        pytest.param(0.0, 0, id="zero"),
        pytest.param(-0.0, 0, id="negative zero"),
        pytest.param(0.5, 1, id="a half rounds away from zero"),
        pytest.param(-0.5, -1, id="a negative half rounds away from zero"),
        pytest.param(1.5, 2, id="an odd half rounds up"),
        pytest.param(2.5, 3, id="an even half rounds up, not to even"),
        pytest.param(-2.5, -3, id="a negative even half rounds down"),
        pytest.param(_JUST_BELOW_HALF, 0, id="just below a half rounds down"),
        pytest.param(-_JUST_BELOW_HALF, 0, id="just above a negative half rounds up"),
        pytest.param(2.4999999999999996, 2, id="just below two and a half"),
        pytest.param(-1.25, -1, id="a negative quarter"),
        pytest.param(1.75, 2, id="three quarters"),
        pytest.param(4503599627370495.5, 4503599627370496, id="largest float with a half"),
        pytest.param(-4503599627370495.5, -4503599627370496, id="its negative"),
        pytest.param(2.0**53 + 2, 2**53 + 2, id="beyond 2^53 every float is whole"),
        pytest.param(2.0**62, 2**62, id="large, within int64"),
        pytest.param(-(2.0**63), -(2**63), id="int64's minimum"),
    ],
)
def test_go_round_scalar_and_array_agree_on_edge_cases(x: float, want: int) -> None:
    assert go_round(x) == want
    got = go_round_array(np.array([x], np.float64))
    assert got.dtype == np.int64
    assert got.tolist() == [want]


@given(st.lists(st.floats(min_value=-(2.0**62), max_value=2.0**62), max_size=50))
def test_go_round_array_is_go_round_elementwise(xs: list[float]) -> None:
    assert go_round_array(np.array(xs, np.float64)).tolist() == [go_round(x) for x in xs]


@given(st.lists(st.integers(-(10**6), 10**6).map(lambda n: n / 2), max_size=50))
def test_go_round_array_is_go_round_on_halves(xs: list[float]) -> None:
    assert go_round_array(np.array(xs, np.float64)).tolist() == [go_round(x) for x in xs]


def test_go_round_array_leaves_its_input_alone() -> None:
    x = np.array([0.5, -1.5, 2.25])
    go_round_array(x)
    assert x.tolist() == [0.5, -1.5, 2.25]


@pytest.mark.parametrize(
    ("a", "b", "want"),
    [
        pytest.param(7, 2, 3, id="positive"),
        pytest.param(-7, 2, -3, id="negative dividend truncates toward zero"),
        pytest.param(7, -2, -3, id="negative divisor truncates toward zero"),
        pytest.param(-7, -2, 3, id="both negative"),
    ],
)
def test_go_div_truncates_toward_zero(a: int, b: int, want: int) -> None:
    assert go_div(a, b) == want == math.trunc(a / b)


def test_go_int64_wraps_as_go_overflows() -> None:
    assert go_int64(2**63) == -(2**63)
    assert go_int64(2**63 - 1) == 2**63 - 1
    assert go_int64(-(2**63) - 1) == 2**63 - 1


@given(
    st.lists(st.integers(0, 10**12), max_size=30),
    st.booleans(),
    st.sampled_from([MAX_NODE_SCORE, 10, 1]),
)
def test_default_normalize_score_array_is_default_normalize_score(
    raw: list[int], reverse: bool, max_priority: int
) -> None:
    node_scores = [NodeScore(f"n{i}", s) for i, s in enumerate(raw)]
    assert default_normalize_score(max_priority, reverse, node_scores) is SUCCESS
    got = default_normalize_score_array(max_priority, reverse, np.array(raw, np.int64))
    assert got.tolist() == [ns.score for ns in node_scores]
