"""Go's integer and float rounding rules, which Python's operators do not follow.

Score plugins and the simulator's vectorised fast path both round as kube-scheduler's Go code
does; each rule lives here once, a scalar form and, where the fast path needs it, a numpy form
beside it (tests/test_gomath.py checks that they agree).
"""

from __future__ import annotations

import math
from typing import Final

import numpy as np
import numpy.typing as npt

_INT64_MOD: Final = 1 << 64


def go_int64(x: int) -> int:
    """``x`` wrapped to int64, as Go's int64 arithmetic overflows.

    Upstream: int64 overflow (the Go specification's arithmetic operators, v1.35)
    """
    x &= _INT64_MOD - 1
    return x - _INT64_MOD if x >= 1 << 63 else x


def go_div(a: int, b: int) -> int:
    """Go's integer division, which truncates toward zero (Python's // floors).

    Upstream: the / operator on integers (the Go specification, v1.35)
    """
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def go_round(x: float) -> int:
    """Go's math.Round: halves away from zero (Python's round() rounds halves to even).

    ``x - trunc(x)`` is exact in binary floating point, so no value just below a half is
    pushed over it (as ``floor(x + 0.5)`` would do for 0.49999999999999994).
    Upstream: math.Round (math/floor.go, v1.35)
    """
    t = math.trunc(x)
    if abs(x - t) >= 0.5:
        t += 1 if x > 0 else -1
    return int(t)


def go_round_array(x: npt.NDArray[np.float64]) -> npt.NDArray[np.int64]:
    """``go_round`` over an array of values within int64's range.

    Upstream: math.Round (math/floor.go, v1.35)
    """
    t = np.trunc(x)  # a new array, so adjusting it in place leaves x alone
    frac = x - t  # exact, as in go_round; it has the sign of x
    t += frac >= 0.5
    t -= frac <= -0.5
    return t.astype(np.int64)


__all__ = ["go_div", "go_int64", "go_round", "go_round_array"]
